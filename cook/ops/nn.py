"""Normalisations: softmax, local response normalisation, batch normalisation."""
import numpy as np

from ..errors import ShapeError, UnsupportedOp
from ..ir import Patch
from .base import Op, expect_inputs, f32, normalize_axis
from .elementwise import Binary


class Softmax(Op):
    """exp(x - max) / sum(exp(x - max)) over `axes` (jointly)."""

    name = "Softmax"

    def __init__(self, axes):
        self.axes = tuple(sorted(int(a) for a in axes))

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        x = inputs[0]
        if not x.datum_type.is_float:
            raise ShapeError("softmax needs a float input")
        for axis in self.axes:
            normalize_axis(axis, x.rank)
        return [x.without_value()]

    def eval(self, inputs):
        x = inputs[0]
        shifted = x - x.max(axis=self.axes, keepdims=True)
        e = np.exp(shifted.astype(np.float64))
        return [(e / e.sum(axis=self.axes, keepdims=True)).astype(x.dtype)]

    def nnef_write(self, writer, node):
        x = writer.ident(node.inputs[0])
        writer.assign(node, f"softmax({x}, axes = {writer.fmt(list(self.axes))})")

    @staticmethod
    def _read(reader, inv):
        x = reader.outlet(inv.arg(0, "x"))
        rank = reader.fact(x).rank
        axes = [normalize_axis(a, rank) for a in inv.kwarg("axes", [1])]
        return reader.wire(inv, Softmax(axes), [x])


Softmax.NNEF_READERS = {"softmax": Softmax._read}


class Lrn(Op):
    """Local response normalisation across channels (axis 1), ONNX semantics.

    y = x / (bias + alpha / size * Σ x²)^beta, the sum over channels
    [c - (size-1)//2, c + size//2] clipped to the tensor.
    """

    name = "Lrn"

    def __init__(self, alpha, beta, bias, size):
        # float attributes are f32 values, as in the files they come from and go to
        self.alpha = f32(alpha)
        self.beta = f32(beta)
        self.bias = f32(bias)
        self.size = int(size)

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        x = inputs[0]
        if x.rank < 2 or not x.datum_type.is_float:
            raise ShapeError("LRN needs a float input of rank ≥ 2 (N, C, …)")
        if self.size < 1:
            raise ShapeError(f"size {self.size} must be ≥ 1")
        return [x.without_value()]

    def eval(self, inputs):
        x = inputs[0]
        channels = x.shape[1]
        square = np.square(x.astype(np.float64))
        before, after = (self.size - 1) // 2, self.size // 2
        padded = np.pad(square, [(0, 0), (before, after)] + [(0, 0)] * (x.ndim - 2))
        total = np.zeros_like(square)
        for offset in range(self.size):
            total += padded[:, offset:offset + channels]
        y = x / (self.bias + self.alpha / self.size * total) ** self.beta
        return [y.astype(x.dtype)]

    def nnef_write(self, writer, node):
        x = writer.ident(node.inputs[0])
        rank = writer.graph.fact(node.outlet()).rank
        size = [1, self.size] + [1] * (rank - 2)
        writer.assign(node, f"local_response_normalization({x}, size = {writer.fmt(size)}, "
                            f"alpha = {writer.scalar(self.alpha)}, "
                            f"beta = {writer.scalar(self.beta)}, "
                            f"bias = {writer.scalar(self.bias)})")

    @staticmethod
    def _read(reader, inv):
        x = reader.outlet(inv.arg(0, "input"))
        size = list(inv.kwarg("size"))
        if len(size) < 2 or any(s != 1 for i, s in enumerate(size) if i != 1):
            raise reader.unsupported(inv, f"size {size}: only a window across channels")
        op = Lrn(inv.kwarg("alpha", 1.0), inv.kwarg("beta", 0.5), inv.kwarg("bias", 1.0),
                 size[1])
        return reader.wire(inv, op, [x])


Lrn.NNEF_READERS = {"local_response_normalization": Lrn._read}


class BatchNorm(Op):
    """Inference batch normalisation over axis 1: (x - mean) / sqrt(var + eps) * scale + bias.

    Never written: declutter turns it into mul + add by per-channel constants (which
    fold_batchnorm then folds into a preceding conv when it can).
    """

    name = "BatchNorm"

    def __init__(self, epsilon):
        self.epsilon = f32(epsilon)

    def output_facts(self, inputs):
        expect_inputs(inputs, 5)
        x = inputs[0]
        if x.rank < 2:
            raise ShapeError("input must have rank ≥ 2 (N, C, …)")
        for what, fact in zip(("scale", "bias", "mean", "var"), inputs[1:]):
            if fact.shape != (x.shape[1],):
                raise ShapeError(f"{what} {fact} must have shape [{x.shape[1]}] (channels)")
        return [x.without_value()]

    def coefficients(self, scale, bias, mean, var, dtype):
        """Per-channel (multiplier, offset) so that y = x * multiplier + offset."""
        multiplier = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + self.epsilon)
        offset = bias.astype(np.float64) - mean.astype(np.float64) * multiplier
        return multiplier.astype(dtype), offset.astype(dtype)

    def eval(self, inputs):
        x = inputs[0]
        multiplier, offset = self.coefficients(*inputs[1:], x.dtype)
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        return [(x * multiplier.reshape(shape) + offset.reshape(shape)).astype(x.dtype)]

    def declutter(self, graph, node):
        params = [graph.const_value(o) for o in node.inputs[1:]]
        if any(p is None for p in params):
            return None
        x = graph.fact(node.inputs[0])
        multiplier, offset = self.coefficients(*params, x.dtype)
        shape = (1, x.shape[1]) + (1,) * (x.rank - 2)
        patch = Patch(graph, "batch norm as mul + add")
        scale = patch.const(node.name + "_scale", multiplier.reshape(shape))
        shift = patch.const(node.name + "_shift", offset.reshape(shape))
        scaled = patch.wire1(node.name + "_mul", Binary("mul"), [node.inputs[0], scale])
        return patch.shunt(node.outlet(), patch.wire1(node.name, Binary("add"),
                                                      [scaled, shift]))

    def nnef_write(self, writer, node):
        raise UnsupportedOp("BatchNorm with non-constant statistics has no plan form")
