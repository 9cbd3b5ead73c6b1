"""Translators of ONNX reductions, normalisations and tensor ops built on the generic core
ops: Reduce*, ArgMax/ArgMin, CumSum, TopK, Expand, Tile, Pad, Split, Range, Trilu,
OneHot, EyeLike, CastLike, LogSoftmax, Hardmax, Gather/Scatter variants, Einsum,
DepthToSpace, SpaceToDepth, quantization, losses, DFT and a few more. Normalisations
are in norm.py."""
import numpy as np

from .. import datum, dims
from ..errors import BadAttribute
from ..ops.elementwise import Binary, Unary
from ..ops.reduce import Reduce, ReduceAxesInput
from ..ops.shape import Cast, Gather, Reshape, Slice, Squeeze, Transpose
from ..ops.gather import GatherElements, GatherND, ScatterElements, ScatterND
from ..ops.quant import Dequantize, IntegerMatMul, Quantize
from ..ops.einsum import Einsum
from ..ops.gather import OneHot
from ..ops.tensor import (ArgReduce, Broadcast, CumSum, Hardmax, LogSoftmax, Pad, Range,
                          Tile, TopK, Trilu, range_values)
from .registry import translator


def _ints(ctx, index, what):
    return [int(v) for v in np.asarray(ctx.const_input(index, what)).reshape(-1)]


def _dims(ctx, index, what):
    """Like _ints, but entries may be symbolic (a shape computed from symbolic shapes)."""
    return [dims.from_value(v) for v in np.asarray(ctx.const_input(index, what)).reshape(-1)]


# -- reductions -----------------------------------------------------------------------------
REDUCE_AXES_INPUT_SINCE = {"ReduceSum": 13}


@translator("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1",
            "ReduceSumSquare", types="numeric", notes="axes as attribute or constant input")
@translator("ReduceProd", types="numeric",
            notes="axes as attribute or constant input")
@translator("ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
            notes="axes as attribute or constant input; composed of plan ops")
def reduce(ctx):
    op_type = ctx.onnx.op_type
    x = ctx.fact(0)
    since = REDUCE_AXES_INPUT_SINCE.get(op_type, 18)
    keepdims = ctx.attrs.int("keepdims", 1)
    kind = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
            "ReduceProd": "prod"}.get(op_type, "sum")
    if ctx.opset >= since and ctx.runtime_input(1):
        op, axes, extra = _reduce_axes_input(ctx, kind, keepdims), None, [ctx.input(1)]
    else:
        if ctx.opset < since:
            axes = ctx.attrs.ints("axes", None)
        else:
            axes = _ints(ctx, 1, "axes") if ctx.has_input(1) else None
        if not axes:
            if ctx.attrs.int("noop_with_empty_axes", 0) and ctx.opset >= since:
                return [ctx.wire(Unary("copy"), [ctx.input(0)])]
            axes = list(range(x.rank))
        axes = sorted({ctx.axis(a, x.rank) for a in axes})
        op, extra = Reduce(kind, axes), []
    value = ctx.input(0)
    if op_type == "ReduceL1":
        value = ctx.wire(Unary("abs"), [value], "abs")
    elif op_type in ("ReduceL2", "ReduceSumSquare"):
        value = ctx.wire(Binary("mul"), [value, value], "square")
    elif op_type == "ReduceLogSumExp":
        value = ctx.wire(Unary("exp"), [value], "exp")
    last = keepdims and op_type not in ("ReduceL2", "ReduceLogSum", "ReduceLogSumExp")
    result = ctx.wire(op, [value] + extra, None if last else "reduce")
    if op_type == "ReduceL2":
        result = ctx.wire(Unary("sqrt"), [result], None if keepdims else "sqrt")
    elif op_type in ("ReduceLogSum", "ReduceLogSumExp"):
        result = ctx.wire(Unary("log"), [result], None if keepdims else "log")
    if not keepdims:
        result = ctx.wire(Squeeze(axes), [result])
    return [result]


