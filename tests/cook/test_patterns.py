"""Pattern fusion in declutter (cook/passes/patterns.py): each pattern built as exporters
emit it (torch legacy and dynamo exports, read off real exports, rebuilt with onnx.helper
so these tests need no torch), the op list before and after, and unchanged outputs."""
import numpy as np
import pytest
from onnx import helper, numpy_helper

from cook_testing import make_model, node, rand, run_ort
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx

RTOL, ATOL = 1e-5, 1e-6
SHAPE = (2, 3, 8)


def const(name, value):
    """A Constant node (torch legacy export style) holding `value` as f32."""
    tensor = numpy_helper.from_array(np.asarray(value, np.float32), name)
    return helper.make_node("Constant", [], [name], value=tensor)


def f32(value, shape=()):
    return np.full(shape, value, np.float32)


def cook(model, feeds=None):
    """(typed as translated, decluttered), their outputs checked against onnxruntime."""
    feeds = feeds or {"x": rand(*SHAPE, seed=3) * 3}
    inputs = [feeds[i.name] for i in model.graph.input if i.name in feeds]
    typed = cook_onnx.load(model).into_typed()
    decluttered = cook_onnx.load(model).into_model()
    expected = typed.run_reference(inputs)
    for got, ort, want in zip(decluttered.run_reference(inputs), run_ort(model, feeds),
                              expected):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(got, ort, rtol=RTOL, atol=ATOL)
    return typed, decluttered


def check(model, before, after, feeds=None, writable=True):
    """`before` ops are in the typed model; the decluttered op list is `after`; the plan
    (when writable) reads back to the same numbers, and the model keeps its fused ops."""
    typed, decluttered = cook(model, feeds)
    assert set(before) <= set(typed.op_types()), typed.op_types()
    assert decluttered.op_types() == after
    if writable:
        feeds = feeds or {"x": rand(*SHAPE, seed=3) * 3}
        inputs = [feeds[i.name] for i in model.graph.input if i.name in feeds]
        reread = cook_nnef.load(cook_nnef.to_tar_bytes(decluttered))
        for got, want in zip(reread.run_reference(inputs), decluttered.run_reference(inputs)):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        assert decluttered.op_types() == after          # writing lowered a copy
    return decluttered


def model_of(nodes, inits=None, opset=17, shape=SHAPE, outputs=("y",)):
    return make_model(nodes, {"x": (shape, np.float32)}, list(outputs), inits, opset=opset)


# -- GELU -------------------------------------------------------------------------------
def gelu_legacy(half=0.5, extra_output=None):
    """torch.onnx.export(nn.GELU(), dynamo=False): Div √2 → Erf → +1 → *x → *0.5."""
    nodes = [const("sqrt2", 1.4142135), node("Div", ["x", "sqrt2"], ["t"]),
             node("Erf", ["t"], ["e"]), const("one", 1.0), node("Add", ["e", "one"], ["a"]),
             node("Mul", ["x", "a"], ["m"]), const("half", half),
             node("Mul", ["m", "half"], ["y"])]
    return model_of(nodes, outputs=("y",) + ((extra_output,) if extra_output else ()))


def test_gelu_torch_legacy():
    check(gelu_legacy(), ["Div", "Erf", "Add", "Mul"], ["Source", "Gelu"], writable=False)


def test_gelu_torch_dynamo():
    """dynamo: x * (0.5 * (erf(x / √2) + 1)); declutter reads (e + 1) * 0.5 as
    e * 0.5 + 0.5 before the pattern sees it."""
    nodes = [node("Div", ["x", "c0"], ["t"]), node("Erf", ["t"], ["e"]),
             node("Add", ["e", "c1"], ["a"]), node("Mul", ["c2", "a"], ["h"]),
             node("Mul", ["x", "h"], ["y"])]
    inits = {"c0": f32(1.4142135), "c1": f32(1.0), "c2": f32(0.5)}
    check(model_of(nodes, inits, opset=18), ["Div", "Erf", "Add", "Mul"], ["Source", "Gelu"],
          writable=False)


