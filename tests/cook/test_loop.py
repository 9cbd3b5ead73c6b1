"""ONNX Loop: typing (trip counts and changing carried dims as symbols) and run_reference
against onnxruntime."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from cook_testing import assert_close, check_onnx, make_model, node, run_ort
from ember.cook import UnsupportedOp, dims
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def body(nodes, carried, outputs, initializers=()):
    """A Loop body: (i, cond_in, carried...) -> outputs; carried: [(name, type, shape)]."""
    inputs = [helper.make_tensor_value_info("i", I64, []),
              helper.make_tensor_value_info("cond_in", BOOL, [])]
    inputs += [helper.make_tensor_value_info(n, t, s) for n, t, s in carried]
    outs = [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs]
    return helper.make_graph(nodes, "body", inputs, outs, list(initializers))


def loop_node(inputs, outputs, graph):
    return helper.make_node("Loop", inputs, outputs, body=graph)


def scale_body():
    """y_out = 2*y_in + i; cond passes through; the scan output is y_out."""
    return body([node("Cast", ["i"], ["i_f"], to=F),
                 node("Add", ["y_in", "y_in"], ["twice"]),
                 node("Add", ["twice", "i_f"], ["y_out"]),
                 node("Identity", ["cond_in"], ["cond_out"]),
                 node("Identity", ["y_out"], ["scan"])],
                [("y_in", F, [2, 3])],
                [("cond_out", BOOL, []), ("y_out", F, [2, 3]), ("scan", F, [2, 3])])


def loop_ops(model):
    return [n for n in model.nodes() if n.op.name == "Loop"]


def test_counting_loop_constant_trip_count_types_concretely():
    model = make_model([loop_node(["M", "", "y"], ["y_final", "ys"], scale_body())],
                       {"y": ((2, 3), np.float32)}, ["y_final", "ys"],
                       {"M": np.asarray(4, np.int64)})
    y = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    cooked = check_onnx(model, {"y": y}, round_trip=False)
    assert loop_ops(cooked)
    assert [str(f) for f in cooked.output_facts()] == ["2,3,f32", "4,2,3,f32"]


def test_cond_input_true_and_passed_through_keeps_the_count():
    model = make_model([loop_node(["M", "go", "y"], ["y_final", "ys"], scale_body())],
                       {"y": ((2, 3), np.float32)}, ["y_final", "ys"],
                       {"M": np.asarray(3, np.int64), "go": np.asarray(True)})
    cooked = check_onnx(model, {"y": np.ones((2, 3), np.float32)}, round_trip=False)
    assert str(cooked.output_fact(1)) == "3,2,3,f32"


def while_model():
    """s grows by x each iteration while s < limit: the trip count depends on the data."""
    graph = body([node("Add", ["s_in", "x"], ["s_out"]),
                  node("Less", ["s_out", "limit"], ["cond_out"]),
                  node("Identity", ["s_out"], ["trace"])],
                 [("s_in", F, [])],
                 [("cond_out", BOOL, []), ("s_out", F, []), ("trace", F, [])])
    return make_model([node("Less", ["s0", "limit"], ["go"]),
                       loop_node(["", "go", "s0"], ["s_final", "trace_all"], graph)],
                      {"x": ((), np.float32), "limit": ((), np.float32)},
                      ["s_final", "trace_all"], {"s0": np.asarray(0, np.float32)})


def test_while_loop_trip_count_is_a_symbol_decided_by_the_run():
    model = while_model()
    cooked = cook_onnx.load(model).into_model()
    trips = cooked.output_fact(1).shape[0]
    assert not dims.is_concrete(trips)
    assert not cooked.input_symbols()            # run_reference needs nothing bound
    counts = set()
    for x, limit in [(1.5, 5.0), (0.5, 4.2)]:
        feeds = {"x": np.asarray(x, np.float32), "limit": np.asarray(limit, np.float32)}
        got = cooked.run_reference([feeds["x"], feeds["limit"]])
        assert_close(got, run_ort(model, feeds))
        counts.add(got[1].shape[0])
    assert counts == {4, 9}


def test_loop_reads_outer_scope_tensors():
    graph = body([node("Mul", ["y_in", "w"], ["scaled"]),
                  node("Add", ["scaled", "b"], ["y_out"]),
                  node("ReduceSum", ["y_out"], ["total"], keepdims=0),
                  node("Identity", ["cond_in"], ["cond_out"])],
                 [("y_in", F, [2, 3])],
                 [("cond_out", BOOL, []), ("y_out", F, [2, 3]), ("total", F, [])])
    model = make_model([loop_node(["M", "", "y"], ["y_final", "totals"], graph)],
                       {"y": ((2, 3), np.float32), "w": ((2, 3), np.float32)},
                       ["y_final", "totals"],
                       {"M": np.asarray(3, np.int64), "b": np.asarray(0.5, np.float32)})
    rng = np.random.default_rng(1)
    feeds = {"y": rng.standard_normal((2, 3)).astype(np.float32),
             "w": rng.standard_normal((2, 3)).astype(np.float32)}
    cooked = check_onnx(model, feeds, round_trip=False)
    assert str(cooked.output_fact(1)) == "3,f32"


def test_zero_iterations_give_empty_scan_outputs():
    model = make_model([loop_node(["M", "", "y"], ["y_final", "ys"], scale_body())],
                       {"y": ((2, 3), np.float32)}, ["y_final", "ys"],
                       {"M": np.asarray(0, np.int64)})
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    cooked = check_onnx(model, {"y": y}, round_trip=False)
    assert str(cooked.output_fact(1)) == "0,2,3,f32"
    got = cooked.run_reference([y])
    assert got[1].shape == (0, 2, 3) and np.array_equal(got[0], y)


def test_runtime_zero_trip_count_stacks_nothing():
    model = make_model([loop_node(["M", "", "y"], ["y_final", "ys"], scale_body())],
                       {"M": ((), np.int64), "y": ((2, 3), np.float32)}, ["y_final", "ys"])
    y = np.ones((2, 3), np.float32)
    for count in (0, 2):
        check_onnx(model, {"M": np.asarray(count, np.int64), "y": y}, round_trip=False)


def growing_model():
    """v gets one more element per iteration: its length is a symbol."""
    graph = body([node("Cast", ["i"], ["i_f"], to=F),
                  node("Unsqueeze", ["i_f", "zero"], ["item"]),
                  node("Concat", ["v_in", "item"], ["v_out"], axis=0),
                  node("Identity", ["cond_in"], ["cond_out"]),
                  node("ReduceSum", ["v_out"], ["total"], keepdims=0)],
                 [("v_in", F, None)],
                 [("cond_out", BOOL, []), ("v_out", F, None), ("total", F, [])],
                 [helper.make_tensor("zero", I64, [1], [0])])
    return make_model([loop_node(["M", "", "v"], ["v_final", "totals"], graph)],
                      {"M": ((), np.int64), "v": ((2,), np.float32)}, ["v_final", "totals"])


def test_carried_dim_that_changes_becomes_a_symbol():
    model = growing_model()
    cooked = cook_onnx.load(model).into_model()
    length, = cooked.output_fact(0).shape
    assert not dims.is_concrete(length)
    for count in (0, 3):
        feeds = {"M": np.asarray(count, np.int64), "v": np.asarray([5, 6], np.float32)}
        assert_close(cooked.run_reference([feeds["M"], feeds["v"]]), run_ort(model, feeds))


def test_outer_symbols_bind_inside_the_body():
    graph = body([node("Add", ["y_in", "x"], ["y_out"]),
                  node("Identity", ["cond_in"], ["cond_out"])],
                 [("y_in", F, ["S", 3])],
                 [("cond_out", BOOL, []), ("y_out", F, ["S", 3]), ("y_out", F, ["S", 3])])
    model = make_model([loop_node(["M", "", "x"], ["y_final", "ys"], graph)],
                       {"x": (("S", 3), np.float32)}, ["y_final", "ys"],
                       {"M": np.asarray(2, np.int64)})
    cooked = cook_onnx.load(model).into_model()
    assert str(cooked.output_fact(1)) == "2,S,3,f32"
    for s in (1, 4):
        x = np.random.default_rng(s).standard_normal((s, 3)).astype(np.float32)
        assert_close(cooked.run_reference([x]), run_ort(model, {"x": x}))


def slice_body():
    """Reads x[i:i+1]: Slice needs constant bounds, so this body types only per iteration."""
    return body([node("Add", ["i", "one"], ["end"]),
                 node("Unsqueeze", ["i", "zero"], ["start1"]),
                 node("Unsqueeze", ["end", "zero"], ["end1"]),
                 node("Slice", ["table", "start1", "end1"], ["item"]),
                 node("Add", ["y_in", "item"], ["y_out"]),
                 node("Identity", ["cond_in"], ["cond_out"]),
                 node("Identity", ["y_out"], ["scan"])],
                [("y_in", F, [1])],
                [("cond_out", BOOL, []), ("y_out", F, [1]), ("scan", F, [1])],
                [helper.make_tensor("one", I64, [], [1]),
                 helper.make_tensor("zero", I64, [1], [0])])


def test_known_trip_count_inlines_a_body_that_needs_constant_iterations():
    table = np.asarray([1, 2, 3, 4, 5], np.float32)
    model = make_model([loop_node(["M", "", "y"], ["y_final", "ys"], slice_body())],
                       {"y": ((1,), np.float32)}, ["y_final", "ys"],
                       {"M": np.asarray(4, np.int64), "table": table})
    cooked = check_onnx(model, {"y": np.asarray([-2], np.float32)}, round_trip=False)
    assert not loop_ops(cooked)
    assert str(cooked.output_fact(1)) == "4,1,f32"


def test_unsupported_loop_names_the_node_and_the_value():
    graph = body([node("Unsqueeze", ["v_in", "zero"], ["v_out"]),
                  node("Identity", ["cond_in"], ["cond_out"])],
                 [("v_in", F, None)], [("cond_out", BOOL, []), ("v_out", F, None)],
                 [helper.make_tensor("zero", I64, [1], [0])])
    model = make_model([node("Loop", ["M", "", "v"], ["v_final"], body=graph, name="nest")],
                       {"M": ((), np.int64), "v": ((2,), np.float32)}, ["v_final"])
    with pytest.raises(UnsupportedOp, match=r"nest.*Loop.*'v_in'.*rank"):
        cook_onnx.load(model).into_model()


def test_loop_writes_ember_loop_with_its_body_and_reads_back():
    model = make_model([loop_node(["M", "", "y"], ["y_final", "ys"], scale_body())],
                       {"y": ((2, 3), np.float32)}, ["y_final", "ys"],
                       {"M": np.asarray(2, np.int64)})
    cooked = cook_onnx.load(model).into_model()
    files = cook_nnef.plan_files(cooked)
    assert "ember_loop(2, true," in files["graph.nnef"].decode()
    assert [f for f in files if f.endswith(".nnef") and f != "graph.nnef"]
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_close(cook_nnef.load(cook_nnef.to_tar_bytes(cooked)).run_reference([y]),
                 cooked.run_reference([y]))


TORCH_LOOP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "data", "torch", "halve_loop.script.onnx")


def test_torchscript_while_loop():
    """Exported by torch 2.13 (torch.onnx.export(torch.jit.script(m), (x, limit), f,
    dynamo=False, opset_version=17, input_names=["x", "limit"], output_names=["y",
    "total", "steps"])) from a module whose forward is:

        total = torch.zeros_like(x); steps = 0
        while bool(x.abs().sum() > limit):
            x = x * 0.5; total = total + x; steps += 1
        return x, total, torch.tensor(steps)

    M is INT64_MAX and the condition comes from the data: the count is the run's."""
    model = onnx.load(TORCH_LOOP)
    cooked = cook_onnx.load(model).into_model()
    assert [str(f) for f in cooked.output_facts()] == ["2,3,f32", "2,3,f32", "i64"]
    steps = set()
    for scale in (8.0, 100.0, 0.1):
        feeds = {"x": (np.random.default_rng(0).standard_normal((2, 3)) * scale)
                 .astype(np.float32), "limit": np.asarray(1.0, np.float32)}
        got = cooked.run_reference([feeds["x"], feeds["limit"]])
        assert_close(got, run_ort(model, feeds))
        steps.add(int(got[2]))
    assert len(steps) == 3
