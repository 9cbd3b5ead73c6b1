"""Translators of ONNX normalisations: LayerNormalization, InstanceNormalization and
GroupNormalization (a LayerNorm op over the right axes), MeanVarianceNormalization,
LpNormalization and RMSNormalization (compositions of plan ops)."""
import numpy as np

from .. import dims
from ..errors import BadAttribute
from ..ops.elementwise import Binary, Unary
from ..ops.nn import LayerNorm, normalization_chain
from ..ops.reduce import Reduce
from ..ops.shape import Reshape
from .registry import translator


def _per_channel(ctx, index, shape, what):
    """Input `index` reshaped to `shape` (a constant reshaped at once)."""
    fact = ctx.fact(index)
    if fact.value is not None:
        return ctx.const(fact.value.reshape(shape), what)
    return ctx.wire(Reshape(shape), [ctx.input(index)], what)


@translator("LayerNormalization", opsets="17+")
def layer_normalization(ctx):
    x = ctx.fact(0)
    axis = ctx.axis(ctx.attrs.int("axis", -1), x.rank)
    axes = list(range(axis, x.rank))
    epsilon = ctx.attrs.float("epsilon", 1e-5)
    has_bias = ctx.has_input(2)
    if not any(ctx.onnx.proto.output[1:]):
        op = LayerNorm(axes, epsilon, has_scale=True, has_bias=has_bias)
        return [ctx.wire(op, [ctx.input(i) for i in range(2 + has_bias)])]
    # Mean and InvStdDev are wanted too: the expansion gives them (and declutter fuses
    # the rest into a LayerNorm when they turn out unused)
    centered, mean, inv = normalization_chain(
        lambda what, op, ins: ctx.wire(op, ins, what),
        lambda what, value: ctx.const(value, what), ctx.input(0), axes, epsilon, x.dtype)
    normalized = ctx.wire(Binary("mul"), [centered, inv], "normalized")
    y = ctx.wire(Binary("mul"), [normalized, ctx.input(1)], "scaled" if has_bias else None)
    if has_bias:
        y = ctx.wire(Binary("add"), [y, ctx.input(2)])
    return [y, mean, inv]


@translator("InstanceNormalization")
def instance_normalization(ctx):
    x = ctx.fact(0)
    shape = (x.shape[1],) + (1,) * (x.rank - 2)
    op = LayerNorm(range(2, x.rank), ctx.attrs.float("epsilon", 1e-5), has_scale=True,
                   has_bias=True)
    scale = _per_channel(ctx, 1, shape, "scale")
    bias = _per_channel(ctx, 2, shape, "bias")
    return [ctx.wire(op, [ctx.input(0), scale, bias])]


@translator("GroupNormalization", opsets="18+")
def group_normalization(ctx):
    x = ctx.fact(0)
    groups = ctx.attrs.int("num_groups", required=True)
    n, c = x.shape[0], dims.to_int(x.shape[1])
    grouped = ctx.wire(Reshape((n, groups, dims.product(x.shape[1:]) // groups)),
                       [ctx.input(0)], "grouped")
    normalized = ctx.wire(LayerNorm([2], ctx.attrs.float("epsilon", 1e-5)), [grouped],
                          "normalized")
    back = ctx.wire(Reshape(x.shape), [normalized], "ungrouped")
    shape = (c,) + (1,) * (x.rank - 2)
    params = []
    for index, what in ((1, "scale"), (2, "bias")):
        fact = ctx.fact(index)
        if dims.to_int(fact.shape[0]) == groups and groups != c:     # opset 18: per group
            value = np.repeat(ctx.const_input(index, what), c // groups)
            params.append(ctx.const(value.reshape(shape), what))
        else:
            params.append(_per_channel(ctx, index, shape, what))
    scaled = ctx.wire(Binary("mul"), [back, params[0]], "scaled")
    return [ctx.wire(Binary("add"), [scaled, params[1]])]


@translator("MeanVarianceNormalization")
def mean_variance_normalization(ctx):
    x = ctx.fact(0)
    axes = [ctx.axis(a, x.rank) for a in ctx.attrs.ints("axes", [0, 2, 3])]
    dtype = x.dtype
    mean = ctx.wire(Reduce("mean", axes), [ctx.input(0)], "mean")
    centered = ctx.wire(Binary("sub"), [ctx.input(0), mean], "centered")
    square = ctx.wire(Binary("mul"), [centered, centered], "square")
    std = ctx.wire(Unary("sqrt"), [ctx.wire(Reduce("mean", axes), [square], "var")], "std")
    std = ctx.wire(Binary("add"), [std, ctx.const(np.array(1e-9, dtype), "eps")], "std_eps")
    return [ctx.wire(Binary("div"), [centered, std])]


@translator("LpNormalization")
def lp_normalization(ctx):
    x = ctx.fact(0)
    axis = ctx.axis(ctx.attrs.int("axis", -1), x.rank)
    p = ctx.attrs.int("p", 2)
    if p == 1:
        norm = ctx.wire(Reduce("sum", [axis]), [ctx.wire(Unary("abs"), [ctx.input(0)], "abs")],
                        "norm")
    elif p == 2:
        square = ctx.wire(Binary("mul"), [ctx.input(0), ctx.input(0)], "square")
        norm = ctx.wire(Unary("sqrt"), [ctx.wire(Reduce("sum", [axis]), [square], "sum")],
                        "norm")
    else:
        raise ctx.error(f"p = {p} (only 1 and 2)", BadAttribute)
    return [ctx.wire(Binary("div"), [ctx.input(0), norm])]


@translator("RMSNormalization", opsets="23+")
def rms_normalization(ctx):
    x = ctx.fact(0)
    axis = ctx.axis(ctx.attrs.int("axis", -1), x.rank)
    square = ctx.wire(Binary("mul"), [ctx.input(0), ctx.input(0)], "square")
    mean = ctx.wire(Reduce("mean", range(axis, x.rank)), [square], "mean_square")
    eps = ctx.const(np.array(ctx.attrs.float("epsilon", 1e-5), x.dtype), "epsilon")
    inv = ctx.wire(Unary("rsqrt"), [ctx.wire(Binary("add"), [mean, eps], "shifted")], "inv")
    normalized = ctx.wire(Binary("mul"), [ctx.input(0), inv], "normalized")
    return [ctx.wire(Binary("mul"), [normalized, ctx.input(1)])]
