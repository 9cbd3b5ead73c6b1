"""Reductions over a set of axes, keeping them as size-1 dims."""
import numpy as np

from ..facts import Fact
from .base import Op, expect_inputs, normalize_axis

REDUCERS = {"mean": np.mean, "sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}
PLAN_REDUCERS = ("mean", "sum", "max", "min")


class Reduce(Op):
    def __init__(self, kind, axes):
        if kind not in REDUCERS:
            raise ValueError(f"unknown reduction {kind!r}")
        self.kind = kind
        self.axes = tuple(sorted(int(a) for a in axes))

    @property
    def name(self):
        return f"Reduce<{self.kind}>"

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        x = inputs[0]
        for axis in self.axes:
            normalize_axis(axis, x.rank)
        shape = tuple(1 if axis in self.axes else d for axis, d in enumerate(x.shape))
        return [Fact(x.datum_type, shape)]

    def eval(self, inputs):
        x = inputs[0]
        if self.kind in ("mean", "sum") and x.dtype.kind == "f":
            y = REDUCERS[self.kind](x, axis=self.axes, keepdims=True, dtype=np.float64)
        elif self.kind in ("max", "min") and x.size == 0:
            if x.dtype.kind == "f":
                initial = -np.inf if self.kind == "max" else np.inf
            elif x.dtype.kind == "b":
                initial = self.kind == "min"
            else:
                info = np.iinfo(x.dtype)
                initial = info.min if self.kind == "max" else info.max
            y = REDUCERS[self.kind](x, axis=self.axes, keepdims=True, initial=initial)
        else:
            y = REDUCERS[self.kind](x, axis=self.axes, keepdims=True)
        return [np.asarray(y).astype(x.dtype)]

    def nnef_write(self, writer, node):
        if self.kind not in PLAN_REDUCERS:
            from ..errors import UnsupportedOp
            raise UnsupportedOp(f"{self.kind} reduction is cook-only for now (no plan form)")
        x = writer.ident(node.inputs[0])
        writer.assign(node, f"{self.kind}_reduce({x}, axes = {writer.fmt(list(self.axes))})")

    @classmethod
    def _nnef_reader(cls, kind):
        def read(reader, inv):
            x = reader.outlet(inv.arg(0, "input"))
            rank = reader.fact(x).rank
            axes = [normalize_axis(a, rank) for a in inv.kwarg("axes", None) or inv.arg(1)]
            return reader.wire(inv, cls(kind, axes), [x])
        return read


Reduce.NNEF_READERS = {f"{kind}_reduce": Reduce._nnef_reader(kind) for kind in PLAN_REDUCERS}
