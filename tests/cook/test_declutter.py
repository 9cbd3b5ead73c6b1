"""Each declutter rewrite: the graph before and after (op lists) and unchanged outputs."""
import numpy as np
import pytest

from cook_testing import rand
from ember.cook.facts import Fact
from ember.cook.ir import Graph
from ember.cook.model import TypedModel
from ember.cook.ops import (BatchNorm, Binary, Cast, Clamp, Concat, Conv, MatMul, Pad,
                            Reshape, Squeeze, Transpose, Unary, Unsqueeze)
from ember.cook.passes.declutter import declutter


def graph_with_input(shape=(1, 3, 5, 5)):
    graph = Graph()
    return graph, graph.add_source("x", Fact("f32", shape))


def check(graph, before, after, shape=(1, 3, 5, 5)):
    """The op list before, declutter, the op list after, and outputs unchanged."""
    assert graph.op_types() == before
    model = TypedModel(graph)
    x = rand(*shape, seed=7)
    expected = model.run_reference([x])
    model.declutter()
    assert model.op_types() == after
    for got, want in zip(model.run_reference([x]), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # idempotent: a second declutter changes nothing
    again = model.op_types()
    model.declutter()
    assert model.op_types() == again
    return model


def test_fold_constants():
    graph, x = graph_with_input((2, 3))
    c = graph.add_const("c", np.arange(6, dtype=np.float32))
    r = graph.wire1("r", Reshape((3, 2)), [c])
    t = graph.wire1("t", Transpose((1, 0)), [r])
    graph.set_output(graph.wire1("y", Binary("add"), [x, t]))
    check(graph, ["Source", "Const", "Reshape", "Transpose", "Add"],
          ["Source", "Const", "Add"], (2, 3))


def conv_graph(consumers=1):
    graph, x = graph_with_input()
    w = graph.add_const("w", rand(4, 3, 3, 3, seed=1))
    b = graph.add_const("b", rand(4, seed=2))
    c = graph.wire1("conv", Conv([1, 1], [1, 1], [(1, 1), (1, 1)]), [x, w, b])
    params = [graph.add_const(n, v) for n, v in (
        ("scale", rand(4, seed=3)), ("bias", rand(4, seed=4)), ("mean", rand(4, seed=5)),
        ("var", np.abs(rand(4, seed=6)) + 0.5))]
    bn = graph.wire1("bn", BatchNorm(1e-5), [c] + params)
    graph.set_output(graph.wire1("y", Unary("relu"), [bn]))
    if consumers == 2:
        graph.set_output(c, "conv_out")
    return graph


def padded_conv_graph(pads, value=0.0, consumers=1):
    graph, x = graph_with_input()
    p = graph.wire1("pad", Pad(pads, value=value), [x])
    w = graph.add_const("w", rand(4, 3, 3, 2, seed=1))
    graph.set_output(graph.wire1("y", Conv([1, 2], [1, 1], [(1, 0), (0, 1)]), [p, w]))
    if consumers == 2:
        graph.set_output(p, "padded")
    return graph


def test_zero_pad_folds_into_conv_padding():
    model = check(padded_conv_graph([(0, 0), (0, 0), (2, 0), (1, 3)]),
                  ["Source", "Pad", "Const", "Conv"], ["Source", "Const", "Conv"])
    (conv,) = [n.op for n in model.graph.nodes.values() if isinstance(n.op, Conv)]
    assert conv.padding == ((3, 0), (1, 4))


@pytest.mark.parametrize("pads, value, consumers", [
    ([(0, 0), (0, 0), (2, 0), (1, 3)], 1.5, 1),   # not zeros
    ([(1, 0), (0, 0), (2, 0), (1, 3)], 0.0, 1),   # the batch axis
    ([(0, 0), (0, 0), (2, 0), (1, 3)], 0.0, 2),   # the padded tensor read elsewhere
])
def test_pad_kept_when_not_the_convs_own(pads, value, consumers):
    check(padded_conv_graph(pads, value, consumers), ["Source", "Pad", "Const", "Conv"],
          ["Source", "Pad", "Const", "Conv"])


def test_batchnorm_folds_into_conv():
    check(conv_graph(), ["Source", "Const", "Const", "Conv", "Const", "Const", "Const", "Const",
                         "BatchNorm", "Relu"],
          ["Source", "Const", "Const", "Conv", "Relu"])


def test_batchnorm_not_folded_when_conv_has_other_readers():
    check(conv_graph(consumers=2),
          ["Source", "Const", "Const", "Conv", "Const", "Const", "Const", "Const", "BatchNorm",
           "Relu"],
          ["Source", "Const", "Const", "Conv", "Const", "Mul", "Const", "Add", "Relu"])


def test_batchnorm_alone_becomes_mul_add():
    graph, x = graph_with_input()
    params = [graph.add_const(n, np.abs(rand(3, seed=i)) + 0.5)
              for i, n in enumerate(("s", "b", "m", "v"))]
    graph.set_output(graph.wire1("bn", BatchNorm(1e-3), [x] + params))
    check(graph, ["Source", "Const", "Const", "Const", "Const", "BatchNorm"],
          ["Source", "Const", "Mul", "Const", "Add"])


@pytest.mark.parametrize("kind,replacement", [("sub", "Add"), ("div", "Mul")])
def test_sub_and_div_by_constant(kind, replacement):
    graph, x = graph_with_input()
    c = graph.add_const("c", np.abs(rand(3, 1, 1, seed=1)) + 1)
    graph.set_output(graph.wire1("y", Binary(kind), [x, c]))
    check(graph, ["Source", "Const", kind.capitalize()], ["Source", "Const", replacement])


def test_constant_operand_moves_right():
    graph, x = graph_with_input()
    c = graph.add_const("c", rand(3, 1, 1, seed=1))
    y = graph.wire1("y", Binary("add"), [c, x])
    graph.set_output(y)
    model = check(graph, ["Source", "Const", "Add"], ["Source", "Const", "Add"])
    add = [n for n in model.nodes() if n.op.name == "Add"][0]
    assert model.graph.nodes[add.inputs[1].node].op.name == "Const"


def test_neutral_operands_removed():
    graph, x = graph_with_input()
    zero = graph.add_const("zero", np.zeros((3, 1, 1), np.float32))
    one = graph.add_const("one", np.ones((), np.float32))
    a = graph.wire1("a", Binary("add"), [x, zero])
    m = graph.wire1("m", Binary("mul"), [a, one])
    graph.set_output(graph.wire1("y", Unary("sigmoid"), [m]))
    check(graph, ["Source", "Const", "Add", "Const", "Mul", "Sigmoid"], ["Source", "Sigmoid"])


def test_neutral_operand_that_broadcasts_is_kept():
    graph, x = graph_with_input((3,))
    zero = graph.add_const("zero", np.zeros((2, 3), np.float32))
    graph.set_output(graph.wire1("y", Binary("add"), [x, zero]))
    check(graph, ["Source", "Const", "Add"], ["Source", "Const", "Add"], (3,))


def test_relu_forms():
    graph, x = graph_with_input()
    zero = graph.add_const("zero", np.zeros((1, 1, 1, 1), np.float32))
    a = graph.wire1("a", Binary("max"), [x, zero])
    b = graph.wire1("b", Clamp(0.0), [x])
    c = graph.wire1("c", Clamp(), [x])
    d = graph.wire1("d", Clamp(0.0, 6.0), [x])
    for outlet in (a, b, c, d):
        graph.set_output(outlet)
    check(graph, ["Source", "Const", "Max", "Clamp", "Clamp", "Relu6"],
          ["Source", "Relu", "Relu", "Relu6"])


def test_affine_chains_merge():
    graph, x = graph_with_input()
    consts = [graph.add_const(f"c{i}", rand(1, 3, 1, 1, seed=i)) for i in range(4)]
    m1 = graph.wire1("m1", Binary("mul"), [x, consts[0]])
    a1 = graph.wire1("a1", Binary("add"), [m1, consts[1]])
    m2 = graph.wire1("m2", Binary("mul"), [a1, consts[2]])
    a2 = graph.wire1("a2", Binary("add"), [m2, consts[3]])
    graph.set_output(graph.wire1("y", Unary("relu"), [a2]))
    check(graph, ["Source", "Const", "Mul", "Const", "Add", "Const", "Mul", "Const", "Add",
                  "Relu"],
          ["Source", "Const", "Mul", "Const", "Add", "Relu"])


def test_affine_not_merged_when_shared():
    graph, x = graph_with_input()
    c0, c1 = graph.add_const("c0", rand(3, 1, 1, seed=1)), graph.add_const("c1", rand(3, 1, 1))
    m1 = graph.wire1("m1", Binary("mul"), [x, c0])
    m2 = graph.wire1("m2", Binary("mul"), [m1, c1])
    graph.set_output(m2)
    graph.set_output(m1, "m1")
    check(graph, ["Source", "Const", "Mul", "Const", "Mul"],
          ["Source", "Const", "Mul", "Const", "Mul"])


def test_shape_identities_removed():
    graph, x = graph_with_input((2, 3, 4))
    a = graph.wire1("copy", Unary("copy"), [x])
    b = graph.wire1("t0", Transpose((0, 1, 2)), [a])
    c = graph.wire1("r0", Reshape((2, 3, 4)), [b])
    d = graph.wire1("cat", Concat(1), [c])
    e = graph.wire1("cast", Cast("f32"), [d])
    f = graph.wire1("sq", Squeeze(()), [e])
    graph.set_output(graph.wire1("y", Unary("tanh"), [f]))
    check(graph, ["Source", "Copy", "Transpose", "Reshape", "Concat", "Cast", "Squeeze", "Tanh"],
          ["Source", "Tanh"], (2, 3, 4))


def test_transposes_and_reshapes_merge():
    graph, x = graph_with_input((2, 3, 4))
    t1 = graph.wire1("t1", Transpose((1, 0, 2)), [x])
    t2 = graph.wire1("t2", Transpose((2, 0, 1)), [t1])
    u = graph.wire1("u", Unsqueeze((0,)), [t2])
    r1 = graph.wire1("r1", Reshape((4, 6)), [u])
    graph.set_output(graph.wire1("r2", Reshape((24,)), [r1]))
    check(graph, ["Source", "Transpose", "Transpose", "Unsqueeze", "Reshape", "Reshape"],
          ["Source", "Transpose", "Reshape"], (2, 3, 4))


def test_matmul_constant_is_pre_transposed():
    graph, x = graph_with_input((2, 4))
    w = graph.add_const("w", rand(5, 4, seed=1))
    graph.set_output(graph.wire1("y", MatMul(transpose_b=True), [x, w]))
    model = check(graph, ["Source", "Const", "MatMul"], ["Source", "Const", "MatMul"], (2, 4))
    matmul = [n for n in model.nodes() if n.op.name == "MatMul"][0]
    assert matmul.op == MatMul() and model.graph.fact(matmul.inputs[1]).shape == (4, 5)


def test_declutter_reports_counts():
    graph = conv_graph()
    counts = declutter(graph)
    assert counts["simplify"] >= 1 and counts["fold_conv_affine"] == 2


def test_patch_refuses_type_changes():
    from ember.cook import CookError
    from ember.cook.ir import Patch
    graph, x = graph_with_input((2, 3))
    y = graph.wire1("y", Unary("relu"), [x])
    graph.set_output(y)
    patch = Patch(graph, "bad")
    wrong = patch.wire1("wrong", Reshape((3, 2)), [x])
    with pytest.raises(CookError, match="would change its output"):
        patch.shunt(y, wrong).apply()



def test_zero_initial_state_dropped_from_recurrent():
    from ember.cook.ops.recurrent import Recurrent
    from ember.cook.ops.tensor import Broadcast
    from ember.cook import dims
    graph = Graph()
    n = dims.symbol("N")
    x = graph.add_source("x", Fact("f32", (4, n, 3)))
    w, r = graph.add_const("w", rand(1, 6, 3)), graph.add_const("r", rand(1, 6, 2, seed=1))
    zeros = graph.wire1("zeros", Broadcast((1, n, 2)), [graph.add_const("z", np.float32(0))])
    op = Recurrent("gru", 2, ("forward",), ("X", "W", "R", "initial_h"),
                   ("sigmoid", "tanh"))
    graph.set_output(graph.wire("gru", op, [x, w, r, zeros])[0], "y")
    model = check(graph, ["Source", "Const", "Const", "Const", "Broadcast", "GRU"],
                  ["Source", "Const", "Const", "GRU"], shape=(4, 5, 3))
    assert model.nodes()[-1].op.present == ("X", "W", "R")
