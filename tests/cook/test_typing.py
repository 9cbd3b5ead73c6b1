"""Typing rules (output_facts) per op, facts and their text forms, and error messages."""
import warnings

import numpy as np
import pytest

from cook_testing import make_model, node, rand
from ember.cook import (BadAttribute, CookError, Fact, InferenceFact, MissingFact, ShapeError,
                        UnsupportedOp, parse_fact)
from ember.cook import onnx as cook_onnx
from ember.cook.ops import (AvgPool, BatchNorm, Binary, Concat, Conv, Gather, Lrn, MatMul,
                            MaxPool, Reduce, Reshape, ShapeOf, Slice, Softmax, Squeeze,
                            Transpose, Unary, Unsqueeze)


def f(text):
    return parse_fact(text).to_typed()


def shapes(op, *inputs):
    return [str(fact) for fact in op.output_facts([f(i) if isinstance(i, str) else i
                                                   for i in inputs])]


# -- facts -----------------------------------------------------------------------------
def test_fact_text_forms():
    assert str(f("1,3,224,224,f32")) == "1,3,224,224,f32"
    assert str(f("1x3xF32")) == "1,3,f32"
    assert str(parse_fact("?,3,?,?,f32")) == "?,3,?,?,f32"
    assert str(parse_fact("..,f32")) == "..,f32"
    assert str(parse_fact("1,3")) == "1,3,?"
    assert f("2,i64").datum_type == "i64" and f("2,i64").shape == (2,)
    assert str(Fact.from_value(np.zeros((2, 1), np.bool_))) == "2,1,bool"
    assert InferenceFact("f32", (1, None)).is_complete is False
    assert str(f("N,3,H,W,f32")) == "N,3,H,W,f32"
    assert str(f("1,S+2,40,f32")) == "1,S+2,40,f32"
    assert str(parse_fact("1,S")) == "1,S,?"
    with pytest.raises(CookError, match="unknown datum type"):
        parse_fact("1,3,f33")


# -- typing rules ----------------------------------------------------------------------
def test_conv_typing():
    conv = Conv([2, 2], [1, 1], [(1, 1), (1, 1)])
    assert shapes(conv, "1,3,224,224,f32", "64,3,7,7,f32") == ["1,64,110,110,f32"]
    assert shapes(Conv([1], [2], [(0, 0)], 2), "2,4,10,f32", "6,2,3,f32", "6,f32") \
        == ["2,6,6,f32"]
    with pytest.raises(ShapeError, match="groups"):
        shapes(Conv([1, 1], [1, 1], [(0, 0)] * 2, 3), "1,4,5,5,f32", "6,2,3,3,f32")
    with pytest.raises(ShapeError, match="filter expects"):
        shapes(conv, "1,4,5,5,f32", "6,3,3,3,f32")
    with pytest.raises(ShapeError, match="bias"):
        shapes(conv, "1,3,9,9,f32", "6,3,3,3,f32", "5,f32")
    with pytest.raises(ShapeError, match="does not fit"):
        shapes(Conv([1, 1], [1, 1], [(0, 0)] * 2), "1,3,2,2,f32", "6,3,3,3,f32")


def test_pool_typing():
    assert shapes(MaxPool([3, 3], [2, 2], [1, 1], [(0, 1), (0, 1)]), "1,8,10,10,f32") \
        == ["1,8,5,5,f32"]
    assert shapes(AvgPool([7, 7], [1, 1], [(0, 0)] * 2), "1,8,7,7,f32") == ["1,8,1,1,f32"]
    with pytest.raises(ShapeError, match="spatial"):
        shapes(MaxPool([3], [1], [1], [(0, 0)]), "1,8,10,10,f32")


def test_elementwise_and_reduce_typing():
    assert shapes(Binary("add"), "2,1,4,f32", "3,1,f32") == ["2,3,4,f32"]
    assert shapes(Binary("mul"), "f32", "2,f32") == ["2,f32"]
    with pytest.raises(ShapeError, match="do not broadcast"):
        shapes(Binary("add"), "2,3,f32", "4,f32")
    with pytest.raises(ShapeError, match="datum types"):
        shapes(Binary("add"), "2,f32", "2,i64")
    with pytest.raises(ShapeError, match="float"):
        shapes(Unary("exp"), "2,i64")
    assert shapes(Reduce("mean", [2, 3]), "1,8,7,7,f32") == ["1,8,1,1,f32"]
    assert shapes(Softmax([1]), "1,10,f32") == ["1,10,f32"]
    assert shapes(Lrn(1e-4, 0.75, 1, 5), "1,8,3,3,f32") == ["1,8,3,3,f32"]
    with pytest.raises(ShapeError, match="channels"):
        shapes(BatchNorm(1e-5), "1,8,3,3,f32", "8,f32", "8,f32", "8,f32", "7,f32")


def test_matmul_typing():
    assert shapes(MatMul(), "2,1,3,4,f32", "5,4,6,f32") == ["2,5,3,6,f32"]
    assert shapes(MatMul(True, True), "4,3,f32", "6,4,f32") == ["3,6,f32"]
    with pytest.raises(ShapeError, match="inner dims"):
        shapes(MatMul(), "3,4,f32", "5,6,f32")