def _reduce_axes_input(ctx, kind, keepdims):
    """The reduction for axes only a run knows: typeable when dims are kept (each dim
    other than 1 becomes a fresh symbol, reduced or not), refused otherwise."""
    if not keepdims:
        raise ctx.not_at_run_time(1, "axes", "with keepdims = 0 the output rank depends on "
                                             "its value")
    x = ctx.fact(0)
    fresh = ctx.fresh_symbols("dim", x.rank)
    shape = [d if d == 1 else symbol for d, symbol in zip(x.shape, fresh)]
    return ReduceAxesInput(kind, shape, ctx.attrs.int("noop_with_empty_axes", 0))


@translator("ArgMax", "ArgMin", types="numeric")
def arg_reduce(ctx):
    kind = "max" if ctx.onnx.op_type == "ArgMax" else "min"
    op = ArgReduce(kind, ctx.axis(ctx.attrs.int("axis", 0), ctx.fact(0).rank),
                   ctx.attrs.int("keepdims", 1), ctx.attrs.int("select_last_index", 0))
    return [ctx.wire(op, [ctx.input(0)])]


@translator("CumSum", types="numeric",
            notes="axis may be known only at run time")
def cumsum(ctx):
    return [_cumulative(ctx, product=False)]


def _cumulative(ctx, product):
    flags = (ctx.attrs.int("exclusive", 0), ctx.attrs.int("reverse", 0), product)
    if ctx.runtime_input(1):
        # the axis leaves the shape as it is: eval reads it
        return ctx.wire(CumSum(None, *flags, from_inputs=("axis",)),
                        [ctx.input(0), ctx.input(1)])
    axis = _ints(ctx, 1, "axis")[0]
    return ctx.wire(CumSum(ctx.axis(axis, ctx.fact(0).rank), *flags), [ctx.input(0)])


@translator("TopK", types="numeric",
            notes="k known only at run time types as a fresh symbol")
def top_k(ctx):
    inputs, operands = [ctx.input(0)], ()
    if ctx.opset < 10:
        k = ctx.attrs.int("k", required=True)
    elif ctx.runtime_input(1):
        k, operands = ctx.fresh_symbol("k"), ("k",)
        inputs.append(ctx.input(1))
    else:
        k = _ints(ctx, 1, "k")[0]
    op = TopK(k, ctx.axis(ctx.attrs.int("axis", -1), ctx.fact(0).rank),
              ctx.attrs.int("largest", 1), ctx.attrs.int("sorted", 1), operands)
    node = ctx.target.add_node(ctx.name, op, inputs)
    return [node.outlet(0), node.outlet(1)]


# -- shapes -----------------------------------------------------------------------------------
@translator("Expand", types="all",
            notes="a shape known only at run time types with fresh symbols")
def expand(ctx):
    if not ctx.runtime_input(1):
        return [ctx.wire(Broadcast(_dims(ctx, 1, "shape")), [ctx.input(0)])]
    # the result keeps the input's dims other than 1; the value decides the others
    x = ctx.fact(0)
    rank = max(ctx.runtime_length(1, "shape"), x.rank)
    known = [1] * (rank - x.rank) + list(x.shape)
    fresh = ctx.fresh_symbols("dim", rank)
    shape = [symbol if d == 1 else d for d, symbol in zip(known, fresh)]
    return [ctx.wire(Broadcast(shape, ("shape",)), [ctx.input(0), ctx.input(1)])]


@translator("Tile", types="all",
            notes="repeats known only at run time type as fresh symbols")
def tile(ctx):
    if not ctx.runtime_input(1):
        return [ctx.wire(Tile(_ints(ctx, 1, "repeats")), [ctx.input(0)])]
    repeats = ctx.fresh_symbols("repeat", ctx.fact(0).rank)
    return [ctx.wire(Tile(repeats, ("repeats",)), [ctx.input(0), ctx.input(1)])]


@translator("Pad", types="all",
            notes="axes must be a constant; pads known only at run time type as fresh "
                  "symbols")
def pad(ctx):
    x = ctx.fact(0)
    mode = ctx.attrs.choice("mode", ("constant", "reflect", "edge", "wrap"), "constant")
    if ctx.opset < 11:
        pads = ctx.attrs.ints("pads", required=True) if ctx.opset >= 2 else \
            ctx.attrs.ints("paddings", required=True)
        value = ctx.attrs.float("value", 0.0)
        axes = list(range(x.rank))
    else:
        if ctx.runtime_input(3):
            raise ctx.not_at_run_time(3, "axes", "typing needs to know which axes are padded")
        axes = [ctx.axis(a, x.rank) for a in _ints(ctx, 3, "axes")] if ctx.has_input(3) \
            else list(range(x.rank))
        if ctx.runtime_input(1) or ctx.runtime_input(2):
            return [_pad_at_run_time(ctx, x, mode, axes)]
        pads = _ints(ctx, 1, "pads")
        value = ctx.const_input(2, "constant_value").reshape(-1)[0] \
            if ctx.has_input(2) else 0
    return [ctx.wire(Pad(_pad_pairs(ctx, x.rank, axes, pads), mode, value), [ctx.input(0)])]