def test_gelu_reciprocal_form_with_size1_constants():
    """(x * 0.5) * (1 + erf(x * 0.70710678)), constants as [1] and [1, 1, 1] tensors."""
    nodes = [node("Mul", ["x", "k"], ["t"]), node("Erf", ["t"], ["e"]),
             node("Add", ["one", "e"], ["a"]), node("Mul", ["x", "half"], ["xh"]),
             node("Mul", ["a", "xh"], ["y"])]
    inits = {"k": f32(0.70710678, (1,)), "one": f32(1.0, (1, 1, 1)), "half": f32(0.5, (1,))}
    check(model_of(nodes, inits), ["Mul", "Erf", "Add"], ["Source", "Gelu"], writable=False)


def test_gelu_with_a_wrong_constant_is_not_fused():
    model = cook(gelu_legacy(half=0.4))[1]
    assert "Gelu" not in model.op_types() and "Erf" in model.op_types()


def test_gelu_with_an_intermediate_read_elsewhere_is_not_fused():
    model = cook(gelu_legacy(extra_output="e"))[1]
    assert "Gelu" not in model.op_types() and "Erf" in model.op_types()


def test_gelu_erf_form_is_written_with_erf():
    """The fused GELU stays one node while cooking and is written with tract_onnx_erf."""
    model = cook(gelu_legacy())[1]
    graph = cook_nnef.plan_files(model)["graph.nnef"].decode()
    assert "tract_onnx_erf(" in graph and "gelu" not in graph.lower().split("graph network")[1]


def test_gelu_tanh_torch_legacy():
    """nn.GELU(approximate="tanh"), legacy: x*x*x, constants on the left."""
    nodes = [node("Mul", ["x", "x"], ["x2"]), node("Mul", ["x", "x2"], ["x3"]),
             const("c", 0.044715), node("Mul", ["c", "x3"], ["cx3"]),
             node("Add", ["x", "cx3"], ["inner"]), const("k", 0.7978845834732056),
             node("Mul", ["k", "inner"], ["t"]), node("Tanh", ["t"], ["th"]),
             const("one", 1.0), node("Add", ["one", "th"], ["a"]),
             node("Mul", ["x", "a"], ["m"]), const("half", 0.5),
             node("Mul", ["half", "m"], ["y"])]
    check(model_of(nodes), ["Mul", "Add", "Tanh"], ["Source", "Gelu_tanh"])


def gelu_tanh_dynamo(cubic=0.044715):
    nodes = [node("Pow", ["x", "three"], ["x3"]), node("Mul", ["c", "x3"], ["cx3"]),
             node("Add", ["x", "cx3"], ["inner"]), node("Mul", ["k", "inner"], ["t"]),
             node("Tanh", ["t"], ["th"]), node("Add", ["th", "one"], ["a"]),
             node("Mul", ["half", "a"], ["h"]), node("Mul", ["x", "h"], ["y"])]
    inits = {"three": f32(3.0), "c": f32(cubic), "k": f32(0.7978845834732056),
             "one": f32(1.0), "half": f32(0.5)}
    return model_of(nodes, inits, opset=18)


def test_gelu_tanh_torch_dynamo():
    check(gelu_tanh_dynamo(), ["Pow", "Mul", "Add", "Tanh"], ["Source", "Gelu_tanh"])


def test_gelu_tanh_with_a_wrong_cubic_coefficient_is_not_fused():
    assert "Gelu_tanh" not in cook(gelu_tanh_dynamo(cubic=0.05))[1].op_types()


# -- SiLU -------------------------------------------------------------------------------
@pytest.mark.parametrize("operands", [["x", "s"], ["s", "x"]])
def test_silu(operands):
    nodes = [node("Sigmoid", ["x"], ["s"]), node("Mul", operands, ["y"])]
    check(model_of(nodes), ["Sigmoid", "Mul"], ["Source", "Silu"])


def test_silu_with_the_sigmoid_read_elsewhere_is_not_fused():
    nodes = [node("Sigmoid", ["x"], ["s"]), node("Mul", ["x", "s"], ["y"])]
    model = check(model_of(nodes, outputs=("y", "s")), [], ["Source", "Sigmoid", "Mul"])
    assert "Silu" not in model.op_types()


