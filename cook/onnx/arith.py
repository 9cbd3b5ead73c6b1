"""Translators of ONNX arithmetic: unary maps, Clip, binary and variadic ops, MatMul, Gemm."""
import numpy as np

from ..errors import BadAttribute
from ..ops.elementwise import Activation, Binary, Clamp, Unary, Where
from ..ops.matmul import MatMul, transposed
from ..ops.shape import Cast, Squeeze, Unsqueeze
from .registry import translator

# HardSwish has no plan op of its own but a decomposition the writer uses (Unary.decompose)
UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log",
         "Sqrt": "sqrt", "Abs": "abs", "Neg": "neg", "HardSwish": "hard_swish"}
COOK_UNARY = {"Floor": "floor", "Ceil": "ceil", "Round": "round", "Sign": "sign",
              "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "asin", "Acos": "acos",
              "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "asinh",
              "Acosh": "acosh", "Atanh": "atanh", "Erf": "erf", "Softplus": "softplus",
              "Softsign": "softsign", "Mish": "mish",
              "IsNaN": "is_nan"}
BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow"}
COMPARE = {"Less": "less", "LessOrEqual": "less_equal", "Greater": "greater",
           "GreaterOrEqual": "greater_equal", "Equal": "equal"}
LOGIC = {"And": "and", "Or": "or", "Xor": "xor", "BitwiseAnd": "bitwise_and",
         "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor"}
VARIADIC = {"Sum": "add", "Max": "max", "Min": "min"}


@translator("Abs", "Neg", types="numeric")
@translator(*[k for k in UNARY if k not in ("Abs", "Neg")])
def unary(ctx):
    return [ctx.wire(Unary(UNARY[ctx.onnx.op_type]), [ctx.input(0)])]


@translator("Sign", types="numeric")
@translator(*[k for k in COOK_UNARY if k != "Sign"])
def cook_unary(ctx):
    return [ctx.wire(Unary(COOK_UNARY[ctx.onnx.op_type]), [ctx.input(0)])]


@translator("Not", types="bool")
def logical_not(ctx):
    return [ctx.wire(Unary("not"), [ctx.input(0)])]


@translator("BitwiseNot", types="integer")
def bitwise_not(ctx):
    return [ctx.wire(Unary("bitwise_not"), [ctx.input(0)])]


@translator("IsInf")
def is_inf(ctx):
    negative, positive = ctx.attrs.int("detect_negative", 1), ctx.attrs.int("detect_positive", 1)
    kind = {(1, 1): "is_inf", (1, 0): "is_neg_inf", (0, 1): "is_pos_inf"}.get(
        (negative, positive))
    if kind is None:
        return [ctx.const(np.zeros(ctx.fact(0).shape, np.bool_), "false")]
    return [ctx.wire(Unary(kind), [ctx.input(0)])]


@translator("Gelu", opsets="20+")
def gelu(ctx):
    approximate = ctx.attrs.choice("approximate", ("none", "tanh"), "none")
    return [ctx.wire(Unary("gelu" if approximate == "none" else "gelu_tanh"), [ctx.input(0)])]


ACTIVATION_DEFAULTS = {
    "LeakyRelu": ("leaky_relu", 0.01, 0.0), "Elu": ("elu", 1.0, 0.0),
    "Selu": ("selu", 1.67326319217681884765625, 1.05070102214813232421875),
    "Celu": ("celu", 1.0, 0.0), "HardSigmoid": ("hard_sigmoid", 0.2, 0.5),
    "ThresholdedRelu": ("thresholded_relu", 1.0, 0.0), "Shrink": ("shrink", 0.5, 0.0),
}


@translator("Shrink", types="numeric")
@translator(*[k for k in ACTIVATION_DEFAULTS if k != "Shrink"])
def activation(ctx):
    kind, alpha, beta = ACTIVATION_DEFAULTS[ctx.onnx.op_type]
    if ctx.onnx.op_type == "Selu":
        alpha, beta = ctx.attrs.float("alpha", alpha), ctx.attrs.float("gamma", beta)
    elif ctx.onnx.op_type == "Shrink":
        alpha, beta = ctx.attrs.float("lambd", alpha), ctx.attrs.float("bias", beta)
    else:
        alpha, beta = ctx.attrs.float("alpha", alpha), ctx.attrs.float("beta", beta)
    return [ctx.wire(Activation(kind, alpha, beta), [ctx.input(0)])]


