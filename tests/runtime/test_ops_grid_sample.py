"""GridSample through the C runtime (ember_grid_sample) against onnxruntime: every mode,
padding and align_corners, 2-D and volumetric, grids reaching well outside [-1, 1]."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import ember

RNG = np.random.default_rng(47)


def check(x_shape, grid_shape, opset=20, **attrs):
    x = RNG.standard_normal(x_shape).astype(np.float32)
    grid = (RNG.random(grid_shape) * 3 - 1.5).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("GridSample", ["x", "g"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape)),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, list(grid_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    import onnxruntime as ort
    want = ort.InferenceSession(model.SerializeToString(), providers=[
        "CPUExecutionProvider"]).run(None, {"x": x, "g": grid})[0]
    got = ember.onnx().load(model).into_model().into_runnable().run([x, grid])[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_2d(mode, padding_mode, align_corners):
    check((2, 3, 5, 7), (2, 4, 6, 2), mode=mode, padding_mode=padding_mode,
          align_corners=align_corners)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_volumetric(mode, padding_mode):
    check((1, 2, 4, 5, 3), (1, 3, 2, 4, 3), mode=mode, padding_mode=padding_mode)