def test_swish_with_a_beta_is_not_silu():
    nodes = [node("Mul", ["x", "beta"], ["t"]), node("Sigmoid", ["t"], ["s"]),
             node("Mul", ["x", "s"], ["y"])]
    assert "Silu" not in cook(model_of(nodes, {"beta": f32(1.702)}))[1].op_types()


# -- HardSwish --------------------------------------------------------------------------
def test_hard_swish_onnx_op_is_the_same_normal_form():
    check(model_of([node("HardSwish", ["x"], ["y"])], opset=14), [], ["Source", "Hard_swish"])


def test_hard_swish_as_x_times_hard_sigmoid():
    """torch opset < 14 export of nn.Hardswish: HardSigmoid(alpha=1/6) (beta defaults to
    0.5), times x."""
    nodes = [node("HardSigmoid", ["x"], ["h"], alpha=0.1666666716337204),
             node("Mul", ["h", "x"], ["y"])]
    check(model_of(nodes), ["HardSigmoid", "Mul"], ["Source", "Hard_swish"])


def test_hard_swish_as_relu6_over_six():
    """x * clip(x + 3, 0, 6) / 6."""
    nodes = [node("Add", ["x", "three"], ["t"]), node("Clip", ["t", "zero", "six"], ["c"]),
             node("Mul", ["x", "c"], ["m"]), node("Div", ["m", "six"], ["y"])]
    inits = {"three": f32(3.0), "zero": f32(0.0), "six": f32(6.0)}
    check(model_of(nodes, inits), ["Add", "Relu6", "Mul", "Div"], ["Source", "Hard_swish"])


def test_hard_swish_as_relu6_times_a_sixth_regrouped():
    """x * (relu6(3 + x) * (1/6)), the relu6 spelt min(relu(.), 6)."""
    nodes = [node("Add", ["three", "x"], ["t"]), node("Relu", ["t"], ["r"]),
             node("Min", ["r", "six"], ["c"]), node("Mul", ["c", "sixth"], ["g"]),
             node("Mul", ["x", "g"], ["y"])]
    inits = {"three": f32(3.0, (1,)), "six": f32(6.0), "sixth": f32(1 / 6, (1, 1))}
    check(model_of(nodes, inits), ["Relu", "Min", "Mul"], ["Source", "Hard_swish"])


def test_hard_swish_as_clamp_of_affine():
    """x * clip(x / 6 + 0.5, 0, 1)."""
    nodes = [node("Div", ["x", "six"], ["t"]), node("Add", ["t", "half"], ["u"]),
             node("Clip", ["u", "zero", "one"], ["c"]), node("Mul", ["x", "c"], ["y"])]
    inits = {"six": f32(6.0), "half": f32(0.5), "zero": f32(0.0), "one": f32(1.0)}
    check(model_of(nodes, inits), ["Div", "Add", "Clamp", "Mul"], ["Source", "Hard_swish"])


def test_hard_sigmoid_with_onnx_default_alpha_is_not_hard_swish():
    nodes = [node("HardSigmoid", ["x"], ["h"]), node("Mul", ["h", "x"], ["y"])]
    model = cook(model_of(nodes))[1]
    assert model.op_types() == ["Source", "HardSigmoid", "Mul"]


# -- ReLU6 ------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [6, 13])
def test_clip_0_6_is_relu6(opset):
    if opset == 6:
        nodes = [node("Clip", ["x"], ["y"], min=0.0, max=6.0)]
        inits = None
    else:
        nodes = [node("Clip", ["x", "zero", "six"], ["y"])]
        inits = {"zero": f32(0.0), "six": f32(6.0)}
    model = check(model_of(nodes, inits, opset=opset), [], ["Source", "Relu6"])
    assert repr(model.nodes()[1].op) == "Relu6(low=0.0, high=6.0)"


