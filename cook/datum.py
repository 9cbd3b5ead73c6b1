"""Datum types: the element types of tensors, and their names in numpy, ONNX and NNEF."""
import numpy as np

from .errors import CookError


class DatumType:
    """One element type. Instances are unique: compare with `is` or `==`."""

    def __init__(self, name, dtype, onnx_code, nnef_kind):
        self.name = name                      # "f32": ember/tract spelling
        self.dtype = np.dtype(dtype)          # numpy dtype
        self.onnx_code = onnx_code            # onnx.TensorProto.DataType value
        self.nnef_kind = nnef_kind            # "scalar" | "integer" | "logical" | None

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        # Compares with other DatumTypes by identity, and with names: fact.datum_type == "f32"
        if isinstance(other, str):
            return self.name == other.strip().lower()
        return self is other

    def __hash__(self):
        return hash(self.name)

    @property
    def is_float(self):
        return self.dtype.kind == "f"

    @property
    def is_integer(self):
        return self.dtype.kind in "iu"


# ONNX codes: FLOAT 1, UINT8 2, INT8 3, UINT16 4, INT16 5, INT32 6, INT64 7, BOOL 9,
# FLOAT16 10, DOUBLE 11, UINT32 12, UINT64 13.
F32 = DatumType("f32", np.float32, 1, "scalar")
F16 = DatumType("f16", np.float16, 10, None)
F64 = DatumType("f64", np.float64, 11, None)
I8 = DatumType("i8", np.int8, 3, None)
U8 = DatumType("u8", np.uint8, 2, None)
I16 = DatumType("i16", np.int16, 5, None)
U16 = DatumType("u16", np.uint16, 4, None)
I32 = DatumType("i32", np.int32, 6, None)
U32 = DatumType("u32", np.uint32, 12, None)
I64 = DatumType("i64", np.int64, 7, "integer")
U64 = DatumType("u64", np.uint64, 13, None)
BOOL = DatumType("bool", np.bool_, 9, "logical")

ALL = (F32, F16, F64, I8, U8, I16, U16, I32, U32, I64, U64, BOOL)
_BY_NAME = {t.name: t for t in ALL}
_BY_DTYPE = {t.dtype: t for t in ALL}
_BY_ONNX = {t.onnx_code: t for t in ALL}


def parse(name):
    """A DatumType from "f32", "F32", "float32", "i64"…"""
    if isinstance(name, DatumType):
        return name
    key = str(name).strip().lower()
    if key in _BY_NAME:
        return _BY_NAME[key]
    try:
        return from_numpy(np.dtype(key))
    except TypeError:
        raise CookError(f"unknown datum type {name!r} (expected one of "
                        f"{', '.join(_BY_NAME)})") from None


def from_numpy(dtype):
    dtype = np.dtype(dtype)
    if dtype not in _BY_DTYPE:
        raise CookError(f"numpy dtype {dtype} has no ember datum type")
    return _BY_DTYPE[dtype]


def from_onnx(code):
    if code not in _BY_ONNX:
        raise CookError(f"ONNX element type {code} is not supported")
    return _BY_ONNX[code]
