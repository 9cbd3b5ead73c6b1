"""TypedModel -> plan files ({path: bytes}) in the tract dialect of docs/plan-format.md.

Each op writes itself (`op.nnef_write(writer, node)`) through the small API of
`PlanWriter`: `ident` (an input's identifier or literal), `operand` (the same, at a
given rank: binary ops and matmul take operands of equal rank, which tract requires),
`assign` (the statement defining a node's output), and the literal formatters.

Constants are written where they are used: a single value as a literal, anything else
as a `variable` with its own .dat file (labels are the identifiers, so valid NNEF
names), each constant written once however many nodes read it.

Fused ops the plan format lacks (silu, hard_swish, gelu_tanh, LayerNorm) are first
lowered to plan ops by their `decompose`, on a copy of the graph: the TypedModel the
user holds keeps them.
"""
import copy

import numpy as np

from .. import __version__, dims
from ..errors import CookError, UnsupportedOp, node_context
from ..ir import Patch
from ..ops.base import Op
from ..ops.source import Const
from . import dat
from .syntax import fmt, fmt_float, sanitize

PLAN_VERSION = 1
VARIABLE_KIND = {"f": "scalar", "i": "integer", "u": "integer", "b": "logical"}


class PlanWriter:
    def __init__(self, model, prefix="", bodies=None):
        self.model = model
        self.prefix = prefix          # of constant labels: a body's are "<body>/…"
        self.bodies = set() if bodies is None else bodies   # body names, plan-wide
        self.graph = compute_in_f32(lower_to_plan_ops(model.graph))
        self.statements = []
        self.files = {}
        self.symbols = _graph_symbols(self.graph)
        self.taken = set(self.symbols)
        self.known_symbols = set()    # symbols the inputs or a decide statement bind
        for outlet in self.graph.inputs:
            for dim in self.graph.fact(outlet).shape:
                self.known_symbols |= dims.symbols(dim)
        self.idents = {}              # outlet -> identifier of a written value
        self.const_texts = {}         # (outlet, rank) -> text of a constant
        self.rank_aligned = {}        # (outlet, rank) -> identifier of an unsqueeze

    # -- identifiers ----------------------------------------------------------------
    def fresh(self, name):
        base = sanitize(name)
        candidate, index = base, 1
        while candidate in self.taken:
            candidate = f"{base}_{index}"
            index += 1
        self.taken.add(candidate)
        return candidate

    def fresh_body_name(self, hint):
        """A body document's name, unique in the whole plan."""
        base, index = sanitize(hint), 1
        candidate = base
        while candidate in self.bodies or candidate == "graph":
            candidate = f"{base}_{index}"
            index += 1
        self.bodies.add(candidate)
        return candidate

    def fresh_symbol(self, name):
        """A new symbol of the plan, standing for a value only a run knows."""
        symbol = self.fresh(name)
        self.symbols.add(symbol)
        return dims.symbol(symbol)

    # -- values a run decides (csrc/ops/decide.c) -------------------------------------
    def decide_values(self, node, vector, symbols):
        """Binds `symbols` to the items of the integer vector `vector` (an outlet, or the
        identifier of a value written already) for what follows."""
        names = [dims.to_str(s) for s in symbols]
        self.known_symbols.update(names)
        text = vector if isinstance(vector, str) else self.ident(vector)
        self.emit(self.fresh(f"{node.name}_decided"),
                  f"ember_decide_values({text}, count = [{', '.join(names)}])")

    def decided(self, node, vector, what, count=None):
        """Fresh symbols for the items of the integer vector `vector` (as in decide_values;
        `count` items, by default all of the outlet's), bound by a decide statement."""
        if count is None:
            count = dims.to_int(dims.product(self.graph.fact(vector).shape))
        symbols = [self.fresh_symbol(f"{node.name}_{what}{i}") for i in range(count)]
        self.decide_values(node, vector, symbols)
        return symbols

    def decide_dims(self, node, ident):
        """Binds the symbols that first appear, alone, among the dims of the node's
        output `ident` (which a run decides) for what follows."""
        shape = self.graph.fact(node.outlet()).shape
        axes, names = [], []
        known = set(self.known_symbols)
        for fact in self.graph.input_facts(node):     # kept from an input, not decided
            for dim in fact.shape:
                known |= dims.symbols(dim)
        for axis, dim in enumerate(shape):
            name = dims.to_str(dim)
            if not dims.is_concrete(dim) and dims.symbols(dim) == {name} and \
                    name not in known:
                axes.append(axis)
                names.append(name)
                self.known_symbols.add(name)
        if names:
            self.emit(self.fresh(f"{node.name}_dims"), f"ember_decide_dims({ident}, axes = "
                      f"{fmt(axes)}, count = [{', '.join(names)}])")

    def ident(self, outlet):
        """The text of a node input: identifier, or literal/variable for a constant."""
        node = self.graph.nodes[outlet.node]
        if isinstance(node.op, Const):
            return self.const_text(outlet, None)
        if outlet not in self.idents:
            raise CookError(f"writer: {node.name!r} used before it was written")
        return self.idents[outlet]

    def operand(self, outlet, rank):
        """Like ident, but of rank `rank` (leading size-1 dims added)."""
        fact = self.graph.fact(outlet)
        if fact.rank == rank:
            return self.ident(outlet)
        if fact.rank > rank:
            raise CookError(f"writer: operand {fact} has a rank above {rank}")
        node = self.graph.nodes[outlet.node]
        if isinstance(node.op, Const):
            return self.const_text(outlet, rank)
        key = (outlet, rank)
        if key not in self.rank_aligned:
            name = self.fresh(f"{self.idents[outlet]}_rank{rank}")
            axes = list(range(rank - fact.rank))
            self.emit(name, f"unsqueeze({self.idents[outlet]}, axes = {fmt(axes)})")
            self.rank_aligned[key] = name
        return self.rank_aligned[key]

    def const_text(self, outlet, rank):
        key = (outlet, rank)
        if key in self.const_texts:
            return self.const_texts[key]
        node = self.graph.nodes[outlet.node]
        value = node.op.value
        if rank is not None:
            value = value.reshape((1,) * (rank - value.ndim) + value.shape)
        # A literal number reads as f32 and a literal logical as bool: any other single
        # item goes in a variable, which keeps its datum type.
        literal = value.size == 1 and value.dtype in (np.float32, np.bool_) and \
            (value.dtype == np.bool_ or bool(np.isfinite(value).all()))  # NNEF has no inf
        if literal and value.ndim == 0:
            text = self.scalar(value.item())
        elif literal:
            text = fmt(value.tolist()) if value.dtype.kind != "f" else \
                _nested(fmt_float(value.item()), value.ndim)
        else:
            text = self.constant(node.name if rank is None or rank == node.outputs[0].rank
                                 else f"{node.name}_rank{rank}", value)
        self.const_texts[key] = text
        return text

    def constant(self, name, value):
        """A new constant the plan needs and the graph has not (a variable)."""
        value = np.asarray(value)
        ident = self.fresh(name)
        kind = VARIABLE_KIND.get(value.dtype.kind)
        if kind is None:
            raise UnsupportedOp(f"constant {name!r} of type {value.dtype} cannot be written")
        self.files[self.prefix + ident + ".dat"] = dat.to_bytes(value)
        self.emit(ident, f"variable<{kind}>(label = {fmt(self.prefix + ident)}, "
                         f"shape = {fmt(list(value.shape))})")
        return ident

    # -- statements -----------------------------------------------------------------
    def emit(self, name, expression):
        self.statements.append(f"  {name} = {expression};")

    def assign(self, node, expression, slot=0):
        outlet = node.outlet(slot)
        name = self.output_idents.get(outlet) or self.fresh(
            node.name if slot == 0 else f"{node.name}_{slot}")
        self.idents[outlet] = name
        self.emit(name, expression)
        return name

    def assign_all(self, node, expression):
        """The statement `a, b, … = expression;` defining every output of a node."""
        names = []
        for slot in range(len(node.outputs)):
            outlet = node.outlet(slot)
            name = self.output_idents.get(outlet) or self.fresh(
                node.name if slot == 0 else f"{node.name}_{slot}")
            self.idents[outlet] = name
            names.append(name)
        if len(names) == 1:
            self.emit(names[0], expression)
        else:
            self.statements.append(f"  ({', '.join(names)}) = {expression};")
        return names

    def write_external(self, node):
        fact = node.outputs[0]
        shape = fmt(list(fact.shape))
        kind = {"f32": "scalar", "i64": "integer", "bool": "logical"}.get(fact.datum_type.name)
        if kind:
            expression = f"external<{kind}>(shape = {shape})"
        else:
            expression = f"tract_core_external(shape = {shape}, " \
                         f"datum_type = {fmt(fact.datum_type.name)})"
        name = self.input_idents[node.outlet()]
        self.idents[node.outlet()] = name
        self.emit(name, expression)

    # -- literal helpers the ops use -------------------------------------------------
    fmt = staticmethod(fmt)

    @staticmethod
    def scalar(value):
        return fmt(value)

    @staticmethod
    def full_rank_scalar(value, rank):
        return _nested(fmt_float(value), rank)

    # -- the document ---------------------------------------------------------------
    def write(self):
        graph = self.graph
        self.input_idents = {o: self.fresh(graph.nodes[o.node].name) for o in graph.inputs}
        self.output_idents = {}
        output_names = []
        for outlet, name in zip(graph.outputs, graph.output_names):
            ident = self.fresh(name)
            output_names.append(ident)
            node = graph.nodes[outlet.node]
            if outlet not in self.output_idents and outlet not in self.input_idents \
                    and not isinstance(node.op, Const):
                self.output_idents[outlet] = ident
        for node in graph.ordered_nodes():
            try:
                node.op.nnef_write(self, node)
            except CookError as error:
                raise type(error)(f"writing {node_context(node.name, node.op.name, [f for f in self.graph.input_facts(node)])}: {error}") from None
        for outlet, ident in zip(graph.outputs, output_names):
            if self.idents.get(outlet) == ident:
                continue
            source = self.ident(outlet)
            self.emit(ident, f"copy({source})")
        symbols = sorted(self.symbols)
        properties = [("ember.plan_version", PLAN_VERSION),
                      ("producer", f"ember-cook {__version__}"),
                      ("ember.input_names", [graph.nodes[o.node].name for o in graph.inputs]),
                      ("ember.output_names", list(graph.output_names))]
        # a pulsed model's streaming (cook/pulse.py), read by the runtime's ember_state
        properties += [(k, v) for k, v in graph.properties.items() if k.startswith("ember.pulse")]
        if symbols:
            # the runtime cannot type a symbolic graph before a run: it reads these
            properties.append(("ember.output_facts",
                               [str(graph.fact(o).without_value()) for o in graph.outputs]))
        text = ["version 1.0;", "", "extension tract_registry tract_core;"]
        text += [f"extension tract_symbol {name};" for name in symbols]
        text += ["",
                "fragment tract_core_properties(",
                ") -> (properties: (string, tensor<scalar>)[])",
                "{",
                "  properties = [" + ", ".join(fmt(p) for p in properties) + "];",
                "}", "",
                f"graph network({', '.join(self.input_idents[o] for o in graph.inputs)}) -> "
                f"({', '.join(output_names)})",
                "{"]
        text += self.statements
        text += ["}", ""]
        self.files["graph.nnef"] = "\n".join(text).encode("utf-8")
        return self.files


