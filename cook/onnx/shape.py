"""Translators of ONNX tensor-shaping ops and of the shape computations that fold away:
Reshape, Flatten, Concat, Transpose, Squeeze, Unsqueeze, Slice, Shape, Gather, Cast,
Constant, ConstantOfShape, Identity, Dropout."""
import numpy as np

from .. import datum, dims
from ..errors import BadAttribute
from ..ops.base import normalize_axis
from ..ops.shape import (Cast, Concat, Gather, Reshape, ShapeOf, Slice, Squeeze, Transpose,
                         Unsqueeze, resolve_reshape)
from ..ops.tensor import Broadcast
from .registry import translator


def _error_wrap(ctx, function, *args, **kwargs):
    from ..errors import CookError
    try:
        return function(*args, **kwargs)
    except CookError as error:
        raise type(error)(f"{ctx.where}: {error}") from None


@translator("Identity", types="all")
def identity(ctx):
    return [ctx.input(0)]


@translator("Dropout")
def dropout(ctx):
    training = ctx.attrs.int("is_test", 1) == 0 if ctx.opset < 7 else False
    if ctx.has_input(2):
        mode = ctx.const_input(2, "training_mode")
        training = bool(np.asarray(mode).reshape(-1)[0])
    if training and ctx.has_input(1) and ctx.facts[1].value is not None \
            and float(np.asarray(ctx.facts[1].value).reshape(-1)[0]) == 0.0:
        training = False                          # ratio 0: nothing is dropped
    if training:
        raise ctx.error("training mode (random dropout) is not supported (inference only)")
    outputs = [ctx.input(0)]
    if len(ctx.onnx.proto.output) > 1 and ctx.onnx.proto.output[1]:
        x = ctx.fact(0)
        outputs.append(ctx.const(np.ones(x.shape, np.bool_), "mask"))
    return outputs


@translator("Reshape", types="all")
def reshape(ctx):
    x = ctx.fact(0)
    allowzero = bool(ctx.attrs.int("allowzero", 0))
    if ctx.opset >= 5 and ctx.runtime_input(1):
        # a shape only a run knows: its length is the rank, each dim a fresh symbol
        dims_ = ctx.fresh_symbols("dim", ctx.runtime_length(1, "shape"))
        return [ctx.wire(Reshape(dims_, ("shape",), allowzero), [ctx.input(0), ctx.input(1)])]
    if ctx.opset < 5:
        spec = ctx.attrs.ints("shape", required=True)
    else:
        spec = ctx.const_input(1, "shape")
    shape = _error_wrap(ctx, resolve_reshape, x.shape, list(np.asarray(spec).reshape(-1)),
                        allowzero)
    return [ctx.wire(Reshape(shape), [ctx.input(0)])]


@translator("Flatten", types="all")
def flatten(ctx):
    x = ctx.fact(0)
    axis = ctx.attrs.int("axis", 1)
    if not -x.rank <= axis <= x.rank:
        raise ctx.error(f"axis {axis} out of range for {x}", BadAttribute)
    axis = axis + x.rank if axis < 0 else axis
    shape = (dims.product(x.shape[:axis]), dims.product(x.shape[axis:]))
    return [ctx.wire(Reshape(shape), [ctx.input(0)])]


@translator("Concat", types="all")
def concat(ctx):
    inputs = [o for o in ctx.inputs if o is not None]
    rank = ctx.fact(0).rank
    axis = ctx.attrs.int("axis", 1 if ctx.opset < 4 else None, required=ctx.opset >= 4)
    axis = _error_wrap(ctx, normalize_axis, axis, rank)
    return [ctx.wire(Concat(axis), inputs)]


@translator("Transpose", types="all")
def transpose(ctx):
    rank = ctx.fact(0).rank
    perm = ctx.attrs.ints("perm", list(range(rank))[::-1])
    return [ctx.wire(Transpose(perm), [ctx.input(0)])]


