"""Resize (ONNX Resize and Upsample) and GridSample (ember_grid_sample in C), interpolation
in numpy.

Each resized axis maps output coordinates to input coordinates (the coordinate
transformation mode), then takes the nearest item, a linear blend of 2, or a cubic blend
of 4 (edge items repeated; `exclude_outside` drops and renormalises outside taps).
With known sizes Resize is written as plan ops (`decompose`), axis by axis from the same
tables: a gather of the taps' items, times their weights, summed.
"""
import math

import numpy as np

from .. import dims
from ..errors import ShapeError, UnsupportedOp
from ..facts import Fact
from .base import Op, expect_inputs, operands

MODES = ("nearest", "linear", "cubic")
TRANSFORMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
              "asymmetric", "tf_crop_and_resize")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


class Resize(Op):
    """Resize to `out_shape` with per-axis `scales`.

    With from_inputs ("scales",) or ("sizes",), that ONNX operand of `axes` is the second
    input, known only at run time (`policy` is keep_aspect_ratio_policy): `out_shape`
    then holds fresh symbols on `axes` and eval works the sizes out as the translator
    does for constants."""

    name = "Resize"

    def __init__(self, out_shape, scales, mode="nearest", transform="half_pixel",
                 nearest_mode="round_prefer_floor", cubic_a=-0.75, exclude_outside=False,
                 roi=None, extrapolation=0.0, from_inputs=(), axes=(), policy="stretch"):
        self.out_shape = tuple(dims.from_value(d) for d in out_shape)
        self.scales = tuple(float(s) for s in scales)
        self.mode = mode
        self.transform = transform
        self.nearest_mode = nearest_mode
        self.cubic_a = float(cubic_a)
        self.exclude_outside = bool(exclude_outside)
        self.roi = tuple(float(r) for r in roi) if roi is not None else None
        self.extrapolation = float(extrapolation)
        if from_inputs:
            self.from_inputs = tuple(from_inputs)
            self.axes = tuple(int(a) for a in axes)
            self.policy = policy

    def output_facts(self, inputs):
        expect_inputs(inputs, 1 + len(self.from_inputs))
        x = inputs[0]
        if len(self.out_shape) != x.rank:
            raise ShapeError(f"output shape {list(self.out_shape)} for a rank {x.rank} input")
        return [Fact(x.datum_type, self.out_shape)]

    def _coordinates(self, axis, size_in, size_out):
        scale = self.scales[axis]
        x = np.arange(size_out, dtype=np.float64)
        t = self.transform
        width = scale * size_in            # the reference's (float) output width
        if t == "half_pixel":
            return (x + 0.5) / scale - 0.5
        if t == "half_pixel_symmetric":
            adjustment = size_out / (scale * size_in)
            center = size_in / 2
            offset = center * (1 - adjustment)
            return offset + (x + 0.5) / scale - 0.5
        if t == "pytorch_half_pixel":
            return (x + 0.5) / scale - 0.5 if width != 1 else np.full_like(x, -0.5)
        if t == "align_corners":
            return x * (size_in - 1) / (width - 1) if width != 1 else np.zeros_like(x)
        if t == "asymmetric":
            return x / scale
        rank = len(self.out_shape)
        start, end = self.roi[axis], self.roi[axis + rank]
        if width != 1:
            return start * (size_in - 1) + x * (end - start) * (size_in - 1) / (width - 1)
        return np.full_like(x, 0.5 * (start + end) * (size_in - 1))

    def _taps(self, coords, size_in):
        """(indices [out, taps], weights [out, taps]) for one axis."""
        if self.mode == "nearest":
            m = self.nearest_mode
            if m == "round_prefer_floor":
                index = np.ceil(coords - 0.5)
            elif m == "round_prefer_ceil":
                index = np.floor(coords + 0.5)
            elif m == "floor":
                index = np.floor(coords)
            else:
                index = np.ceil(coords)
            index = np.clip(index, 0, size_in - 1).astype(np.int64)
            return index[:, None], np.ones((len(coords), 1))
        base = np.floor(coords)
        frac = coords - base
        if self.mode == "linear":
            offsets = np.array([0, 1])
            weights = np.stack([1 - frac, frac], axis=1)
        else:
            offsets = np.array([-1, 0, 1, 2])
            a = self.cubic_a
            distance = np.abs(frac[:, None] - offsets[None, :])
            weights = np.where(distance <= 1, ((a + 2) * distance - (a + 3)) * distance ** 2 + 1,
                               np.where(distance < 2,
                                        ((a * distance - 5 * a) * distance + 8 * a) * distance
                                        - 4 * a, 0.0))
        index = base[:, None].astype(np.int64) + offsets[None, :]
        if self.exclude_outside:
            inside = (index >= 0) & (index < size_in)
            weights = np.where(inside, weights, 0.0)
            weights = weights / weights.sum(axis=1, keepdims=True)
        return np.clip(index, 0, size_in - 1), weights

    def _at_run_time(self, inputs):
        """The resize its run-time operand decides, evaluated."""
        x = inputs[0]
        given = {k: np.asarray(v).reshape(-1) for k, v in operands(self, inputs).items()}
        scales = [float(s) for s in given["scales"]] if "scales" in given else None
        sizes = [int(s) for s in given["sizes"]] if "sizes" in given else None
        full_scales, out = resize_plan(x.shape, self.axes, scales, sizes, self.policy)
        concrete = Resize(out, full_scales, self.mode, self.transform, self.nearest_mode,
                          self.cubic_a, self.exclude_outside, self.roi, self.extrapolation)
        return concrete.eval([x])

    def eval(self, inputs):
        if self.from_inputs:
            return self._at_run_time(inputs)
        x = inputs[0]
        y = x.astype(np.float64)
        for axis, (size_in, size_out) in enumerate(zip(x.shape, self.out_shape)):
            if size_in == size_out and self.scales[axis] == 1.0 and \
                    self.transform != "tf_crop_and_resize":
                continue
            coords = self._coordinates(axis, size_in, size_out)
            index, weights = self._taps(coords, size_in)
            taken = np.take(y, index.reshape(-1), axis=axis)
            shape = list(y.shape)
            shape[axis:axis + 1] = [size_out, index.shape[1]]
            taken = taken.reshape(shape)
            w_shape = [1] * len(shape)
            w_shape[axis:axis + 2] = list(weights.shape)
            y = (taken * weights.reshape(w_shape)).sum(axis=axis + 1)
            if self.transform == "tf_crop_and_resize":
                outside = (coords < 0) | (coords > size_in - 1)
                mask_shape = [1] * y.ndim
                mask_shape[axis] = size_out
                y = np.where(outside.reshape(mask_shape), self.extrapolation, y)
        if x.dtype.kind in "iu":
            y = np.rint(y)
        return [y.astype(x.dtype)]

    def decompose(self, patch, name, inputs):
        return _decompose_resize(self, patch, name, inputs)

    def nnef_write(self, writer, node):
        raise UnsupportedOp("Resize of sizes known only at run time has no plan form yet")


