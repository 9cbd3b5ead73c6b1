"""Translators of ONNX arithmetic: unary maps, Clip, binary and variadic ops, MatMul, Gemm."""
import numpy as np

from ..errors import BadAttribute
from ..ops.elementwise import Binary, Clamp, Unary
from ..ops.matmul import MatMul, transposed
from ..ops.shape import Squeeze, Unsqueeze
from .registry import translator

UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log",
         "Sqrt": "sqrt", "Abs": "abs", "Neg": "neg"}
BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow"}
VARIADIC = {"Sum": "add", "Max": "max", "Min": "min"}


@translator(*UNARY)
def unary(ctx):
    return [ctx.wire(Unary(UNARY[ctx.onnx.op_type]), [ctx.input(0)])]


@translator("Reciprocal")
def reciprocal(ctx):
    one = ctx.const(np.ones((), ctx.fact(0).dtype), "one")
    return [ctx.wire(Binary("div"), [one, ctx.input(0)])]


@translator(*BINARY)
def binary(ctx):
    if ctx.opset < 7 and ctx.attrs.int("broadcast", 0) and "axis" in ctx.attrs:
        raise ctx.error("legacy broadcast with an axis attribute is not supported")
    a, b = ctx.input(0), ctx.input(1)
    kind = BINARY[ctx.onnx.op_type]
    if kind == "pow" and ctx.fact(1).datum_type is not ctx.fact(0).datum_type:
        b = ctx.const(ctx.const_input(1, "exponent").astype(ctx.fact(0).dtype), "exponent")
    return [ctx.wire(Binary(kind), [a, b])]


@translator(*VARIADIC, "Mean")
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


@translator("Clip")
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


@translator("MatMul")
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