def _axes(ctx, attr_before_opset=13, input_index=1):
    if ctx.opset < attr_before_opset:
        return ctx.attrs.ints("axes", None)
    if not ctx.has_input(input_index):
        return None
    if ctx.runtime_input(input_index):
        raise ctx.not_at_run_time(input_index, "axes", "the output rank depends on its value")
    return [int(a) for a in np.asarray(ctx.const_input(input_index, "axes")).reshape(-1)]


@translator("Squeeze", types="all")
def squeeze(ctx):
    x = ctx.fact(0)
    axes = _axes(ctx)
    if axes is None:
        axes = [a for a, d in enumerate(x.shape) if d == 1]
    axes = [_error_wrap(ctx, normalize_axis, a, x.rank) for a in axes]
    return [ctx.wire(Squeeze(axes), [ctx.input(0)])]


@translator("Unsqueeze", types="all")
def unsqueeze(ctx):
    x = ctx.fact(0)
    axes = _axes(ctx)
    if axes is None:
        raise ctx.error("axes are required", BadAttribute)
    rank = x.rank + len(axes)
    axes = [_error_wrap(ctx, normalize_axis, a, rank) for a in axes]
    return [ctx.wire(Unsqueeze(axes), [ctx.input(0)])]


@translator("Slice", types="all", notes="constant starts/ends/axes/steps; negative "
            "steps are cook-only")
