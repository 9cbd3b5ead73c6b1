"""Core ops, one module per family. `NNEF_READERS` maps every plan op name to its reader."""
from .base import Op
from .branch import If
from .conv import Conv, ConvTranspose
from .elementwise import Activation, Binary, Clamp, Unary, Where
from .matmul import MatMul
from .nn import BatchNorm, LayerNorm, Lrn, Softmax
from .pool import AvgPool, MaxPool
from .reduce import Reduce
from .shape import (Cast, Concat, Gather, Reshape, ShapeOf, Slice, Squeeze, Transpose,
                    Unsqueeze)
from .attention import Attention, RotaryEmbedding
from .recurrent import Recurrent
from .resize import GridSample, Resize
from .loop import Loop
from .scan import Scan
from .source import Const, Source
from .gather import (GatherElements, GatherND, OneHot, ReverseSequence, ScatterElements,
                     ScatterND)
from .quant import (BitCast, ConvInteger, Dequantize, DynamicQuantize, IntegerMatMul,
                    QLinearConv, QLinearMatMul, Quantize)
from .einsum import Einsum
from .linalg import Det, Dft
from .tensor import (ArgReduce, Broadcast, CumSum, Hardmax, LogSoftmax, NllLoss, Pad, Tile,
                     TopK, Trilu)

ALL_OPS = (Source, Const, Unary, Clamp, Binary, Conv, MaxPool, AvgPool, Reduce, Softmax, Lrn,
           BatchNorm, MatMul, Reshape, Transpose, Concat, Squeeze, Unsqueeze, Slice, Gather,
           ShapeOf, Cast, Activation, Where, ArgReduce, Broadcast, CumSum, Einsum,
           GatherElements, GatherND, Hardmax, LogSoftmax, OneHot, Pad, ScatterElements,
           ScatterND, Tile, TopK, Trilu, ConvTranspose, Quantize, Dequantize, IntegerMatMul,
           NllLoss, BitCast, Attention, Recurrent, GridSample, Resize, Scan, RotaryEmbedding,
           Dft, DynamicQuantize, Det, ReverseSequence, LayerNorm, QLinearMatMul, ConvInteger,
           QLinearConv, If, Loop)

NNEF_READERS = {}
for _op in ALL_OPS:
    NNEF_READERS.update(_op.NNEF_READERS)

__all__ = [cls.__name__ for cls in ALL_OPS] + ["Op", "NNEF_READERS"]
