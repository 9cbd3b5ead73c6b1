"""Convolution, NCHW with any number of spatial dims.

Inputs: x [N, C, s…], filter [O, C/groups, k…], optional bias [O]. Padding is explicit
(one (before, after) pair per spatial dim): ONNX auto_pad is resolved by the importer.
"""
import numpy as np

from .. import dims
from ..errors import BadAttribute, ShapeError, UnsupportedOp
from ..facts import Fact
from ..ir import Patch
from ..pulse import Stream, pulse_window
from .base import Op, expect_inputs, volume
from .tensor import Pad


def sliding_windows(x, kernel, strides, dilations):
    """View of x [N, C, s…] as [N, C, o…, k…]: the window of every output position.

    x must already be padded. This is the im2col of the numpy reference, as a strided
    view: the copy happens in the matmul that consumes it.
    """
    spatial = len(kernel)
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    axes = tuple(range(2, 2 + spatial))
    view = np.lib.stride_tricks.sliding_window_view(x, spans, axis=axes)
    index = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides) \
        + tuple(slice(None, None, d) for d in dilations)
    return view[index]


def pad_spatial(x, padding, value=0):
    if all(b == 0 and a == 0 for b, a in padding):
        return x
    return np.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in padding], constant_values=value)


def check_window_attrs(op_name, spatial, kernel, strides, dilations, padding):
    for what, values in (("strides", strides), ("dilations", dilations), ("padding", padding)):
        if len(values) != spatial:
            raise BadAttribute(f"{op_name}: {what} {list(values)} needs {spatial} entries "
                               f"(one per spatial dim)")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
        raise BadAttribute(f"{op_name}: strides {list(strides)} and dilations "
                           f"{list(dilations)} must be ≥ 1")
    if any(b < 0 or a < 0 for b, a in padding):
        raise BadAttribute(f"{op_name}: negative padding {padding}")
    if kernel is not None and any(k < 1 for k in kernel):
        raise BadAttribute(f"{op_name}: kernel {list(kernel)} must be ≥ 1")


