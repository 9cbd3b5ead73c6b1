"""Quantized and bit-level ops (cook-only, numpy reference): QuantizeLinear,
DequantizeLinear (never folded, so quantized weights stay int8 + scales in the typed
model), integer matmul, dynamic quantization, and bit casts."""
import numpy as np

from .. import datum, dims
from ..errors import ShapeError
from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis


class Quantize(Op):
    """y = saturate(round(x / scale) + zero_point) (ONNX QuantizeLinear, per tensor or
    per axis); `to` is the integer type."""

    name = "Quantize"

    def __init__(self, axis, to):
        self.axis = int(axis)
        self.to = datum.parse(to)

    def output_facts(self, inputs):
        expect_inputs(inputs, range(2, 4))
        return [Fact(self.to, inputs[0].shape)]

    def eval(self, inputs):
        x, scale = inputs[0], inputs[1]
        zero = inputs[2] if len(inputs) == 3 else np.zeros((), self.to.dtype)
        shape = _per_axis_shape(scale, x.ndim, self.axis)
        y = np.rint(x.astype(np.float64) / scale.reshape(shape).astype(np.float64))
        y = y + zero.reshape(shape).astype(np.float64)
        if self.to in datum.NARROW:
            import ml_dtypes
            info = ml_dtypes.iinfo(self.to.dtype)
        else:
            info = np.iinfo(self.to.dtype)
        return [np.clip(y, info.min, info.max).astype(self.to.dtype)]


class Dequantize(Op):
    """y = (x - zero_point) * scale (ONNX DequantizeLinear, per tensor or per axis).

    Never folded at cook time: quantized weights stay quantized (int8 + scales) in the
    typed model."""

    name = "Dequantize"
    foldable = False

    def __init__(self, axis, to):
        self.axis = int(axis)
        self.to = datum.parse(to)

    def output_facts(self, inputs):
        expect_inputs(inputs, range(2, 4))
        return [Fact(self.to, inputs[0].shape)]

    def eval(self, inputs):
        x, scale = inputs[0], inputs[1]
        shape = _per_axis_shape(scale, x.ndim, self.axis)
        y = x.astype(np.float64)
        if len(inputs) == 3:
            y = y - inputs[2].reshape(shape).astype(np.float64)
        return [(y * scale.reshape(shape).astype(np.float64)).astype(self.to.dtype)]


def _per_axis_shape(scale, rank, axis):
    if scale.size == 1 or scale.ndim == 0:
        return ()
    shape = [1] * rank
    shape[normalize_axis(axis, rank)] = scale.size
    return tuple(shape)


class IntegerMatMul(Op):
    """(a - a_zero) @ (b - b_zero) in i32 (ONNX MatMulInteger)."""

    name = "IntegerMatMul"

    def output_facts(self, inputs):
        expect_inputs(inputs, range(2, 5))
        a, b = inputs[0], inputs[1]
        batch = dims.broadcast_shapes([a.shape[:-2], b.shape[:-2]])
        if a.rank < 2 or b.rank < 2 or batch is None or a.shape[-1] != b.shape[-2]:
            raise ShapeError(f"cannot multiply {a} by {b}")
        return [Fact(datum.I32, (*batch, a.shape[-2], b.shape[-1]))]

    def eval(self, inputs):
        a = inputs[0].astype(np.int32)
        b = inputs[1].astype(np.int32)
        if len(inputs) > 2:
            zero = inputs[2].astype(np.int32)
            a = a - (zero.reshape(-1, 1) if zero.ndim == 1 and zero.size > 1 else zero)
        if len(inputs) > 3:
            b = b - inputs[3].astype(np.int32)
        return [np.matmul(a, b).astype(np.int32)]


class BitCast(Op):
    """Reinterpret the bits as another type of the same width."""

    name = "BitCast"

    def __init__(self, to):
        self.to = datum.parse(to)

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        if inputs[0].dtype.itemsize != self.to.dtype.itemsize:
            raise ShapeError(f"{inputs[0].datum_type} and {self.to} differ in width")
        return [Fact(self.to, inputs[0].shape)]

    def eval(self, inputs):
        return [np.array(inputs[0], copy=True, order="C").view(self.to.dtype)]


class DynamicQuantize(Op):
    """u8 quantization with scale and zero point from the data's range (ONNX
    DynamicQuantizeLinear): outputs y, scale, zero point."""

    name = "DynamicQuantize"

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        return [Fact(datum.U8, inputs[0].shape), Fact(datum.F32, ()), Fact(datum.U8, ())]

    def eval(self, inputs):
        x = inputs[0].astype(np.float32)
        low = min(0.0, float(x.min())) if x.size else 0.0
        high = max(0.0, float(x.max())) if x.size else 0.0
        scale = np.float32((high - low) / 255.0) if high > low else np.float32(1.0)
        zero = np.clip(np.rint(-low / scale), 0, 255)
        y = np.clip(np.rint(x / scale) + zero, 0, 255)
        return [y.astype(np.uint8), np.asarray(scale, np.float32),
                np.asarray(zero, np.uint8)]
