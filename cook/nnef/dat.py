"""NNEF tensor files (.dat): a 128-byte header, then the items, little-endian.

The layout is in docs/plan-format.md; this module is its one Python implementation.
"""
import math
import struct

import numpy as np

from ..errors import FormatError

MAGIC = b"\x4e\xef"
HEADER_SIZE = 128
MAX_RANK = 8
TRACT_VENDOR = (ord("T") << 8) | ord("R")

# item type codes of the NNEF spec
FLOAT, UNSIGNED, QUANT_UNSIGNED, QUANT_SIGNED, SIGNED, BOOL = range(6)

_WRITE_CODES = {
    np.dtype(np.float16): FLOAT, np.dtype(np.float32): FLOAT, np.dtype(np.float64): FLOAT,
    np.dtype(np.uint8): UNSIGNED, np.dtype(np.uint16): UNSIGNED,
    np.dtype(np.uint32): UNSIGNED, np.dtype(np.uint64): UNSIGNED,
    np.dtype(np.int8): SIGNED, np.dtype(np.int16): SIGNED,
    np.dtype(np.int32): SIGNED, np.dtype(np.int64): SIGNED,
    np.dtype(np.bool_): BOOL,
}

_READ_TYPES = {
    (FLOAT, 16): np.float16, (FLOAT, 32): np.float32, (FLOAT, 64): np.float64,
    **{(code, bits): getattr(np, f"uint{bits}")
       for code in (UNSIGNED, QUANT_UNSIGNED) for bits in (8, 16, 32, 64)},
    **{(code, bits): getattr(np, f"int{bits}")
       for code in (SIGNED, QUANT_SIGNED) for bits in (8, 16, 32, 64)},
    (BOOL, 8): np.bool_,
}


class DatError(FormatError):
    """A malformed .dat file (an ember error, as every reader error is)."""


def to_bytes(array):
    """Serialise a numpy array as an NNEF tensor file (bool as 8 bits per item)."""
    array = np.asarray(array, order="C")
    if array.dtype not in _WRITE_CODES:
        raise DatError(f"cannot write datum type {array.dtype} to .dat")
    if array.ndim > MAX_RANK:
        raise DatError(f"rank {array.ndim} exceeds {MAX_RANK}")
    extents = list(array.shape) + [0] * (MAX_RANK - array.ndim)
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    header = struct.pack(
        "<2sBBII8IIHH", MAGIC, 1, 0, len(data), array.ndim, *extents,
        array.dtype.itemsize * 8, _WRITE_CODES[array.dtype], 0)
    return header + b"\0" * (HEADER_SIZE - len(header)) + data


def from_bytes(blob, name="<dat>"):
    """Parse an NNEF tensor file, checking every header field against the size."""
    if len(blob) < HEADER_SIZE:
        raise DatError(f"{name}: {len(blob)} bytes, shorter than the 128-byte header")
    magic, major, _minor, length, rank, *rest = struct.unpack_from("<2sBBII8IIHH", blob)
    extents, bits, code, vendor = rest[:8], rest[8], rest[9], rest[10]
    if magic != MAGIC:
        raise DatError(f"{name}: bad magic {magic!r}")
    if major != 1:
        raise DatError(f"{name}: unsupported version {major}")
    if rank > MAX_RANK:
        raise DatError(f"{name}: rank {rank} exceeds {MAX_RANK}")
    if vendor not in (0, TRACT_VENDOR):
        raise DatError(f"{name}: unknown item type vendor {vendor:#x}")
    shape = tuple(extents[:rank])
    count = math.prod(shape)           # Python ints: extents of 2^32 never wrap
    if code == BOOL and bits == 1:
        expected = (count + 7) // 8
    elif (code, bits) in _READ_TYPES:
        expected = count * bits // 8
    else:
        raise DatError(f"{name}: unsupported item type {code} with {bits} bits")
    if length != expected:
        raise DatError(f"{name}: header says {length} data bytes, shape {list(shape)} "
                       f"of {bits}-bit items needs {expected}")
    if len(blob) != HEADER_SIZE + length:
        raise DatError(f"{name}: file holds {len(blob) - HEADER_SIZE} data bytes, "
                       f"header says {length}")
    payload = blob[HEADER_SIZE:]
    if code == BOOL and bits == 1:
        bits_array = np.unpackbits(np.frombuffer(payload, np.uint8))[:count]
        return bits_array.astype(np.bool_).reshape(shape)
    dtype = np.dtype(_READ_TYPES[(code, bits)]).newbyteorder("<")
    return np.frombuffer(payload, dtype).astype(dtype.newbyteorder("="), copy=True).reshape(shape)


def label_path(label):
    """The archive entry of a variable's label: "<label>.dat", relative to the archive's
    root (tract writes label "/stem/conv/Conv.bias" and the file stem/conv/Conv.bias.dat)."""
    return label.lstrip("/") + ".dat"
