"""Datum types: the element types of tensors, and their names in numpy, ONNX and NNEF."""
import numpy as np

from .errors import CookError


class DatumType:
    """One element type. Instances are unique: compare with `is` or `==`."""

    def __init__(self, name, dtype, onnx_code, nnef_kind, family=None):
        self.name = name                      # "f32": ember/tract spelling
        self.dtype = np.dtype(dtype)          # numpy dtype
        self.onnx_code = onnx_code            # onnx.TensorProto.DataType value
        self.nnef_kind = nnef_kind            # "scalar" | "integer" | "logical" | None
        # "f" float, "i" integer, "b" bool (ml_dtypes' types have numpy kind "V")
        self.family = family or {"f": "f", "i": "i", "u": "i", "b": "b"}.get(self.dtype.kind)

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
        return self.family == "f"

    @property
    def is_integer(self):
        return self.family == "i"


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

# The narrow types of ml_dtypes (what onnx uses): cook-only, for Cast and (de)quantization.
try:
    import ml_dtypes
except ImportError:                                        # pragma: no cover
    ml_dtypes = None
NARROW = []
if ml_dtypes is not None:
    for _name, _attr, _code, _family in (
            ("bf16", "bfloat16", 16, "f"), ("f8e4m3fn", "float8_e4m3fn", 17, "f"),
            ("f8e4m3fnuz", "float8_e4m3fnuz", 18, "f"), ("f8e5m2", "float8_e5m2", 19, "f"),
            ("f8e5m2fnuz", "float8_e5m2fnuz", 20, "f"), ("u4", "uint4", 21, "i"),
            ("i4", "int4", 22, "i"), ("f4e2m1", "float4_e2m1fn", 23, "f"),
            ("f8e8m0", "float8_e8m0fnu", 24, "f"), ("u2", "uint2", 25, "i"),
            ("i2", "int2", 26, "i")):
        if hasattr(ml_dtypes, _attr):
            NARROW.append(DatumType(_name, getattr(ml_dtypes, _attr), _code, None, _family))
    ALL = ALL + tuple(NARROW)
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