def _decompose_resize(op, patch, name, inputs):
    """Per resized axis: gather the taps (constant indices), weigh and sum them (constant
    weights; nearest is the gather alone), and for tf_crop_and_resize select the
    extrapolation value outside. Floats other than f32 and integers blend in f64; an
    integer result is rounded half to even, as the reference does."""
    from .elementwise import Binary, Unary, Where
    from .reduce import Reduce
    from .shape import Cast, Gather, Reshape, Squeeze
    x = patch.graph.fact(inputs[0])
    shape = [d for d in x.shape]
    if op.from_inputs or not all(dims.is_concrete(d) for d in shape + list(op.out_shape)):
        return None                                  # nnef_write then refuses it
    shape = [dims.to_int(d) for d in shape]
    wire = lambda what, o, ins: patch.wire1(f"{name}_{what}", o, ins)  # noqa: E731
    blend = op.mode != "nearest" or op.transform == "tf_crop_and_resize"
    work = "f32" if x.datum_type.name == "f32" else "f64"
    y = inputs[0]
    if blend and x.datum_type.name != work:
        y = wire("wide", Cast(work), [y])
    dtype = np.float32 if work == "f32" else np.float64
    for axis, (size_in, size_out) in enumerate(zip(shape, op.out_shape)):
        size_out = dims.to_int(size_out)
        if size_in == size_out and op.scales[axis] == 1.0 and \
                op.transform != "tf_crop_and_resize":
            continue
        coords = op._coordinates(axis, size_in, size_out)
        index, weights = op._taps(coords, size_in)
        taps = index.shape[1]
        y = wire(f"taps{axis}", Gather(axis), [y, patch.const(f"{name}_index{axis}",
                                                              index.reshape(-1))])
        if op.mode != "nearest":
            shape[axis:axis + 1] = [size_out, taps]
            y = wire(f"split{axis}", Reshape(list(shape)), [y])
            w_shape = [1] * len(shape)
            w_shape[axis:axis + 2] = [size_out, taps]
            y = wire(f"weighed{axis}", Binary("mul"),
                     [y, patch.const(f"{name}_weights{axis}", weights.reshape(w_shape)
                                     .astype(dtype))])
            y = wire(f"summed{axis}", Reduce("sum", [axis + 1]), [y])
            y = wire(f"blended{axis}", Squeeze([axis + 1]), [y])
            del shape[axis + 1]
        shape[axis] = size_out
        if op.transform == "tf_crop_and_resize":
            outside = (coords < 0) | (coords > size_in - 1)
            m_shape = [1] * len(shape)
            m_shape[axis] = size_out
            y = wire(f"extrapolated{axis}", Where(),
                     [patch.const(f"{name}_outside{axis}", outside.reshape(m_shape)),
                      patch.const(f"{name}_extrapolation{axis}",
                                  np.array(op.extrapolation, dtype)), y])
    if blend and x.datum_type.name != work:
        if x.datum_type.is_integer:
            y = wire("rounded", Unary("round"), [y])
        y = wire("narrow", Cast(x.datum_type.name), [y])
    return [patch.wire1(name, Unary("copy"), [y])]


