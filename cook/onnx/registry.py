"""The one table: ONNX op_type -> translator function.

A translator receives a `Translation` context (the typed target graph, the node's
typed input outlets and facts, its attributes and opset) and returns the outlets that
replace the ONNX node's outputs. Translators live in the family modules (nn.py,
arith.py, shape.py) and register with `@translator("OpType", ...)`.
"""
import numpy as np

from .. import dims
from ..errors import BadAttribute, CookError, MissingFact, UnsupportedOp, node_context
from ..facts import Fact
from ..ops.base import Op, normalize_axis
from ..ops.source import Source
from .attrs import Attrs

TRANSLATORS = {}
INFO = {}        # op_type -> {"opsets": text, "types": text, "notes": text, "cook_only": bool}


def translator(*op_types, opsets="1+", types="float", notes="", cook_only=False):
    """Register a translator for op_types, with what docs/ops.md says about them.

    opsets: the ONNX opset versions handled ("1+", "7+", "13+"…); types: the datum types
    ("float", "numeric", "all", "bool"…); notes: limits; cook_only: the core ops it
    produces evaluate in numpy (run_reference) but have no plan form yet.
    """
    def register(function):
        for op_type in op_types:
            TRANSLATORS[op_type] = function
            INFO[op_type] = {"opsets": opsets, "types": types, "notes": notes,
                             "cook_only": cook_only}
        return function
    return register


class Translation:
    """What a translator sees of one ONNX node while it is being typed."""

    def __init__(self, target, node, inputs):
        self.target = target
        self.node = node                    # the InferenceModel node (op: OnnxNode)
        self.onnx = node.op
        self.name = node.name
        self.inputs = inputs                # typed outlets; None for an omitted optional input
        self.facts = [target.fact(o) if o is not None else None for o in inputs]
        self.opset = node.op.opset
        self.attrs = Attrs(node.op.proto, self.where)

    @property
    def where(self):
        facts = [f for f in getattr(self, "facts", []) if f is not None]
        return node_context(self.name, self.onnx.op_type, facts)

    # -- inputs -------------------------------------------------------------------
    def scope(self):
        """{name: typed outlet} of the outer-scope tensors the node's subgraphs read."""
        implicit = self.onnx.implicit
        if not implicit:
            return {}
        return dict(zip(implicit, self.inputs[len(self.inputs) - len(implicit):]))

    def has_input(self, index):
        return index < len(self.inputs) and self.inputs[index] is not None

    def input(self, index):
        if not self.has_input(index):
            raise CookError(f"{self.where}: input {index} is required")
        return self.inputs[index]

    def fact(self, index):
        self.input(index)
        return self.facts[index]

    def const_input(self, index, what="input", required=True):
        """The constant value of input `index`; an error when it is not a constant."""
        if not self.has_input(index):
            if required:
                raise CookError(f"{self.where}: {what} (input {index}) is required")
            return None
        value = self.facts[index].value
        if value is None and self.facts[index].symbolic is not None:
            return self.facts[index].symbolic        # Dims computed from symbolic shapes
        if value is None:
            raise UnsupportedOp(f"{self.where}: {what} (input {index}) must be a constant "
                                "(computed from initializers and shapes); a value known only "
                                f"at run time is not supported{self.set_value_hint(index)}")
        return value

    def runtime_input(self, index):
        """Whether input `index` is there and only a run knows it (neither a constant nor
        dims computed from shapes): the translator then wires an op that reads it."""
        return self.has_input(index) and self.facts[index].value is None \
            and self.facts[index].symbolic is None

    def runtime_length(self, index, what):
        """The length of the 1-D runtime input `index` (a shape's rank, a count of pads…)."""
        shape = self.facts[index].shape
        if len(shape) > 1 or (shape and not dims.is_concrete(shape[0])):
            raise self.error(f"{what} (input {index}) is known only at run time and its "
                             f"length {shape} is not a number{self.set_value_hint(index)}")
        return dims.to_int(shape[0]) if shape else 1

    def set_value_hint(self, index):
        """How to fix an attribute-like input that comes straight from a model input."""
        outlet = self.inputs[index]
        if isinstance(self.target.nodes[outlet.node].op, Source) \
                and outlet in self.target.inputs:
            return (f"; call set_input_value({self.target.inputs.index(outlet)}, <value>) on "
                    "the InferenceModel to fix it")
        return ""

    def not_at_run_time(self, index, what, why):
        """UnsupportedOp: input `index` may not be a value known only at run time."""
        return self.error(f"{what} (input {index}) must be a constant: {why}"
                          f"{self.set_value_hint(index)}")

    def axis(self, axis, rank):
        """`axis` in [0, rank), negative counted from the end; BadAttribute when outside."""
        try:
            return normalize_axis(axis, rank)
        except CookError as error:
            raise self.error(str(error), BadAttribute) from None

    # -- building -----------------------------------------------------------------
    def wire(self, op, inputs, suffix=None):
        """Add a core op to the target graph; named after the ONNX node (plus a suffix)."""
        name = self.name if suffix is None else f"{self.name}_{suffix}"
        try:
            return self.target.wire1(name, op, inputs)
        except CookError as error:
            raise type(error)(f"{error} (translating ONNX {self.onnx.op_type} "
                              f"opset {self.opset})") from None

    def wire_or_run(self, op, inputs):
        """The op's outputs, or, when every input is a constant, its results as constants
        (run while cooking). For ops whose typing has symbols only a run decides (counts
        of NonZero, Unique, a Loop's trips), so the graph cannot fold them by itself."""
        values = [self.target.fact(o).value for o in inputs]
        if all(v is not None for v in values):
            return [self.const(v, f"out{i}") for i, v in enumerate(op.eval(values))]
        node = self.target.add_node(self.name, op, inputs)
        return [node.outlet(i) for i in range(len(node.outputs))]

    def const(self, value, suffix):
        return self.target.add_const(f"{self.name}_{suffix}", np.asarray(value))

    def fresh_symbol(self, what):
        """A new symbol for a dim known only at run time (a count of NonZero, Unique…):
        named after the node, distinct from every symbol of the graph so far."""
        return self.target.fresh_symbol(f"{self.name}_{what}")

    def fresh_symbols(self, what, count):
        """`count` new symbols (what0, what1…) for dims a run-time operand decides."""
        return [self.fresh_symbol(f"{what}{i}") for i in range(count)]

    def error(self, message, kind=UnsupportedOp):
        return kind(f"{self.where}: {message}")


