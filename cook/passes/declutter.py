"""The declutter fixpoint: run the passes until none changes the graph.

Order inside one round: constant folding first, within a memory budget (so the rewrites
see constants as Const nodes), then the per-op rewrites (BatchNorm → mul + add, sub/div
by constants → add/mul, merged affine chains, identity removal, Clip → relu …), then the
fused patterns (GELU, SiLU, HardSwish, ReLU6, LayerNorm), then folding affine maps into
convolutions, then moving transposes down until they cancel. Every pass returns how many
rewrites it applied; the round repeats while any did.
"""
from ..errors import CookError
from .fold_batchnorm import fold_conv_affine
from .fold_constants import fold_constants
from .patterns import fuse_patterns
from .simplify import simplify
from .transposes import transposes

PASSES = [
    ("fold_constants", fold_constants),
    ("simplify", simplify),
    ("patterns", fuse_patterns),
    ("fold_conv_affine", fold_conv_affine),
    ("transposes", transposes),
]

MAX_ROUNDS = 100


def declutter(graph, passes=None):
    """Rewrite `graph` in place to the normal form; returns {pass name: rewrites applied}."""
    passes = PASSES if passes is None else passes
    counts = {name: 0 for name, _ in passes}
    graph.prune()
    for _ in range(MAX_ROUNDS):
        changed = 0
        for name, run in passes:
            applied = run(graph)
            counts[name] += applied
            changed += applied
        if not changed:
            graph.compact()
            return counts
    raise CookError(f"declutter did not reach a fixpoint in {MAX_ROUNDS} rounds: {counts}")
