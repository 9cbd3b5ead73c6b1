"""Facts: what is known of a tensor.

Dims are ints or symbolic expressions (cook/dims.py): "N,3,H,W,f32", "1,S,40,f32".

A `Fact` (typed models) has a datum type, a full shape of Dims, and maybe a constant
value. An `InferenceFact` (inference models) may miss any of them: `datum_type` None,
`shape` None (unknown rank) or a tuple whose unknown dims are None. Text forms follow
tract: "1,3,224,224,f32", "?,3,?,?,f32", "..,f32" (unknown rank), "1,3" (unknown type
prints as a trailing "?").
"""
import re

import numpy as np

from . import datum, dims
from .errors import CookError, MissingFact


class Fact:
    """Datum type + shape (+ optional constant value) of a wire in a TypedModel.

    `symbolic`: for an integer tensor computed from shapes that contain symbols (Shape,
    then Gather, Concat…), its value as a numpy object array of Dims; None otherwise.
    Translators read it like a constant (a reshape to [N, 3*H*W]) while `value` stays
    None: the tensor is not a constant of the model.
    """

    __slots__ = ("datum_type", "shape", "value", "symbolic")

    def __init__(self, datum_type, shape, value=None, symbolic=None):
        self.datum_type = datum.parse(datum_type)
        self.shape = tuple(shape)
        self.value = value
        self.symbolic = symbolic

    @classmethod
    def from_value(cls, value):
        value = np.asarray(value)
        return cls(datum.from_numpy(value.dtype), value.shape, value)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def dtype(self):
        return self.datum_type.dtype

    @property
    def is_concrete(self):
        """Every dim an integer (no symbol)."""
        return all(dims.is_concrete(d) for d in self.shape)

    @property
    def is_const(self):
        return self.value is not None

    def without_value(self):
        return Fact(self.datum_type, self.shape)

    def same_type(self, other):
        return self.datum_type is other.datum_type and self.shape == other.shape

    def __eq__(self, other):
        return isinstance(other, Fact) and self.same_type(other)

    def __hash__(self):
        return hash((self.datum_type.name, self.shape))

    def __str__(self):
        return ",".join([dims.to_str(d) for d in self.shape] + [self.datum_type.name])

    def __repr__(self):
        return f"Fact({self}{', const' if self.value is not None else ''})"


class InferenceFact:
    """A partial fact: any of datum type, rank, dims may be unknown (None)."""

    __slots__ = ("datum_type", "shape", "value")

    def __init__(self, datum_type=None, shape=None, value=None):
        self.datum_type = datum.parse(datum_type) if datum_type is not None else None
        self.shape = tuple(shape) if shape is not None else None
        self.value = value

    @classmethod
    def from_fact(cls, fact):
        return cls(fact.datum_type, fact.shape, fact.value)

    @property
    def is_complete(self):
        return (self.datum_type is not None and self.shape is not None
                and all(d is not None for d in self.shape))

    def to_typed(self, what="tensor"):
        if not self.is_complete:
            raise MissingFact(f"{what} has an incomplete fact {self}")
        return Fact(self.datum_type, self.shape, self.value)

    def __str__(self):
        parts = [".."] if self.shape is None else \
            ["?" if d is None else dims.to_str(d) for d in self.shape]
        parts.append(self.datum_type.name if self.datum_type is not None else "?")
        return ",".join(parts)

    def __repr__(self):
        return f"InferenceFact({self})"

    def __eq__(self, other):
        return (isinstance(other, InferenceFact) and self.datum_type is other.datum_type
                and self.shape == other.shape)


def parse_fact(text):
    """Parse "1,3,224,224,f32" (also "1x3x224x224xf32", "?" dims, "..") into an InferenceFact."""
    if isinstance(text, (Fact, InferenceFact)):
        return text if isinstance(text, InferenceFact) else InferenceFact.from_fact(text)
    raw = str(text).strip()
    parts = [p.strip() for p in raw.replace("x", ",").split(",")] if "," not in raw \
        else [p.strip() for p in raw.split(",")]
    parts = [p for p in parts if p]
    if not parts:
        raise CookError(f"empty fact {text!r}")
    datum_type = None
    last = parts[-1]
    if last == "?":
        parts = parts[:-1]
    elif not (last[0].isdigit() or last == ".."):
        try:
            datum_type = datum.parse(last)
            parts = parts[:-1]
        except CookError:
            try:
                if re.fullmatch(r"(?i)(f|i|u|q|float|int|uint)\d+|bool", last):
                    raise CookError("looks like a datum type")
                dims.parse(last)          # a symbolic dim: the datum type is unknown
            except CookError:
                raise CookError(f"fact {text!r}: {last!r} is neither a datum type (unknown "
                                "datum type) nor a dimension") from None
    if parts == [".."]:
        return InferenceFact(datum_type, None)
    shape = tuple(None if p == "?" else dims.parse(p) for p in parts)
    return InferenceFact(datum_type, shape)


def parse_typed_fact(text, what="fact"):
    """Like parse_fact, but every part must be known."""
    if isinstance(text, Fact):
        return text
    fact = parse_fact(text)
    if not fact.is_complete:
        raise MissingFact(f"{what} {str(text)!r} is incomplete: give every dim and the datum "
                          "type, e.g. '1,3,224,224,f32'")
    return fact.to_typed()
