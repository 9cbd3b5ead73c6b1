"""Elementwise ops: unary maps, clamp, and numpy-broadcasting binary ops."""
import numpy as np

from .. import dims
from ..errors import ShapeError
from ..facts import Fact
from ..ir import Patch
from .base import Op, expect_inputs, f32


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype)


def _rsqrt(x):
    return (1.0 / np.sqrt(x)).astype(x.dtype)


UNARY_FUNCTIONS = {
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "abs": np.abs,
    "neg": np.negative,
    "copy": lambda x: x.copy(),
}

FLOAT_ONLY = {"sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt"}


class Unary(Op):
    """y = f(x) for f in UNARY_FUNCTIONS; written as the NNEF op of the same name."""

    foldable = True

    def __init__(self, kind):
        if kind not in UNARY_FUNCTIONS:
            raise ValueError(f"unknown unary op {kind!r}")
        self.kind = kind

    @property
    def name(self):
        return self.kind.capitalize()

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        if self.kind in FLOAT_ONLY and not inputs[0].datum_type.is_float:
            raise ShapeError(f"{self.kind} needs a float input")
        return [inputs[0].without_value()]

    def eval(self, inputs):
        x = inputs[0]
        return [np.asarray(UNARY_FUNCTIONS[self.kind](x)).astype(x.dtype, copy=False)]

    def declutter(self, graph, node):
        if self.kind == "copy":
            return Patch(graph, "remove copy").shunt(node.outlet(), node.inputs[0])
        return None

    def nnef_write(self, writer, node):
        writer.assign(node, f"{self.kind}({writer.ident(node.inputs[0])})")

    @classmethod
    def _nnef_reader(cls, kind):
        return lambda reader, inv: reader.wire(inv, cls(kind), [reader.outlet(inv.arg(0))])


Unary.NNEF_READERS = {kind: Unary._nnef_reader(kind) for kind in UNARY_FUNCTIONS}


class Clamp(Op):
    """y = min(max(x, low), high); a missing bound is ±inf."""

    name = "Clamp"

    def __init__(self, low=-np.inf, high=np.inf):
        self.low = f32(low)
        self.high = f32(high)

    def output_facts(self, inputs):
        expect_inputs(inputs, 1)
        return [inputs[0].without_value()]

    def eval(self, inputs):
        x = inputs[0]
        return [np.clip(x, self.low, self.high).astype(x.dtype)]

    def declutter(self, graph, node):
        if self.low == 0.0 and self.high == np.inf:
            patch = Patch(graph, "clamp(0, inf) is relu")
            return patch.shunt(node.outlet(), patch.wire1(node.name, Unary("relu"), node.inputs))
        if self.low == -np.inf and self.high == np.inf:
            return Patch(graph, "unbounded clamp").shunt(node.outlet(), node.inputs[0])
        return None

    def nnef_write(self, writer, node):
        x = writer.ident(node.inputs[0])
        rank = graph_rank(writer, node)
        if np.isfinite(self.low) and np.isfinite(self.high):
            writer.assign(node, f"clamp({x}, {writer.scalar(self.low)}, "
                                f"{writer.scalar(self.high)})")
        elif np.isfinite(self.low):
            writer.assign(node, f"max({x}, {writer.full_rank_scalar(self.low, rank)})")
        else:
            writer.assign(node, f"min({x}, {writer.full_rank_scalar(self.high, rank)})")

    @staticmethod
    def _read(reader, inv):
        low, high = inv.arg(1, "a"), inv.arg(2, "b")
        x = reader.outlet(inv.arg(0))
        if reader.is_scalar_literal(low) and reader.is_scalar_literal(high):
            return reader.wire(inv, Clamp(reader.scalar_value(low),
                                          reader.scalar_value(high)), [x])
        lowered = reader.wire(inv, Binary("max"), [x, reader.outlet(low)])
        return reader.wire(inv, Binary("min"), [lowered[0], reader.outlet(high)])


Clamp.NNEF_READERS = {"clamp": Clamp._read}


def graph_rank(writer, node):
    return writer.graph.fact(node.outlet()).rank


def _int_div(a, b):
    # ONNX integer division truncates toward zero
    return np.trunc(np.true_divide(a, b)).astype(a.dtype)


BINARY_FUNCTIONS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "min": np.minimum, "max": np.maximum, "pow": np.power,
}
COMMUTATIVE = {"add", "mul", "min", "max"}