def _pad_pairs(ctx, rank, axes, pads):
    """ONNX pads (the befores, then the afters, of `axes`) as a (before, after) per axis."""
    if len(pads) != 2 * len(axes):
        raise ctx.error(f"pads {pads} needs 2 entries per axis", BadAttribute)
    pairs = [(0, 0)] * rank
    for index, axis in enumerate(axes):
        pairs[axis] = (pads[index], pads[index + len(axes)])
    return pairs


def _pad_at_run_time(ctx, x, mode, axes):
    """Pad whose pads or constant_value only a run knows: unknown pads are fresh symbols."""
    inputs, operands, value = [ctx.input(0)], [], 0
    if ctx.runtime_input(1):
        count = ctx.runtime_length(1, "pads") // 2
        pads = ctx.fresh_symbols("pad_begin", count) + ctx.fresh_symbols("pad_end", count)
        inputs.append(ctx.input(1))
        operands.append("pads")
    else:
        pads = _ints(ctx, 1, "pads")
    if ctx.runtime_input(2):
        inputs.append(ctx.input(2))
        operands.append("value")
    elif ctx.has_input(2):
        value = ctx.const_input(2, "constant_value").reshape(-1)[0]
    pairs = _pad_pairs(ctx, x.rank, axes, pads)
    return ctx.wire(Pad(pairs, mode, value, operands, axes), inputs)


@translator("Split", types="all", notes="split sizes must be constants")
def split(ctx):
    x = ctx.fact(0)
    axis = ctx.axis(ctx.attrs.int("axis", 0), x.rank)
    count = len(ctx.onnx.proto.output)
    if ctx.opset < 13:
        sizes = ctx.attrs.ints("split", None)
    elif ctx.runtime_input(1):
        return _split_at_run_time(ctx, axis, count)
    else:
        sizes = _ints(ctx, 1, "split") if ctx.has_input(1) else None
    dim = x.shape[axis]
    if sizes is None:
        count = ctx.attrs.int("num_outputs", count)
        chunk = dims.div_ceil(dim, count)
        if dims.is_concrete(dim):
            sizes = [min(chunk, max(dim - i * chunk, 0)) for i in range(count)]
        else:
            sizes = [chunk] * count
    outputs, begin = [], 0
    for index, size in enumerate(sizes):
        end = dims.add(begin, size) if index < len(sizes) - 1 or dims.is_concrete(dim) \
            else dim
        outputs.append(ctx.wire(Slice([axis], [begin], [end]), [ctx.input(0)], f"{index}"))
        begin = end
    return outputs


def _split_at_run_time(ctx, axis, count):
    """Split whose sizes only a run knows: output i is a run-time Slice from the sum of
    the sizes before it to that sum plus its own, its length a fresh symbol."""
    if ctx.runtime_length(1, "split") != count:
        raise ctx.error(f"split has {ctx.fact(1).shape[0]} sizes for {count} outputs",
                        BadAttribute)
    ends = ctx.wire(CumSum(0), [ctx.input(1)], "ends")
    start = ctx.const(np.zeros(1, ctx.fact(1).dtype), "start")
    outputs = []
    for index, length in enumerate(ctx.fresh_symbols("len", count)):
        end = ctx.wire(Gather(0), [ends, ctx.const(np.array([index]), f"at{index}")],
                       f"end{index}")
        op = Slice([axis], [0], [length], [1], ("starts", "ends"))
        outputs.append(ctx.wire(op, [ctx.input(0), start, end], f"{index}"))
        start = end
    return outputs


@translator("Range", types="numeric", notes="folded to a constant when start, limit and "
            "delta are; otherwise cook-only, its length a symbol")
