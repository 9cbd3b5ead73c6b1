"""Fold per-channel affine maps (what BatchNorm becomes) into the preceding conv.

conv(x, w, b) * s  ->  conv(x, w * s[o], b * s)     when s is constant, per output channel
conv(x, w, b) + t  ->  conv(x, w, b + t)            when t is constant, per output channel

Only when the conv output feeds nothing but that mul/add, so no other reader sees the
changed values. BatchNorm itself declutters to `mul` then `add` by such constants, so a
conv → BatchNorm pair ends up as one conv with new weights and bias.
"""
import numpy as np

from ..ir import Patch
from ..ops.conv import Conv
from ..ops.elementwise import Binary


def per_channel(value, out_fact):
    """The constant as a vector of O values if it only varies along axis 1, else None."""
    rank, channels = out_fact.rank, out_fact.shape[1]
    if value.ndim > rank:
        return None
    shape = (1,) * (rank - value.ndim) + value.shape
    if any(d != 1 for axis, d in enumerate(shape) if axis != 1):
        return None
    if shape[1] not in (1, channels):
        return None
    return np.broadcast_to(value.reshape(-1), (channels,)).astype(out_fact.dtype)


def fold_conv_affine(graph):
    """One sweep; returns the number of mul/add nodes folded."""
    folded = 0
    for node in graph.ordered_nodes():
        if node.id not in graph.nodes or not isinstance(node.op, Binary):
            continue
        if node.op.kind not in ("mul", "add"):
            continue
        x, c = node.inputs
        producer = graph.nodes[x.node]
        constant = graph.const_value(c)
        if not isinstance(producer.op, Conv) or constant is None:
            continue
        if graph.single_consumer(x) is not node:
            continue
        conv_fact = graph.fact(x)
        if graph.fact(node.outlet()).shape != conv_fact.shape:
            continue
        vector = per_channel(constant, conv_fact)
        weights = graph.const_value(producer.inputs[1])
        bias = graph.const_value(producer.inputs[2]) if len(producer.inputs) == 3 \
            else np.zeros(conv_fact.shape[1], conv_fact.dtype)
        if vector is None or weights is None or bias is None:
            continue
        bias = bias.reshape(-1)
        if node.op.kind == "mul":
            scale = vector.reshape((-1,) + (1,) * (weights.ndim - 1))
            weights, bias = (weights * scale).astype(weights.dtype), bias * vector
        else:
            bias = bias + vector
        patch = Patch(graph, f"fold {node.op.kind} into conv")
        w = patch.const(graph.nodes[producer.inputs[1].node].name, weights)
        b = patch.const(_bias_name(graph, producer), bias.astype(conv_fact.dtype))
        conv = patch.wire1(producer.name, producer.op, [producer.inputs[0], w, b])
        patch.shunt(node.outlet(), conv).apply()
        folded += 1
    return folded


def _bias_name(graph, conv):
    if len(conv.inputs) == 3:
        return graph.nodes[conv.inputs[2].node].name
    return conv.name + "_bias"