def slice_(ctx):
    x = ctx.fact(0)
    if ctx.opset < 10:
        starts = ctx.attrs.ints("starts", required=True)
        ends = ctx.attrs.ints("ends", required=True)
        axes = ctx.attrs.ints("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    elif any(ctx.runtime_input(i) for i in (1, 2, 4)):
        return [_slice_at_run_time(ctx, x)]
    else:
        starts = [int(v) for v in ctx.const_input(1, "starts").reshape(-1)]
        ends = [int(v) for v in ctx.const_input(2, "ends").reshape(-1)]
        axes = [int(v) for v in ctx.const_input(3, "axes").reshape(-1)] if ctx.has_input(3) \
            else list(range(len(starts)))
        steps = [int(v) for v in ctx.const_input(4, "steps").reshape(-1)] if ctx.has_input(4) \
            else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.error("starts, ends, axes and steps must have the same length", BadAttribute)
    begins, stops, norm_axes = [], [], []
    for axis, start, end, step in zip(axes, starts, ends, steps):
        axis = _error_wrap(ctx, normalize_axis, axis, x.rank)
        if step == 0:
            raise ctx.error("slice step 0", BadAttribute)
        begin, stop = _error_wrap(ctx, resolve_slice, x.shape[axis], start, end, step)
        norm_axes.append(axis)
        begins.append(begin)
        stops.append(stop)
    return [ctx.wire(Slice(norm_axes, begins, stops, steps), [ctx.input(0)])]


def _slice_at_run_time(ctx, x):
    """Slice whose starts, ends or steps only a run knows: the axes must be constants
    (typing needs them); each sliced axis gets a fresh symbol as its length."""
    if ctx.runtime_input(3):
        raise ctx.not_at_run_time(3, "axes", "typing needs to know which axes are sliced")
    count = ctx.runtime_length(1, "starts")
    axes = [int(v) for v in ctx.const_input(3, "axes").reshape(-1)] if ctx.has_input(3) \
        else list(range(count))
    if len(axes) != count:
        raise ctx.error("starts, ends, axes and steps must have the same length", BadAttribute)
    axes = [_error_wrap(ctx, normalize_axis, a, x.rank) for a in axes]
    operands = ["starts", "ends"] + (["steps"] if ctx.has_input(4) else [])
    inputs = [ctx.input(i) for i in (0, 1, 2, 4) if ctx.has_input(i)]
    op = Slice(axes, [0] * count, ctx.fresh_symbols("len", count), [1] * count, operands)
    return ctx.wire(op, inputs)


def resolve_slice(dim, start, end, step):
    """ONNX slice bounds (negative from the end, clamped) as [begin, end) of the dim.

    On a symbolic dim, a bound ≥ 2^31 means "the end", a negative one counts from the
    end, and the others are taken to lie inside the dim (positive steps only)."""
    if dims.is_concrete(dim):
        resolved = range(dim)[slice(start, end, step)]
        return resolved.start, resolved.stop
    if step < 0:
        from ..errors import UnsupportedOp
        raise UnsupportedOp(f"a negative slice step on the symbolic dim {dim}")
    big = 1 << 31

    def bound(value):
        if value >= big:
            return dim
        if value < -big:
            return 0
        return dims.add(dim, value) if value < 0 else value
    return bound(start), bound(end)


@translator("Shape", types="all", notes="a constant, or symbolic dims for the "
            "ops that read it (Reshape, Expand…)")
def shape(ctx):
    outlet = ctx.wire(ShapeOf(), [ctx.input(0)])
    start, end = ctx.attrs.int("start", 0), ctx.attrs.int("end", None)
    if start == 0 and end is None:
        return [outlet]
    rank = ctx.fact(0).rank
    resolved = range(rank)[slice(start, end)]
    return [ctx.wire(Slice([0], [resolved.start], [resolved.stop]), [outlet], "slice")]


@translator("Size", types="all")
def size(ctx):
    return [ctx.const(np.array(dims.product(ctx.fact(0).shape), np.int64), "size")]


@translator("Gather", types="all",
            notes="folded away when data and indices are constants")
def gather(ctx):
    return [ctx.wire(Gather(ctx.attrs.int("axis", 0)), [ctx.input(0), ctx.input(1)])]


@translator("Cast", types="all",
            notes="folded away on constants; saturate for the float8 and float4 types")
def cast(ctx):
    to = datum.from_onnx(ctx.attrs.int("to", required=True))
    return [ctx.wire(Cast(to, ctx.attrs.int("saturate", 1)), [ctx.input(0)])]


@translator("Constant", types="all")
def constant(ctx):
    attrs = ctx.attrs
    if "value" in attrs:
        value = attrs.tensor("value")
    elif "value_float" in attrs:
        value = np.array(attrs.float("value_float"), np.float32)
    elif "value_floats" in attrs:
        value = np.array(attrs.floats("value_floats"), np.float32)
    elif "value_int" in attrs:
        value = np.array(attrs.int("value_int"), np.int64)
    elif "value_ints" in attrs:
        value = np.array(attrs.ints("value_ints"), np.int64)
    else:
        raise ctx.error("Constant needs value, value_float(s) or value_int(s) "
                        "(sparse and string values are not supported)", BadAttribute)
    return [ctx.target.add_const(ctx.name, value)]


@translator("ConstantOfShape", types="all")
def constant_of_shape(ctx):
    shape = None if ctx.runtime_input(0) else \
        [dims.from_value(d) for d in np.asarray(ctx.const_input(0, "shape")).reshape(-1)]
    fill = ctx.attrs.tensor("value", np.zeros(1, np.float32))
    fill = np.asarray(fill).reshape(-1)
    if fill.size != 1:
        raise ctx.error(f"value must hold one element, has {fill.size}", BadAttribute)
    if shape is None:
        # a shape only a run knows: the fill broadcast to it, fresh symbols as its dims
        op = Broadcast(ctx.fresh_symbols("dim", ctx.runtime_length(0, "shape")), ("shape",))
        return [ctx.wire(op, [ctx.const(fill.reshape(()), "fill"), ctx.input(0)])]
    if any(dims.is_concrete(d) and d < 0 for d in shape):
        raise ctx.error(f"negative dim in shape {shape}", BadAttribute)
    if all(dims.is_concrete(d) for d in shape):
        return [ctx.target.add_const(ctx.name, np.full(shape, fill[0], fill.dtype))]
    # a symbolic shape (e.g. an RNN's initial state sized by the batch): broadcast the fill
    return [ctx.wire(Broadcast(shape), [ctx.const(fill.reshape(()), "fill")])]