def range_(ctx):
    if any(ctx.facts[i].value is None for i in range(3)):
        return [ctx.wire(Range(_range_count(ctx)), [ctx.input(i) for i in range(3)])]
    start, limit, delta = (ctx.const_input(i, what) for i, what in
                           enumerate(("start", "limit", "delta")))
    return [ctx.const(range_values(start, limit, delta), "range")]


def _range_count(ctx):
    """(limit - start) / delta rounded up when start and delta are integer constants and
    limit a dim (taken to be at least start, as a length is); else a fresh symbol."""
    start, limit, delta = (f.value if f.value is not None else f.symbolic
                           for f in ctx.facts[:3])
    if start is None or limit is None or delta is None \
            or not ctx.facts[0].datum_type.is_integer:
        return ctx.fresh_symbol("count")
    start, limit, delta = (dims.from_value(np.asarray(v).reshape(-1)[0])
                           for v in (start, limit, delta))
    if not dims.is_concrete(start) or not dims.is_concrete(delta) or delta <= 0:
        return ctx.fresh_symbol("count")
    return dims.div_ceil(dims.sub(limit, start), delta)


@translator("Trilu", types="all", notes="k must be a constant; the last two dims known")
def trilu(ctx):
    k = _ints(ctx, 1, "k")[0] if ctx.has_input(1) else 0
    return [ctx.wire(Trilu(ctx.attrs.int("upper", 1), k), [ctx.input(0)])]


@translator("OneHot", types="numeric",
            notes="depth and values must be constants")
def one_hot(ctx):
    values = np.asarray(ctx.const_input(2, "values")).reshape(-1)
    inputs, operands = [ctx.input(0)], ()
    if ctx.runtime_input(1):
        depth, operands = ctx.fresh_symbol("depth"), ("depth",)
        inputs.append(ctx.input(1))
    else:
        depth = int(np.asarray(ctx.const_input(1, "depth")).reshape(-1)[0])
    op = OneHot(depth, ctx.attrs.int("axis", -1), values[0], values[1], operands)
    return [ctx.wire(op, inputs)]


@translator("EyeLike", types="numeric", notes="folded to a constant")
def eye_like(ctx):
    x = ctx.fact(0)
    if x.rank != 2:
        raise ctx.error("input must be a matrix", BadAttribute)
    rows, cols = (dims.to_int(d) for d in x.shape)
    dtype = datum.from_onnx(ctx.attrs.int("dtype")).dtype if "dtype" in ctx.attrs else x.dtype
    return [ctx.const(np.eye(rows, cols, ctx.attrs.int("k", 0), dtype=dtype), "eye")]


@translator("CastLike", types="all")
def cast_like(ctx):
    return [ctx.wire(Cast(ctx.fact(1).datum_type, ctx.attrs.int("saturate", 1)),
                     [ctx.input(0)])]


@translator("LogSoftmax", "Hardmax")
def log_softmax(ctx):
    x = ctx.fact(0)
    if ctx.opset < 13:
        axis = ctx.axis(ctx.attrs.int("axis", 1), x.rank)
        if ctx.onnx.op_type == "LogSoftmax":
            return [ctx.wire(LogSoftmax(range(axis, x.rank)), [ctx.input(0)])]
        shape = (dims.product(x.shape[:axis]), dims.product(x.shape[axis:]))
        flat = ctx.wire(Reshape(shape), [ctx.input(0)], "flat")
        hard = ctx.wire(Hardmax(1), [flat], "hardmax")
        return [ctx.wire(Reshape(x.shape), [hard])]
    axis = ctx.axis(ctx.attrs.int("axis", -1), x.rank)
    op = LogSoftmax([axis]) if ctx.onnx.op_type == "LogSoftmax" else Hardmax(axis)
    return [ctx.wire(op, [ctx.input(0)])]


@translator("GatherElements", types="all")
def gather_elements(ctx):
    return [ctx.wire(GatherElements(ctx.attrs.int("axis", 0)), [ctx.input(0), ctx.input(1)])]


@translator("GatherND", types="all")
def gather_nd(ctx):
    return [ctx.wire(GatherND(ctx.attrs.int("batch_dims", 0)), [ctx.input(0), ctx.input(1)])]


