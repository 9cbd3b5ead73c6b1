"""ONNX Scan through the C runtime (ember_scan, core/control_run.c) against onnxruntime:
states and scan outputs, scan inputs and outputs on other axes and reversed, several
scan inputs, a body reading outer values, a symbolic length at two lengths on one
runnable, no item at all, and inputs of different lengths refused with an error."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.cook.nnef import plan_files

F32 = TensorProto.FLOAT


def value(name, shape=None):
    return helper.make_tensor_value_info(name, F32, shape)


def accumulate_body(n_scan=1, outer=False):
    """(sum, item…) -> (sum + Σ item·w, (sum + Σ item·w) * 2): a running sum of the items
    (times the outer `w` when given), and a scan output of each step's doubled sum."""
    items = [f"item{i}" for i in range(n_scan)]
    nodes, total = [], "sum_in"
    for i, item in enumerate(items):
        term = item
        if outer:
            nodes.append(helper.make_node("Mul", [item, "w"], [f"weighted{i}"]))
            term = f"weighted{i}"
        nodes.append(helper.make_node("Add", [total, term], [f"total{i}"]))
        total = f"total{i}"
    nodes.append(helper.make_node("Identity", [total], ["sum_out"]))
    nodes.append(helper.make_node("Add", [total, total], ["doubled"]))
    return helper.make_graph(nodes, "body", [value("sum_in", [3])] +
                             [value(item, [3]) for item in items],
                             [value("sum_out", [3]), value("doubled", [3])])


def scan_model(length=5, n_scan=1, in_axis=0, in_reverse=0, out_axis=0, out_reverse=0,
               outer=False):
    x_shape = [length, 3] if in_axis == 0 else [3, length]
    inputs = [value("init", [3])] + [value(f"x{i}", x_shape) for i in range(n_scan)]
    initializers = []
    if outer:
        initializers.append(numpy_helper.from_array(
            np.array([0.5, -1.0, 2.0], np.float32), "w"))
    node = helper.make_node(
        "Scan", ["init"] + [f"x{i}" for i in range(n_scan)], ["final", "steps"],
        num_scan_inputs=n_scan, body=accumulate_body(n_scan, outer),
        scan_input_axes=[in_axis] * n_scan, scan_input_directions=[in_reverse] * n_scan,
        scan_output_axes=[out_axis], scan_output_directions=[out_reverse])
    graph = helper.make_graph([node], "g", inputs, [value("final"), value("steps")],
                              initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def feeds_for(model, length, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in model.graph.input:
        dims = [d.dim_value or length for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def check(model, length=5, runnable=None, seed=0):
    feeds = feeds_for(model, length, seed)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    if runnable is None:
        runnable = ember.onnx().load(model).into_model().into_runnable()
    got = runnable.run([feeds[i.name] for i in model.graph.input])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return runnable


def test_running_sum_writes_ember_scan():
    model = scan_model()
    typed = ember.onnx().load(model).into_model()
    graph = plan_files(typed)["graph.nnef"].decode()
    assert "ember_scan(" in graph and "scan_axes = [0]" in graph
    check(model)


@pytest.mark.parametrize("in_axis, in_reverse, out_axis, out_reverse", [
    (1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (1, 1, 1, 1), (0, 0, -1, 0)])
def test_axes_and_directions(in_axis, in_reverse, out_axis, out_reverse):
    check(scan_model(in_axis=in_axis, in_reverse=in_reverse, out_axis=out_axis,
                     out_reverse=out_reverse))


def test_two_scan_inputs_and_an_outer_value():
    check(scan_model(n_scan=2, outer=True))


def test_symbolic_length_at_two_lengths_on_one_runnable():
    model = scan_model(length="T")
    runnable = check(model, length=6)
    check(model, length=2, runnable=runnable, seed=1)
    check(model, length=9, runnable=runnable, seed=2)


def test_no_item_gives_the_initial_state_and_empty_outputs():
    model = scan_model(length="T")
    runnable = ember.onnx().load(model).into_model().into_runnable()
    init = np.array([1.0, 2.0, 3.0], np.float32)
    final, steps = runnable.run([init, np.zeros((0, 3), np.float32)])
    np.testing.assert_array_equal(final, init)
    assert steps.shape == (0, 3)


def test_scan_inputs_of_different_lengths_are_refused():
    model = scan_model(length="T", n_scan=2)
    model.graph.input[2].type.tensor_type.shape.dim[0].dim_param = "U"
    runnable = ember.onnx().load(model).into_model().into_runnable()
    init = np.zeros(3, np.float32)
    with pytest.raises(ember.EmberError, match="ember_scan.*differ in length"):
        runnable.run([init, np.zeros((4, 3), np.float32), np.zeros((5, 3), np.float32)])