def test_shape_ops_typing():
    assert shapes(Reshape((6, 4)), "2,3,4,f32") == ["6,4,f32"]
    with pytest.raises(ShapeError):
        shapes(Reshape((5,)), "2,3,f32")
    assert shapes(Transpose((0, 2, 1)), "1,2,3,f32") == ["1,3,2,f32"]
    with pytest.raises(ShapeError, match="permutation"):
        shapes(Transpose((0, 0, 1)), "1,2,3,f32")
    assert shapes(Concat(1), "1,2,3,f32", "1,5,3,f32") == ["1,7,3,f32"]
    with pytest.raises(ShapeError, match="axis 2"):
        shapes(Concat(1), "1,2,3,f32", "1,5,4,f32")
    assert shapes(Squeeze([0, 2]), "1,3,1,f32") == ["3,f32"]
    with pytest.raises(ShapeError, match="size-1"):
        shapes(Squeeze([1]), "1,3,1,f32")
    assert shapes(Unsqueeze([0, 3]), "2,3,f32") == ["1,2,3,1,f32"]
    assert shapes(Slice([1], [1], [5], [2]), "2,6,f32") == ["2,2,f32"]
    assert shapes(Gather(0), "5,3,f32", "2,4,i64") == ["2,4,3,f32"]
    shape_of = ShapeOf().output_facts([f("2,3,f32")])[0]
    assert shape_of.value.tolist() == [2, 3] and str(shape_of) == "2,i64"


# -- importer errors and hints ---------------------------------------------------------
def test_missing_input_fact_says_how_to_fix():
    model = make_model([node("Relu", ["x"], ["y"])], {"x": ((None, 3), np.float32)}, ["y"])
    im = cook_onnx.load(model)
    assert str(im.input_fact(0)) == "?,3,f32"
    # an unknown dim becomes a fresh symbol
    assert str(im.into_model().input_facts()[0]) == "unk__0,3,f32"
    im.set_input_fact(0, "..,f32")
    with pytest.raises(MissingFact, match=r"input 0 'x'.*set_input_fact\(0, '1,3,224,224,f32'\)"):
        im.into_model()
    im.set_input_fact(0, "4,3,f32")
    assert im.into_model().input_facts()[0].shape == (4, 3)


def test_unsupported_op_names_node_and_op():
    model = make_model([node("Relu", ["x"], ["r"]), node("TfIdfVectorizer", ["r"], ["y"])],
                       {"x": rand(2, 3)}, ["y"])
    with pytest.raises(UnsupportedOp, match=r'node "y" \(TfIdfVectorizer\).*not supported'):
        cook_onnx.load(model).into_model()


def test_bad_attribute_names_node():
    model = make_model([node("Conv", ["x", "w"], ["y"], auto_pad="SOMETIMES")],
                       {"x": rand(1, 2, 5, 5)}, ["y"], {"w": rand(3, 2, 3, 3)})
    with pytest.raises(BadAttribute, match=r'node "y" \(Conv\) with inputs \[1,2,5,5,f32'):
        cook_onnx.load(model).into_model()


def test_inconsistent_shapes_name_node_and_facts():
    model = make_model([node("MatMul", ["a", "b"], ["y"])],
                       {"a": rand(2, 3), "b": rand(4, 5)}, ["y"])
    with pytest.raises(ShapeError, match=r'"y" \(MatMul\) with inputs \[2,3,f32, 4,5,f32\].*'
                                         r'inner dims'):
        cook_onnx.load(model).into_model()


def test_runtime_only_axes_input_is_refused():
    # the output rank would depend on the value (runtime shapes: test_runtime_attributes)
    model = make_model([node("Unsqueeze", ["x", "s"], ["y"])],
                       {"x": rand(2, 3), "s": ((1,), np.int64)}, ["y"])
    with pytest.raises(UnsupportedOp, match="must be a constant"):
        cook_onnx.load(model).into_model()


def test_contradicting_hint_warns_and_typing_wins():
    from onnx import helper
    model = make_model([node("Relu", ["x"], ["y"])], {"x": rand(2, 3)}, ["y"])
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", 1, [7, 7]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        typed = cook_onnx.load(model).into_model()
    assert typed.output_facts()[0].shape == (2, 3)
    assert any('node "y" (Relu)' in str(w.message) and "7,7" in str(w.message) for w in caught)


def test_run_reference_checks_inputs():
    typed = cook_onnx.load(make_model([node("Relu", ["x"], ["y"])], {"x": rand(2, 3)},
                                      ["y"])).into_model()
    with pytest.raises(ShapeError, match="expects 2,3,f32"):
        typed.run_reference([rand(3, 2)])
    with pytest.raises(CookError, match="0 inputs given, the model has 1"):
        typed.run_reference([])


def test_model_api_shapes():
    model = make_model([node("Relu", ["x"], ["y"])], {"x": rand(2, 3)}, ["y"])
    im = cook_onnx.load(model)
    assert im.input_names == ["x"] and im.output_names == ["y"]
    typed = im.into_model()
    assert typed.input_facts()[0].datum_type == "f32"
    assert typed.output_facts()[0].shape == (2, 3)
    assert typed.input_names == ["x"] and typed.output_names == ["y"]
    assert "Relu" in str(typed)