def lower_to_plan_ops(graph):
    """`graph`, or a copy of it where every op with a decomposition is decomposed."""
    lowered = None
    for node in graph.ordered_nodes():
        if type(node.op).decompose is Op.decompose:
            continue
        if lowered is None:
            lowered = _structural_copy(graph)
        target = lowered.nodes.get(node.id)
        if target is None:          # pruned by an earlier lowering
            continue
        patch = Patch(lowered, f"lower {node.op.name} to plan ops")
        outlets = target.op.decompose(patch, target.name, target.inputs)
        if outlets is None:
            continue
        for slot, outlet in enumerate(outlets):
            patch.shunt(target.outlet(slot), outlet)
        patch.apply()
    return graph if lowered is None else lowered


# Ops whose C kernels compute in f32 only, and the other types they take exactly through
# f32: f16 widens and rounds back (what "computed in f32 where there is no f16 kernel"
# means), and max pooling's small integers convert both ways without loss.
F32_KERNELS = {"Conv": {"f16"}, "MatMul": {"f16"}, "Lrn": {"f16"}, "Recurrent": {"f16", "f64"},
               "AvgPool": {"f16"}, "MaxPool": {"f16", "i8", "u8", "i16", "u16"}}


def compute_in_f32(graph):
    """`graph`, or a copy where the ops of F32_KERNELS on their other types are wrapped in
    casts to f32 and back (constant operands converted in place)."""
    from ..ops.shape import Cast
    widened = None
    for node in graph.ordered_nodes():
        types = F32_KERNELS.get(type(node.op).__name__, ())
        facts = graph.input_facts(node)
        if not facts or not any(f.datum_type.name in types for f in facts):
            continue
        if widened is None:
            widened = _structural_copy(graph)
        target = widened.nodes[node.id]
        patch = Patch(widened, f"compute {node.op.name} in f32")
        inputs = []
        for index, (outlet, fact) in enumerate(zip(target.inputs, facts)):
            if fact.datum_type.name not in types:
                inputs.append(outlet)
                continue
            value = widened.const_value(outlet)
            inputs.append(patch.const(f"{target.name}_{index}_f32", value.astype(np.float32))
                          if value is not None else
                          patch.wire1(f"{target.name}_{index}_f32", Cast("f32"), [outlet]))
        wide = patch.wire(f"{target.name}_f32", target.op, inputs)
        for slot, (outlet, fact) in enumerate(zip(wide, target.outputs)):
            back = patch.wire1(target.name if slot == 0 else f"{target.name}_{slot}",
                               Cast(fact.datum_type.name), [outlet])
            patch.shunt(target.outlet(slot), back)
        patch.apply()
    return graph if widened is None else widened


def _structural_copy(graph):
    """A graph copy sharing ops and facts (immutable values, and weights can be large)."""
    memo = {}
    for node in graph.nodes.values():
        memo[id(node.op)] = node.op
        for fact in node.outputs:
            memo[id(fact)] = fact
    return copy.deepcopy(graph, memo)


def _graph_symbols(graph):
    found = set()
    for node in graph.nodes.values():
        for fact in node.outputs:
            for dim in fact.shape:
                found |= dims.symbols(dim)
    return found


def _nested(text, rank):
    return "[" * rank + text + "]" * rank


def plan_files(model):
    """{path: bytes} of the plan of a TypedModel."""
    return PlanWriter(model).write()
