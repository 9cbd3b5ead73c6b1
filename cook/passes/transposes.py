"""Move transposes toward the outputs until they meet and cancel.

TF/Keras exports wrap every block in NHWC<->NCHW transposes and torch attention
transposes around its matmuls. Each transpose costs a full copy at run time, so this
pass removes what it can:

- identity permutations go; T(q) after T(p) becomes one T(p∘q) (so inverses cancel);
- a transpose moves below the op it feeds when that op commutes with it: unary
  elementwise ops, a binary op whose other operand is a constant (permuted in its place)
  or a transpose of the same permutation (two transposes before become one after),
  a matmul that keeps its last two axes in place, and — only when the move lets it
  meet another transpose — reductions and softmax (their axes are renamed);
- a swap of the last two axes feeding a matmul becomes its transpose flag.

Termination: transposes only ever move down (toward the outputs), merges and flag
absorption remove one, and nothing creates a transpose elsewhere, so the fixpoint
cannot cycle. A transpose moves only when its output has that single consumer:
otherwise the other readers would still need it and the count would grow.
"""
import numpy as np

from ..ir import Patch
from ..ops.elementwise import Activation, Binary, Clamp, Unary
from ..ops.matmul import MatMul
from ..ops.nn import Softmax
from ..ops.reduce import Reduce
from ..ops.shape import Cast, Transpose
from ..ops.source import Const
from ..ops.tensor import LogSoftmax
from .fold_constants import FOLD_ALLOWANCE

ELEMENTWISE = (Unary, Activation, Clamp, Cast)
AXES_OPS = (Reduce, Softmax, LogSoftmax)


def transposes(graph):
    """One sweep in topological order; returns the number of rewrites applied."""
    applied = 0
    for node in graph.ordered_nodes():
        if node.id not in graph.nodes or not isinstance(node.op, Transpose):
            continue
        patch = _rewrite(graph, node)
        if patch is not None:
            patch.apply()
            applied += 1
    return applied


def _rewrite(graph, node):
    perm = node.op.perm
    if perm == tuple(range(len(perm))):
        return Patch(graph, "identity transpose").shunt(node.outlet(), node.inputs[0])
    # Before merging: a matmul flag removes the swap for free, the merged perm may not.
    absorbed = _into_matmul_flag(graph, node)
    if absorbed is not None:
        return absorbed
    producer = graph.nodes[node.inputs[0].node]
    if isinstance(producer.op, Transpose):
        # y[i] = x'[perm[i]] = x[inner[perm[i]]]
        merged = tuple(producer.op.perm[p] for p in perm)
        patch = Patch(graph, "merge transposes")
        return patch.shunt(node.outlet(), patch.wire1(node.name, Transpose(merged),
                                                      producer.inputs))
    consumer = graph.single_consumer(node.outlet())
    if consumer is None:
        return None
    if isinstance(consumer.op, ELEMENTWISE):
        return _push(graph, node, consumer, consumer.op, [node.inputs[0]])
    if isinstance(consumer.op, Binary):
        return _push_binary(graph, node, consumer)
    if isinstance(consumer.op, MatMul):
        return _push_matmul(graph, node, consumer)
    if isinstance(consumer.op, AXES_OPS) and _meets_transpose(graph, consumer):
        axes = sorted(perm[a] for a in consumer.op.axes)
        op = type(consumer.op)(consumer.op.kind, axes) if isinstance(consumer.op, Reduce) \
            else type(consumer.op)(axes)
        return _push(graph, node, consumer, op, [node.inputs[0]])
    return None


def _push(graph, transpose, consumer, op, inputs):
    """consumer(T(x), …) -> T(op(x, …)): the transpose now reads the consumer's result."""
    patch = Patch(graph, f"push transpose through {consumer.op.name}")
    moved = patch.wire1(consumer.name, op, inputs)
    return patch.shunt(consumer.outlet(), patch.wire1(transpose.name, transpose.op, [moved]))


def _inverse(perm):
    return tuple(int(i) for i in np.argsort(perm))


