"""DFT through the C runtime (lowered to products with constant cos/sin matrices)
against numpy's FFT: real and complex signals, inverse, one-sided, a length that pads or
cuts, any axis."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(43)


@pytest.mark.parametrize("complex_input", [False, True])
@pytest.mark.parametrize("inverse, onesided", [(0, 0), (1, 0), (0, 1)])
@pytest.mark.parametrize("axis, length", [(1, None), (2, None), (1, 12), (2, 5)])
def test_dft_matches_numpy(complex_input, inverse, onesided, axis, length):
    shape = (2, 9, 7, 2 if complex_input else 1)
    x = RNG.standard_normal(shape).astype(np.float32)
    inputs = ["x", "n" if length else "", "axis"]
    inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
    if length:
        inits.append(numpy_helper.from_array(np.array(length, np.int64), "n"))
    graph = helper.make_graph(
        [helper.make_node("DFT", inputs, ["y"], inverse=inverse, onesided=onesided)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    got = ember.onnx().load(model).into_model().into_runnable().run([x])[0]
    signal = x[..., 0] + (1j * x[..., 1] if complex_input else 0)
    n = length or shape[axis]
    want = (np.fft.ifft if inverse else np.fft.fft)(signal.astype(np.complex128), n=n, axis=axis)
    if onesided:
        want = np.take(want, range(n // 2 + 1), axis=axis)
    np.testing.assert_allclose(got, np.stack([want.real, want.imag], -1), rtol=1e-4, atol=1e-4)