def output_size(size_in, scale):
    return int(math.floor(size_in * scale + 1e-9)) if scale > 0 else 0


def resize_plan(shape, axes, scales=None, sizes=None, policy="stretch"):
    """(scales, output shape) over every axis from the ONNX scales or sizes of `axes`."""
    full_scales, out = [1.0] * len(shape), list(shape)
    if sizes is not None:
        ratios = [sizes[i] / shape[a] for i, a in enumerate(axes)]
        if policy != "stretch":
            ratio = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [ratio] * len(axes)
            sizes = [int(math.floor(ratio * shape[a] + 0.5)) for a in axes]
        for i, a in enumerate(axes):
            full_scales[a], out[a] = ratios[i], sizes[i]
    else:
        for i, a in enumerate(axes):
            full_scales[a], out[a] = scales[i], output_size(shape[a], scales[i])
    return full_scales, out


def _reflect(x, low, high):
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    offset = np.abs(x - low)
    flips = np.floor(offset / span)
    extra = offset - flips * span
    return np.where(flips % 2 == 0, low + extra, high - extra)


class GridSample(Op):
    """Sample x [N, C, D…] at grid [N, O…, r] positions in [-1, 1] (last entry = first
    spatial axis reversed: x, y, z), with nearest, linear or cubic interpolation."""

    name = "GridSample"

    def __init__(self, mode="linear", padding="zeros", align_corners=False):
        self.mode = mode
        self.padding = padding
        self.align_corners = bool(align_corners)

    def output_facts(self, inputs):
        expect_inputs(inputs, 2)
        x, grid = inputs
        if grid.rank != x.rank or grid.shape[-1] != x.rank - 2:
            raise ShapeError(f"grid {grid} does not fit input {x}")
        return [Fact(x.datum_type, (x.shape[0], x.shape[1], *grid.shape[1:-1]))]

    def _bounds(self, size):
        return (0.0, size - 1.0) if self.align_corners else (-0.5, size - 0.5)

    def _fix_index(self, index, size):
        """(index inside the input, valid mask) of integer taps under the padding mode: a
        reflected tap is clipped and truncated, as onnxruntime and PyTorch do."""
        valid = (index >= 0) & (index < size)
        if self.padding == "zeros":
            return np.clip(index, 0, size - 1), valid
        if self.padding == "reflection":
            index = _reflect(index.astype(np.float64), *self._bounds(size))
            index = np.trunc(np.clip(index, 0, size - 1))
        return np.clip(index, 0, size - 1), np.ones_like(valid)

    def eval(self, inputs):
        x, grid = inputs
        spatial = x.ndim - 2
        xs = x.astype(np.float64)
        grid = grid.astype(np.float64)
        per_axis = []
        for axis in range(spatial):
            size = x.shape[2 + axis]
            g = grid[..., spatial - 1 - axis]
            if self.align_corners:
                coord = (g + 1) / 2 * (size - 1)
            else:
                coord = ((g + 1) * size - 1) / 2
            # cubic pads its taps, not the coordinate (onnxruntime's and PyTorch's rule)
            if self.padding == "border" and self.mode != "cubic":
                coord = np.clip(coord, 0, size - 1)
            elif self.padding == "reflection" and self.mode != "cubic":
                coord = np.clip(_reflect(coord, *self._bounds(size)), 0, size - 1)
            if self.mode == "nearest":
                taps = [(np.rint(coord), np.ones_like(coord))]
            elif self.mode == "linear":
                base = np.floor(coord)
                frac = coord - base
                taps = [(base, 1 - frac), (base + 1, frac)]
            else:
                base = np.floor(coord)
                frac = coord - base
                a = -0.75
                taps = []
                for offset in (-1, 0, 1, 2):
                    d = np.abs(frac - offset)
                    w = np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                                 np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0))
                    taps.append((base + offset, w))
            fixed = []
            for index, weight in taps:
                index, valid = self._fix_index(index, size)
                fixed.append((index.astype(np.int64), np.where(valid, weight, 0.0)))
            per_axis.append(fixed)
        n = x.shape[0]
        batch = np.arange(n).reshape((n,) + (1,) * (grid.ndim - 2))
        out = 0.0
        for combo in np.ndindex(*[len(t) for t in per_axis]):
            indices = [per_axis[a][t][0] for a, t in enumerate(combo)]
            weight = np.prod([per_axis[a][t][1] for a, t in enumerate(combo)], axis=0)
            # xs[batch, :, i1, i2…] -> [N, O…, C]
            values = np.moveaxis(xs, 1, -1)[(batch,) + tuple(indices)]
            out = out + values * weight[..., None]
        return [np.moveaxis(np.asarray(out), -1, 1).astype(x.dtype)]

    def nnef_write(self, writer, node):
        x, grid = (writer.ident(o) for o in node.inputs)
        writer.assign(node, f"ember_grid_sample({x}, {grid}, mode = {writer.fmt(self.mode)}, "
                            f"padding = {writer.fmt(self.padding)}, "
                            f"align_corners = {writer.fmt(self.align_corners)})")

    @staticmethod
    def _read(reader, inv):
        op = GridSample(inv.kwarg("mode", "linear"), inv.kwarg("padding", "zeros"),
                        inv.kwarg("align_corners", False))
        return reader.wire(inv, op, [reader.outlet(inv.arg(0)), reader.outlet(inv.arg(1))])


GridSample.NNEF_READERS = {"ember_grid_sample": GridSample._read}
