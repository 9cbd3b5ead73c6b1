"""ConvTranspose through the C runtime (lowered to a convolution of the zero-spread input)
against onnxruntime: 1D/2D/3D, strides, dilations, pads, output_padding, groups, a
filter computed at run time, and a symbolic length at two lengths on one runnable."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(31)
F = TensorProto.FLOAT


def model_of(x_shape, w, bias, filter_input=False, **attrs):
    names = ["x", "w"] + (["b"] if bias is not None else [])
    inits = [] if filter_input else [numpy_helper.from_array(w, "w")]
    if bias is not None:
        inits.append(numpy_helper.from_array(bias, "b"))
    inputs = [helper.make_tensor_value_info("x", F, x_shape)]
    if filter_input:
        inputs.append(helper.make_tensor_value_info("w", F, list(w.shape)))
    graph = helper.make_graph([helper.make_node("ConvTranspose", names, ["y"], **attrs)], "g",
                              inputs, [helper.make_tensor_value_info("y", F, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def check(model, feeds_list):
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    runnable = ember.onnx().load(model).into_model().into_runnable()
    for feeds in feeds_list:
        want = session.run(None, dict(zip([i.name for i in session.get_inputs()], feeds)))[0]
        got = runnable.run(feeds)[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


CASES = [  # x shape, filter shape, attributes
    ((1, 3, 9), (3, 4, 3), dict(strides=[2])),
    ((2, 4, 7), (4, 2, 5), dict(strides=[4], pads=[1, 2], output_padding=[3], group=2)),
    ((1, 2, 6), (2, 3, 3), dict(strides=[3], dilations=[2], pads=[5, 0])),   # crops the input
    ((1, 3, 5, 4), (3, 2, 3, 3), dict(strides=[2, 1], pads=[1, 0, 1, 1], output_padding=[1, 0])),
    ((1, 4, 4, 5), (4, 1, 2, 3), dict(strides=[2, 3], group=4, dilations=[1, 2])),
    ((1, 2, 3, 3, 2), (2, 2, 2, 2, 2), dict(strides=[2, 2, 1])),
    ((1, 2, 5), (2, 3, 4), dict(strides=[2], auto_pad="SAME_UPPER")),
    ((1, 2, 5, 5), (2, 2, 3, 3), dict(strides=[2, 2], output_shape=[10, 11])),
]


@pytest.mark.parametrize("x_shape, w_shape, attrs", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_matches_onnxruntime(x_shape, w_shape, attrs, bias):
    w = RNG.standard_normal(w_shape).astype(np.float32)
    out_channels = w_shape[1] * attrs.get("group", 1)
    b = RNG.standard_normal(out_channels).astype(np.float32) if bias else None
    x = RNG.standard_normal(x_shape).astype(np.float32)
    check(model_of(list(x_shape), w, b, **attrs), [[x]])


def test_a_filter_computed_at_run_time():
    w = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
    x = RNG.standard_normal((1, 4, 5, 6)).astype(np.float32)
    check(model_of([1, 4, 5, 6], w, None, filter_input=True, strides=[2, 2], group=2),
          [[x, w], [x, -w]])


def test_a_symbolic_length_at_two_lengths():
    w = RNG.standard_normal((8, 4, 8)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    model = model_of([1, 8, "T"], w, b, strides=[4], pads=[2, 2])
    check(model, [[RNG.standard_normal((1, 8, t)).astype(np.float32)] for t in (7, 20, 1)])
