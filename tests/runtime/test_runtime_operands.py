"""Operands ONNX gives as tensors and plans hold as attributes, known only at run time:
Reshape's shape, Expand's and ConstantOfShape's shape, Tile's repeats, Slice's starts,
ends and steps, TopK's k, Pad's pads, CumSum's axis and a reduction's axes. The plan
decides them into symbols (ember_decide_values) and the dims they give after the op
(ember_decide_dims); the runtime builds the ops after at those values. Checked against
onnxruntime on one runnable over more operand values than its binding cache holds."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import ember

RNG = np.random.default_rng(17)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model_of(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(o, t, None) for o, t in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(model, feeds_list):
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    runnable = ember.onnx().load(model).into_model().into_runnable()
    names = [i.name for i in session.get_inputs()]
    for feeds in feeds_list + feeds_list[:2]:     # back to values seen before
        want = session.run(None, dict(zip(names, feeds)))
        got = runnable.run(feeds)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (feeds[1:], g.shape, w.shape)
            if g.dtype.kind == "f":       # sums may round differently
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
            else:
                np.testing.assert_array_equal(g, w)


def floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_reshape_with_zero_and_minus_one():
    model = model_of([helper.make_node("Reshape", ["x", "s"], ["r"]),
                      helper.make_node("Relu", ["r"], ["y"])],
                     [("x", F, [2, 3, 4]), ("s", I64, [3])], [("y", F)])
    x = floats(2, 3, 4)
    check(model, [[x, np.array(s)] for s in
                  ([4, 3, 2], [0, -1, 2], [0, 0, -1], [-1, 1, 1], [1, 24, 1], [6, 4, 1])])


def test_expand_and_constant_of_shape():
    model = model_of([helper.make_node("Expand", ["x", "s"], ["y"])],
                     [("x", F, [3, 1]), ("s", I64, [3])], [("y", F)])
    x = floats(3, 1)
    check(model, [[x, np.array(s)] for s in ([1, 3, 4], [2, 1, 1], [2, 3, 5], [1, 1, 7],
                                             [4, 3, 0])])
    fill = helper.make_tensor("v", I64, [1], [7])
    model = model_of([helper.make_node("ConstantOfShape", ["s"], ["y"], value=fill)],
                     [("s", I64, [2])], [("y", I64)])
    check(model, [[np.array(s)] for s in ([2, 3], [0, 4], [5, 1], [1, 1], [3, 3])])


def test_tile_topk_cumsum():
    model = model_of([helper.make_node("Tile", ["x", "r"], ["y"])],
                     [("x", F, [2, 3]), ("r", I64, [2])], [("y", F)])
    x = floats(2, 3)
    check(model, [[x, np.array(r)] for r in ([1, 1], [2, 3], [0, 2], [3, 1], [1, 4])])
    model = model_of([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
                     [("x", F, [3, 9]), ("k", I64, [1])], [("v", F), ("i", I64)])
    x = floats(3, 9)
    check(model, [[x, np.array([k])] for k in (1, 4, 9, 0, 2)])
    model = model_of([helper.make_node("CumSum", ["x", "a"], ["y"], reverse=1)],
                     [("x", F, [3, 4, 5]), ("a", I64, [])], [("y", F)])
    x = floats(3, 4, 5)
    check(model, [[x, np.array(a)] for a in (0, 1, 2, -1, -3)])


def test_slice_of_every_kind_of_bound():
    axes = helper.make_tensor("axes", I64, [2], [0, 1])
    model = model_of([helper.make_node("Constant", [], ["a"], value=axes),
                      helper.make_node("Slice", ["x", "b", "e", "a", "s"], ["y"])],
                     [("x", F, [6, 10]), ("b", I64, [2]), ("e", I64, [2]), ("s", I64, [2])],
                     [("y", F)])
    x = floats(6, 10)
    big = np.iinfo(np.int64).max
    cases = [([0, 2], [6, 7], [1, 1]), ([-3, 0], [big, 0], [1, 1]),   # end 0: empty
             ([5, 9], [0, -big], [-1, -2]),                           # backwards, end 0
             ([-100, 3], [100, 4], [2, 3]), ([1, -1], [-1, -11], [1, -1]),
             ([2, 2], [2, 2], [1, 1])]
    check(model, [[x, np.array(b), np.array(e), np.array(s)]
                  for b, e, s in cases])


def test_pad_and_reduce_axes():
    model = model_of([helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
                     [("x", F, [4, 5]), ("p", I64, [4])], [("y", F)])
    x = floats(4, 5)
    check(model, [[x, np.array(p)] for p in ([0, 0, 0, 0], [1, 2, 3, 4], [3, 0, 0, 4],
                                             [0, 1, 2, 0], [2, 2, 2, 2])])
    model = model_of([helper.make_node("ReduceMax", ["x", "a"], ["y"], keepdims=1)],
                     [("x", F, [3, 4, 5]), ("a", I64, [2])], [("y", F)])
    x = floats(3, 4, 5)
    check(model, [[x, np.array(a)] for a in ([0, 1], [1, 2], [-1, 0], [2, -3], [0, 2])])


def test_shape_of_a_symbolic_tensor_as_data():
    model = model_of([helper.make_node("Shape", ["x"], ["s"]),
                      helper.make_node("Cast", ["s"], ["f"], to=F),
                      helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0),
                      helper.make_node("Gather", ["f", "one"], ["n"], axis=0),
                      helper.make_node("Div", ["t", "n"], ["y"])],
                     [("x", F, ["N", "T"]), ("one", I64, [])], [("y", F), ("s", I64)])
    check(model, [[floats(n, t), np.array(1)] for n, t in ((2, 3), (1, 7), (4, 1), (3, 5))])


def test_bad_run_time_operands_are_refused_cleanly():
    model = model_of([helper.make_node("Reshape", ["x", "s"], ["y"])],
                     [("x", F, [2, 3]), ("s", I64, [2])], [("y", F)])
    runnable = ember.onnx().load(model).into_model().into_runnable()
    x = floats(2, 3)
    for spec, message in (([4, 2], "element counts differ"), ([-2, 3], "negative dim"),
                          ([-1, -1], "more than one -1"), ([2**40, 2**40], "too many elements")):
        with pytest.raises(ember.EmberError, match=message):
            runnable.run([x, np.array(spec)])
    np.testing.assert_array_equal(runnable.run([x, np.array([3, 2])])[0], x.reshape(3, 2))
    model = model_of([helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
                     [("x", F, [2, 3]), ("s", I64, [2])], [("y", F)], opset=14)
    with pytest.raises(ember.cook.errors.UnsupportedOp, match="allowzero"):
        ember.onnx().load(model).into_model().into_runnable()
