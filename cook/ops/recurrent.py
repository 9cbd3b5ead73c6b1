"""Recurrent layers (ONNX LSTM, GRU, RNN): cook-only, evaluated step by step in numpy.

Inputs follow ONNX (layout 0): X [seq, batch, in], W [dirs, G·H, in], R [dirs, G·H, H],
B [dirs, 2·G·H], sequence_lens [batch], initial_h [dirs, batch, H], (LSTM) initial_c,
P [dirs, 3H]. Missing optional inputs are given as empty tuples in `present`. Outputs:
Y [seq, dirs, batch, H], Y_h [dirs, batch, H], (LSTM) Y_c.
"""
import copy

import numpy as np

from ..errors import ShapeError
from ..facts import Fact
from ..ir import Patch
from .base import Op

INPUTS = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
GATES = {"lstm": 4, "gru": 3, "rnn": 1}


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACTIVATIONS = {"sigmoid": _sigmoid, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0)}


class Recurrent(Op):
    def __init__(self, kind, hidden, directions, present, activations, clip=None,
                 linear_before_reset=False, input_forget=False):
        self.kind = kind
        self.hidden = int(hidden)
        self.directions = tuple(directions)           # ("forward",), ("reverse",), both
        self.present = tuple(present)                 # names of the inputs given, in order
        self.activations = tuple(activations)
        self.clip = clip
        self.linear_before_reset = bool(linear_before_reset)
        self.input_forget = bool(input_forget)

    @property
    def name(self):
        return self.kind.upper()

    def output_facts(self, inputs):
        if len(inputs) != len(self.present):
            raise ShapeError(f"expects inputs {list(self.present)}")
        x = inputs[0]
        if x.rank != 3:
            raise ShapeError(f"X {x} must be [seq, batch, input]")
        seq, batch = x.shape[:2]
        dirs = len(self.directions)
        state = Fact(x.datum_type, (dirs, batch, self.hidden))
        outputs = [Fact(x.datum_type, (seq, dirs, batch, self.hidden)), state]
        if self.kind == "lstm":
            outputs.append(state)
        return outputs

    def declutter(self, graph, node):
        """Drop an initial state, bias or peephole input that is all zeros: absent means
        zeros, and exporters size the zeros by the batch (a Broadcast the plan need not
        carry)."""
        for index, name in enumerate(self.present):
            if name in ("initial_h", "initial_c", "B", "P") and \
                    _all_zeros(graph, node.inputs[index]):
                op = copy.copy(self)
                op.present = self.present[:index] + self.present[index + 1:]
                patch = Patch(graph, f"drop zero {name}")
                inputs = node.inputs[:index] + node.inputs[index + 1:]
                new = patch.wire(node.name, op, inputs)
                for slot, outlet in enumerate(new):
                    patch.shunt(node.outlet(slot), outlet)
                return patch
        return None

    def eval(self, inputs):
        given = dict(zip(self.present, inputs))
        x = given["X"].astype(np.float64)
        seq, batch = x.shape[:2]
        hidden, gates = self.hidden, GATES[self.kind]
        dirs = len(self.directions)
        lens = given.get("sequence_lens")
        lens = np.full(batch, seq, np.int64) if lens is None else lens.astype(np.int64)
        y = np.zeros((seq, dirs, batch, hidden))
        y_h = np.zeros((dirs, batch, hidden))
        y_c = np.zeros((dirs, batch, hidden))
        per_dir = len(self.activations) // dirs
        for d, direction in enumerate(self.directions):
            w = given["W"][d].astype(np.float64)
            r = given["R"][d].astype(np.float64)
            b = given["B"][d].astype(np.float64) if "B" in given else \
                np.zeros(2 * gates * hidden)
            wb, rb = b[:gates * hidden], b[gates * hidden:]
            h = given["initial_h"][d].astype(np.float64) if "initial_h" in given else \
                np.zeros((batch, hidden))
            c = given["initial_c"][d].astype(np.float64) if "initial_c" in given else \
                np.zeros((batch, hidden))
            p = given["P"][d].astype(np.float64) if "P" in given else np.zeros(3 * hidden)
            f, g, hh = [ACTIVATIONS[a] for a in
                        (self.activations[d * per_dir:(d + 1) * per_dir] + ("tanh",) * 3)[:3]]
            steps = range(seq - 1, -1, -1) if direction == "reverse" else range(seq)
            for t in steps:
                # steps past an item's length leave its state alone (a reverse pass
                # thus starts at each item's own last step)
                active = (t < lens)[:, None]
                xt = x[t]
                projected = xt @ w.T + wb
                if self.kind == "lstm":
                    z = projected + h @ r.T + rb
                    z = self._clip(z)
                    i_, o_, f_, c_ = np.split(z, 4, axis=1)
                    i_ = f(i_ + p[:hidden] * c)
                    f_ = f(f_ + p[2 * hidden:] * c)
                    if self.input_forget:
                        f_ = 1 - i_
                    c_new = f_ * c + i_ * g(c_)
                    o_ = f(o_ + p[hidden:2 * hidden] * c_new)
                    h_new = o_ * hh(c_new)
                    c = np.where(active, c_new, c)
                elif self.kind == "gru":
                    xz, xr, xh = np.split(projected, 3, axis=1)
                    rz, rr, rh = np.split(r, 3, axis=0)
                    bz, br, bh = np.split(rb, 3)
                    z_ = f(self._clip(xz + h @ rz.T + bz))
                    r_ = f(self._clip(xr + h @ rr.T + br))
                    if self.linear_before_reset:
                        h_tilde = g(self._clip(xh + r_ * (h @ rh.T + bh)))
                    else:
                        h_tilde = g(self._clip(xh + (r_ * h) @ rh.T + bh))
                    h_new = (1 - z_) * h_tilde + z_ * h
                else:
                    h_new = f(self._clip(projected + h @ r.T + rb))
                h = np.where(active, h_new, h)
                y[t, d] = np.where(active, h_new, 0)
            y_h[d], y_c[d] = h, c
        dtype = given["X"].dtype
        outputs = [y.astype(dtype), y_h.astype(dtype)]
        if self.kind == "lstm":
            outputs.append(y_c.astype(dtype))
        return outputs

    def _clip(self, z):
        return z if self.clip is None else np.clip(z, -self.clip, self.clip)


def _all_zeros(graph, outlet):
    """A constant of zeros, possibly reshaped, sliced or broadcast (exporters size the
    zeros by a symbolic batch, and slice one zeros tensor into per-layer states)."""
    from .shape import Reshape, Slice, Squeeze, Transpose, Unsqueeze
    from .tensor import Broadcast
    moves = (Broadcast, Reshape, Slice, Squeeze, Transpose, Unsqueeze)
    while graph.fact(outlet).value is None:
        node = graph.nodes[outlet.node]
        if not isinstance(node.op, moves):
            return False
        outlet = node.inputs[0]
    return not np.any(graph.fact(outlet).value)