class Binary(Op):
    """c = a (op) b with numpy broadcasting; both operands have the same datum type."""

    def __init__(self, kind):
        if kind not in BINARY_FUNCTIONS:
            raise ValueError(f"unknown binary op {kind!r}")
        self.kind = kind

    @property
    def name(self):
        return self.kind.capitalize()

    def output_facts(self, inputs):
        expect_inputs(inputs, 2)
        a, b = inputs
        if a.datum_type is not b.datum_type:
            raise ShapeError(f"operands have different datum types {a.datum_type} and "
                             f"{b.datum_type}")
        shape = dims.broadcast_shapes([a.shape, b.shape])
        if shape is None:
            raise ShapeError(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
        return [Fact(a.datum_type, shape)]

    def eval(self, inputs):
        a, b = inputs
        if self.kind == "div" and a.dtype.kind in "iu":
            return [_int_div(a, b)]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return [np.asarray(BINARY_FUNCTIONS[self.kind](a, b)).astype(a.dtype, copy=False)]

    # -- rewrites -------------------------------------------------------------------
    def declutter(self, graph, node):
        a, b = node.inputs
        fa, fb, out = graph.fact(a), graph.fact(b), graph.fact(node.outlet())
        if self.kind in COMMUTATIVE and fa.is_const and not fb.is_const:
            patch = Patch(graph, "constant operand on the right")
            return patch.shunt(node.outlet(), patch.wire1(node.name, self, [b, a]))
        if not fb.is_const or fa.is_const:
            return None
        value = fb.value
        is_float = fa.datum_type.is_float
        keeps_shape = out.shape == fa.shape
        if self.kind == "sub" and is_float:
            return self._replace(graph, node, "add", -value, "sub by constant is add")
        if self.kind == "div" and is_float:
            with np.errstate(divide="ignore"):
                reciprocal = (np.ones((), value.dtype) / value).astype(value.dtype)
            return self._replace(graph, node, "mul", reciprocal, "div by constant is mul")
        neutral = {"add": 0, "mul": 1}.get(self.kind)
        if neutral is not None and keeps_shape and np.all(value == neutral):
            return Patch(graph, f"{self.kind} by neutral").shunt(node.outlet(), a)
        if self.kind == "max" and keeps_shape and np.all(value == 0) and is_float:
            patch = Patch(graph, "max(x, 0) is relu")
            return patch.shunt(node.outlet(), patch.wire1(node.name, Unary("relu"), [a]))
        if self.kind in ("add", "mul"):
            return self._merge_affine(graph, node)
        return None

    def _replace(self, graph, node, kind, value, reason):
        patch = Patch(graph, reason)
        const = patch.const(node.name + "_" + kind, value)
        return patch.shunt(node.outlet(), patch.wire1(node.name, Binary(kind), [node.inputs[0],
                                                                                const]))

    def _merge_affine(self, graph, node):
        """x*a*b -> x*(ab); x+a+b -> x+(a+b); (x+a)*b -> x*b + a*b.

        Only when the inner node feeds nothing else and the merged constants do not
        grow the shape of x (they broadcast into it).
        """
        inner = graph.nodes[node.inputs[0].node]
        if not isinstance(inner.op, Binary) or inner.op.kind not in ("add", "mul"):
            return None
        if graph.single_consumer(node.inputs[0]) is not node:
            return None
        x, inner_const = inner.inputs
        fx, fi = graph.fact(x), graph.fact(inner_const)
        outer_value = graph.fact(node.inputs[1]).value
        if not fi.is_const or fx.is_const or not fx.datum_type.is_float:
            return None
        if graph.fact(node.outlet()).shape != fx.shape:
            return None
        merged_shape = dims.broadcast_shapes([fi.shape, outer_value.shape])
        if merged_shape is None or dims.broadcast_shapes([fx.shape, merged_shape]) != fx.shape:
            return None
        patch = Patch(graph, "merge affine constants")
        if inner.op.kind == self.kind:
            fold = BINARY_FUNCTIONS[self.kind](fi.value, outer_value).astype(fx.dtype)
            const = patch.const(node.name + "_merged", fold)
            return patch.shunt(node.outlet(), patch.wire1(node.name, self, [x, const]))
        if inner.op.kind == "add" and self.kind == "mul":
            scale = patch.const(node.name + "_scale", outer_value)
            shift = patch.const(node.name + "_shift", (fi.value * outer_value).astype(fx.dtype))
            scaled = patch.wire1(node.name + "_mul", Binary("mul"), [x, scale])
            return patch.shunt(node.outlet(), patch.wire1(node.name, Binary("add"),
                                                          [scaled, shift]))
        return None

    def nnef_write(self, writer, node):
        rank = graph_rank(writer, node)
        a = writer.operand(node.inputs[0], rank)
        b = writer.operand(node.inputs[1], rank)
        writer.assign(node, f"{self.kind}({a}, {b})")

    @classmethod
    def _nnef_reader(cls, kind):
        def read(reader, inv):
            a, b = reader.outlet(inv.arg(0, "x")), reader.outlet(inv.arg(1, "y"))
            a, b = reader.same_type(a, b)
            return reader.wire(inv, cls(kind), [a, b])
        return read


Binary.NNEF_READERS = {kind: Binary._nnef_reader(kind) for kind in BINARY_FUNCTIONS}
