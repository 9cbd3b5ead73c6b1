"""Sizes decided by values, through the C runtime: NonZero, Compress and Unique, their
outputs used by later ops (the runtime cuts the plan into stages there, and binds the
decided size between them; csrc/core/model_stages.h), compared with onnxruntime over
inputs whose decided sizes vary from run to run on one runnable, zero included."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import ember

RNG = np.random.default_rng(3)


def model_of(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(model, feeds_list):
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    runnable = ember.onnx().load(model).into_model().into_runnable()
    for feeds in feeds_list:
        want = session.run(None, dict(zip([i.name for i in session.get_inputs()], feeds)))
        got = runnable.run(feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
            np.testing.assert_array_equal(g, w)
    return runnable


def sparse(shape, density):
    x = RNG.standard_normal(shape).astype(np.float32)
    return np.where(RNG.random(shape) < density, x, 0).astype(np.float32)


def test_nonzero_then_ops_on_its_output():
    model = model_of(
        [helper.make_node("NonZero", ["x"], ["idx"]),
         helper.make_node("Transpose", ["idx"], ["t"], perm=[1, 0]),
         helper.make_node("Relu", ["x"], ["r"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [helper.make_tensor_value_info("t", TensorProto.INT64, None),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
    runnable = check(model, [[sparse((3, 5), d)] for d in (0.5, 0.0, 1.0, 0.2, 0.5)])
    x = sparse((3, 5), 0.5)
    first = runnable.run([x])
    held = runnable.memory_bytes
    for _ in range(3):                 # the same decided size: the same prepared stages
        again = runnable.run([x])
        assert runnable.memory_bytes == held
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


def test_compress_feeds_later_ops_with_a_symbolic_batch():
    model = model_of(
        [helper.make_node("Compress", ["x", "keep"], ["c"], axis=0),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Concat", ["r", "r"], ["y"], axis=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("keep", TensorProto.BOOL, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    feeds = []
    for n, p in [(6, 0.5), (6, 0.0), (9, 1.0), (2, 0.5)]:
        feeds.append([RNG.standard_normal((n, 4)).astype(np.float32), RNG.random(n) < p])
    check(model, feeds)


def test_compress_with_a_short_condition_and_no_axis():
    model = model_of(
        [helper.make_node("Compress", ["x", "keep"], ["c"]),
         helper.make_node("Neg", ["c"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("keep", TensorProto.BOOL, [5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    check(model, [[RNG.standard_normal((3, 4)).astype(np.float32), RNG.random(5) < 0.6]
                  for _ in range(4)])


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_unique_every_output(sorted_, axis):
    attrs = {"sorted": sorted_} if axis is None else {"sorted": sorted_, "axis": axis}
    model = model_of(
        [helper.make_node("Unique", ["x"], ["v", "i", "inv", "c"], **attrs),
         helper.make_node("Concat", ["v", "v"], ["nv"], axis=0)],
        [helper.make_tensor_value_info("x", TensorProto.INT64, [4, 6])],
        [helper.make_tensor_value_info(name, elem, None) for name, elem in
         [("nv", TensorProto.INT64), ("i", TensorProto.INT64), ("inv", TensorProto.INT64),
          ("c", TensorProto.INT64)]], opset=11)
    feeds = [[RNG.integers(0, k, (4, 6)).astype(np.int64)] for k in (3, 1, 50, 2)]
    check(model, feeds)


def test_unique_of_floats():
    model = model_of(
        [helper.make_node("Unique", ["x"], ["v", "i", "inv", "c"], sorted=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10])],
        [helper.make_tensor_value_info(n, e, None) for n, e in
         [("v", TensorProto.FLOAT), ("i", TensorProto.INT64), ("inv", TensorProto.INT64),
          ("c", TensorProto.INT64)]], opset=11)
    x = np.array([2.5, -1, 0, -0.0, 2.5, 7, -1, 1e-30, 3, 3], np.float32)
    check(model, [[x], [np.zeros(10, np.float32)]])


def test_a_count_that_is_not_a_symbol_is_refused(tmp_path):
    (tmp_path / "graph.nnef").write_text(
        "version 1.0;\ngraph g(x) -> (y) {\n  x = external<scalar>(shape = [4]);\n"
        "  y = ember_nonzero(x, count = -1);\n}\n")
    with pytest.raises(ember.EmberError, match="decides a size at run time"):
        ember.load_model(str(tmp_path))


@pytest.mark.parametrize("elem,dtype", [(TensorProto.FLOAT, np.float32),
                                        (TensorProto.INT64, np.int64),
                                        (TensorProto.INT32, np.int32)])
def test_range_of_run_time_bounds(elem, dtype):
    """Range's length is decided by its inputs' values at each run; ops after it follow."""
    model = model_of(
        [helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
         helper.make_node("Concat", ["r", "r"], ["y"], axis=0)],
        [helper.make_tensor_value_info(n, elem, []) for n in ("start", "limit", "delta")],
        [helper.make_tensor_value_info("y", elem, None)], opset=11)
    feeds = [[np.array(a, dtype), np.array(b, dtype), np.array(c, dtype)]
             for a, b, c in [(0, 10, 3), (5, 1, -2), (2, 2, 1), (1, 8, 1), (0, 10, 3)]]
    if dtype == np.float32:
        feeds.append([np.array(0.5, dtype), np.array(2.25, dtype), np.array(0.25, dtype)])
    check(model, feeds)