@pytest.mark.parametrize("spelling", ["min_relu", "max_min", "min_max"])
def test_relu6_spelt_with_min_and_max(spelling):
    nodes = {"min_relu": [node("Relu", ["x"], ["r"]), node("Min", ["r", "six"], ["y"])],
             "max_min": [node("Min", ["x", "six"], ["m"]), node("Max", ["m", "zero"], ["y"])],
             "min_max": [node("Max", ["zero", "x"], ["m"]), node("Min", ["six", "m"], ["y"])]}
    inits = {"zero": f32(0.0, (1,)), "six": f32(6.0)}
    check(model_of(nodes[spelling], inits), [], ["Source", "Relu6"])


def test_min_of_relu_and_a_runtime_value_is_not_a_clamp():
    nodes = [node("Relu", ["x"], ["r"]), node("Min", ["r", "z"], ["y"])]
    model = make_model(nodes, {"x": (SHAPE, np.float32), "z": (SHAPE, np.float32)}, ["y"])
    feeds = {"x": rand(*SHAPE, seed=1), "z": rand(*SHAPE, seed=2)}
    assert cook(model, feeds)[1].op_types() == ["Source", "Source", "Relu", "Min"]


# -- LayerNorm --------------------------------------------------------------------------
def layer_norm_chain(square="pow", divide="div", epsilon=1e-5, affine=True,
                     var_axes=(-1,), extra_output=None):
    """torch: d = x - x.mean(-1); d / sqrt(d.pow(2).mean(-1) + eps) [* w + b]."""
    nodes = [node("ReduceMean", ["x"], ["mean"], axes=[-1]),
             node("Sub", ["x", "mean"], ["d"])]
    nodes.append(node("Pow", ["d", "two"], ["sq"]) if square == "pow"
                 else node("Mul", ["d", "d"], ["sq"]))
    nodes.append(node("ReduceMean", ["sq"], ["var"], axes=list(var_axes)))
    if epsilon is None:
        nodes.append(node("Identity", ["var"], ["ve"]))
    else:
        nodes.append(node("Add", ["var", "eps"], ["ve"]))
    nodes.append(node("Sqrt", ["ve"], ["std"]))
    if divide == "div":
        nodes.append(node("Div", ["d", "std"], ["n"]))
    elif divide == "reciprocal":
        nodes += [node("Reciprocal", ["std"], ["inv"]), node("Mul", ["inv", "d"], ["n"])]
    else:
        nodes += [node("Div", ["one", "std"], ["inv"]), node("Mul", ["d", "inv"], ["n"])]
    if affine:
        nodes += [node("Mul", ["w", "n"], ["nw"]), node("Add", ["nw", "b"], ["y"])]
    else:
        nodes.append(node("Identity", ["n"], ["y"]))
    inits = {"two": f32(2.0), "eps": f32(epsilon or 0.0), "one": f32(1.0),
             "w": rand(8, seed=5), "b": rand(8, seed=6)}
    return model_of(nodes, inits, outputs=("y",) + ((extra_output,) if extra_output else ()))


@pytest.mark.parametrize("square, divide", [("pow", "div"), ("mul", "reciprocal"),
                                            ("mul", "one_over")])
def test_layer_norm_chain(square, divide):
    model = check(layer_norm_chain(square, divide),
                  ["Reduce<mean>", "Sub", "Sqrt", "Add", "Mul"],
                  ["Source", "Const", "Const", "LayerNorm"])
    op = model.nodes()[-1].op
    assert (op.axes, op.has_scale, op.has_bias) == ((2,), True, True)
    assert op.epsilon == pytest.approx(1e-5)


def test_layer_norm_chain_without_affine():
    check(layer_norm_chain(affine=False), ["Reduce<mean>", "Pow", "Sqrt", "Div"],
          ["Source", "LayerNorm"])


@pytest.mark.parametrize("change", ["no_epsilon", "other_axes", "mean_read_elsewhere"])
def test_layer_norm_chain_variants_that_are_not_layer_norm(change):
    model = {"no_epsilon": lambda: layer_norm_chain(epsilon=None),
             "other_axes": lambda: layer_norm_chain(var_axes=(-2, -1)),
             "mean_read_elsewhere": lambda: layer_norm_chain(extra_output="mean")}[change]()
    decluttered = cook(model)[1]
    assert "LayerNorm" not in decluttered.op_types()
    assert "Reduce<mean>" in decluttered.op_types()


