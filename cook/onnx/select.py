"""Translators of ops whose output sizes depend on values: NonZero, Compress, Unique.

Constant inputs run while cooking (`wire_or_run`: the count is then known); otherwise
the op types with a fresh symbol for its count (see cook/ops/select.py).
"""
import numpy as np

from .. import dims
from ..ops.select import Compress, NonZero, Unique
from ..ops.shape import Gather, Reshape
from .registry import translator


@translator("NonZero", opsets="9+", types="all",
            notes="the count is a symbol decided at run time")
def nonzero(ctx):
    return ctx.wire_or_run(NonZero(ctx.fresh_symbol("count")), [ctx.input(0)])


@translator("Compress", opsets="9+", types="all",
            notes="a constant condition becomes a Gather; otherwise cook-only, the count "
                  "is a symbol decided at run time")
def compress(ctx):
    axis = ctx.attrs.int("axis", None)
    if axis is not None:
        axis = ctx.axis(axis, ctx.fact(0).rank)
    condition = ctx.target.fact(ctx.input(1)).value
    if condition is None:
        return ctx.wire_or_run(Compress(axis, ctx.fresh_symbol("count")),
                               [ctx.input(0), ctx.input(1)])
    source = ctx.input(0)
    if axis is None:
        source = ctx.wire(Reshape((dims.product(ctx.fact(0).shape),)), [source], "flat")
        axis = 0
    selected = np.nonzero(np.asarray(condition).reshape(-1).astype(bool))[0]
    return [ctx.wire(Gather(axis), [source, ctx.const(selected.astype(np.int64), "indices")])]


@translator("Unique", opsets="11+", types="all",
            notes="the count of unique values is a symbol decided at run time")
def unique(ctx):
    axis = ctx.attrs.int("axis", None)
    if axis is not None:
        axis = ctx.axis(axis, ctx.fact(0).rank)
    op = Unique(axis, ctx.attrs.int("sorted", 1), ctx.fresh_symbol("count"))
    return ctx.wire_or_run(op, [ctx.input(0)])
