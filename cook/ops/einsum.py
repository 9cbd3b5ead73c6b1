"""Einsum: typed and evaluated by numpy, written as plan ops (`decompose`).

The lowering works on one operand, then folds the operands pairwise, left to right:
- a label repeated in one operand takes the diagonal (the two axes moved last, merged,
  and sliced with a stride of n + 1: exact, no mask multiply);
- a label no other operand and not the output has is summed out;
- two operands contract over their shared labels the output lacks: in f32 by a batched
  matmul (transposed and reshaped to [batch, M, K] × [batch, K, N]), in other types by
  a broadcast multiply and a sum (the runtime's matmul computes in f32);
- the result is transposed to the output's order.
"""
import numpy as np

from .. import dims
from ..errors import ShapeError, UnsupportedOp
from ..facts import Fact
from .base import Op


class Einsum(Op):
    name = "Einsum"

    def __init__(self, equation):
        self.equation = equation.replace(" ", "")

    def output_facts(self, inputs):
        # typed by evaluating on zero-strided dummies of the right shapes
        if not all(all(dims.is_concrete(d) for d in f.shape) for f in inputs):
            raise ShapeError("einsum on symbolic shapes is not supported yet")
        dummies = [np.broadcast_to(np.zeros((), f.dtype if f.dtype.kind != "V" else np.float64),
                                   f.shape) for f in inputs]
        try:
            shape = np.einsum(self.equation, *dummies).shape
        except ValueError as error:
            raise ShapeError(f"einsum {self.equation!r}: {error}") from None
        return [Fact(inputs[0].datum_type, shape)]

    def eval(self, inputs):
        wide = [x.astype(np.float64) if x.dtype.kind == "V" else x for x in inputs]
        return [np.asarray(np.einsum(self.equation, *wide)).astype(inputs[0].dtype)]

    def labels(self, shapes):
        """(per-operand label strings, output labels), '...' spelled as fresh capitals."""
        lhs, _, rhs = self.equation.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(shapes):
            raise UnsupportedOp(f"einsum {self.equation!r} names {len(terms)} operands")
        ellipsis = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                        if "..." in t), default=0)
        fresh = "".join(chr(ord("A") + i) for i in range(ellipsis))
        spelled = []
        for term, shape in zip(terms, shapes):
            if "..." in term:
                count = len(shape) - len(term.replace("...", ""))
                term = term.replace("...", fresh[ellipsis - count:])
            if len(term) != len(shape):
                raise UnsupportedOp(f"einsum term {term!r} for a rank {len(shape)} operand")
            spelled.append(term)
        if "->" in self.equation:
            output = rhs.replace("...", fresh)
        else:                     # implicit: the broadcast labels, then the others once
            letters = "".join(spelled)
            output = fresh + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                            and c not in fresh))
        return spelled, output

    def decompose(self, patch, name, inputs):
        shapes = [tuple(dims.to_int(d) for d in patch.graph.fact(o).shape) for o in inputs]
        terms, output = self.labels(shapes)
        lowering = _Lowering(patch, name, patch.graph.fact(inputs[0]).datum_type.name == "f32")
        operands = [lowering.single(o, t, output, terms[:i] + terms[i + 1:])
                    for i, (o, t) in enumerate(zip(inputs, terms))]
        current, labels = operands[0]
        for index, (other, other_labels) in enumerate(operands[1:], start=1):
            later = "".join(terms[index + 1:])
            current, labels = lowering.pair(current, labels, other, other_labels,
                                            output + later)
        return [lowering.arrange(current, labels, output, final=True)]