class OnnxNode(Op):
    """Inference op: one ONNX node waiting for typed inputs to be translated."""

    foldable = False

    def __init__(self, proto, opset, implicit=()):
        self.proto = proto
        self.op_type = proto.op_type
        self.domain = proto.domain or "ai.onnx"
        self.opset = opset
        # outer-scope tensors its subgraphs read (If, Loop, Scan): appended to the inputs
        self.implicit = tuple(implicit)

    @property
    def name(self):
        return self.op_type

    def attrs(self):
        return {"op_type": self.op_type, "opset": self.opset}

    def to_typed(self, target, node, inputs):
        where = node_context(node.name, self.op_type,
                             [target.fact(o) for o in inputs if o is not None])
        if self.domain not in ("ai.onnx", ""):
            raise UnsupportedOp(f"{where}: operators of domain {self.domain!r} are not "
                                "supported (docs/ops.md lists what is)")
        translate = TRANSLATORS.get(self.op_type)
        if translate is None:
            raise UnsupportedOp(f"{where}: ONNX op {self.op_type} (opset {self.opset}) is "
                                "not supported yet (docs/ops.md lists what is)")
        missing = [i for i, o in enumerate(inputs) if o is None and i < len(node.inputs)
                   and node.inputs[i] is not None]
        if missing:
            raise MissingFact(f"{node_context(node.name, self.op_type)}: inputs {missing} "
                              "are not typed")
        context = Translation(target, node, inputs)
        try:
            outlets = translate(context)
        except CookError as error:
            if f'node "{node.name}' in str(error):
                raise
            # a rule deep inside (dims, numpy helpers) did not know which node it served
            raise type(error)(f"{context.where}: {error}") from None
        return list(outlets)


def subgraph_free_names(proto):
    """Names the subgraphs of a node read from outside them, in order of first use."""
    from onnx import AttributeProto
    free = []
    for attr in proto.attribute:
        graphs = [attr.g] if attr.type == AttributeProto.GRAPH else \
            list(attr.graphs) if attr.type == AttributeProto.GRAPHS else []
        for graph in graphs:
            defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
            for node in graph.node:
                for name in list(node.input) + subgraph_free_names(node):
                    if name and name not in defined and name not in free:
                        free.append(name)
                defined |= set(node.output)
    return free


def fact_of(value):
    return Fact.from_value(np.asarray(value))