@translator("PRelu")
def prelu(ctx):
    x, slope = ctx.fact(0), ctx.fact(1)
    b = ctx.input(1)
    if slope.rank == 1 and x.rank > 2 and slope.shape[0] == x.shape[1] \
            and slope.shape[0] != x.shape[-1]:
        # per-channel slope (older exporters)
        b = ctx.wire(Unsqueeze(range(1, x.rank - 1)), [b], "slope")
    return [ctx.wire(Binary("prelu"), [ctx.input(0), b])]


@translator(*COMPARE, types="numeric")
def compare(ctx):
    return [ctx.wire(Binary(COMPARE[ctx.onnx.op_type]), [ctx.input(0), ctx.input(1)])]


@translator("BitwiseAnd", "BitwiseOr", "BitwiseXor", types="integer")
@translator("And", "Or", "Xor", types="bool")
def logic(ctx):
    return [ctx.wire(Binary(LOGIC[ctx.onnx.op_type]), [ctx.input(0), ctx.input(1)])]


@translator("BitShift", types="unsigned integer")
def bit_shift(ctx):
    direction = ctx.attrs.choice("direction", ("LEFT", "RIGHT"), None)
    kind = "shift_left" if direction == "LEFT" else "shift_right"
    return [ctx.wire(Binary(kind), [ctx.input(0), ctx.input(1)])]


@translator("Mod", types="numeric")
def mod(ctx):
    fmod = ctx.attrs.int("fmod", 0)
    return [ctx.wire(Binary("fmod" if fmod else "mod"), [ctx.input(0), ctx.input(1)])]


@translator("Where", types="all")
def where(ctx):
    return [ctx.wire(Where(), [ctx.input(0), ctx.input(1), ctx.input(2)])]


@translator("Reciprocal")
def reciprocal(ctx):
    one = ctx.const(np.ones((), ctx.fact(0).dtype), "one")
    return [ctx.wire(Binary("div"), [one, ctx.input(0)])]


@translator(*BINARY, types="numeric")
def binary(ctx):
    a, b = ctx.input(0), ctx.input(1)
    if ctx.opset < 7 and ctx.attrs.int("broadcast", 0) and "axis" in ctx.attrs:
        # legacy broadcast: b's dims align with a's from `axis`
        fa, fb = ctx.fact(0), ctx.fact(1)
        axis = ctx.attrs.int("axis")
        axis = axis + fa.rank if axis < 0 else axis
        trailing = fa.rank - axis - fb.rank
        if trailing < 0:
            raise ctx.error(f"axis {axis} does not fit {fb} into {fa}", BadAttribute)
        if trailing:
            b = ctx.wire(Unsqueeze(range(fb.rank, fb.rank + trailing)), [b], "aligned")
    kind = BINARY[ctx.onnx.op_type]
    if kind == "pow" and ctx.fact(1).datum_type is not ctx.fact(0).datum_type:
        if ctx.fact(1).value is not None:
            b = ctx.const(ctx.fact(1).value.astype(ctx.fact(0).dtype), "exponent")
        else:
            b = ctx.wire(Cast(ctx.fact(0).datum_type), [b], "exponent")
    return [ctx.wire(Binary(kind), [a, b])]


@translator(*VARIADIC, "Mean", types="numeric")
def variadic(ctx):
    kind = VARIADIC.get(ctx.onnx.op_type, "add")
    outlets = [o for o in ctx.inputs if o is not None]
    if not outlets:
        raise ctx.error("needs at least one input", BadAttribute)
    result = outlets[0]
    for index, outlet in enumerate(outlets[1:]):
        last = index == len(outlets) - 2 and ctx.onnx.op_type != "Mean"
        result = ctx.wire(Binary(kind), [result, outlet], None if last else f"{kind}{index}")
    if ctx.onnx.op_type == "Mean":
        count = ctx.const(np.array(len(outlets), ctx.fact(0).dtype), "count")
        result = ctx.wire(Binary("div"), [result, count])
    elif len(outlets) == 1:
        result = ctx.wire(Unary("copy"), [result])
    return [result]


