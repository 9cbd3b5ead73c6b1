"""Ops by index tensors: ONNX GatherElements, GatherND, ScatterElements, ScatterND,
written as tract's ops (csrc/ops/gather.c, scatter.c; a scatter's reduction is an ember
attribute, written only when it is not "none"); OneHot and ReverseSequence, lowered to
comparisons, selects and gathers. (Gather along one axis is in shape.py: declutter turns
it into a Slice when it can.)"""
import numpy as np

from .. import datum, dims
from ..errors import ShapeError, UnsupportedOp
from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis, operands


class GatherElements(Op):
    name = "GatherElements"

    def __init__(self, axis):
        self.axis = int(axis)

    def output_facts(self, inputs):
        expect_inputs(inputs, 2)
        data, indices = inputs
        normalize_axis(self.axis, data.rank)
        if indices.rank != data.rank:
            raise ShapeError("indices must have the rank of data")
        return [Fact(data.datum_type, indices.shape)]

    def eval(self, inputs):
        data, indices = inputs
        axis = normalize_axis(self.axis, data.ndim)
        indices = indices.astype(np.int64)
        indices = np.where(indices < 0, indices + data.shape[axis], indices)
        return [np.take_along_axis(data, indices, axis=axis)]

    def nnef_write(self, writer, node):
        data, indices = (writer.ident(o) for o in node.inputs)
        axis = normalize_axis(self.axis, writer.graph.fact(node.inputs[0]).rank)
        writer.assign(node, f"tract_core_gather_elements({data}, {indices}, axis = {axis})")

    @staticmethod
    def _read(reader, inv):
        inputs = [reader.outlet(inv.arg(0)), reader.outlet(inv.arg(1))]
        return reader.wire(inv, GatherElements(inv.kwarg("axis", 0)), inputs)


GatherElements.NNEF_READERS = {"tract_core_gather_elements": GatherElements._read}


class GatherND(Op):
    name = "GatherND"

    def __init__(self, batch_dims=0):
        self.batch_dims = int(batch_dims)

    def output_facts(self, inputs):
        expect_inputs(inputs, 2)
        data, indices = inputs
        last = indices.shape[-1]
        if not dims.is_concrete(last):
            raise ShapeError("the last dim of indices must be known")
        b = self.batch_dims
        shape = tuple(indices.shape[:-1]) + tuple(data.shape[b + last:])
        return [Fact(data.datum_type, shape)]

    def eval(self, inputs):
        data, indices = inputs
        indices = indices.astype(np.int64)
        b = self.batch_dims
        batch_shape = data.shape[:b]
        batch = int(np.prod(batch_shape)) if b else 1
        flat_data = data.reshape((batch,) + data.shape[b:])
        flat_indices = indices.reshape((batch, -1, indices.shape[-1]))
        out = []
        for i in range(batch):
            rows = [flat_data[i][tuple(index)] for index in flat_indices[i]]
            out.append(np.stack(rows) if rows else
                       np.zeros((0,) + data.shape[b + indices.shape[-1]:], data.dtype))
        result = np.stack(out)
        shape = indices.shape[:-1] + data.shape[b + indices.shape[-1]:]
        return [result.reshape(shape).astype(data.dtype)]

    def nnef_write(self, writer, node):
        data, indices = (writer.ident(o) for o in node.inputs)
        writer.assign(node, f"tract_core_gather_nd({data}, {indices}, "
                            f"batch_dims = {self.batch_dims})")

    @staticmethod
    def _read(reader, inv):
        inputs = [reader.outlet(inv.arg(0)), reader.outlet(inv.arg(1))]
        return reader.wire(inv, GatherND(inv.kwarg("batch_dims", 0)), inputs)


GatherND.NNEF_READERS = {"tract_core_gather_nd": GatherND._read}


_REDUCTIONS = {"none": None, "add": np.add, "mul": np.multiply, "max": np.maximum,
               "min": np.minimum}


