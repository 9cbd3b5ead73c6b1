"""Gathers and scatters by index tensors: ONNX GatherElements, GatherND, ScatterElements,
ScatterND, written as tract's ops (csrc/ops/gather.c, scatter.c; a scatter's reduction
is an ember attribute, written only when it is not "none"). (Gather along one axis is
in shape.py: declutter turns it into a Slice when it can.)"""
import numpy as np

from .. import dims
from ..errors import ShapeError
from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis


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
