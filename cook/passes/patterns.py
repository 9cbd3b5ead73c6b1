"""Fuse the subgraphs exporters spell out for common activations and normalisations:
GELU (erf and tanh forms), SiLU, HardSwish, ReLU6 and LayerNorm, each into one op.

The matchers read declutter's normal form: constants on the right of commutative ops,
sub/div by a constant turned into add/mul, affine constants merged ((e + 1) * 0.5 is
e * 0.5 + 0.5). Products are read as a whole (`product`), so the order and grouping of
factors does not matter, nor whether a constant is a scalar or a size-1 tensor of any
rank. A match is rewritten only when every value inside it feeds nothing outside it and
is no graph output, and when the fused op has the type of what it replaces.
"""
import math

from ..ir import Patch
from ..ops.elementwise import Activation, Binary, Clamp, Unary
from ..ops.nn import LayerNorm
from ..ops.reduce import Reduce
from ..ops.source import Const

SQRT1_2 = math.sqrt(0.5)
SQRT_2_PI = math.sqrt(2 / math.pi)
GELU_CUBIC = 0.044715
# Exporters write these constants rounded (f32, or a few digits): 0.7071, 1.4142…
REL_TOL = 1e-4


# -- matching helpers -------------------------------------------------------------------
def close(value, target):
    return value is not None and math.isclose(value, target, rel_tol=REL_TOL)


def producer(graph, outlet, cls, kind=None):
    """The node making `outlet` when its op is a `cls` (of `kind`), else None."""
    node = graph.nodes[outlet.node]
    if not isinstance(node.op, cls) or (kind is not None and node.op.kind != kind):
        return None
    return node


def scalar(graph, outlet):
    """The value of a one-element float constant (any rank) on `outlet`, else None."""
    value = graph.const_value(outlet)
    if value is None or value.size != 1 or value.dtype.kind != "f":
        return None
    return float(value.reshape(()))


def split_scalar(graph, node):
    """(other operand, c) for a binary node with one scalar constant operand c."""
    a, b = node.inputs
    for other, const in ((a, b), (b, a)):
        c = scalar(graph, const)
        if c is not None and scalar(graph, other) is None:
            return other, c
    return None, None


def product(graph, outlet, top=True):
    """(factors, k) with outlet = k * product(factors), k a float.

    Descends through mul nodes (and div by a scalar) whose output feeds only the product
    (the top outlet may have any readers): x*0.5*(1+e) and (x*(1+e))*0.5 read the same.
    """
    c = scalar(graph, outlet)
    if c is not None:
        return [], c
    node = graph.nodes[outlet.node]
    inner = top or graph.single_consumer(outlet) is not None
    if inner and producer(graph, outlet, Binary, "mul"):
        left, k_left = product(graph, node.inputs[0], False)
        right, k_right = product(graph, node.inputs[1], False)
        return left + right, k_left * k_right
    if inner and producer(graph, outlet, Binary, "div"):
        divisor = scalar(graph, node.inputs[1])
        if divisor:
            factors, k = product(graph, node.inputs[0], False)
            return factors, k / divisor
    return [outlet], 1.0


def scaled(graph, outlet):
    """(y, k) when outlet = k * y for one non-constant y, else (None, None)."""
    factors, k = product(graph, outlet)
    return (factors[0], k) if len(factors) == 1 else (None, None)


def pairs(items):
    """Both orders of a two-item list (commutative operands), nothing otherwise."""
    return [(items[0], items[1]), (items[1], items[0])] if len(items) == 2 else []


def one_plus(graph, outlet, kind):
    """(u, s) when outlet = s * (1 + u) with u the output of Unary(kind).

    Read from c + s*u with c == s: (1 + u) * 0.5 is normalised to u * 0.5 + 0.5.
    """
    add = producer(graph, outlet, Binary, "add")
    if add is None:
        return None, None
    rest, c = split_scalar(graph, add)
    u, s = scaled(graph, rest) if rest is not None else (None, None)
    if u is None or not close(c, s) or not producer(graph, u, Unary, kind):
        return None, None
    return u, s


def unary_input(graph, outlet, kind):
    node = producer(graph, outlet, Unary, kind)
    return node.inputs[0] if node else None


def interior_is_private(graph, root, leaves):
    """Whether the nodes between `leaves` (and constants) and `root` feed only each
    other and are no graph outputs: then the fused op replaces all of them."""
    inside, stack = set(), [root.id]
    while stack:
        node_id = stack.pop()
        if node_id in inside:
            continue
        inside.add(node_id)
        for outlet in graph.nodes[node_id].inputs:
            if outlet not in leaves and not isinstance(graph.nodes[outlet.node].op, Const):
                stack.append(outlet.node)
    for node_id in inside - {root.id}:
        for slot in range(len(graph.nodes[node_id].outputs)):
            outlet = graph.nodes[node_id].outlet(slot)
            if graph.is_output(outlet) or any(
                    user.id not in inside for user, _ in graph.consumers(outlet)):
                return False
    return True


