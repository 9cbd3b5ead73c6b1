"""The wider importer: recurrent ops, attribute-like inputs, symbolic shape values.

Numerics of every op are covered by the conformance ledger (test_onnx_conformance.py);
these tests check the behaviour around it."""
import numpy as np
import pytest

from cook_testing import assert_close, check_onnx, make_model, node, rand, run_ort
from ember.cook import UnsupportedOp
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx
from ember.cook.onnx.registry import INFO


def test_recurrent_op_runs_in_reference_and_writes_its_plan_form():
    model = make_model([node("Relu", ["x"], ["r"]),
                        node("LSTM", ["r", "w", "rw"], ["y"], hidden_size=2)],
                       {"x": rand(3, 1, 2)}, ["y"],
                       {"w": rand(1, 8, 2, seed=2), "rw": rand(1, 8, 2, seed=3)})
    typed = cook_onnx.load(model).into_model()
    x = rand(3, 1, 2, seed=1)
    assert_close(typed.run_reference([x]), run_ort(model, {"x": x}))
    assert_close(cook_nnef.load(cook_nnef.to_tar_bytes(typed)).run_reference([x]),
                 run_ort(model, {"x": x}))
    assert not INFO["LSTM"]["cook_only"] and not INFO["Scan"]["cook_only"]


def test_attribute_like_runtime_input_needs_a_value():
    model = make_model([node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
                       {"x": rand(2, 3, 4), "axes": ((1,), np.int64)}, ["y"])
    im = cook_onnx.load(model)
    with pytest.raises(UnsupportedOp, match="axes .input 1. must be a constant"):
        im.into_model()
    im.set_input_value(1, np.array([1], np.int64))
    typed = im.into_model()
    assert str(typed.output_facts()[0]) == "2,4,f32"
    x = rand(2, 3, 4)
    axes = np.array([1], np.int64)
    assert_close(typed.run_reference([x, axes]), run_ort(model, {"x": x, "axes": axes}))


def test_layer_norm_is_one_op_written_as_plan_ops():
    model = make_model([node("LayerNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)],
                       {"x": rand(2, 5, 8)}, ["y"], {"s": rand(8, seed=2), "b": rand(8, seed=3)},
                       opset=17)
    typed = cook_onnx.load(model).into_model()
    assert typed.op_types() == ["Source", "Const", "Const", "LayerNorm"]
    x = rand(2, 5, 8, seed=4)
    assert_close(typed.run_reference([x]), run_ort(model, {"x": x}))
    plan = cook_nnef.to_tar_bytes(typed)          # lowered to plan ops on the way
    assert_close(cook_nnef.load(plan).run_reference([x]), run_ort(model, {"x": x}))


def test_lstm_with_symbolic_time_axis():
    hidden, inputs = 4, 3
    weights = {"W": rand(1, 4 * hidden, inputs, seed=5), "R": rand(1, 4 * hidden, hidden, seed=6),
               "B": rand(1, 8 * hidden, seed=7)}
    model = make_model([node("LSTM", ["x", "W", "R", "B"], ["y", "h", "c"], hidden_size=hidden)],
                       {"x": (("T", 2, inputs), np.float32)}, ["y", "h", "c"], weights)
    typed = cook_onnx.load(model).into_model()
    assert str(typed.output_facts()[0]) == "T,1,2,4,f32"
    for steps in (1, 5):
        x = rand(steps, 2, inputs, seed=steps)
        assert_close(typed.run_reference([x]), run_ort(model, {"x": x}))


def test_quantized_weights_stay_quantized():
    weights = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    model = make_model([node("DequantizeLinear", ["wq", "scale", "zero"], ["w"]),
                        node("MatMul", ["x", "w"], ["y"])],
                       {"x": rand(2, 3)}, ["y"],
                       {"wq": weights, "scale": np.array(0.5, np.float32),
                        "zero": np.array(1, np.int8)})
    typed = cook_onnx.load(model).into_model()
    assert "Dequantize" in typed.op_types()
    consts = [n.op.value for n in typed.nodes() if n.op.name == "Const"]
    assert any(v.dtype == np.int8 and v.shape == (3, 4) for v in consts)
    x = rand(2, 3, seed=8)
    # (onnxruntime fuses this into a dynamically quantized matmul: compare with numpy)
    expected = x @ ((weights.astype(np.float32) - 1) * 0.5)
    assert_close(typed.run_reference([x]), [expected])


def test_if_reads_outer_scope_and_selects_at_run_time():
    from onnx import helper
    then_graph = helper.make_graph([node("Add", ["x", "one"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", 1, None)],
                                   [helper.make_tensor("one", 1, [], [1.0])])
    else_graph = helper.make_graph([node("Neg", ["x"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", 1, None)])
    model = make_model([node("Relu", ["x0"], ["x"]),
                        node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph)],
                       {"x0": rand(2, 3), "c": ((), np.bool_)}, ["y"])
    typed = cook_onnx.load(model).into_model()
    x = rand(2, 3, seed=9)
    for flag in (True, False):
        c = np.array(flag)
        assert_close(typed.run_reference([x, c]), run_ort(model, {"x0": x, "c": c}))
    im = cook_onnx.load(model).set_input_value(1, np.array(True))
    assert "Where" not in im.into_model().op_types()


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool_is_plan_ops(p):
    model = make_model([node("GlobalLpPool", ["x"], ["y"], p=p)], {"x": rand(2, 3, 5, 4)},
                       ["y"])
    typed = check_onnx(model, {"x": rand(2, 3, 5, 4, seed=p)})
    assert sorted(set(typed.op_types())) == ["Abs", "Const", "Pow", "Reduce<sum>", "Source"]
