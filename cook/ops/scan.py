"""Scan (ONNX Scan, opset 9+): cook-only; the body is a TypedModel run once per
iteration with numpy (run_reference)."""
import numpy as np

from .. import dims
from ..errors import ShapeError
from ..facts import Fact
from .base import Op


class Scan(Op):
    """Inputs: states (n_states), scan inputs, then outer-scope values the body reads.
    Outputs: final states, then scan outputs stacked along their axes."""

    name = "Scan"

    def __init__(self, body, n_states, n_scan, in_axes, in_reverse, out_axes, out_reverse):
        self.body = body
        self.n_states = int(n_states)
        self.n_scan = int(n_scan)
        self.in_axes = tuple(in_axes)
        self.in_reverse = tuple(in_reverse)
        self.out_axes = tuple(out_axes)
        self.out_reverse = tuple(out_reverse)

    def output_facts(self, inputs):
        scan_inputs = inputs[self.n_states:self.n_states + self.n_scan]
        if not scan_inputs:
            raise ShapeError("Scan needs at least one scan input")
        first = scan_inputs[0]
        length = first.shape[self.in_axes[0] % first.rank]
        body_out = self.body.output_facts()
        facts = [f.without_value() for f in body_out[:self.n_states]]
        for index, fact in enumerate(body_out[self.n_states:]):
            axis = self.out_axes[index] % (fact.rank + 1)
            shape = list(fact.shape)
            shape.insert(axis, length)
            facts.append(Fact(fact.datum_type, shape))
        return facts

    def eval(self, inputs):
        states = list(inputs[:self.n_states])
        scans = inputs[self.n_states:self.n_states + self.n_scan]
        outer = list(inputs[self.n_states + self.n_scan:])
        axes = [a % x.ndim for a, x in zip(self.in_axes, scans)]
        length = scans[0].shape[axes[0]]
        collected = []
        for step in range(length):
            slices = [np.take(x, length - 1 - step if rev else step, axis=axis)
                      for x, axis, rev in zip(scans, axes, self.in_reverse)]
            results = self.body.run_reference(states + slices + outer)
            states = results[:self.n_states]
            collected.append(results[self.n_states:])
        outputs = list(states)
        for index, fact in enumerate(self.body.output_facts()[self.n_states:]):
            items = [c[index] for c in collected]
            if self.out_reverse[index]:
                items = items[::-1]
            axis = self.out_axes[index] % (fact.rank + 1)
            if items:
                outputs.append(np.stack(items, axis=axis))
            else:
                shape = [dims.to_int(d) for d in fact.shape]
                shape.insert(axis, 0)
                outputs.append(np.zeros(shape, fact.dtype))
        return outputs
