"""Ops whose output sizes depend on the input values: NonZero, Unique, Compress.

Each carries the symbol that stands for its value-dependent count (made by the
translator with `fresh_symbol`), so typing stays complete: `NonZero` of a (3, 4) tensor
is `(2, n)` with `n` a symbol that only a run decides. These symbols are not input
symbols: `run_reference` does not need them bound. Cook-only: no plan form yet.
"""
import numpy as np

from .. import datum, dims
from ..errors import ShapeError
from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis


class NonZero(Op):
    """The indices of the non-zero elements, one row per axis: i64 (rank, count)."""

    name = "NonZero"
    foldable = False       # typing says (rank, count): translators fold constant inputs

    def __init__(self, count):
        self.count = count

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        return [Fact(datum.I64, (inputs[0].rank, self.count))]

    def eval(self, inputs):
        x = np.asarray(inputs[0])
        return [np.asarray(np.nonzero(x.reshape(1) if x.ndim == 0 else x), np.int64)
                .reshape(x.ndim, -1)]


class Compress(Op):
    """The slices of x along `axis` (x flattened when None) where condition is true."""

    name = "Compress"
    foldable = False

    def __init__(self, axis, count):
        self.axis = None if axis is None else int(axis)
        self.count = count

    def output_facts(self, inputs):
        expect_inputs(inputs, 2)
        x, condition = inputs
        if condition.rank != 1:
            raise ShapeError(f"condition must be 1-D, got {condition}")
        if self.axis is None:
            return [Fact(x.datum_type, (self.count,))]
        shape = list(x.shape)
        shape[normalize_axis(self.axis, x.rank)] = self.count
        return [Fact(x.datum_type, shape)]

    def eval(self, inputs):
        x, condition = inputs
        return [np.compress(np.asarray(condition, bool), x, axis=self.axis)]


class Unique(Op):
    """Unique values (sorted, or in order of first occurrence), with the index of each
    first occurrence, the inverse indices and the counts: ONNX Unique's four outputs."""

    name = "Unique"
    foldable = False

    def __init__(self, axis, sorted_, count):
        self.axis = None if axis is None else int(axis)
        self.sorted = bool(sorted_)
        self.count = count

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        x = inputs[0]
        if self.axis is None:
            values_shape, length = (self.count,), None
        else:
            axis = normalize_axis(self.axis, x.rank)
            values_shape = list(x.shape)
            values_shape[axis], length = self.count, x.shape[axis]
        inverse = (length,) if length is not None else (_flat_size(x),)
        return [Fact(x.datum_type, values_shape), Fact(datum.I64, (self.count,)),
                Fact(datum.I64, inverse), Fact(datum.I64, (self.count,))]

    def eval(self, inputs):
        return unique(np.asarray(inputs[0]), self.axis, self.sorted)


def _flat_size(fact):
    return dims.product(fact.shape)


def unique(x, axis, sorted_):
    """numpy's unique with ONNX's outputs; `sorted_` false orders by first occurrence."""
    values, index, inverse, counts = np.unique(
        x if axis is not None else x.reshape(-1), return_index=True, return_inverse=True,
        return_counts=True, axis=axis)
    if not sorted_:
        order = np.argsort(index, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values = np.take(values, order, axis=axis or 0)
        index, counts, inverse = index[order], counts[order], rank[inverse.reshape(-1)]
    return [values, np.asarray(index, np.int64), np.asarray(inverse, np.int64).reshape(-1),
            np.asarray(counts, np.int64)]