def fuse(graph, root, op, inputs, reason):
    """A patch replacing `root` by `op(inputs)`, or None when the match is not private
    or the fused op would not have root's type (a constant that grew the shape)."""
    leaves = set(inputs)
    if not interior_is_private(graph, root, leaves):
        return None
    if not graph.fact(inputs[0]).same_type(graph.fact(root.outlet())):
        return None
    patch = Patch(graph, reason)
    return patch.shunt(root.outlet(), patch.wire1(root.name, op, inputs))


# -- activations ------------------------------------------------------------------------
def gelu(graph, node):
    """0.5 * x * (1 + erf(x / sqrt 2)), any grouping (torch legacy and dynamo exports)."""
    factors, k = product(graph, node.outlet())
    for x, gate in pairs(factors):
        u, s = one_plus(graph, gate, "erf")
        if u is None or not close(k * s, 0.5):
            continue
        argument, k_argument = scaled(graph, unary_input(graph, u, "erf"))
        if argument == x and close(k_argument, SQRT1_2):
            return fuse(graph, node, Unary("gelu"), [x], "gelu (erf form)")
    return None


def gelu_tanh(graph, node):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), x^3 as Pow or x*x*x."""
    factors, k = product(graph, node.outlet())
    for x, gate in pairs(factors):
        u, s = one_plus(graph, gate, "tanh")
        if u is None or not close(k * s, 0.5):
            continue
        inner, k_inner = scaled(graph, unary_input(graph, u, "tanh"))
        if inner is not None and close(k_inner, SQRT_2_PI) and _is_cubic(graph, inner, x):
            return fuse(graph, node, Unary("gelu_tanh"), [x], "gelu (tanh form)")
    return None


def _is_cubic(graph, outlet, x):
    """outlet = x + 0.044715 * x^3 (private products)."""
    add = producer(graph, outlet, Binary, "add")
    if add is None:
        return False
    for linear, cubic in pairs(add.inputs):
        factors, k = product(graph, cubic, top=False)
        if linear == x and close(k, GELU_CUBIC) and _is_cube(graph, factors, x):
            return True
    return False


def _is_cube(graph, factors, x):
    if factors == [x, x, x]:
        return True
    power = producer(graph, factors[0], Binary, "pow") if len(factors) == 1 else None
    return power is not None and power.inputs[0] == x and \
        scalar(graph, power.inputs[1]) == 3.0


def silu(graph, node):
    """x * sigmoid(x)."""
    factors, k = product(graph, node.outlet())
    for x, gate in pairs(factors):
        if k == 1.0 and unary_input(graph, gate, "sigmoid") == x:
            return fuse(graph, node, Unary("silu"), [x], "silu")
    return None


def hard_swish(graph, node):
    """x * hard_sigmoid(x) with alpha 1/6, beta 1/2, however the hard sigmoid is spelt:
    HardSigmoid, clamp(x/6 + 1/2, 0, 1), or relu6(x + 3) / 6 (= clamp(x + 3, 0, 6) / 6)."""
    factors, k = product(graph, node.outlet())
    for x, gate in pairs(factors):
        y, h = _hard_sigmoid(graph, gate)
        if y == x and close(k * h, 1.0):
            return fuse(graph, node, Unary("hard_swish"), [x], "hard swish")
    return None


def _hard_sigmoid(graph, outlet):
    """(x, h) when outlet = h * clamp(x/6 + 1/2, 0, 1), else (None, None)."""
    activation = producer(graph, outlet, Activation, "hard_sigmoid")
    if activation is not None:
        alpha, beta = activation.op.alpha, activation.op.beta
        return (activation.inputs[0], 1.0) if close(alpha, 1 / 6) and close(beta, 0.5) \
            else (None, None)
    clamp = producer(graph, outlet, Clamp)
    if clamp is None or clamp.op.low != 0.0 or not 0 < clamp.op.high < math.inf:
        return None, None
    # clamp(a*x + b, 0, h) = h * clamp(x/6 + 1/2, 0, 1) when a/h = 1/6 and b/h = 1/2
    h = clamp.op.high
    add = producer(graph, clamp.inputs[0], Binary, "add")
    rest, b = split_scalar(graph, add) if add is not None else (None, None)
    x, a = scaled(graph, rest) if rest is not None else (None, None)
    if x is None or not close(a / h, 1 / 6) or not close(b / h, 0.5):
        return None, None
    return x, h


def relu6(graph, node):
    """min(max(x, lo), hi) or max(min(x, hi), lo) as one Clamp (relu(x) read as
    max(x, 0)); with Clip(0, 6) imported as Clamp(0, 6), every ReLU6 ends as
    Clamp(0, 6), named Relu6."""
    found = _min_max_chain(graph, node)
    if found is None:
        return None
    x, low, high = found
    if not low <= high or not graph.fact(x).datum_type.is_float:
        return None
    return fuse(graph, node, Clamp(low, high), [x], "min/max chain is a clamp")


def _min_max_chain(graph, node):
    """(x, low, high) when node bounds x on both sides by scalar constants."""
    if producer(graph, node.outlet(), Unary, "relu"):
        outer_kind, inner_outlet, outer_bound = "max", node.inputs[0], 0.0
    elif isinstance(node.op, Binary) and node.op.kind in ("min", "max"):
        outer_kind = node.op.kind
        inner_outlet, outer_bound = split_scalar(graph, node)
    else:
        return None
    if inner_outlet is None:
        return None
    inner_kind = "max" if outer_kind == "min" else "min"
    x, inner_bound = unary_input(graph, inner_outlet, "relu"), 0.0
    if x is None or inner_kind != "max":
        inner = producer(graph, inner_outlet, Binary, inner_kind)
        x, inner_bound = split_scalar(graph, inner) if inner is not None else (None, None)
    if x is None:
        return None
    return (x, inner_bound, outer_bound) if outer_kind == "min" else \
        (x, outer_bound, inner_bound)


# -- layer normalisation ----------------------------------------------------------------
def layer_norm(graph, node):
    """(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps), over the same axes, the division
    also as * rsqrt(), * reciprocal(sqrt()) or * (1 / sqrt()); then * gamma and + beta
    by constants when they follow."""
    found = _normalized(graph, node)
    if found is None:
        return None
    x, axes, epsilon = found
    root, params = node, []
    for kind in ("mul", "add"):
        following = graph.single_consumer(root.outlet())
        if following is None or not producer(graph, following.outlet(), Binary, kind) or \
                not graph.fact(following.outlet()).same_type(graph.fact(root.outlet())):
            continue
        operand = [o for o in following.inputs if o != root.outlet()]
        if len(operand) == 1 and graph.const_value(operand[0]) is not None:
            root = following
            params.append((kind, operand[0]))
    kinds = [kind for kind, _ in params]
    op = LayerNorm(axes, epsilon, "mul" in kinds, "add" in kinds)
    return fuse(graph, root, op, [x] + [p for _, p in params], "layer norm")


def _normalized(graph, node):
    """(x, axes, eps) when `node` divides x - mean by the standard deviation."""
    if producer(graph, node.outlet(), Binary, "div"):
        centered, std = node.inputs
        return _centered_over_std(graph, centered, unary_input(graph, std, "sqrt"))
    if producer(graph, node.outlet(), Binary, "mul"):
        for centered, inv in pairs(node.inputs):
            found = _centered_over_std(graph, centered, _inv_std_argument(graph, inv))
            if found is not None:
                return found
    return None


def _inv_std_argument(graph, outlet):
    """v when outlet is 1/sqrt(v): rsqrt(v), reciprocal(sqrt(v)), 1 / sqrt(v),
    pow(v, -0.5)."""
    rsqrt = unary_input(graph, outlet, "rsqrt")
    if rsqrt is not None:
        return rsqrt
    reciprocal = unary_input(graph, outlet, "reciprocal")
    if reciprocal is not None:
        return unary_input(graph, reciprocal, "sqrt")
    div = producer(graph, outlet, Binary, "div")
    if div is not None and scalar(graph, div.inputs[0]) == 1.0:
        return unary_input(graph, div.inputs[1], "sqrt")
    power = producer(graph, outlet, Binary, "pow")
    if power is not None and scalar(graph, power.inputs[1]) == -0.5:
        return power.inputs[0]
    return None


def _centered_over_std(graph, centered, variance_eps):
    """(x, axes, eps) when centered = x - mean(x) and variance_eps = mean(centered^2) + eps."""
    if variance_eps is None:
        return None
    add = producer(graph, variance_eps, Binary, "add")
    var, epsilon = split_scalar(graph, add) if add is not None else (None, None)
    reduce_var = producer(graph, var, Reduce, "mean") if var is not None else None
    sub = producer(graph, centered, Binary, "sub")
    if reduce_var is None or sub is None or not epsilon > 0:
        return None
    x, mean = sub.inputs
    reduce_mean = producer(graph, mean, Reduce, "mean")
    if reduce_mean is None or reduce_mean.inputs[0] != x or \
            reduce_mean.op.axes != reduce_var.op.axes or \
            not _is_square(graph, reduce_var.inputs[0], centered):
        return None
    return x, reduce_mean.op.axes, epsilon


def _is_square(graph, outlet, of):
    square = producer(graph, outlet, Binary, "mul")
    if square is not None:
        return square.inputs == [of, of]
    power = producer(graph, outlet, Binary, "pow")
    return power is not None and power.inputs[0] == of and \
        scalar(graph, power.inputs[1]) == 2.0


# -- the pass ---------------------------------------------------------------------------
MATCHERS = (layer_norm, gelu, gelu_tanh, silu, hard_swish, relu6)


def fuse_patterns(graph):
    """One sweep in topological order; returns the number of fusions."""
    applied = 0
    for node in graph.ordered_nodes():
        if node.id not in graph.nodes or not isinstance(node.op, (Binary, Unary)):
            continue
        for match in MATCHERS:
            patch = match(graph, node)
            if patch is not None:
                patch.apply()
                applied += 1
                break
    return applied
