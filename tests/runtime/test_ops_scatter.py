"""ScatterElements, ScatterND and GatherND through the C runtime against onnxruntime:
every reduction, several datum types, negative indices, batch dims; and an index outside
its axis skips its update (nothing is written out of bounds)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(23)
TYPES = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
         np.int32: TensorProto.INT32, np.int64: TensorProto.INT64, np.uint8: TensorProto.UINT8,
         np.float64: TensorProto.DOUBLE}


def model_of(node, data, indices, updates=None, opset=18):
    inputs = [helper.make_tensor_value_info("x", TYPES[data.dtype.type], list(data.shape))]
    inits = [numpy_helper.from_array(indices, "i")]
    if updates is not None:
        inputs.append(helper.make_tensor_value_info("u", TYPES[updates.dtype.type],
                                                    list(updates.shape)))
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", TYPES[data.dtype.type], None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_both(model, feeds):
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, dict(zip([i.name for i in session.get_inputs()], feeds)))[0]
    got = ember.onnx().load(model).into_model().into_runnable().run(feeds)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    return got, want


def values(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return (RNG.standard_normal(shape) * 4).astype(dtype)
    return RNG.integers(0, 50, shape).astype(dtype)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64])
def test_scatter_elements(reduction, dtype):
    data = values((4, 5, 3), dtype)
    indices = RNG.integers(-5, 5, (3, 4, 2)).astype(np.int64)
    if reduction == "none":   # duplicates are order-dependent: onnxruntime need not agree
        indices = np.stack([RNG.permutation(np.arange(-5, 0))[:4] for _ in range(6)]
                           ).reshape(3, 2, 4).transpose(0, 2, 1).copy()
    updates = values(indices.shape, dtype)
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                            reduction=reduction)
    got, want = run_both(model_of(node, data, indices, updates), [data, updates])
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("reduction, dtype", [
    (r, t) for r in ("none", "add", "mul", "min", "max") for t in (np.float32, np.int64)] +
    [("none", np.float16)])     # onnxruntime reduces no f16
def test_scatter_nd(reduction, dtype):
    data = values((5, 4, 3), dtype)
    indices = np.array([[[1, -1]], [[0, 2]], [[4, 0]]], np.int64)     # [3, 1, 2]: blocks of 3
    if reduction != "none":
        indices = np.concatenate([indices, indices[:1]])               # a repeated target
    updates = values(indices.shape[:-1] + (3,), dtype)
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)
    got, want = run_both(model_of(node, data, indices, updates), [data, updates])
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize("batch_dims, dtype", [(0, np.float32), (1, np.int32), (2, np.uint8)])
def test_gather_nd(batch_dims, dtype):
    data = values((2, 3, 4, 5), dtype)
    shape = data.shape[:batch_dims] + (3, 2)
    indices = np.stack([RNG.integers(-data.shape[batch_dims + j], data.shape[batch_dims + j],
                                     shape[:-1]) for j in range(2)], axis=-1).astype(np.int64)
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)
    got, want = run_both(model_of(node, data, indices), [data])
    np.testing.assert_array_equal(got, want)


def test_an_index_outside_its_axis_skips_its_update(tmp_path):
    (tmp_path / "graph.nnef").write_text(
        "version 1.0;\ngraph g(x, i, u, j, v) -> (y, z)\n{\n"
        "  x = external<scalar>(shape = [2, 4]);\n"
        "  i = external<integer>(shape = [2, 2]);\n"
        "  u = external<scalar>(shape = [2, 2]);\n"
        "  j = external<integer>(shape = [2, 2]);\n"
        "  v = external<scalar>(shape = [2]);\n"
        "  y = tract_core_scatter_elements(x, i, u, axis = 1);\n"
        '  z = tract_core_scatter_nd(x, j, v, reduction = "add");\n}\n')
    runnable = ember.load_model(str(tmp_path)).into_runnable()
    x = np.zeros((2, 4), np.float32)
    i = np.array([[1, 9], [-1, -9]], np.int64)
    u = np.array([[1, 2], [3, 4]], np.float32)
    j = np.array([[1, -1], [0, 9]], np.int64)
    y, z = runnable.run([x, i, u, j, np.array([5, 6], np.float32)])
    np.testing.assert_array_equal(y, [[0, 1, 0, 0], [0, 0, 0, 3]])
    np.testing.assert_array_equal(z, [[0, 0, 0, 0], [0, 0, 0, 5]])   # (0, 9) skipped
    with pytest.raises(ember.EmberError, match="reduction 'sum'"):
        (tmp_path / "graph.nnef").write_text(
            (tmp_path / "graph.nnef").read_text().replace('"add"', '"sum"'))
        ember.load_model(str(tmp_path))
