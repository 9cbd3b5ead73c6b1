"""Replace every node whose outputs are all known constants by Const nodes."""
from ..ir import Patch
from ..ops.source import Const, Source


def fold_constants(graph):
    """One sweep; returns the number of nodes folded."""
    folded = 0
    for node in graph.ordered_nodes():
        if isinstance(node.op, (Const, Source)):
            continue
        if not all(f.value is not None for f in node.outputs):
            continue
        patch = Patch(graph, "fold constant")
        for slot, fact in enumerate(node.outputs):
            if graph.consumers(node.outlet(slot)) or graph.is_output(node.outlet(slot)):
                name = node.name if len(node.outputs) == 1 else f"{node.name}_{slot}"
                patch.shunt(node.outlet(slot), patch.const(name, fact.value))
        patch.apply()
        folded += 1
    return folded
