"""Core ops, one module per family. `NNEF_READERS` maps every plan op name to its reader."""
from .base import Op
from .conv import Conv
from .elementwise import Binary, Clamp, Unary
from .matmul import MatMul
from .nn import BatchNorm, Lrn, Softmax
from .pool import AvgPool, MaxPool
from .reduce import Reduce
from .shape import (Cast, Concat, Gather, Reshape, ShapeOf, Slice, Squeeze, Transpose,
                    Unsqueeze)
from .source import Const, Source

ALL_OPS = (Source, Const, Unary, Clamp, Binary, Conv, MaxPool, AvgPool, Reduce, Softmax, Lrn,
           BatchNorm, MatMul, Reshape, Transpose, Concat, Squeeze, Unsqueeze, Slice, Gather,
           ShapeOf, Cast)

NNEF_READERS = {}
for _op in ALL_OPS:
    NNEF_READERS.update(_op.NNEF_READERS)

__all__ = [cls.__name__ for cls in ALL_OPS] + ["Op", "NNEF_READERS"]
