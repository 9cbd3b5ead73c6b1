"""Run every op's own `declutter` rewrite once over the graph."""


def simplify(graph):
    """One sweep of per-op rewrites in topological order; returns how many applied."""
    applied = 0
    for node_id in graph.topo_order():
        node = graph.nodes.get(node_id)
        if node is None:
            continue
        patch = node.op.declutter(graph, node)
        if patch is not None:
            patch.apply()
            applied += 1
    return applied