def _push_binary(graph, transpose, consumer):
    perm = transpose.op.perm
    inputs = []
    for outlet in consumer.inputs:
        source = _before_transpose(graph, outlet, perm, consumer)
        if source is not None:
            inputs.append(source)              # same permutation: one transpose after
            continue
        value = _movable_constant(graph, outlet, consumer, len(perm))
        if value is None:
            return None
        inputs.append(value)
    if any(isinstance(i, np.ndarray) for i in inputs) and \
            graph.fact(consumer.outlet()).shape != graph.fact(transpose.outlet()).shape:
        return None     # a constant broadcasting x up: the moved transpose would copy more
    patch = Patch(graph, f"push transpose through {consumer.op.name}")
    inverse = _inverse(perm)
    wired = [patch.const(graph.nodes[consumer.inputs[k].node].name + "_t",
                         np.ascontiguousarray(np.transpose(i, inverse)))
             if isinstance(i, np.ndarray) else i for k, i in enumerate(inputs)]
    moved = patch.wire1(consumer.name, consumer.op, wired)
    return patch.shunt(consumer.outlet(), patch.wire1(transpose.name, transpose.op, [moved]))


def _before_transpose(graph, outlet, perm, consumer):
    """The input of a Transpose(perm) that only `consumer` reads, or None."""
    node = graph.nodes[outlet.node]
    if isinstance(node.op, Transpose) and node.op.perm == perm \
            and graph.single_consumer(outlet) is consumer:
        return node.inputs[0]
    return None


def _movable_constant(graph, outlet, consumer, rank):
    """The operand's value at full rank, if it is a Const we may permute without
    duplicating a big tensor (only this node reads it, or it is small); else None."""
    node = graph.nodes[outlet.node]
    value = graph.const_value(outlet)
    if not isinstance(node.op, Const) or value is None or value.ndim > rank:
        return None
    readers = graph.consumers(outlet)
    if value.nbytes > FOLD_ALLOWANCE and (graph.is_output(outlet) or
                                          any(n is not consumer for n, _ in readers)):
        return None
    return value.reshape((1,) * (rank - value.ndim) + value.shape)


def _into_matmul_flag(graph, node):
    """A transpose whose last two axes are swapped, read by matmuls: the swap becomes
    their transpose flag, and what remains permutes only batch axes (so it can move
    down through the matmul). With a remainder, only when the matmul is the sole
    reader: other readers would keep the original transpose beside the new one."""
    perm = node.op.perm
    rank = len(perm)
    if rank < 2 or perm[-2:] != (rank - 1, rank - 2):
        return None
    rest = perm[:-2] + (rank - 2, rank - 1)
    source = node.inputs[0]
    if rest != tuple(range(rank)):
        single = graph.single_consumer(node.outlet())
        if single is None or not isinstance(single.op, MatMul):
            return None
    readers = {n.id: n for n, _ in graph.consumers(node.outlet()) if isinstance(n.op, MatMul)}
    if not readers:
        return None
    patch = Patch(graph, "transpose into matmul flag")
    if rest != tuple(range(rank)):
        source = patch.wire1(node.name, Transpose(rest), [source])
    for matmul in readers.values():
        inputs, flags = list(matmul.inputs), [matmul.op.transpose_a, matmul.op.transpose_b]
        for slot, outlet in enumerate(matmul.inputs):
            if outlet == node.outlet():
                inputs[slot], flags[slot] = source, not flags[slot]
        patch.shunt(matmul.outlet(), patch.wire1(matmul.name, MatMul(*flags), inputs))
    return patch


def _push_matmul(graph, transpose, consumer):
    """matmul(T(a), W) -> T(matmul(a, W)) when T keeps the two matrix axes in place and
    the other operand is a rank-2 matrix or the same transpose of its own input."""
    perm = transpose.op.perm
    rank = len(perm)
    if perm[-2:] != (rank - 2, rank - 1) or graph.fact(consumer.outlet()).rank != rank:
        return None
    inputs = []
    for outlet in consumer.inputs:
        source = _before_transpose(graph, outlet, perm, consumer)
        if source is not None:
            inputs.append(source)
        elif graph.fact(outlet).rank == 2:
            inputs.append(outlet)
        else:
            return None
    return _push(graph, transpose, consumer, consumer.op, inputs)


def _meets_transpose(graph, node):
    """Whether a transpose moved below `node` would reach another one, passing only
    through ops it can move through (so moving it is a step toward a cancellation)."""
    while True:
        consumer = graph.single_consumer(node.outlet())
        if consumer is None:
            return False
        if isinstance(consumer.op, Transpose):
            return True
        if isinstance(consumer.op, (Binary, MatMul)):
            return any(isinstance(graph.nodes[o.node].op, Transpose) for o in consumer.inputs)
        if not isinstance(consumer.op, ELEMENTWISE + AXES_OPS):
            return False
        node = consumer
