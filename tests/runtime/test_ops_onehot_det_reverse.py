"""OneHot and ReverseSequence (lowered to plan ops) and Det (ember_det) through the C
runtime against onnxruntime (OneHot against numpy: onnxruntime lacks most of its type
combinations)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(29)


def check(nodes, inputs, inits, feeds, out_type, rtol=0.0):
    import onnxruntime as ort
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info("y", out_type, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, dict(zip([i[0] for i in inputs], feeds)))[0]
    got = ember.onnx().load(model).into_model().into_runnable().run(feeds)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
@pytest.mark.parametrize("index_type", [(TensorProto.INT64, np.int64),
                                        (TensorProto.FLOAT, np.float32),
                                        (TensorProto.INT32, np.int32)])
def test_one_hot_with_negative_and_out_of_range_indices(axis, index_type):
    onnx_type, dtype = index_type
    indices = np.array([[0, 3, -1], [-5, 5, 9]], dtype)        # -5 wraps to 0; 5, 9 are off
    graph = helper.make_graph(
        [helper.make_node("OneHot", ["i", "depth", "values"], ["y"], axis=axis)], "g",
        [helper.make_tensor_value_info("i", onnx_type, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(np.array(5, np.int64), "depth"),
         numpy_helper.from_array(np.array([-2, 7], np.int32), "values")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    got = ember.onnx().load(model).into_model().into_runnable().run([indices])[0]
    wrapped = np.where(indices < 0, indices + 5, indices).astype(np.int64)
    hot = np.expand_dims(wrapped, axis) == np.arange(5).reshape(
        (-1,) + (1,) * (2 - (axis % 3)))
    np.testing.assert_array_equal(got, np.where(hot, 7, -2).astype(np.int32))


@pytest.mark.parametrize("batch_axis, time_axis", [(1, 0), (0, 1)])
def test_reverse_sequence(batch_axis, time_axis):
    shape = [6, 4, 3] if time_axis == 0 else [4, 6, 3]
    x = RNG.standard_normal(shape).astype(np.float32)
    lens = np.array([6, 1, 0, 3], np.int64)
    check([helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis,
                            time_axis=time_axis)],
          [("x", TensorProto.FLOAT, shape), ("lens", TensorProto.INT64, [4])], {},
          [x, lens], TensorProto.FLOAT)


@pytest.mark.parametrize("onnx_type, dtype", [(TensorProto.FLOAT, np.float32),
                                              (TensorProto.DOUBLE, np.float64)])
def test_det_of_batches_including_singular_and_empty_batches(onnx_type, dtype):
    """Against numpy (onnxruntime has no f64 Det)."""
    for shape in ((2, 3, 5, 5), (0, 3, 3), (4, 1, 1)):
        x = RNG.standard_normal(shape).astype(dtype)
        if shape[-1] == 5:
            x[0, 1, 4] = x[0, 1, 2] * 2                         # singular
        graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", onnx_type, shape)],
                                  [helper.make_tensor_value_info("y", onnx_type, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        got = ember.onnx().load(model).into_model().into_runnable().run([x])[0]
        want = np.linalg.det(x.astype(np.float64)).astype(dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
