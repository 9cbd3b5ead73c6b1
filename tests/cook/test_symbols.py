"""Symbolic dims through facts, typing rules, the ONNX importer, set_symbols, run_reference
and the plan writer."""
import numpy as np
import pytest
from onnx import helper

from cook_testing import assert_close, make_model, node, rand, run_ort
from ember.cook import ShapeError, dims, parse_fact
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx
from ember.cook.ops import Binary, Concat, Conv, MatMul, MaxPool, Reshape, Slice
from ember.cook.ops.shape import resolve_reshape


def f(text):
    return parse_fact(text).to_typed()


def shapes(op, *inputs):
    return [str(fact) for fact in op.output_facts([f(i) for i in inputs])]


def test_typing_rules_with_symbols():
    assert shapes(Conv([2, 2], [1, 1], [(1, 1), (1, 1)]), "N,3,H,W,f32", "8,3,3,3,f32") \
        == ["N,8,(H+1)/2,(W+1)/2,f32"]
    assert shapes(Conv([1], [1], [(0, 0)]), "1,4,S,f32", "2,4,3,f32") == ["1,2,S-2,f32"]
    assert shapes(MaxPool([2], [2], [1], [(0, 0)]), "1,4,2*S,f32") == ["1,4,S,f32"]
    assert shapes(Concat(1), "1,S,f32", "1,S+2,f32", "1,3,f32") == ["1,2*S+5,f32"]
    assert shapes(Binary("add"), "N,1,S,f32", "1,4,S,f32") == ["N,4,S,f32"]
    with pytest.raises(ShapeError, match="broadcast"):
        shapes(Binary("add"), "S,f32", "T,f32")
    assert shapes(MatMul(), "B,S,64,f32", "64,10,f32") == ["B,S,10,f32"]
    assert shapes(Slice([1], [1], [dims.parse("S-1")]), "2,S,f32") == ["2,S-2,f32"]
    n, h = dims.symbol("N"), dims.symbol("H")
    assert resolve_reshape((n, 3, h, 4), [0, -1]) == (n, 12 * h)
    assert resolve_reshape((n, 12 * h), [-1, 4, 3]) == (n * h, 4, 3)
    assert shapes(Reshape((dims.parse("2*S"), 3)), "S,6,f32") == ["2*S,3,f32"]
    with pytest.raises(ShapeError):
        shapes(Reshape((dims.parse("S"), 3)), "S,6,f32")


def symbolic_conv_model():
    x = helper.make_tensor_value_info("x", 1, ["N", 3, "H", "W"])
    nodes = [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             node("Relu", ["c"], ["r"]),
             node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             node("Flatten", ["p"], ["y"])]
    model = make_model(nodes, {}, ["y"], {"w": rand(4, 3, 3, 3)})
    model.graph.input.append(x)
    return model


def test_onnx_dim_params_become_symbols():
    model = symbolic_conv_model()
    im = cook_onnx.load(model)
    assert str(im.input_fact(0)) == "N,3,H,W,f32"
    typed = im.into_model()
    assert typed.symbols() == {"N", "H", "W"}
    out = typed.output_facts()[0]
    assert out.shape[0] == dims.symbol("N")
    x = rand(2, 3, 20, 24)
    assert_close(typed.run_reference([x]), run_ort(model, {"x": x}), 1e-4, 1e-5)
    x = rand(1, 3, 9, 7, seed=1)
    assert_close(typed.run_reference([x]), run_ort(model, {"x": x}), 1e-4, 1e-5)
    concrete = typed.set_symbols({"N": 1, "H": 9, "W": 7})
    assert not concrete.symbols()
    assert str(concrete.output_facts()[0]) == "1,16,f32"
    assert_close(concrete.run_reference([x]), run_ort(model, {"x": x}), 1e-4, 1e-5)


