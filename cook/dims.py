"""Tensor dimensions.

Today a `Dim` is a non-negative Python int. Symbolic dimensions (`S`, `S+2`, `2*S`,
`(S-3)/2+1`) will live in this module and nowhere else: every piece of shape
arithmetic in ops goes through the functions below (or plain `+ - * //` on Dims, which a
future symbolic class will overload), so that switching the representation does not
touch the op modules. In particular nothing outside this module should call `int()` on
a Dim or compare it with `isinstance(d, int)`: use `is_concrete` / `to_int`.
"""
from .errors import CookError

Dim = int


def is_concrete(dim):
    """True when the dim is a known integer (always, until symbols arrive)."""
    return isinstance(dim, int)


def to_int(dim, what="dimension"):
    """The integer value of a dim; raises for a symbolic one."""
    if not is_concrete(dim):
        raise CookError(f"{what} {dim} must be a known integer here")
    return int(dim)


def parse(text):
    """A Dim from its text form: "224" -> 224. Symbols are not supported yet."""
    text = text.strip()
    try:
        value = int(text)
    except ValueError:
        raise CookError(f"dimension {text!r}: symbolic dimensions are not supported yet "
                        "(only integers)") from None
    if value < 0:
        raise CookError(f"dimension {text!r} is negative")
    return value


def to_str(dim):
    return str(dim)


def from_value(value):
    """A Dim from an integer-like value (numpy ints included)."""
    return int(value)


def product(dims):
    result = 1
    for dim in dims:
        result = result * dim
    return result


def broadcast(a, b):
    """numpy broadcasting of one dim pair; None when incompatible."""
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    return None


def broadcast_shapes(shapes):
    """numpy broadcasting of several shapes; None when incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        padded = [1] * (rank - len(shape)) + list(shape)
        for axis, dim in enumerate(padded):
            merged = broadcast(result[axis], dim)
            if merged is None:
                return None
            result[axis] = merged
    return tuple(result)


def div_floor(a, b):
    return a // b


def div_ceil(a, b):
    return -((-a) // b)


def window_output(input_dim, kernel, stride, dilation, pad_before, pad_after, ceil=False):
    """Output length of a sliding window (conv, pool) over one spatial axis."""
    span = (kernel - 1) * dilation + 1
    room = input_dim + pad_before + pad_after - span
    return (div_ceil(room, stride) if ceil else div_floor(room, stride)) + 1


def same_padding(input_dim, kernel, stride, dilation, upper=True):
    """(before, after) for ONNX auto_pad SAME_UPPER / SAME_LOWER (output = ceil(in/stride))."""
    output = div_ceil(input_dim, stride)
    span = (kernel - 1) * dilation + 1
    total = max((output - 1) * stride + span - input_dim, 0)
    small = total // 2
    return (small, total - small) if upper else (total - small, small)
