"""Sources: model inputs and constants."""
import numpy as np

from .. import dims
from ..errors import CookError
from ..facts import Fact
from ..pulse import Stream
from .base import Op


class Source(Op):
    """A model input. Its fact is given when it is added, never computed."""

    name = "Source"
    foldable = False

    def output_facts(self, inputs):
        raise CookError("a Source's fact is set when it is added")

    def eval(self, inputs):
        raise CookError("a Source has no value")

    def nnef_write(self, writer, node):
        writer.write_external(node)

    def pulse(self, pulser, node, inputs):
        """An input whose shape has the streamed symbol takes P frames on that axis."""
        fact = node.outputs[0]
        axes = [k for k, d in enumerate(fact.shape) if pulser.symbol in dims.symbols(d)]
        if not axes:
            return [pulser.graph.add_source(node.name, fact)]
        if len(axes) > 1 or fact.shape[axes[0]] != dims.symbol(pulser.symbol):
            pulser.refuse(node, f"input {fact}: the streamed symbol must be one whole axis")
        shape = [pulser.pulse if k == axes[0] else d for k, d in enumerate(fact.shape)]
        outlet = pulser.graph.add_source(node.name, Fact(fact.datum_type, shape))
        pulser.streams[outlet] = Stream(axes[0], 0, fact.shape[axes[0]])
        return [outlet]


class Const(Op):
    """A constant tensor (weights, shapes, scalars)."""

    name = "Const"

    def __init__(self, value):
        self.value = np.asarray(value)

    def output_facts(self, inputs):
        return [Fact.from_value(self.value)]

    def eval(self, inputs):
        return [self.value]

    def nnef_write(self, writer, node):
        # Constants are written lazily, where (and in the rank) they are used.
        pass