def test_set_input_fact_with_symbols_and_binding():
    model = make_model([node("Relu", ["x"], ["r"]), node("Concat", ["r", "x"], ["y"], axis=1)],
                       {"x": ((1, "S", 40), np.float32)}, ["y"])
    im = cook_onnx.load(model)
    im.set_input_fact(0, "1,S,40,f32")
    typed = im.into_model()
    assert str(typed.output_facts()[0]) == "1,2*S,40,f32"
    assert str(im.into_typed(symbols={"S": 100}).output_facts()[0]) == "1,200,40,f32"
    x = rand(1, 7, 40)
    assert_close(typed.run_reference([x]), run_ort(model, {"x": x}))


def test_unnamed_dims_become_fresh_symbols():
    model = make_model([node("Relu", ["x"], ["y"])], {"x": ((None, None), np.float32)}, ["y"])
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "unk__7"
    typed = cook_onnx.load(model).into_model()
    first, second = typed.input_facts()[0].shape
    assert first != second and not dims.is_concrete(first)


def test_writer_declares_symbols():
    model = make_model([node("Relu", ["x"], ["y"])], {"x": ((1, "S", 40), np.float32)}, ["y"])
    im = cook_onnx.load(model).set_input_fact(0, "1,S,40,f32")
    text = cook_nnef.plan_files(im.into_model())["graph.nnef"].decode()
    assert "extension tract_symbol S;" in text
    assert "external<scalar>(shape = [1, S, 40])" in text
    concrete = cook_nnef.plan_files(im.into_model().set_symbols({"S": 5}))["graph.nnef"]
    assert b"tract_symbol" not in concrete


def test_symbolic_plan_loads_in_tract(tmp_path):
    tract = pytest.importorskip("tract")
    model = make_model([node("Relu", ["x"], ["r"]), node("Concat", ["r", "x"], ["y"], axis=1)],
                       {"x": ((1, "S", 40), np.float32)}, ["y"])
    im = cook_onnx.load(model).set_input_fact(0, "1,S,40,f32")
    plan = tmp_path / "plan"
    cook_nnef.write_dir(im.into_model(), str(plan))
    loaded = tract.nnef().load(str(plan)).into_runnable()
    x = rand(1, 3, 40)
    got = loaded.run([x])[0].to_numpy()
    assert_close([got], run_ort(model, {"x": x}))


def test_shape_subgraph_over_symbols_folds_into_reshape():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write flatten."""
    nodes = [node("Shape", ["x"], ["shape"]),
             node("Gather", ["shape", "zero"], ["batch"], axis=0),
             node("Unsqueeze", ["batch", "axes"], ["batch1"]),
             node("Concat", ["batch1", "minus_one"], ["spec"], axis=0),
             node("Reshape", ["x", "spec"], ["flat"]),
             node("Shape", ["x"], ["shape2"]),
             node("Slice", ["shape2", "start", "end"], ["hw"]),
             node("Concat", ["batch1", "three", "hw"], ["spec2"], axis=0),
             node("Reshape", ["flat", "spec2"], ["y"])]
    inits = {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
             "minus_one": np.array([-1], np.int64), "start": np.array([2], np.int64),
             "end": np.array([4], np.int64), "three": np.array([3], np.int64)}
    model = make_model(nodes, {"x": (("N", 3, "H", "W"), np.float32)}, ["y"], inits)
    typed = cook_onnx.load(model).into_model()
    assert str(typed.output_facts()[0]) == "N,3,H,W,f32"
    assert "Shape" not in typed.op_types()
    x = rand(2, 3, 5, 4)
    assert_close(typed.run_reference([x]), run_ort(model, {"x": x}))


def test_symbolic_plan_round_trip():
    model = symbolic_conv_model()
    typed = cook_onnx.load(model).into_model()
    reread = cook_nnef.load(cook_nnef.to_tar_bytes(typed))
    assert reread.symbols() == {"N", "H", "W"}
    assert str(reread.output_facts()[0]) == str(typed.output_facts()[0])
    x = rand(2, 3, 13, 10)
    assert_close(reread.run_reference([x]), run_ort(model, {"x": x}))
    from ember.cook.nnef.syntax import parse
    doc = parse("version 1.0;\nextension tract_symbol S;\ngraph g(x) -> (y) {\n"
                "  x = external(shape = [-S + 2 * (S + 1), 3]);\n  y = relu(x);\n}\n")
    assert doc.symbols == ["S"]
