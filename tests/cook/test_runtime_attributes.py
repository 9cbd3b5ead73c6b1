"""Attribute-like inputs (shape, axes, pads, k, repeats, starts/ends/steps, scales,
sizes, depth, split, start/limit/delta) known only at run time.

Each model takes the operand as a graph input: cooking types the value-decided dims as
fresh symbols, and run_reference matches onnxruntime for two different values. Where
typing cannot work (the output rank would depend on the value) the error names the node
and says how to fix it (set_input_value)."""
import numpy as np
import pytest
from cook_testing import assert_close, make_model, node, rand, run_ort
from onnx import numpy_helper

from ember.cook import dims
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx
from ember.cook.errors import UnsupportedOp


def i64(*values):
    return np.array(values, np.int64)


def cook(model):
    return cook_onnx.load(model).into_model()


def symbolic_axes(fact):
    """Positions of the dims that are not numbers."""
    return [axis for axis, d in enumerate(fact.shape) if not dims.is_concrete(d)]


def check_runs(model, typed, feeds_list):
    """run_reference == onnxruntime for every feeds dict (model input order)."""
    names = [i.name for i in model.graph.input]
    for feeds in feeds_list:
        got = typed.run_reference([feeds[n] for n in names])
        assert_close(got, run_ort(model, feeds), what=str(feeds))


def test_reshape_shape_at_run_time():
    model = make_model([node("Reshape", ["x", "shape"], ["y"])],
                       {"x": rand(2, 3, 4), "shape": ((3,), np.int64)}, ["y"])
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [0, 1, 2]
    x = rand(2, 3, 4, seed=1)
    check_runs(model, typed, [{"x": x, "shape": i64(4, -1, 2)},
                              {"x": x, "shape": i64(0, 12, 1)}])


def test_runtime_reshape_decides_its_shape_and_constant_reshape_still_plans():
    runtime = make_model([node("Reshape", ["x", "shape"], ["y"])],
                         {"x": rand(2, 3), "shape": ((1,), np.int64)}, ["y"])
    typed = cook(runtime)
    text = cook_nnef.plan_files(typed)["graph.nnef"].decode()
    assert "ember_decide_values(shape" in text and "ember_decide_dims(y" in text
    x = rand(2, 3)
    got = typed.into_runnable().run([x, i64(6)])[0]
    np.testing.assert_array_equal(got, x.reshape(6))
    constant = make_model([node("Reshape", ["x", "shape"], ["y"])], {"x": rand(2, 3)}, ["y"],
                          {"shape": i64(3, 2)})
    typed = cook(constant)
    assert repr(typed.graph.nodes[typed.graph.outputs[0].node].op) == "Reshape(shape=(3, 2))"
    assert cook_nnef.to_tar_bytes(typed)


def test_expand_shape_at_run_time_keeps_known_dims():
    model = make_model([node("Expand", ["x", "shape"], ["y"])],
                       {"x": rand(3, 1), "shape": ((3,), np.int64)}, ["y"])
    fact = cook(model).output_facts()[0]
    assert symbolic_axes(fact) == [0, 2] and fact.shape[1] == 3
    x = rand(3, 1, seed=2)
    check_runs(model, cook(model), [{"x": x, "shape": i64(2, 3, 4)},
                                    {"x": x, "shape": i64(1, 1, 1)}])


def test_tile_repeats_at_run_time():
    model = make_model([node("Tile", ["x", "repeats"], ["y"])],
                       {"x": rand(2, 3), "repeats": ((2,), np.int64)}, ["y"])
    typed = cook(model)
    assert str(typed.output_facts()[0]) == "2*y_repeat0,3*y_repeat1,f32"
    x = rand(2, 3, seed=3)
    check_runs(model, typed, [{"x": x, "repeats": i64(1, 2)},
                              {"x": x, "repeats": i64(3, 1)}])


@pytest.mark.parametrize("with_steps", [False, True])
def test_slice_bounds_at_run_time(with_steps):
    inputs = ["x", "starts", "ends", "axes"] + (["steps"] if with_steps else [])
    spec = {"x": rand(5, 6), "starts": ((1,), np.int64), "ends": ((1,), np.int64)}
    if with_steps:
        spec["steps"] = ((1,), np.int64)
    model = make_model([node("Slice", inputs, ["y"])], spec, ["y"], {"axes": i64(1)})
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [1]
    assert typed.output_facts()[0].shape[0] == 5
    x = rand(5, 6, seed=4)
    feeds = [{"x": x, "starts": i64(1), "ends": i64(5)},
             {"x": x, "starts": i64(-4), "ends": i64(1 << 40)}]
    if with_steps:
        feeds[0]["steps"], feeds[1]["steps"] = i64(2), i64(1)
        feeds.append({"x": x, "starts": i64(-1), "ends": i64(-100), "steps": i64(-2)})
    check_runs(model, typed, feeds)


def test_slice_axes_at_run_time_is_refused():
    model = make_model([node("Slice", ["x", "starts", "ends", "axes"], ["y"])],
                       {"x": rand(5, 6), "starts": ((1,), np.int64), "ends": ((1,), np.int64),
                        "axes": ((1,), np.int64)}, ["y"])
    with pytest.raises(UnsupportedOp, match=r"axes \(input 3\).*set_input_value\(3, "):
        cook(model)