class ScatterElements(Op):
    name = "ScatterElements"

    def __init__(self, axis, reduction="none"):
        self.axis = int(axis)
        self.reduction = reduction

    def output_facts(self, inputs):
        expect_inputs(inputs, 3)
        normalize_axis(self.axis, inputs[0].rank)
        return [inputs[0].without_value()]

    def eval(self, inputs):
        data, indices, updates = inputs
        axis = normalize_axis(self.axis, data.ndim)
        out = data.copy()
        indices = indices.astype(np.int64)
        indices = np.where(indices < 0, indices + data.shape[axis], indices)
        function = _REDUCTIONS[self.reduction]
        for position in np.ndindex(*indices.shape):
            target = list(position)
            target[axis] = indices[position]
            target = tuple(target)
            out[target] = updates[position] if function is None else \
                function(out[target], updates[position])
        return [out]

    def nnef_write(self, writer, node):
        axis = normalize_axis(self.axis, writer.graph.fact(node.inputs[0]).rank)
        writer.assign(node, f"tract_core_scatter_elements({_operands(writer, node)}, "
                            f"axis = {axis}{_reduction(writer, self.reduction)})")

    @staticmethod
    def _read(reader, inv):
        inputs = [reader.outlet(inv.arg(i)) for i in range(3)]
        op = ScatterElements(inv.kwarg("axis", 0), inv.kwarg("reduction", "none"))
        return reader.wire(inv, op, inputs)


def _operands(writer, node):
    return ", ".join(writer.ident(o) for o in node.inputs)


def _reduction(writer, reduction):
    return "" if reduction == "none" else f", reduction = {writer.fmt(reduction)}"


class ScatterND(Op):
    name = "ScatterND"

    def __init__(self, reduction="none"):
        self.reduction = reduction

    def output_facts(self, inputs):
        expect_inputs(inputs, 3)
        return [inputs[0].without_value()]

    def eval(self, inputs):
        data, indices, updates = inputs
        out = data.copy()
        function = _REDUCTIONS[self.reduction]
        indices = indices.astype(np.int64)
        for position in np.ndindex(*indices.shape[:-1]):
            target = tuple(indices[position])
            out[target] = updates[position] if function is None else \
                function(out[target], updates[position])
        return [out]

    def nnef_write(self, writer, node):
        writer.assign(node, f"tract_core_scatter_nd({_operands(writer, node)}"
                            f"{_reduction(writer, self.reduction)})")

    @staticmethod
    def _read(reader, inv):
        inputs = [reader.outlet(inv.arg(i)) for i in range(3)]
        return reader.wire(inv, ScatterND(inv.kwarg("reduction", "none")), inputs)


ScatterElements.NNEF_READERS = {"tract_core_scatter_elements": ScatterElements._read}
ScatterND.NNEF_READERS = {"tract_core_scatter_nd": ScatterND._read}


