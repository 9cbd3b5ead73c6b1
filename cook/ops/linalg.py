"""Linear maps of a signal or a matrix: DFT (lowered to products with constant cos/sin
matrices) and Det (ember_det in C)."""
import numpy as np

from .. import dims
from ..errors import ShapeError, UnsupportedOp
from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis
from .tensor import Pad


class Dft(Op):
    """Discrete Fourier transform along `axis` of a real ([..., 1]) or complex ([..., 2])
    signal; output complex [..., 2]. `length` pads or truncates the signal."""

    name = "DFT"

    def __init__(self, axis, inverse=False, onesided=False, length=None):
        self.axis = int(axis)
        self.inverse = bool(inverse)
        self.onesided = bool(onesided)
        self.length = None if length is None else int(length)

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        x = inputs[0]
        if x.rank < 2 or x.shape[-1] not in (1, 2):
            raise ShapeError(f"signal {x} must end with a dim of 1 (real) or 2 (complex)")
        axis = normalize_axis(self.axis, x.rank - 1)
        shape = list(x.shape)
        n = self.length if self.length is not None else shape[axis]
        shape[axis] = dims.div_floor(n, 2) + 1 if self.onesided else n
        shape[-1] = 2
        return [Fact(x.datum_type, shape)]

    def eval(self, inputs):
        x = inputs[0].astype(np.float64)
        signal = x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]
        axis = normalize_axis(self.axis, x.ndim - 1)
        n = self.length if self.length is not None else signal.shape[axis]
        transform = np.fft.ifft if self.inverse else np.fft.fft
        y = transform(signal, n=n, axis=axis)
        if self.onesided:
            y = np.take(y, range(n // 2 + 1), axis=axis)
        return [np.stack([y.real, y.imag], axis=-1).astype(inputs[0].dtype)]

    def decompose(self, patch, name, inputs):
        """Products with the constant cos and sin matrices of the transform (the signal's
        axis moved last): re' = re·C - im·S, im' = re·S + im·C, through the runtime's
        matmul (O(n²) per lane, like the reference's definition; no FFT)."""
        from .elementwise import Binary
        from .matmul import MatMul
        from .shape import Concat, Slice, Squeeze, Transpose, Unsqueeze
        x = patch.graph.fact(inputs[0])
        axis = normalize_axis(self.axis, x.rank - 1)
        size = x.shape[axis]
        n = self.length if self.length is not None else size
        if not dims.is_concrete(size) or not dims.is_concrete(n):
            return None                                 # nnef_write then refuses it
        size, n = dims.to_int(size), dims.to_int(n)
        wire = lambda what, op, ins: patch.wire1(f"{name}_{what}", op, ins)  # noqa: E731
        y = inputs[0]
        if n < size:
            y = wire("cut", Slice([axis], [0], [n]), [y])
        elif n > size:
            pads = [(0, 0)] * x.rank
            pads[axis] = (0, n - size)
            y = wire("padded", Pad(pads), [y])
        last = x.rank - 2
        perm = [a for a in range(x.rank - 1) if a != axis] + [axis]
        parts = []
        for part in range(x.shape[-1]):
            taken = wire(f"part{part}", Slice([x.rank - 1], [part], [part + 1]), [y])
            taken = wire(f"part{part}_squeezed", Squeeze([x.rank - 1]), [taken])
            parts.append(wire(f"part{part}_moved", Transpose(perm), [taken]))
        m = n // 2 + 1 if self.onesided else n
        angle = (2 if self.inverse else -2) * np.pi * np.outer(np.arange(n), np.arange(m)) / n
        scale = 1.0 / n if self.inverse else 1.0
        cos = patch.const(f"{name}_cos", (np.cos(angle) * scale).astype(x.dtype))
        sin = patch.const(f"{name}_sin", (np.sin(angle) * scale).astype(x.dtype))
        re = wire("re_cos", MatMul(), [parts[0], cos])
        im = wire("re_sin", MatMul(), [parts[0], sin])
        if len(parts) == 2:
            re = wire("re", Binary("sub"), [re, wire("im_sin", MatMul(), [parts[1], sin])])
            im = wire("im", Binary("add"), [im, wire("im_cos", MatMul(), [parts[1], cos])])
        back = [perm.index(a) for a in range(x.rank - 1)]
        halves = [wire(f"{what}_back", Unsqueeze([last + 1]),
                       [wire(f"{what}_placed", Transpose(back), [v])])
                  for what, v in (("re", re), ("im", im))]
        return [patch.wire1(name, Concat(last + 1), halves)]

    def nnef_write(self, writer, node):
        raise UnsupportedOp("DFT over an axis of unknown length has no plan form")


class Det(Op):
    name = "Det"

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        x = inputs[0]
        if x.rank < 2 or x.shape[-1] != x.shape[-2]:
            raise ShapeError(f"{x} is not a (batch of) square matrices")
        return [Fact(x.datum_type, x.shape[:-2])]

    def eval(self, inputs):
        return [np.asarray(np.linalg.det(inputs[0].astype(np.float64))).astype(inputs[0].dtype)]

    def nnef_write(self, writer, node):
        writer.assign(node, f"ember_det({writer.ident(node.inputs[0])})")

    @staticmethod
    def _read(reader, inv):
        return reader.wire(inv, Det(), [reader.outlet(inv.arg(0))])


Det.NNEF_READERS = {"ember_det": Det._read}
