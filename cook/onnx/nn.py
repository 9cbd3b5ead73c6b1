"""Translators of ONNX neural-network ops: Conv, pools, LRN, BatchNormalization, Softmax."""
from .. import dims
from ..errors import BadAttribute
from ..ops.conv import Conv
from ..ops.nn import BatchNorm, Lrn, Softmax
from ..ops.pool import AvgPool, MaxPool
from ..ops.reduce import Reduce
from .registry import translator


def window_attrs(ctx, input_fact, kernel, allow_ceil):
    """(strides, dilations, padding pairs) of a conv or pool, with auto_pad and ceil_mode resolved."""
    attrs = ctx.attrs
    spatial = input_fact.rank - 2
    if spatial < 1:
        raise ctx.error(f"input {input_fact} needs N, C and ≥ 1 spatial dims", BadAttribute)
    if len(kernel) != spatial:
        raise ctx.error(f"kernel_shape {list(kernel)} does not match {spatial} spatial dims",
                        BadAttribute)
    strides = attrs.ints("strides", [1] * spatial)
    dilations = attrs.ints("dilations", [1] * spatial)
    for what, values in (("strides", strides), ("dilations", dilations)):
        if len(values) != spatial or any(v < 1 for v in values):
            raise ctx.error(f"{what} {values} must be {spatial} values ≥ 1", BadAttribute)
    auto_pad = attrs.choice("auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"),
                            "NOTSET")
    in_shape = input_fact.shape[2:]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        padding = [dims.same_padding(in_shape[i], kernel[i], strides[i], dilations[i],
                                     upper=auto_pad == "SAME_UPPER") for i in range(spatial)]
    elif auto_pad == "VALID":
        padding = [(0, 0)] * spatial
    else:
        pads = attrs.ints("pads", [0] * (2 * spatial))
        if len(pads) != 2 * spatial or any(p < 0 for p in pads):
            raise ctx.error(f"pads {pads} must be {2 * spatial} values ≥ 0", BadAttribute)
        padding = [(pads[i], pads[i + spatial]) for i in range(spatial)]
    ceil_mode = attrs.int("ceil_mode", 0) if allow_ceil else 0
    extra = [0] * spatial
    if ceil_mode and auto_pad in ("NOTSET", "VALID"):
        padding = list(padding)
        for i in range(spatial):
            before, after = padding[i]
            span = (kernel[i] - 1) * dilations[i] + 1
            out = dims.window_output(in_shape[i], kernel[i], strides[i], dilations[i],
                                     before, after, ceil=True)
            # the last window must start inside the input or its left padding
            if (out - 1) * strides[i] >= in_shape[i] + before:
                out -= 1
            needed = (out - 1) * strides[i] + span - (in_shape[i] + before + after)
            if needed > 0:
                extra[i] = needed
                padding[i] = (before, after + needed)
    return strides, dilations, padding, extra


@translator("Conv")
def conv(ctx):
    x, w = ctx.fact(0), ctx.fact(1)
    if w.rank != x.rank:
        raise ctx.error(f"filter {w} and input {x} must have the same rank", BadAttribute)
    kernel = ctx.attrs.ints("kernel_shape", list(w.shape[2:]))
    if tuple(kernel) != tuple(w.shape[2:]):
        raise ctx.error(f"kernel_shape {kernel} does not match the filter {w}", BadAttribute)
    strides, dilations, padding, _ = window_attrs(ctx, x, kernel, allow_ceil=False)
    op = Conv(strides, dilations, padding, ctx.attrs.int("group", 1))
    inputs = [ctx.input(0), ctx.input(1)]
    if ctx.has_input(2):
        inputs.append(ctx.input(2))
    return [ctx.wire(op, inputs)]


@translator("MaxPool")
def max_pool(ctx):
    if len(ctx.onnx.proto.output) > 1 and ctx.onnx.proto.output[1]:
        raise ctx.error("the Indices output of MaxPool is not supported")
    x = ctx.fact(0)
    kernel = ctx.attrs.ints("kernel_shape", required=True)
    ctx.attrs.check_unsupported("storage_order", (0,), 0)
    strides, dilations, padding, _ = window_attrs(ctx, x, kernel, allow_ceil=True)
    return [ctx.wire(MaxPool(kernel, strides, dilations, padding), [ctx.input(0)])]


@translator("AveragePool")
def average_pool(ctx):
    x = ctx.fact(0)
    kernel = ctx.attrs.ints("kernel_shape", required=True)
    strides, dilations, padding, extra = window_attrs(ctx, x, kernel, allow_ceil=True)
    count_include_pad = bool(ctx.attrs.int("count_include_pad", 0))
    if count_include_pad and any(extra):
        raise ctx.error("ceil_mode = 1 with count_include_pad = 1 needs a window "
                        "partly outside the padding; not supported yet")
    op = AvgPool(kernel, strides, padding, count_include_pad, dilations)
    return [ctx.wire(op, [ctx.input(0)])]


@translator("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx):
    x = ctx.fact(0)
    if x.rank < 3:
        raise ctx.error(f"input {x} needs N, C and ≥ 1 spatial dims", BadAttribute)
    kind = "mean" if ctx.onnx.op_type == "GlobalAveragePool" else "max"
    return [ctx.wire(Reduce(kind, range(2, x.rank)), [ctx.input(0)])]


@translator("LRN")
def lrn(ctx):
    attrs = ctx.attrs
    op = Lrn(attrs.float("alpha", 1e-4), attrs.float("beta", 0.75), attrs.float("bias", 1.0),
             attrs.int("size", required=True))
    return [ctx.wire(op, [ctx.input(0)])]


@translator("BatchNormalization")
def batch_normalization(ctx):
    attrs = ctx.attrs
    if attrs.int("training_mode", 0):
        raise ctx.error("training_mode = 1 is not supported (inference only)")
    if ctx.opset < 9 and attrs.int("spatial", 1) != 1:
        raise ctx.error("spatial = 0 is not supported")
    if len([o for o in ctx.onnx.proto.output if o]) > 1:
        raise ctx.error("the training outputs (running mean/var) are not supported")
    op = BatchNorm(attrs.float("epsilon", 1e-5))
    return [ctx.wire(op, [ctx.input(i) for i in range(5)])]


@translator("Softmax")
def softmax(ctx):
    x = ctx.fact(0)
    if ctx.opset < 13:
        # opset 1-12: softmax over the input flattened to 2D at `axis`
        axis = ctx.attrs.int("axis", 1)
        axis = axis + x.rank if axis < 0 else axis
        axes = range(axis, x.rank)
    else:
        axis = ctx.attrs.int("axis", -1)
        axes = [axis + x.rank if axis < 0 else axis]
    if any(not 0 <= a < x.rank for a in axes):
        raise ctx.error(f"axis out of range for {x}", BadAttribute)
    return [ctx.wire(Softmax(axes), [ctx.input(0)])]