class _Lowering:
    def __init__(self, patch, name, matmul):
        self.patch, self.name, self.matmul = patch, name, matmul
        self.count = 0

    def wire(self, op, inputs, final=False):
        self.count += 1
        name = self.name if final else f"{self.name}_{self.count}"
        return self.patch.wire1(name, op, inputs)

    def shape(self, outlet):
        return [dims.to_int(d) for d in self.patch.graph.fact(outlet).shape]

    def single(self, outlet, labels, output, others):
        """One operand with its diagonals taken and its private labels summed out."""
        from .reduce import Reduce
        from .shape import Reshape, Slice, Squeeze, Transpose
        while len(set(labels)) < len(labels):
            label = next(c for c in labels if labels.count(c) > 1)
            first = labels.index(label)
            second = labels.index(label, first + 1)
            rest = [i for i in range(len(labels)) if i not in (first, second)]
            moved = self.wire(Transpose(rest + [first, second]), [outlet])
            shape = self.shape(moved)
            n = shape[-1]
            if shape[-2] != n:
                raise ShapeError(f"einsum label {label!r} spans dims {shape[-2]} and {n}")
            flat = self.wire(Reshape(shape[:-2] + [n * n]), [moved])
            outlet = self.wire(Slice([len(shape) - 2], [0], [n * n], [n + 1]), [flat])
            labels = "".join(labels[i] for i in rest) + label
        private = [i for i, c in enumerate(labels)
                   if c not in output and not any(c in t for t in others)]
        if private:
            summed = self.wire(Reduce("sum", private), [outlet])
            outlet = self.wire(Squeeze(private), [summed])
            labels = "".join(c for i, c in enumerate(labels) if i not in private)
        return outlet, labels

    def arrange(self, outlet, labels, order, final=False):
        """The operand transposed to the labels of `order` (each present once)."""
        from .shape import Transpose
        from .elementwise import Unary
        perm = [labels.index(c) for c in order]
        if perm == list(range(len(labels))):
            return self.wire(Unary("copy"), [outlet], final) if final else outlet
        return self.wire(Transpose(perm), [outlet], final)

    def pair(self, a, a_labels, b, b_labels, keep):
        """Two operands as one: shared labels `keep` lacks are contracted."""
        from .elementwise import Binary
        from .matmul import MatMul
        from .reduce import Reduce
        from .shape import Reshape, Squeeze, Unsqueeze
        shared = [c for c in a_labels if c in b_labels]
        contracted = "".join(c for c in shared if c not in keep)
        batch = "".join(c for c in shared if c in keep)
        a_only = "".join(c for c in a_labels if c not in b_labels)
        b_only = "".join(c for c in b_labels if c not in a_labels)
        size = dict(zip(a_labels, self.shape(a)))
        size.update(zip(b_labels, self.shape(b)))
        if self.matmul:
            left = self.arrange(a, a_labels, batch + a_only + contracted)
            right = self.arrange(b, b_labels, batch + contracted + b_only)
            total = lambda ls: int(np.prod([size[c] for c in ls]))   # noqa: E731
            left = self.wire(Reshape([total(batch), total(a_only), total(contracted)]), [left])
            right = self.wire(Reshape([total(batch), total(contracted), total(b_only)]),
                              [right])
            product = self.wire(MatMul(), [left, right])
            labels = batch + a_only + b_only
            return self.wire(Reshape([size[c] for c in labels]), [product]), labels
        # multiply in the type, broadcast over [batch, a_only, b_only, contracted]
        labels = batch + a_only + b_only + contracted
        left = self.arrange(a, a_labels, batch + a_only + contracted)
        left = self.wire(Unsqueeze(list(range(len(batch + a_only),
                                              len(batch + a_only + b_only)))), [left]) \
            if b_only else left
        right = self.arrange(b, b_labels, batch + b_only + contracted)
        right = self.wire(Unsqueeze(list(range(len(batch), len(batch + a_only)))), [right]) \
            if a_only else right
        product = self.wire(Binary("mul"), [left, right])
        if not contracted:
            return product, labels
        axes = list(range(len(labels) - len(contracted), len(labels)))
        summed = self.wire(Reduce("sum", axes), [product])
        return self.wire(Squeeze(axes), [summed]), batch + a_only + b_only
