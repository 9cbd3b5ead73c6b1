"""What the plan writer lowers before writing, through the C runtime against
onnxruntime: f16 (and max pooling's small integers) computed by the f32 kernels through
casts, batch normalisation of run-time statistics, and reshapes to an empty tensor."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.cook.nnef.writer import plan_files

RNG = np.random.default_rng(5)


def model_of(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_both(model, feeds):
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, dict(zip([i.name for i in session.get_inputs()], feeds)))
    typed = ember.onnx().load(model).into_model()
    got = typed.into_runnable().run(feeds)
    return typed, got, want


def test_f16_conv_matmul_softmax_pool_compute_in_f32():
    f16 = TensorProto.FLOAT16
    w = (RNG.standard_normal((6, 3, 3, 3)) * 0.3).astype(np.float16)
    m = (RNG.standard_normal((4, 5)) * 0.3).astype(np.float16)
    model = model_of(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2]),
         helper.make_node("MatMul", ["a", "m"], ["y0"]),
         helper.make_node("Softmax", ["y0"], ["y"], axis=-1)],
        [helper.make_tensor_value_info("x", f16, [1, 3, 10, 10])],
        [helper.make_tensor_value_info("y", f16, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(m, "m")])
    x = RNG.standard_normal((1, 3, 10, 10)).astype(np.float16)
    typed, (got,), (want,) = run_both(model, [x])
    assert got.dtype == np.float16 and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), atol=2e-3)
    text = plan_files(typed)["graph.nnef"].decode()
    assert 'tract_core_cast(' in text and 'to = "f16"' in text
    assert typed.output_facts()[0].datum_type == "f16"     # the model itself keeps f16


@pytest.mark.parametrize("onnx_type, dtype", [(TensorProto.UINT8, np.uint8),
                                              (TensorProto.INT8, np.int8)])
def test_max_pool_of_small_integers_is_exact(onnx_type, dtype):
    model = model_of(
        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        [helper.make_tensor_value_info("x", onnx_type, [2, 3, 7, 5])],
        [helper.make_tensor_value_info("y", onnx_type, None)])
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (2, 3, 7, 5), endpoint=True).astype(dtype)
    x.flat[0], x.flat[1] = info.min, info.max
    _, (got,), (want,) = run_both(model, [x])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_batch_norm_of_run_time_statistics():
    names = ["x", "scale", "bias", "mean", "var"]
    model = model_of(
        [helper.make_node("BatchNormalization", names, ["y"], epsilon=1e-3)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3, 5])] +
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in names[1:]],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    feeds = [RNG.standard_normal((2, 4, 3, 5)).astype(np.float32),
             RNG.standard_normal(4).astype(np.float32),
             RNG.standard_normal(4).astype(np.float32),
             RNG.standard_normal(4).astype(np.float32),
             RNG.random(4).astype(np.float32) + 0.1]
    _, (got,), (want,) = run_both(model, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_reshape_to_an_empty_tensor_with_allowzero():
    model = model_of(
        [helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([3, 4, 0], np.int64), "s")], opset=14)
    _, (got,), (want,) = run_both(model, [np.zeros((0, 3, 4), np.float32)])
    assert got.shape == want.shape == (3, 4, 0)