def test_pad_pads_and_value_at_run_time():
    model = make_model([node("Pad", ["x", "pads", "value"], ["y"])],
                       {"x": rand(2, 3), "pads": ((4,), np.int64), "value": ((), np.float32)},
                       ["y"], opset=13)
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [0, 1]
    x = rand(2, 3, seed=5)
    check_runs(model, typed, [{"x": x, "pads": i64(0, 1, 1, 0), "value": np.array(2.5, np.float32)},
                              {"x": x, "pads": i64(1, 0, 2, -1), "value": np.array(-1, np.float32)}])


def test_pad_reflect_pads_at_run_time_on_some_axes():
    model = make_model([node("Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")],
                       {"x": rand(3, 4), "pads": ((2,), np.int64)}, ["y"],
                       {"axes": i64(-1)}, opset=18)
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [1]
    x = rand(3, 4, seed=6)
    check_runs(model, typed, [{"x": x, "pads": i64(1, 2)}, {"x": x, "pads": i64(3, 0)}])


def test_topk_k_at_run_time():
    model = make_model([node("TopK", ["x", "k"], ["values", "indices"], axis=1)],
                       {"x": rand(3, 6), "k": ((1,), np.int64)}, ["values", "indices"])
    typed = cook(model)
    assert [symbolic_axes(f) for f in typed.output_facts()] == [[1], [1]]
    x = rand(3, 6, seed=7)
    check_runs(model, typed, [{"x": x, "k": i64(2)}, {"x": x, "k": i64(5)}])


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_range_at_run_time(dtype):
    scalar = ((), dtype)
    model = make_model([node("Range", ["start", "limit", "delta"], ["y"])],
                       {"start": scalar, "limit": scalar, "delta": scalar}, ["y"], opset=11)
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [0]
    values = [{k: np.array(x, dtype) for k, x in zip(("start", "limit", "delta"), v)}
              for v in ((0, 5, 1), (2, 11, 3), (5, 0, -2))]
    check_runs(model, typed, values)


def test_range_to_a_symbolic_length_types_with_that_length():
    nodes = [node("Shape", ["x"], ["shape"]),
             node("Gather", ["shape", "one"], ["length"], axis=0),
             node("Range", ["zero", "length", "one"], ["y"])]
    model = make_model(nodes, {"x": ((2, "S"), np.float32)}, ["y"],
                       {"zero": np.array(0, np.int64), "one": np.array(1, np.int64)}, opset=11)
    typed = cook(model)
    assert str(typed.output_facts()[0]) == "S,i64"
    check_runs(model, typed, [{"x": rand(2, 4)}, {"x": rand(2, 7)}])


def test_constant_of_shape_at_run_time():
    fill = numpy_helper.from_array(np.array([1.5], np.float32), "value")
    model = make_model([node("ConstantOfShape", ["shape"], ["y"], value=fill)],
                       {"shape": ((2,), np.int64)}, ["y"])
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [0, 1]
    check_runs(model, typed, [{"shape": i64(2, 3)}, {"shape": i64(4, 1)}])


def test_one_hot_depth_at_run_time():
    model = make_model([node("OneHot", ["indices", "depth", "values"], ["y"], axis=1)],
                       {"indices": ((3,), np.int64), "depth": ((), np.int64)}, ["y"],
                       {"values": np.array([0, 1], np.float32)}, opset=11)
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [1]
    indices = i64(0, 2, -1)
    check_runs(model, typed, [{"indices": indices, "depth": np.array(4, np.int64)},
                              {"indices": indices, "depth": np.array(6, np.int64)}])


def test_resize_scales_at_run_time():
    model = make_model([node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
                       {"x": rand(1, 1, 2, 3), "scales": ((4,), np.float32)}, ["y"])
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [0, 1, 2, 3]
    x = rand(1, 1, 2, 3, seed=8)
    check_runs(model, typed, [{"x": x, "scales": np.array([1, 1, 2, 2], np.float32)},
                              {"x": x, "scales": np.array([1, 1, 1.5, 3], np.float32)}])


def test_resize_sizes_of_some_axes_at_run_time():
    model = make_model([node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear",
                             axes=[2, 3])],
                       {"x": rand(1, 2, 3, 4), "sizes": ((2,), np.int64)}, ["y"], opset=18)
    typed = cook(model)
    assert symbolic_axes(typed.output_facts()[0]) == [2, 3]
    x = rand(1, 2, 3, 4, seed=9)
    check_runs(model, typed, [{"x": x, "sizes": i64(6, 8)}, {"x": x, "sizes": i64(2, 5)}])


def test_upsample_scales_at_run_time():
    model = make_model([node("Upsample", ["x", "scales"], ["y"])],
                       {"x": rand(1, 1, 2, 2), "scales": ((4,), np.float32)}, ["y"], opset=9)
    x = rand(1, 1, 2, 2, seed=10)
    check_runs(model, cook(model), [{"x": x, "scales": np.array([1, 1, 2, 3], np.float32)},
                                    {"x": x, "scales": np.array([1, 1, 1, 2], np.float32)}])