@translator("ScatterElements", "Scatter", types="all")
def scatter_elements(ctx):
    op = ScatterElements(ctx.attrs.int("axis", 0), ctx.attrs.string("reduction", "none"))
    return [ctx.wire(op, [ctx.input(0), ctx.input(1), ctx.input(2)])]


@translator("ScatterND", types="all")
def scatter_nd(ctx):
    op = ScatterND(ctx.attrs.string("reduction", "none"))
    return [ctx.wire(op, [ctx.input(0), ctx.input(1), ctx.input(2)])]


@translator("Einsum", types="numeric", notes="concrete shapes")
def einsum(ctx):
    op = Einsum(ctx.attrs.string("equation", required=True))
    return [ctx.wire(op, [o for o in ctx.inputs if o is not None])]


@translator("DepthToSpace", "SpaceToDepth", types="all")
def depth_space(ctx):
    x = ctx.fact(0)
    if x.rank != 4:
        raise ctx.error("input must be NCHW", BadAttribute)
    b = ctx.attrs.int("blocksize", required=True)
    n, c, h, w = x.shape
    if ctx.onnx.op_type == "DepthToSpace":
        if ctx.attrs.choice("mode", ("DCR", "CRD"), "DCR") == "DCR":
            split, perm = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
        else:
            split, perm = (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
        final = (n, c // (b * b), h * b, w * b)
    else:
        crd = ctx.attrs.choice("mode", ("DCR", "CRD"), "DCR") == "CRD"
        split = (n, c, h // b, b, w // b, b)
        perm = (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4)
        final = (n, c * b * b, h // b, w // b)
    blocks = ctx.wire(Reshape(split), [ctx.input(0)], "blocks")
    moved = ctx.wire(Transpose(perm), [blocks], "moved")
    return [ctx.wire(Reshape(final), [moved])]


@translator("CumProd", types="numeric",
            notes="axis may be known only at run time")
def cumprod(ctx):
    return [_cumulative(ctx, product=True)]


@translator("Swish", opsets="24+")
def swish(ctx):
    x = ctx.input(0)
    alpha = ctx.attrs.float("alpha", 1.0)
    scaled = x if alpha == 1.0 else ctx.wire(
        Binary("mul"), [x, ctx.const(np.array(alpha, ctx.fact(0).dtype), "alpha")], "scaled")
    gate = ctx.wire(Unary("sigmoid"), [scaled], "gate")
    return [ctx.wire(Binary("mul"), [x, gate])]


# -- quantization -----------------------------------------------------------------------------
@translator("QuantizeLinear", types="f32/f16/i32 -> i8/u8/i16/u16/i32",
            notes="per tensor or per axis; no blocked quantization; 4-bit, 2-bit and "
                  "float8 targets are cook-only")
def quantize_linear(ctx):
    if ctx.attrs.int("block_size", 0):
        raise ctx.error("blocked quantization is not supported")
    if ctx.has_input(2):
        to = ctx.fact(2).datum_type
    elif "output_dtype" in ctx.attrs and ctx.attrs.int("output_dtype"):
        to = datum.from_onnx(ctx.attrs.int("output_dtype"))
    else:
        to = datum.U8
    if not to.is_integer:
        raise ctx.error(f"quantizing to {to} is not supported")
    inputs = [ctx.input(i) for i in range(3) if ctx.has_input(i)]
    return [ctx.wire(Quantize(ctx.attrs.int("axis", 1), to), inputs)]


@translator("DequantizeLinear", types="i8/u8/i16/u16/i32 -> f32/f16",
            notes="per tensor or per axis; no blocked quantization; 4-bit, 2-bit and "
                  "float8 inputs are cook-only")
def dequantize_linear(ctx):
    if ctx.attrs.int("block_size", 0):
        raise ctx.error("blocked quantization is not supported")
    to = ctx.fact(1).datum_type
    if "output_dtype" in ctx.attrs and ctx.attrs.int("output_dtype"):
        to = datum.from_onnx(ctx.attrs.int("output_dtype"))
    inputs = [ctx.input(i) for i in range(3) if ctx.has_input(i)]
    return [ctx.wire(Dequantize(ctx.attrs.int("axis", 1), to), inputs)]


@translator("MatMulInteger", types="i8/u8", notes="i32 accumulation")
def matmul_integer(ctx):
    inputs = [ctx.input(i) for i in range(4) if ctx.has_input(i)]
    if len(inputs) == 3 or (ctx.has_input(3) and not ctx.has_input(2)):
        zero = ctx.const(np.zeros((), ctx.fact(0).dtype), "a_zero")
        inputs = [ctx.input(0), ctx.input(1), ctx.input(2) if ctx.has_input(2) else zero] + \
            ([ctx.input(3)] if ctx.has_input(3) else [])
    return [_integer_matmul(ctx, IntegerMatMul(), inputs, 0, 1)]


@translator("QLinearMatMul", types="i8/u8",
            notes="i32 accumulation, requantized in f64 (scales f32 or f16)")
def qlinear_matmul(ctx):
    from ..ops.quant import QLinearMatMul
    op = QLinearMatMul(ctx.fact(7).datum_type, ctx.fact(1).datum_type)
    return [_integer_matmul(ctx, op, [ctx.input(i) for i in range(8)], 0, 3)]


def _integer_matmul(ctx, op, inputs, a_slot, b_slot):
    """op on inputs, with numpy's rules for vector operands (as MatMul)."""
    from ..ops.shape import Unsqueeze
    inputs = list(inputs)
    squeeze = []
    if ctx.fact(a_slot).rank == 1:
        inputs[a_slot] = ctx.wire(Unsqueeze([0]), [inputs[a_slot]], "a_2d")
        squeeze.append(-2)
    if ctx.fact(b_slot).rank == 1:
        inputs[b_slot] = ctx.wire(Unsqueeze([1]), [inputs[b_slot]], "b_2d")
        squeeze.append(-1)
    if not squeeze:
        return ctx.wire(op, inputs)
    product = ctx.wire(op, inputs, "matmul")
    rank = ctx.target.fact(product).rank
    return ctx.wire(Squeeze([rank + axis for axis in squeeze]), [product])


@translator("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss",
            notes="reduction none/sum/mean, weights, ignore_index")
def nll_loss(ctx):
    from ..ops.tensor import NllLoss
    reduction = ctx.attrs.choice("reduction", ("none", "sum", "mean"), "mean")
    ignore = ctx.attrs.int("ignore_index", None)
    op = NllLoss(reduction, ignore)
    inputs = [ctx.input(i) for i in range(3) if ctx.has_input(i)]
    if ctx.onnx.op_type == "NegativeLogLikelihoodLoss":
        return [ctx.wire(op, inputs)]
    log_prob = ctx.wire(LogSoftmax([1]), [ctx.input(0)], "log_prob")
    loss = ctx.wire(op, [log_prob] + inputs[1:])
    return [loss, log_prob]


@translator("Attention", opsets="23+",
            notes="3-D/4-D, masks, causal, KV cache, GQA, softcap, qk output modes, "
                  "sliding windows")
def attention(ctx):
    from ..ops.attention import INPUTS, Attention
    present, inputs = [], []
    for index, name in enumerate(INPUTS):
        if ctx.has_input(index):
            present.append(name)
            inputs.append(ctx.input(index))
    attrs = ctx.attrs
    op = Attention(present, attrs.int("q_num_heads", None), attrs.int("kv_num_heads", None),
                   attrs.float("scale", None), attrs.int("is_causal", 0),
                   attrs.float("softcap", 0.0), attrs.int("qk_matmul_output_mode", 0),
                   attrs.int("left_window_size", -1), attrs.int("right_window_size", -1),
                   max(len(ctx.onnx.proto.output), 1))
    node = ctx.target.add_node(ctx.name, op, inputs)
    return [node.outlet(i) for i in range(len(node.outputs))]


@translator("CenterCropPad", opsets="18+", types="all",
            notes="shape must be a constant; crops with Slice, pads with Pad")
def center_crop_pad(ctx):
    x = ctx.fact(0)
    target = _ints(ctx, 1, "shape")
    axes = [ctx.axis(a, x.rank) for a in ctx.attrs.ints("axes", list(range(x.rank)))]
    if len(target) != len(axes):
        raise ctx.error(f"shape {target} needs one size per axis {axes}", BadAttribute)
    crop_axes, begins, ends = [], [], []
    pads = [(0, 0)] * x.rank
    for axis, size in zip(axes, target):
        dim = dims.to_int(x.shape[axis])
        if size < dim:
            start = (dim - size) // 2
            crop_axes.append(axis)
            begins.append(start)
            ends.append(start + size)
        elif size > dim:
            before = (size - dim) // 2
            pads[axis] = (before, size - dim - before)
    result = ctx.input(0)
    padded = any(p != (0, 0) for p in pads)
    if crop_axes:
        result = ctx.wire(Slice(crop_axes, begins, ends), [result], "crop" if padded else None)
    if padded:
        result = ctx.wire(Pad(pads), [result])
    if result == ctx.input(0):
        result = ctx.wire(Unary("copy"), [result])
    return [result]


@translator("BitCast", opsets="26+", types="all",
            notes="between types of the same width")
def bit_cast(ctx):
    from ..ops.quant import BitCast
    to = datum.from_onnx(ctx.attrs.int("to", required=True))
    if to.dtype.itemsize != ctx.fact(0).dtype.itemsize:
        raise ctx.error(f"bit cast from {ctx.fact(0).datum_type} to {to}: different widths")
    return [ctx.wire(BitCast(to), [ctx.input(0)])]


@translator("RotaryEmbedding", opsets="23+",
            notes="3-D (with num_heads) or 4-D input, interleaved or halves, partial "
                  "rotary_embedding_dim, optional position_ids")
def rotary_embedding(ctx):
    from ..ops.attention import RotaryEmbedding
    with_positions = ctx.has_input(3)
    op = RotaryEmbedding(ctx.attrs.int("interleaved", 0),
                         ctx.attrs.int("rotary_embedding_dim", 0),
                         ctx.attrs.int("num_heads", 0), with_positions)
    inputs = [ctx.input(i) for i in range(4 if with_positions else 3)]
    return [ctx.wire(op, inputs)]


@translator("DFT", opsets="17+",
            notes="dft_length and axis must be constants")
def dft(ctx):
    from ..ops.linalg import Dft
    length = _ints(ctx, 1, "dft_length")[0] if ctx.has_input(1) else None
    if ctx.opset >= 20:
        axis = _ints(ctx, 2, "axis")[0] if ctx.has_input(2) else -2
    else:
        axis = ctx.attrs.int("axis", 1)
    rank = ctx.fact(0).rank
    axis = axis + rank if axis < 0 else axis
    if ctx.attrs.int("inverse", 0) and ctx.attrs.int("onesided", 0):
        raise ctx.error("inverse = 1 with onesided = 1 (a real inverse transform) is not "
                        "supported")
    op = Dft(axis, ctx.attrs.int("inverse", 0), ctx.attrs.int("onesided", 0), length)
    return [ctx.wire(op, [ctx.input(0)])]


@translator("HannWindow", "HammingWindow", "BlackmanWindow", opsets="17+", types="float",
            notes="size must be a constant: folded to a constant")
def window(ctx):
    size = _ints(ctx, 0, "size")[0]
    periodic = ctx.attrs.int("periodic", 1)
    dtype = datum.from_onnx(ctx.attrs.int("output_datatype", 1)).dtype
    span = size if periodic else size - 1
    phase = 2 * np.pi * np.arange(size) / max(span, 1)
    kind = ctx.onnx.op_type
    if kind == "HannWindow":
        value = 0.5 - 0.5 * np.cos(phase)
    elif kind == "HammingWindow":
        alpha = 25.0 / 46.0
        value = alpha - (1 - alpha) * np.cos(phase)
    else:
        value = 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase)
    return [ctx.const(value.astype(dtype), "window")]


@translator("DynamicQuantizeLinear", opsets="11+", types="f32 -> u8")
def dynamic_quantize(ctx):
    from ..ops.quant import DynamicQuantize
    node = ctx.target.add_node(ctx.name, DynamicQuantize(), [ctx.input(0)])
    return [node.outlet(i) for i in range(3)]


@translator("Det")
def det(ctx):
    from ..ops.linalg import Det
    return [ctx.wire(Det(), [ctx.input(0)])]


@translator("ReverseSequence", types="all")
def reverse_sequence(ctx):
    from ..ops.gather import ReverseSequence
    op = ReverseSequence(ctx.attrs.int("batch_axis", 1), ctx.attrs.int("time_axis", 0))
    return [ctx.wire(op, [ctx.input(0), ctx.input(1)])]