@translator("Clip", types="numeric")
def clip(ctx):
    x = ctx.input(0)
    if ctx.opset < 11:
        low = ctx.attrs.float("min", -np.inf)
        high = ctx.attrs.float("max", np.inf)
        return [ctx.wire(Clamp(low, high), [x])]
    bounds = []
    for index in (1, 2):
        if not ctx.has_input(index):
            bounds.append(None)
        elif ctx.facts[index].value is not None and ctx.facts[index].value.size == 1:
            bounds.append(float(ctx.facts[index].value.reshape(())))
        else:
            bounds.append(ctx.input(index))      # a runtime bound: max/min ops
    if all(not hasattr(b, "node") for b in bounds):
        low = -np.inf if bounds[0] is None else bounds[0]
        high = np.inf if bounds[1] is None else bounds[1]
        return [ctx.wire(Clamp(low, high), [x])]
    result = x
    for bound, kind in zip(bounds, ("max", "min")):
        if bound is None:
            continue
        if not hasattr(bound, "node"):
            bound = ctx.const(np.array(bound, ctx.fact(0).dtype), kind)
        result = ctx.wire(Binary(kind), [result, bound], None if kind == "min" or bounds[1]
                          is None else kind)
    return [result]


@translator("MatMul", types="numeric")
def matmul(ctx):
    a, b = ctx.input(0), ctx.input(1)
    fa, fb = ctx.fact(0), ctx.fact(1)
    if fa.rank == 0 or fb.rank == 0:
        raise ctx.error("MatMul operands must have rank ≥ 1", BadAttribute)
    squeeze = []
    if fa.rank == 1:
        a = ctx.wire(Unsqueeze([0]), [a], "a_2d")
        squeeze.append(-2)
    if fb.rank == 1:
        b = ctx.wire(Unsqueeze([1]), [b], "b_2d")
        squeeze.append(-1)
    if not squeeze:
        return [ctx.wire(MatMul(), [a, b])]
    product = ctx.wire(MatMul(), [a, b], "matmul")
    rank = ctx.target.fact(product).rank
    return [ctx.wire(Squeeze([rank + axis for axis in squeeze]), [product])]


@translator("Gemm")
def gemm(ctx):
    attrs = ctx.attrs
    alpha, beta = attrs.float("alpha", 1.0), attrs.float("beta", 1.0)
    trans_a, trans_b = bool(attrs.int("transA", 0)), bool(attrs.int("transB", 0))
    fa, fb = ctx.fact(0), ctx.fact(1)
    if fa.rank != 2 or fb.rank != 2:
        raise ctx.error("A and B must be matrices", BadAttribute)
    dtype = fa.dtype
    a, b = ctx.input(0), ctx.input(1)
    if trans_a and fa.value is not None:
        a, trans_a = ctx.const(transposed(fa.value), "a"), False
    scaled = False
    if fb.value is not None:
        value = transposed(fb.value) if trans_b else fb.value
        if alpha != 1.0:
            value, scaled = (value * np.asarray(alpha, dtype)).astype(dtype), True
        b, trans_b = ctx.const(value, "b"), False
    has_c = ctx.has_input(2) and beta != 0.0
    product = ctx.wire(MatMul(trans_a, trans_b), [a, b],
                       "matmul" if has_c or (alpha != 1.0 and not scaled) else None)
    if alpha != 1.0 and not scaled:
        product = ctx.wire(Binary("mul"), [product, ctx.const(np.array(alpha, dtype), "alpha")],
                           "alpha" if has_c else None)
    if not has_c:
        return [product]
    fc = ctx.fact(2)
    if fc.value is not None:
        c = ctx.const((fc.value * np.asarray(beta, dtype)).astype(dtype), "c")
    elif beta != 1.0:
        c = ctx.wire(Binary("mul"), [ctx.input(2), ctx.const(np.array(beta, dtype), "beta")],
                     "beta")
    else:
        c = ctx.input(2)
    return [ctx.wire(Binary("add"), [product, c])]