def test_layer_norm_over_channels_convnext_style():
    """ConvNeXt's LayerNorm2d on NCHW: mean over axis 1, weight[:, None, None] * n + bias."""
    nodes = [node("ReduceMean", ["x"], ["mean"], axes=[1]), node("Sub", ["x", "mean"], ["d"]),
             node("Pow", ["d", "two"], ["sq"]), node("ReduceMean", ["sq"], ["var"], axes=[1]),
             node("Add", ["var", "eps"], ["ve"]), node("Sqrt", ["ve"], ["std"]),
             node("Div", ["d", "std"], ["n"]), node("Mul", ["w", "n"], ["nw"]),
             node("Add", ["nw", "b"], ["y"])]
    inits = {"two": f32(2.0), "eps": f32(1e-6), "w": rand(4, 1, 1, seed=5),
             "b": rand(4, 1, 1, seed=6)}
    feeds = {"x": rand(1, 4, 3, 5, seed=2)}
    model = check(model_of(nodes, inits, shape=(1, 4, 3, 5)), ["Reduce<mean>", "Div"],
                  ["Source", "Const", "Const", "LayerNorm"], feeds)
    assert model.nodes()[-1].op.axes == (1,)


def onnx_layer_norm(outputs=("y",), declared=("y",)):
    nodes = [node("LayerNormalization", ["x", "s", "b"], list(declared), epsilon=1e-5)]
    return model_of(nodes, {"s": rand(8, seed=2), "b": rand(8, seed=3)}, outputs=outputs)


def test_onnx_layer_normalization_is_the_same_op():
    check(onnx_layer_norm(), ["LayerNorm"], ["Source", "Const", "Const", "LayerNorm"])


def test_onnx_layer_normalization_with_mean_and_inv_std_outputs_expands():
    declared = ("y", "mean", "inv")
    decluttered = cook(onnx_layer_norm(declared, declared))[1]
    assert "LayerNorm" not in decluttered.op_types()
    assert "Rsqrt" in decluttered.op_types()


def test_onnx_layer_normalization_with_unread_extra_outputs_is_fused():
    check(onnx_layer_norm(("y",), ("y", "mean", "inv")), ["Reduce<mean>", "Rsqrt"],
          ["Source", "Const", "Const", "LayerNorm"])


def test_layer_norm_with_neutral_scale_and_bias_drops_them():
    """torch exports a fresh nn.LayerNorm with weight 1 and bias 0."""
    nodes = [node("LayerNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)]
    model = model_of(nodes, {"s": f32(1.0, (8,)), "b": f32(0.0, (8,))})
    check(model, ["LayerNorm"], ["Source", "LayerNorm"])


# -- plans on the C runtime -------------------------------------------------------------
def runtime_models():
    silu = [node("Sigmoid", ["x"], ["s"]), node("Mul", ["x", "s"], ["y"])]
    return {"silu": (model_of(silu), "Silu"),
            "layer_norm": (layer_norm_chain("mul", "div"), "LayerNorm"),
            "hard_swish": (model_of([node("HardSwish", ["x"], ["y"])], opset=14),
                           "Hard_swish"),
            "gelu_tanh": (gelu_tanh_dynamo(), "Gelu_tanh")}


@pytest.mark.parametrize("name", sorted(runtime_models()))
def test_fused_ops_run_on_the_c_runtime(name):
    runtime = pytest.importorskip("ember.runtime")
    model, fused = runtime_models()[name]
    decluttered = cook_onnx.load(model).into_model()
    assert fused in decluttered.op_types()
    x = rand(*SHAPE, seed=4) * 3
    got = runtime.load_model(cook_nnef.to_tar_bytes(decluttered)).into_runnable().run([x])
    for ours, want in zip(got, decluttered.run_reference([x])):
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-5)
