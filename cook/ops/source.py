"""Sources: model inputs and constants."""
import numpy as np

from ..errors import CookError
from ..facts import Fact
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