def test_split_sizes_at_run_time():
    model = make_model([node("Split", ["x", "split"], ["a", "b", "c"], axis=0)],
                       {"x": rand(6, 4), "split": ((3,), np.int64)}, ["a", "b", "c"])
    typed = cook(model)
    assert [symbolic_axes(f) for f in typed.output_facts()] == [[0], [0], [0]]
    x = rand(6, 4, seed=11)
    check_runs(model, typed, [{"x": x, "split": i64(1, 2, 3)},
                              {"x": x, "split": i64(2, 2, 2)}])


def test_cumsum_axis_at_run_time():
    model = make_model([node("CumSum", ["x", "axis"], ["y"], exclusive=1)],
                       {"x": rand(2, 3), "axis": ((), np.int64)}, ["y"], opset=14)
    typed = cook(model)
    assert str(typed.output_facts()[0]) == "2,3,f32"
    x = rand(2, 3, seed=12)
    check_runs(model, typed, [{"x": x, "axis": np.array(0, np.int64)},
                              {"x": x, "axis": np.array(-1, np.int64)}])


@pytest.mark.parametrize("op_type, opset", [("ReduceSum", 13), ("ReduceMean", 18),
                                            ("ReduceL2", 18)])
def test_reduce_axes_at_run_time_keeping_dims(op_type, opset):
    model = make_model([node(op_type, ["x", "axes"], ["y"], keepdims=1)],
                       {"x": rand(2, 1, 4), "axes": ((1,), np.int64)}, ["y"], opset=opset)
    typed = cook(model)
    fact = typed.output_facts()[0]
    assert symbolic_axes(fact) == [0, 2] and fact.shape[1] == 1
    x = rand(2, 1, 4, seed=13)
    check_runs(model, typed, [{"x": x, "axes": i64(0)}, {"x": x, "axes": i64(-1)}])


def test_reduce_axes_at_run_time_dropping_dims_is_refused():
    model = make_model([node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
                       {"x": rand(2, 3), "axes": ((1,), np.int64)}, ["y"])
    with pytest.raises(UnsupportedOp, match=r'"y" \(ReduceSum\).*keepdims = 0.*'
                                            r"set_input_value\(1, <value>\)"):
        cook(model)


@pytest.mark.parametrize("op_type", ["Unsqueeze", "Squeeze"])
def test_squeeze_axes_at_run_time_name_node_and_fix(op_type):
    model = make_model([node(op_type, ["x", "axes"], ["y"])],
                       {"x": rand(2, 1), "axes": ((1,), np.int64)}, ["y"])
    im = cook_onnx.load(model)
    with pytest.raises(UnsupportedOp, match=rf'"y" \({op_type}\).*axes \(input 1\).*rank.*'
                                            r"call set_input_value\(1, <value>\) on the "
                                            r"InferenceModel to fix it"):
        im.into_model()
    im.set_input_value(1, i64(1))
    x = rand(2, 1, seed=14)
    assert_close(im.into_model().run_reference([x, i64(1)]),
                 run_ort(model, {"x": x, "axes": i64(1)}))


def test_constant_input_message_says_which_model_input_to_fix():
    model = make_model([node("OneHot", ["indices", "depth", "values"], ["y"])],
                       {"indices": ((3,), np.int64), "depth": ((), np.int64),
                        "values": ((2,), np.float32)}, ["y"], opset=11)
    with pytest.raises(UnsupportedOp, match=r"values \(input 2\) must be a constant.*"
                                            r"set_input_value\(2, <value>\)"):
        cook(model)


def test_constant_input_computed_at_run_time_has_no_fix_hint():
    nodes = [node("Abs", ["values"], ["positive"]),
             node("OneHot", ["indices", "depth", "positive"], ["y"])]
    model = make_model(nodes, {"indices": ((3,), np.int64), "values": ((2,), np.float32)},
                       ["y"], {"depth": np.array(3, np.int64)}, opset=11)
    with pytest.raises(UnsupportedOp, match="must be a constant") as caught:
        cook(model)
    assert "set_input_value" not in str(caught.value)


def test_value_given_with_set_input_value_takes_the_constant_path():
    model = make_model([node("Tile", ["x", "repeats"], ["y"])],
                       {"x": rand(2, 3), "repeats": ((2,), np.int64)}, ["y"])
    typed = cook_onnx.load(model).set_input_value(1, i64(2, 1)).into_model()
    assert str(typed.output_facts()[0]) == "4,3,f32"


def test_run_time_operand_symbols_are_not_input_symbols():
    model = make_model([node("Expand", ["x", "shape"], ["y"])],
                       {"x": ((1, "N"), np.float32), "shape": ((2,), np.int64)}, ["y"])
    typed = cook(model)
    assert typed.input_symbols() == {"N"}
    assert str(typed.output_facts()[0]) == "y_dim0,N,f32"
    check_runs(model, typed, [{"x": rand(1, 3), "shape": i64(4, 3)},
                              {"x": rand(1, 5), "shape": i64(2, 1)}])