class OneHot(Op):
    """indices -> one-hot along `axis` with (off, on) values (negative indices wrap)."""

    name = "OneHot"

    def __init__(self, depth, axis, off, on, from_inputs=()):
        self.depth = dims.from_value(depth)     # a fresh symbol with from_inputs ("depth",)
        self.axis = int(axis)
        self.off = off
        self.on = on
        if from_inputs:
            self.from_inputs = tuple(from_inputs)

    def output_facts(self, inputs):
        expect_inputs(inputs, 1 + len(self.from_inputs))
        x = inputs[0]
        axis = normalize_axis(self.axis, x.rank + 1)
        shape = list(x.shape)
        shape.insert(axis, self.depth)
        return [Fact(datum.from_numpy(np.asarray(self.on).dtype), shape)]

    def eval(self, inputs):
        given = operands(self, inputs)
        depth = int(np.asarray(given["depth"]).reshape(-1)[0]) if "depth" in given \
            else self.depth
        indices = inputs[0].astype(np.int64)
        indices = np.where(indices < 0, indices + depth, indices)
        axis = normalize_axis(self.axis, indices.ndim + 1)
        classes = np.arange(depth).reshape((-1,) + (1,) * (indices.ndim - axis))
        hot = np.expand_dims(indices, axis) == classes
        on, off = np.asarray(self.on), np.asarray(self.off)
        return [np.where(hot, on, off).astype(on.dtype)]

    def decompose(self, patch, name, inputs):
        """select(unsqueeze(indices, axis) == classes, on, off), the indices taken to i64
        and a negative one counted from the end first; any other index is off."""
        from .elementwise import Binary, Where
        from .shape import Cast, Unsqueeze
        if self.from_inputs or not dims.is_concrete(self.depth):
            return None                       # nnef_write then refuses it
        depth = dims.to_int(self.depth)
        x = patch.graph.fact(inputs[0])
        axis = normalize_axis(self.axis, x.rank + 1)
        wire = lambda what, op, ins: patch.wire1(f"{name}_{what}", op, ins)  # noqa: E731
        indices = inputs[0] if x.datum_type is datum.I64 else wire("i64", Cast("i64"), inputs)
        zero = patch.const(f"{name}_zero", np.array(0, np.int64))
        negative = wire("negative", Binary("less"), [indices, zero])
        shifted = wire("shifted", Binary("add"),
                       [indices, patch.const(f"{name}_depth", np.array(depth, np.int64))])
        wrapped = wire("wrapped", Where(), [negative, shifted, indices])
        classes = np.arange(depth, dtype=np.int64).reshape((-1,) + (1,) * (x.rank - axis))
        hot = wire("hot", Binary("equal"), [wire("expanded", Unsqueeze([axis]), [wrapped]),
                                            patch.const(f"{name}_classes", classes)])
        on, off = np.asarray(self.on), np.asarray(self.off)
        return [patch.wire1(name, Where(), [hot, patch.const(f"{name}_on", on),
                                            patch.const(f"{name}_off", off.astype(on.dtype))])]

    def nnef_write(self, writer, node):
        raise UnsupportedOp("OneHot of a depth known only at run time has no plan form")


class ReverseSequence(Op):
    """Reverse the first lens[b] items along `time_axis` of each batch item b."""

    name = "ReverseSequence"

    def __init__(self, batch_axis, time_axis):
        self.batch_axis = int(batch_axis)
        self.time_axis = int(time_axis)

    def output_facts(self, inputs):
        expect_inputs(inputs, 2)
        return [inputs[0].without_value()]

    def eval(self, inputs):
        x, lens = inputs
        y = x.copy()
        for b, length in enumerate(lens.astype(np.int64)):
            index = [slice(None)] * x.ndim
            index[self.batch_axis] = b
            index[self.time_axis] = slice(0, length)
            source = x[tuple(index)]
            time = self.time_axis - (self.time_axis > self.batch_axis)
            y[tuple(index)] = np.flip(source, axis=time)
        return [y]

    def decompose(self, patch, name, inputs):
        """gather_elements along the time axis at t' = t < len ? len - 1 - t : t, the
        index built from an iota of the (known) time dim and the lengths."""
        from .elementwise import Binary, Where
        from .shape import Cast, Unsqueeze
        from .tensor import Broadcast
        x = patch.graph.fact(inputs[0])
        steps = x.shape[self.time_axis]
        if not dims.is_concrete(steps):
            return None                       # nnef_write then refuses it
        wire = lambda what, op, ins: patch.wire1(f"{name}_{what}", op, ins)  # noqa: E731
        shape = [1] * x.rank
        shape[self.time_axis] = dims.to_int(steps)
        t = patch.const(f"{name}_t", np.arange(dims.to_int(steps), dtype=np.int64).reshape(shape))
        lens = inputs[1] if patch.graph.fact(inputs[1]).datum_type is datum.I64 else \
            wire("lens_i64", Cast("i64"), [inputs[1]])
        others = [a for a in range(x.rank) if a != self.batch_axis]
        lens = wire("lens", Unsqueeze(others), [lens])            # [1…, B, 1…]
        last = wire("last", Binary("sub"), [lens, patch.const(f"{name}_one",
                                                              np.array(1, np.int64))])
        mirrored = wire("mirrored", Binary("sub"), [last, t])
        inside = wire("inside", Binary("less"), [t, lens])
        index = wire("index", Where(), [inside, mirrored, t])
        full = wire("full", Broadcast(x.shape), [index])
        return [patch.wire1(name, GatherElements(self.time_axis), [inputs[0], full])]

    def nnef_write(self, writer, node):
        raise UnsupportedOp("ReverseSequence over a time axis of unknown length has no plan "
                            "form")
