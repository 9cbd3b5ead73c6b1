"""Replace nodes whose outputs are all known constants by Const nodes, within a budget.

Folding stores the result in the plan. That is a win when the inputs it replaces go
away with it, and a loss when they stay: a weight read directly and through a Transpose
(or a Cast) would be stored twice, and an Expand of a small constant would store its
whole broadcast result. So a node folds when its result takes no more bytes than the
constants that die with it, plus FOLD_ALLOWANCE. Otherwise it stays in the graph as an
op over its constant inputs (its facts still carry the value, so rewrites see a
constant) and the plan computes it at run time.

Exceptions: a node whose facts have symbols only a run decides (a Loop's trips) folds
whatever its size, and so does a node the plan cannot express (a cook-only op), as
before, since otherwise the model could not be written at all — unless the op's own
rewrite removes it first (a Broadcast its consumers broadcast anyway). Ops marked
`foldable = False` (Dequantize: quantized weights stay quantized) never get a value, so
they are never folded here.
"""
from .. import dims
from ..ir import Patch
from ..ops.source import Const, Source

# Small results always fold, whatever dies with them: shape arithmetic, scalars, biases,
# a permuted per-channel constant. 64 KiB is far below any weight worth deduplicating and
# far above any shape tensor.
FOLD_ALLOWANCE = 64 * 1024


def fold_constants(graph):
    """One sweep; returns the number of rewrites (folds, or the op's own rewrite)."""
    applied = 0
    for node in graph.ordered_nodes():
        if node.id not in graph.nodes or isinstance(node.op, (Const, Source)):
            continue
        if not all(f.value is not None for f in node.outputs):
            continue
        patch = None
        if not _within_budget(graph, node) and not _decides_sizes(graph, node):
            if _writable(graph, node):
                continue
            patch = node.op.declutter(graph, node)
        (patch or _fold(graph, node)).apply()
        applied += 1
    return applied


def _fold(graph, node):
    patch = Patch(graph, "fold constant")
    for outlet in _used_outputs(graph, node):
        name = node.name if len(node.outputs) == 1 else f"{node.name}_{outlet.slot}"
        patch.shunt(outlet, patch.const(name, graph.fact(outlet).value))
    return patch


def _used_outputs(graph, node):
    return [node.outlet(slot) for slot in range(len(node.outputs))
            if graph.consumers(node.outlet(slot)) or graph.is_output(node.outlet(slot))]


def _decides_sizes(graph, node):
    """Whether the node's facts have symbols its inputs' have not (a Loop's trips, an
    If's branch sizes): known values settle them, so such a node always folds."""
    found = set()
    for fact in graph.input_facts(node):
        for dim in fact.shape:
            found |= dims.symbols(dim)
    return any(dims.symbols(dim) - found for fact in node.outputs for dim in fact.shape)


def _within_budget(graph, node):
    folded = sum(graph.fact(o).value.nbytes for o in _used_outputs(graph, node))
    return folded <= FOLD_ALLOWANCE + _freed_bytes(graph, node)


def _freed_bytes(graph, node):
    """Bytes of the Const nodes that become unused once `node` is replaced: walking up,
    a node dies when every reader of its outputs dies (the first one, `node`, does)."""
    dying, freed = {node.id}, 0
    stack = [graph.nodes[o.node] for o in node.inputs]
    while stack:
        candidate = stack.pop()
        if candidate.id in dying or isinstance(candidate.op, Source):
            continue
        outlets = [candidate.outlet(s) for s in range(len(candidate.outputs))]
        if any(graph.is_output(o) for o in outlets):
            continue
        if any(reader.id not in dying for o in outlets for reader, _ in graph.consumers(o)):
            continue
        dying.add(candidate.id)
        if isinstance(candidate.op, Const):
            freed += candidate.op.value.nbytes
        stack.extend(graph.nodes[o.node] for o in candidate.inputs)
    return freed


class _ProbeWriter:
    """Stands in for the plan writer to ask an op whether it has a plan form for this
    node: every writer call succeeds with a placeholder, so only the op's own refusals
    (UnsupportedOp and the like) surface."""

    def __init__(self, graph):
        self.graph = graph

    def __getattr__(self, name):
        return lambda *args, **kwargs: "x"


def _writable(graph, node):
    try:
        node.op.nnef_write(_ProbeWriter(graph), node)
    except Exception:       # noqa: BLE001 (any refusal: fold, which always writes)
        return False
    return True
