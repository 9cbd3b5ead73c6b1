"""Ops whose output sizes depend on the input values: NonZero, Unique, Compress.

Each carries the symbol that stands for its value-dependent count (made by the
translator with `fresh_symbol`), so typing stays complete: `NonZero` of a (3, 4) tensor
is `(2, n)` with `n` a symbol that only a run decides. These symbols are not input
symbols: `run_reference` does not need them bound.

Plan forms (docs/plan-format.md): `ember_nonzero(x, count = n)`,
`ember_compress(x, condition, axis, count = n)` and
`(values, indices, inverse, counts) = ember_unique(x, axis, sorted, count = n)`: the
`count` attribute names the symbol the run decides, which the C runtime binds after the
op has run (csrc/core/model_stages.h). A flattening form (axis None) is written as a
reshape to one dim first.
"""
import numpy as np

from .. import datum, dims
from ..errors import ShapeError
from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis


def _flattened(writer, node, outlet):
    """The identifier of `outlet` reshaped to one dim (ONNX's axis-less forms)."""
    fact = writer.graph.fact(outlet)
    ident = writer.ident(outlet)
    if fact.rank == 1:
        return ident
    name = writer.fresh(node.name + "_flat")
    writer.emit(name, f"reshape({ident}, shape = [-1])")
    return name


def _count_symbol(op):
    if dims.is_concrete(op.count) or len(dims.symbols(op.count)) != 1 or \
            op.count != dims.symbol(next(iter(dims.symbols(op.count)))):
        from ..errors import UnsupportedOp
        raise UnsupportedOp(f"{op.name}: its count {op.count} is not a plain symbol")
    return dims.to_str(op.count)


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

    def nnef_write(self, writer, node):
        writer.assign(node, f"ember_nonzero({writer.ident(node.inputs[0])}, "
                            f"count = {_count_symbol(self)})")

    @staticmethod
    def _read(reader, inv):
        return reader.wire(inv, NonZero(inv.kwarg("count")), [reader.outlet(inv.arg(0))])


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

    def nnef_write(self, writer, node):
        x = writer.ident(node.inputs[0]) if self.axis is not None else \
            _flattened(writer, node, node.inputs[0])
        axis = 0 if self.axis is None else self.axis
        writer.assign(node, f"ember_compress({x}, {writer.ident(node.inputs[1])}, "
                            f"axis = {axis}, count = {_count_symbol(self)})")

    @staticmethod
    def _read(reader, inv):
        inputs = [reader.outlet(inv.arg(0)), reader.outlet(inv.arg(1))]
        return reader.wire(inv, Compress(inv.kwarg("axis"), inv.kwarg("count")), inputs)


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

    def nnef_write(self, writer, node):
        x = writer.ident(node.inputs[0]) if self.axis is not None else \
            _flattened(writer, node, node.inputs[0])
        axis = 0 if self.axis is None else self.axis
        writer.assign_all(node, f"ember_unique({x}, axis = {axis}, sorted = "
                                f"{writer.fmt(self.sorted)}, count = {_count_symbol(self)})")

    @staticmethod
    def _read(reader, inv):
        op = Unique(inv.kwarg("axis"), inv.kwarg("sorted", True), inv.kwarg("count"))
        return reader.wire(inv, op, [reader.outlet(inv.arg(0))])


NonZero.NNEF_READERS = {"ember_nonzero": NonZero._read}
Compress.NNEF_READERS = {"ember_compress": Compress._read}
Unique.NNEF_READERS = {"ember_unique": Unique._read}


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