class Conv(Op):
    name = "Conv"

    def __init__(self, strides, dilations, padding, groups=1):
        self.strides = tuple(int(s) for s in strides)
        self.dilations = tuple(int(d) for d in dilations)
        self.padding = tuple((int(b), int(a)) for b, a in padding)
        self.groups = int(groups)

    def output_facts(self, inputs):
        expect_inputs(inputs, range(2, 4))
        x, w = inputs[0], inputs[1]
        if x.rank < 3 or w.rank != x.rank:
            raise ShapeError(f"input rank {x.rank} and filter rank {w.rank} must be equal "
                             "and ≥ 3 (N, C, spatial…)")
        spatial = x.rank - 2
        kernel = w.shape[2:]
        check_window_attrs("Conv", spatial, kernel, self.strides, self.dilations, self.padding)
        channels, out_channels = x.shape[1], w.shape[0]
        if self.groups < 1 or channels % self.groups or out_channels % self.groups:
            raise ShapeError(f"groups = {self.groups} must divide the input channels "
                             f"{channels} and the output channels {out_channels}")
        if w.shape[1] * self.groups != channels:
            raise ShapeError(f"filter expects {w.shape[1]} × {self.groups} groups input "
                             f"channels, input has {channels}")
        if x.datum_type is not w.datum_type or not x.datum_type.is_float:
            raise ShapeError("input and filter must both be f32 (or another float type)")
        if len(inputs) == 3:
            b = inputs[2]
            if dims.product(b.shape) != out_channels or b.rank > 1 and b.shape[-1] != \
                    out_channels:
                raise ShapeError(f"bias {b} must hold {out_channels} values")
        out = []
        for axis in range(spatial):
            length = dims.window_output(x.shape[2 + axis], kernel[axis], self.strides[axis],
                                        self.dilations[axis], *self.padding[axis])
            if dims.surely_less(length, 1):
                raise ShapeError(f"spatial axis {axis}: the window does not fit in the "
                                 "(padded) input")
            out.append(length)
        return [Fact(x.datum_type, (x.shape[0], out_channels, *out))]

    def flops(self, inputs, outputs):
        # each output item: C/groups × kernel multiply-adds (the filter's [1:] dims)
        return dims.mul(2, dims.mul(volume(outputs[0]), dims.product(inputs[1].shape[1:])))

    def eval(self, inputs):
        x, w = inputs[0], inputs[1]
        n, c = x.shape[:2]
        o, cg = w.shape[:2]
        kernel = w.shape[2:]
        g = self.groups
        windows = sliding_windows(pad_spatial(x, self.padding), kernel, self.strides,
                                  self.dilations)
        out_spatial = windows.shape[2:2 + len(kernel)]
        positions = int(np.prod(out_spatial))
        taps = int(np.prod(kernel))
        # [N, g, cg, o…, k…] -> [g, N, o…, cg, k…] -> [g, N*P, cg*K]
        windows = windows.reshape((n, g, cg) + windows.shape[2:])
        spatial = len(kernel)
        order = (1, 0) + tuple(range(3, 3 + spatial)) + (2,) + \
            tuple(range(3 + spatial, 3 + 2 * spatial))
        columns = windows.transpose(order).reshape(g, n * positions, cg * taps)
        filters = w.reshape(g, o // g, cg * taps).transpose(0, 2, 1)
        product = np.matmul(columns, filters)               # [g, N*P, o/g]
        y = product.reshape(g, n, positions, o // g).transpose(1, 0, 3, 2)
        y = y.reshape((n, o) + tuple(out_spatial))
        if len(inputs) == 3:
            y = y + inputs[2].reshape((1, o) + (1,) * spatial)
        return [np.ascontiguousarray(y, dtype=x.dtype)]

    def declutter(self, graph, node):
        """A zero Pad of the spatial axes read by this conv alone becomes the conv's own
        padding (exporters write causal and asymmetric paddings as a Pad): one op, no
        padded copy of the input (the TCN's four: 13% of its run time)."""
        outlet = node.inputs[0]
        pad = graph.nodes[outlet.node]
        if not isinstance(pad.op, Pad) or pad.op.mode != "constant" or \
                float(pad.op.value) != 0.0 or getattr(pad.op, "from_inputs", ()):
            return None
        pads = pad.op.pads
        if not all(dims.is_concrete(d) and d >= 0 for pair in pads for d in pair) or \
                any(pads[axis] != (0, 0) for axis in (0, 1)):
            return None
        if graph.is_output(outlet) or len(graph.consumers(outlet)) != 1:
            return None
        padding = [(b + pb, a + pa) for (b, a), (pb, pa) in zip(self.padding, pads[2:])]
        patch = Patch(graph, "zero pad folded into the conv's padding")
        conv = Conv(self.strides, self.dilations, padding, self.groups)
        return patch.shunt(node.outlet(), patch.wire1(node.name, conv,
                                                      [pad.inputs[0]] + list(node.inputs[1:])))

    def nnef_write(self, writer, node):
        x = writer.ident(node.inputs[0])
        w = writer.ident(node.inputs[1])
        if len(node.inputs) == 3:
            b = writer.operand(node.inputs[2], 1)
        else:
            b = "0.0"
        writer.assign(node, f"conv({x}, {w}, {b}, border = \"constant\", "
                            f"padding = {writer.fmt(list(self.padding))}, "
                            f"stride = {writer.fmt(list(self.strides))}, "
                            f"dilation = {writer.fmt(list(self.dilations))}, "
                            f"groups = {self.groups})")

    def pulse(self, pulser, node, inputs):
        """Along a spatial axis: a sliding window (pulse_window), padded with zeros."""
        stream = pulser.stream(inputs[0])
        if any(pulser.stream(o) for o in inputs[1:]):
            pulser.refuse(node, "its filter or bias streams")
        if stream is None:
            return pulser.copy(node, inputs)
        k = stream.axis - 2
        if k < 0:
            pulser.refuse(node, "it streams along the batch or channel axis")
        kernel = dims.to_int(pulser.graph.fact(inputs[1]).shape[2 + k])
        x, _extra, delay = pulse_window(pulser, node, inputs[0], kernel, self.dilations[k],
                                        self.strides[k], self.padding[k], 0.0)
        padding = list(self.padding)
        padding[k] = (0, 0)
        op = Conv(self.strides, self.dilations, padding, self.groups)
        length = node.outputs[0].shape[stream.axis]
        return pulser.copy(node, [x] + list(inputs[1:]), op=op,
                           stream=Stream(stream.axis, delay, length))

    @staticmethod
    def _read(reader, inv):
        x = reader.outlet(inv.arg(0, "input"))
        w = reader.outlet(inv.arg(1, "filter"))
        bias = inv.arg(2, "bias", 0.0)
        fx, fw = reader.fact(x), reader.fact(w)
        spatial = fx.rank - 2
        border = inv.kwarg("border", "constant")
        if border not in ("constant", "ignore"):
            raise reader.unsupported(inv, f"border = {border!r}")
        strides = inv.kwarg("stride", []) or [1] * spatial
        dilations = inv.kwarg("dilation", []) or [1] * spatial
        groups = inv.kwarg("groups", 1)
        if groups == 0:
            groups = fx.shape[1]
        padding = inv.kwarg("padding", [])
        if not padding:
            padding = [dims.same_padding(fx.shape[2 + i], fw.shape[2 + i], strides[i],
                                         dilations[i]) for i in range(spatial)]
        inputs = [x, w]
        if not (reader.is_scalar_literal(bias) and reader.scalar_value(bias) == 0.0):
            b = reader.outlet(bias)
            fb = reader.fact(b)
            if fb.rank != 1:
                b = reader.reshape(b, (dims.product(fb.shape),))
            inputs.append(b)
        return reader.wire(inv, Conv(strides, dilations, padding, groups), inputs)


Conv.NNEF_READERS = {"conv": Conv._read}


class ConvTranspose(Op):
    """Transposed convolution. x [N, C, s…], filter [C, O/groups, k…], optional bias
    [O]; `padding` crops (before, after) the full output, and `output_padding` extends
    its end.

    The plan has it as a convolution (`decompose`): the input with stride - 1 zeros
    between its items, padded by (k - 1)·d, convolved at stride 1 with the filter's
    channels swapped per group and its taps reversed. It multiplies the inserted zeros
    too (stride^spatial times the work of a direct transposed convolution), through the
    runtime's GEMM convolution."""

    name = "ConvTranspose"

    def __init__(self, strides, dilations, padding, output_padding, groups=1):
        self.strides = tuple(int(s) for s in strides)
        self.dilations = tuple(int(d) for d in dilations)
        self.padding = tuple((int(b), int(a)) for b, a in padding)
        self.output_padding = tuple(int(p) for p in output_padding)
        self.groups = int(groups)

    def output_facts(self, inputs):
        expect_inputs(inputs, range(2, 4))
        x, w = inputs[0], inputs[1]
        if x.rank < 3 or w.rank != x.rank:
            raise ShapeError("input and filter need the same rank ≥ 3")
        if w.shape[0] != x.shape[1]:
            raise ShapeError(f"filter {w} does not match the {x.shape[1]} input channels")
        out = [x.shape[0], w.shape[1] * self.groups]
        for axis in range(x.rank - 2):
            kernel = w.shape[2 + axis]
            length = (self.strides[axis] * (x.shape[2 + axis] - 1) + self.output_padding[axis]
                      + (kernel - 1) * self.dilations[axis] + 1 - sum(self.padding[axis]))
            out.append(length)
        return [Fact(x.datum_type, out)]

    def flops(self, inputs, outputs):
        # each input item is spread over O/groups × kernel outputs
        return dims.mul(2, dims.mul(volume(inputs[0]), dims.product(inputs[1].shape[1:])))

    def eval(self, inputs):
        x, w = inputs[0], inputs[1]
        n, c = x.shape[:2]
        spatial = x.ndim - 2
        kernel = w.shape[2:]
        og = w.shape[1]
        g = self.groups
        cg = c // g
        full = [self.strides[i] * (x.shape[2 + i] - 1) + (kernel[i] - 1) * self.dilations[i]
                + 1 + self.output_padding[i] for i in range(spatial)]
        y = np.zeros((n, og * g) + tuple(full), np.float64)
        xs = x.astype(np.float64)
        for group in range(g):
            xg = xs[:, group * cg:(group + 1) * cg]
            wg = w[group * cg:(group + 1) * cg].astype(np.float64)
            for tap in np.ndindex(*kernel):
                contribution = np.tensordot(xg, wg[(slice(None), slice(None)) + tap],
                                            axes=([1], [0]))          # [N, s…, og]
                contribution = np.moveaxis(contribution, -1, 1)
                index = (slice(None), slice(group * og, (group + 1) * og)) + tuple(
                    slice(tap[i] * self.dilations[i],
                          tap[i] * self.dilations[i] + self.strides[i] * (x.shape[2 + i] - 1)
                          + 1, self.strides[i]) for i in range(spatial))
                y[index] += contribution
        crop = (slice(None), slice(None)) + tuple(
            slice(b, full[i] - a) for i, (b, a) in enumerate(self.padding))
        y = y[crop]
        if len(inputs) == 3:
            y = y + inputs[2].reshape((1, -1) + (1,) * spatial)
        return [np.ascontiguousarray(y, dtype=x.dtype)]

    def decompose(self, patch, name, inputs):
        from .shape import Reshape, Slice, Unsqueeze
        from .tensor import Pad
        x = patch.graph.fact(inputs[0])
        spatial = x.rank - 2
        wire = lambda what, op, ins: patch.wire1(f"{name}_{what}", op, ins)  # noqa: E731
        weights = self._conv_filter(patch, name, inputs[1], wire)
        if weights is None:
            return None                       # nnef_write then refuses it
        kernel = patch.graph.fact(inputs[1]).shape[2:]
        y = inputs[0]
        if any(s > 1 for s in self.strides):
            # [N, C, L…] → [N, C, L, 1, …] → pad to [N, C, L, s, …] → [N, C, L·s, …]
            axes = [3 + 2 * i for i in range(spatial)]
            y = wire("spread", Unsqueeze(axes), [y])
            pads = [(0, 0)] * 2 + [p for s in self.strides for p in ((0, 0), (0, s - 1))]
            y = wire("zeros", Pad(pads), [y])
            shape = list(x.shape[:2]) + [dims.mul(x.shape[2 + i], s)
                                         for i, s in enumerate(self.strides)]
            y = wire("upsampled", Reshape(shape), [y])
        # Conv padding: (k - 1)·d each side, less the crop; the spread left s - 1 zeros
        # at each end, and output_padding adds positions at the end.
        padding, crops = [], []
        for i in range(spatial):
            full = (kernel[i] - 1) * self.dilations[i]
            before = full - self.padding[i][0]
            after = full - self.padding[i][1] + self.output_padding[i] - (self.strides[i] - 1)
            crops.append((max(-before, 0), max(-after, 0)))
            padding.append((max(before, 0), max(after, 0)))
        if any(b or a for b, a in crops):
            shape = patch.graph.fact(y).shape
            axes = [2 + i for i, (b, a) in enumerate(crops) if b or a]
            y = wire("cropped", Slice(axes, [crops[a - 2][0] for a in axes],
                                      [dims.sub(shape[a], crops[a - 2][1]) for a in axes]), [y])
        conv = Conv([1] * spatial, self.dilations, padding, self.groups)
        return [patch.wire1(name, conv, [y, weights] + list(inputs[2:]))]

    def _conv_filter_value(self, w):
        """A constant filter [C, O/g, k…] as a convolution's [O, C/g, k…], taps reversed."""
        g = self.groups
        swapped = w.reshape((g, w.shape[0] // g) + w.shape[1:]).swapaxes(1, 2)
        swapped = swapped.reshape((-1, w.shape[0] // g) + w.shape[2:])
        return np.ascontiguousarray(np.flip(swapped, axis=tuple(range(2, w.ndim))))

    def pulse(self, pulser, node, inputs):
        """A 1-D transposed conv along time streams as its plan form does (decompose):
        each frame spread to `stride` frames (itself, then zeros: an upsampling, P frames
        in, P·stride out, delays scaled by the stride), then a stride-1 conv of the
        reversed filter, pulsed as a sliding window (pulse_window)."""
        from .shape import Reshape, Unsqueeze
        from .tensor import Pad
        stream = pulser.stream(inputs[0])
        if any(pulser.stream(o) for o in inputs[1:]):
            pulser.refuse(node, "its filter or bias streams")
        if stream is None:
            return pulser.copy(node, inputs)
        w = pulser.graph.const_value(inputs[1])
        if pulser.graph.fact(inputs[0]).rank != 3 or stream.axis != 2 or w is None:
            pulser.refuse(node, "only a 1-D transposed conv of a constant filter streams")
        s, d, kernel = self.strides[0], self.dilations[0], w.shape[2]
        x, axis = inputs[0], stream.axis
        if s > 1:
            shape = list(pulser.graph.fact(x).shape)
            x = pulser.wire1(f"{node.name}_spread", Unsqueeze([3]), [x])
            x = pulser.wire1(f"{node.name}_zeros", Pad([(0, 0)] * 3 + [(0, s - 1)]), [x])
            shape[axis] *= s
            x = pulser.wire1(f"{node.name}_upsampled", Reshape(shape), [x], stream=Stream(
                axis, stream.delay * s, dims.mul(stream.length, s)))
        full = (kernel - 1) * d
        padding = (full - self.padding[0][0],
                   full - self.padding[0][1] + self.output_padding[0] - (s - 1))
        x, _extra, delay = pulse_window(pulser, node, x, kernel, d, 1, padding, 0.0)
        weights = pulser.const(f"{node.name}_filter", self._conv_filter_value(w), w.dtype)
        conv = Conv([1], [d], [(0, 0)], self.groups)
        return pulser.copy(node, [x, weights] + list(inputs[2:]), op=conv, stream=Stream(
            axis, delay, node.outputs[0].shape[axis]))

    def _conv_filter(self, patch, name, filter_, wire):
        """The filter [C, O/g, k…] as a convolution's [O, C/g, k…] with reversed taps: a
        constant, or plan ops for one a run computes (None when the kernel is unknown)."""
        from .shape import Reshape, Slice, Transpose
        g = self.groups
        w = patch.graph.const_value(filter_)
        if w is not None:
            return patch.const(f"{name}_filter", self._conv_filter_value(w))
        shape = patch.graph.fact(filter_).shape
        if not all(dims.is_concrete(d) for d in shape):
            return None
        c, og, kernel = shape[0], shape[1], list(shape[2:])
        rank = len(shape)
        grouped = wire("filter_groups", Reshape([g, c // g, og] + kernel), [filter_])
        swapped = wire("filter_swapped", Transpose([0, 2, 1] + list(range(3, rank + 1))),
                       [grouped])
        merged = wire("filter_merged", Reshape([g * og, c // g] + kernel), [swapped])
        axes = list(range(2, rank))
        return wire("filter", Slice(axes, [k - 1 for k in kernel], [-1] * len(kernel),
                                    [-1] * len(kernel)), [merged])

    def nnef_write(self, writer, node):
        raise UnsupportedOp("ConvTranspose of a filter of unknown shape has no plan form")
