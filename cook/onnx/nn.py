"""Translators of ONNX neural-network ops: Conv, pools, LRN, BatchNormalization, Softmax."""
from .. import dims
from ..errors import BadAttribute
from ..ops.conv import Conv, ConvTranspose
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


@translator("GlobalLpPool", opsets="2+", notes="composed of abs, pow and a sum reduce")
def global_lp_pool(ctx):
    import numpy as np

    from ..ops.elementwise import Binary, Unary
    x = ctx.fact(0)
    if x.rank < 3:
        raise ctx.error(f"input {x} needs N, C and ≥ 1 spatial dims", BadAttribute)
    p = float(ctx.attrs.int("p", 2))
    magnitude = ctx.wire(Unary("abs"), [ctx.input(0)], "abs")
    powered = ctx.wire(Binary("pow"), [magnitude, ctx.const(np.array(p, x.dtype), "p")],
                       "pow")
    total = ctx.wire(Reduce("sum", range(2, x.rank)), [powered], "sum")
    return [ctx.wire(Binary("pow"), [total, ctx.const(np.array(1.0 / p, x.dtype), "root")])]


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


@translator("ConvTranspose", notes="1D/2D/3D, groups, output_shape, auto_pad")
def conv_transpose(ctx):
    x, w = ctx.fact(0), ctx.fact(1)
    spatial = x.rank - 2
    attrs = ctx.attrs
    kernel = attrs.ints("kernel_shape", [dims.to_int(d) for d in w.shape[2:]])
    strides = attrs.ints("strides", [1] * spatial)
    dilations = attrs.ints("dilations", [1] * spatial)
    output_padding = attrs.ints("output_padding", [0] * spatial)
    pads = attrs.ints("pads", [0] * 2 * spatial)
    auto_pad = attrs.choice("auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"),
                            "NOTSET")
    output_shape = attrs.ints("output_shape", None)
    if output_shape is not None and len(output_shape) > spatial:
        output_shape = output_shape[-spatial:]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and output_shape is None:
        output_shape = [dims.to_int(x.shape[2 + i]) * strides[i] for i in range(spatial)]
    padding = []
    for i in range(spatial):
        if output_shape is not None:
            full = strides[i] * (dims.to_int(x.shape[2 + i]) - 1) + output_padding[i] + \
                (kernel[i] - 1) * dilations[i] + 1
            total = full - output_shape[i]
            if total < 0:                 # a bigger output: zeros at the end
                output_padding[i] -= total
                total = 0
            # ONNX: SAME_UPPER puts the odd one at the end, anything else at the start
            if auto_pad == "SAME_UPPER":
                padding.append((total // 2, total - total // 2))
            else:
                padding.append((total - total // 2, total // 2))
        elif auto_pad == "VALID":
            padding.append((0, 0))
        else:
            padding.append((pads[i], pads[i + spatial]))
    op = ConvTranspose(strides, dilations, padding, output_padding, attrs.int("group", 1))
    inputs = [ctx.input(0), ctx.input(1)] + ([ctx.input(2)] if ctx.has_input(2) else [])
    return [ctx.wire(op, inputs)]


@translator("LSTM", "GRU", "RNN",
            notes="all directions, sequence_lens, initial states, peepholes, clip, "
                  "input_forget, linear_before_reset, layout 0/1, every ONNX activation")
def recurrent(ctx):
    from ..ops.recurrent import ACTIVATIONS, DEFAULT_FUNCTIONS, INPUTS, Recurrent, functions_of
    from ..ops.shape import Transpose
    kind = ctx.onnx.op_type.lower()
    attrs = ctx.attrs
    direction = attrs.choice("direction", ("forward", "reverse", "bidirectional"), "forward")
    directions = ("forward", "reverse") if direction == "bidirectional" else (direction,)
    names = [a.decode() if isinstance(a, bytes) else a for a in
             (list(ctx.attrs.raw["activations"].strings) if "activations" in ctx.attrs
              else DEFAULT_FUNCTIONS[kind] * len(directions))]
    names = [a.lower() for a in names]
    if len(names) != len(DEFAULT_FUNCTIONS[kind]) * len(directions):
        raise ctx.error(f"activations {names}: {len(DEFAULT_FUNCTIONS[kind])} per direction",
                        BadAttribute)
    if any(a not in ACTIVATIONS for a in names):
        raise ctx.error(f"activations {names}: one is not an ONNX activation", BadAttribute)
    activations = functions_of(names, attrs.floats("activation_alpha", []),
                               attrs.floats("activation_beta", []))
    hidden = attrs.int("hidden_size", None)
    if hidden is None:
        hidden = dims.to_int(ctx.fact(2).shape[2])
    layout = attrs.int("layout", 0)
    names = INPUTS if kind == "lstm" else INPUTS[:6]
    present, inputs = [], []
    for index, name in enumerate(names):
        if ctx.has_input(index):
            outlet = ctx.input(index)
            if layout == 1 and name == "X":
                outlet = ctx.wire(Transpose((1, 0, 2)), [outlet], "x_seq_first")
            elif layout == 1 and name in ("initial_h", "initial_c"):
                outlet = ctx.wire(Transpose((1, 0, 2)), [outlet], f"{name}_dirs_first")
            present.append(name)
            inputs.append(outlet)
    clip = attrs.float("clip", None)
    op = Recurrent(kind, hidden, directions, present, activations, clip,
                   attrs.int("linear_before_reset", 0), attrs.int("input_forget", 0))
    node = ctx.target.add_node(ctx.name, op, inputs)
    outlets = [node.outlet(i) for i in range(len(node.outputs))]
    if layout == 1:
        outlets[0] = ctx.wire(Transpose((2, 0, 1, 3)), [outlets[0]], "y_batch_first")
        for index in range(1, len(outlets)):
            outlets[index] = ctx.wire(Transpose((1, 0, 2)), [outlets[index]], f"state{index}")
    return outlets[:max(len(ctx.onnx.proto.output), 1)]


@translator("Resize", "Upsample", types="numeric",
            notes="nearest/linear/cubic, every coordinate transformation, axes, "
                  "keep_aspect_ratio_policy; no antialias; roi must be a constant; scales "
                  "or sizes known only at run time type as fresh symbols")
def resize(ctx):
    from ..ops.resize import MODES, NEAREST, TRANSFORMS, Resize, resize_plan
    x = ctx.fact(0)
    rank = x.rank
    attrs = ctx.attrs
    mode = attrs.string("mode", "nearest").lower()
    if mode == "bilinear" or mode == "trilinear":
        mode = "linear"
    if mode not in MODES:
        raise ctx.error(f"mode {mode!r}", BadAttribute)
    roi, given = None, {}
    if ctx.onnx.op_type == "Upsample" or ctx.opset < 11:
        transform, nearest = "asymmetric", "floor"
        if ctx.opset < 9 and ctx.onnx.op_type == "Upsample":
            given["scales"] = attrs.floats("scales", required=True)
        else:
            given["scales"] = _resize_operand(ctx, 1, "scales")
    else:
        transform = attrs.choice("coordinate_transformation_mode", TRANSFORMS, "half_pixel")
        nearest = attrs.choice("nearest_mode", NEAREST, "round_prefer_floor")
        if attrs.int("antialias", 0):
            raise ctx.error("antialias = 1 is not supported")
        if ctx.has_input(1) and ctx.fact(1).shape != (0,):
            roi = [float(v) for v in ctx.const_input(1, "roi").reshape(-1)]
        for index, what in ((2, "scales"), (3, "sizes")):
            if ctx.has_input(index) and ctx.fact(index).shape != (0,):
                given[what] = _resize_operand(ctx, index, what)
    if not given:
        raise ctx.error("needs scales or sizes", BadAttribute)
    axes = attrs.ints("axes", None) if ctx.opset >= 18 else None
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    policy = attrs.choice("keep_aspect_ratio_policy", ("stretch", "not_larger", "not_smaller"),
                          "stretch")
    full_roi = None
    if roi is not None and transform == "tf_crop_and_resize":
        full_roi = [0.0] * rank + [1.0] * rank
        for i, a in enumerate(axes):
            full_roi[a], full_roi[a + rank] = roi[i], roi[i + len(axes)]
    common = (mode, transform, nearest, attrs.float("cubic_coeff_a", -0.75),
              attrs.int("exclude_outside", 0), full_roi, attrs.float("extrapolation_value", 0.0))
    runtime = [(what, index) for what, index in given.items() if isinstance(index, int)]
    if runtime:
        # sizes a run decides: the resized axes get fresh symbols, eval works them out
        what, index = runtime[-1]
        out = list(x.shape)
        for axis, symbol in zip(axes, ctx.fresh_symbols("dim", len(axes))):
            out[axis] = symbol
        op = Resize(out, [1.0] * rank, *common, from_inputs=(what,), axes=axes, policy=policy)
        return [ctx.wire(op, [ctx.input(0), ctx.input(index)])]
    shape = [dims.to_int(d, "resized dim") for d in x.shape]
    full_scales, out = resize_plan(shape, axes, given.get("scales"), given.get("sizes"),
                                   policy)
    return [ctx.wire(Resize(out, full_scales, *common), [ctx.input(0)])]


def _resize_operand(ctx, index, what):
    """The scales (floats) or sizes (ints) of input `index`; its index when only a run
    knows it."""
    if ctx.runtime_input(index):
        return index
    cast = float if what == "scales" else int
    return [cast(v) for v in ctx.const_input(index, what).reshape(-1)]


@translator("LpPool", notes="p ≥ 1; composed of abs, pow and a sum (avg) pool")
def lp_pool(ctx):
    import numpy as np

    from ..ops.elementwise import Binary, Unary
    x = ctx.fact(0)
    kernel = ctx.attrs.ints("kernel_shape", required=True)
    p = float(ctx.attrs.int("p", 2)) if ctx.opset >= 2 else ctx.attrs.float("p", 2.0)
    strides, dilations, padding, _ = window_attrs(ctx, x, kernel, allow_ceil=True)
    magnitude = ctx.wire(Unary("abs"), [ctx.input(0)], "abs")
    powered = ctx.wire(Binary("pow"), [magnitude, ctx.const(np.array(p, x.dtype), "p")],
                       "pow")
    mean = ctx.wire(AvgPool(kernel, strides, padding, True, dilations), [powered], "mean")
    count = ctx.const(np.array(float(np.prod(kernel)), x.dtype), "count")
    total = ctx.wire(Binary("mul"), [mean, count], "sum")
    return [ctx.wire(Binary("pow"), [total, ctx.const(np.array(1.0 / p, x.dtype), "root")])]


@translator("ConvInteger", "QLinearConv", types="i8/u8",
            notes="i32 accumulation; QLinearConv requantizes in f64")
def conv_integer(ctx):
    import numpy as np
    from ..ops.quant import ConvInteger, QLinearConv
    qlinear = ctx.onnx.op_type == "QLinearConv"
    x_index, w_index = (0, 3) if qlinear else (0, 1)
    x, w = ctx.fact(x_index), ctx.fact(w_index)
    kernel = ctx.attrs.ints("kernel_shape", [dims.to_int(d) for d in w.shape[2:]])
    strides, dilations, padding, _ = window_attrs(ctx, x, kernel, allow_ceil=False)
    group = ctx.attrs.int("group", 1)
    if qlinear:
        op = QLinearConv(strides, dilations, padding, group, ctx.fact(7).datum_type)
        return [ctx.wire(op, [ctx.input(i) for i in range(9) if i < 8 or ctx.has_input(i)])]
    inputs = [ctx.input(0), ctx.input(1)]
    if ctx.has_input(2) or ctx.has_input(3):
        inputs.append(ctx.input(2) if ctx.has_input(2)
                      else ctx.const(np.zeros((), x.dtype), "x_zero"))
    if ctx.has_input(3):
        inputs.append(ctx.input(3))
    return [ctx.wire(ConvInteger(strides, dilations, padding, group), inputs)]


@translator("GridSample", opsets="16+",
            notes="nearest/linear/cubic, zeros/border/reflection padding, N-d (opset 20)")
def grid_sample(ctx):
    from ..ops.resize import GridSample
    mode = ctx.attrs.string("mode", "linear" if ctx.opset >= 20 else "bilinear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    if mode not in ("nearest", "linear", "cubic"):
        raise ctx.error(f"mode {mode!r}", BadAttribute)
    padding = ctx.attrs.choice("padding_mode", ("zeros", "border", "reflection"), "zeros")
    op = GridSample(mode, padding, ctx.attrs.int("align_corners", 0))
    return [ctx.wire(op, [ctx.input(0), ctx.input(1)])]
