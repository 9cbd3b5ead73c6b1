"""Every runtime op against numpy, on hand-written plans with random inputs of odd sizes.

Each test writes a plan directory (graph.nnef + .dat files), runs it through the C
runtime and compares with a numpy computation written here from docs/plan-format.md.
The runtime is reached through the bindings (ember.runtime) when they are installed,
else through build/host/ember-run and .npy files — the same C code either way.
EMBER_RUN=<command> forces the ember-run path with that program (a sanitizer build, or a
wrapper that runs a cross-built ember-run under QEMU).
"""
import importlib.util
import itertools
import math
import os
import subprocess
import tempfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMBER_RUN = os.environ.get("EMBER_RUN", os.path.join(ROOT, "build", "host", "ember-run"))
RTOL, ATOL = 1e-4, 1e-5

try:
    from ember.cook.nnef import dat
except ImportError:  # the package is not installed: read the module from the tree
    _spec = importlib.util.spec_from_file_location("dat", os.path.join(ROOT, "cook", "nnef", "dat.py"))
    dat = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(dat)

try:
    import ember.runtime as rt
except ImportError:
    rt = None
if "EMBER_RUN" in os.environ:
    rt = None

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------- plans and running

_NNEF_TYPES = {np.dtype(np.float32): "scalar", np.dtype(np.int64): "integer",
               np.dtype(np.bool_): "logical"}


def write_plan(directory, inputs, body, outputs, variables=None):
    """inputs: {name: array} (their facts become externals); variables: {label: array};
    body: NNEF assignments, one string each; outputs: names."""
    variables = variables or {}
    lines = ["version 1.0;", "",
             f"graph network({', '.join(inputs)}) -> ({', '.join(outputs)})", "{"]
    for name, array in inputs.items():
        kind = _NNEF_TYPES[array.dtype]
        lines.append(f"  {name} = external<{kind}>(shape = {list(array.shape)});")
    for label, array in variables.items():
        lines.append(f'  {label.replace("/", "_")} = variable<scalar>(label = "{label}", '
                     f"shape = {list(array.shape)});")
        path = os.path.join(directory, label + ".dat")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(dat.to_bytes(array))
    lines += ["  " + line for line in body] + ["}", ""]
    with open(os.path.join(directory, "graph.nnef"), "w") as f:
        f.write("\n".join(lines))


def run_directory(directory, inputs):
    if rt is not None:
        return rt.load_model(directory).into_runnable().run(list(inputs))
    assert os.path.exists(EMBER_RUN), "build/host/ember-run is missing: run scons"
    command = [EMBER_RUN, directory]
    for i, x in enumerate(inputs):
        path = os.path.join(directory, f"input{i}.npy")
        np.save(path, x)
        command += ["-i", path]
    outputs = []
    count = open(os.path.join(directory, "graph.nnef")).read().split("->")[1].split(")")[0]
    n_outputs = len([name for name in count.strip(" (").split(",") if name.strip()])
    for i in range(n_outputs):
        command += ["-o", os.path.join(directory, f"output{i}.npy")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip())
    return [np.load(os.path.join(directory, f"output{i}.npy")) for i in range(n_outputs)]


def run(inputs, body, outputs=("y",), variables=None):
    with tempfile.TemporaryDirectory() as directory:
        write_plan(directory, inputs, body, outputs, variables)
        return run_directory(directory, inputs.values())


def check(inputs, body, expected, variables=None):
    (got,) = run(inputs, body, ("y",), variables)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.dtype == np.float32:
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    else:
        np.testing.assert_array_equal(got, expected)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def nnef_list(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def nnef_padding(pads):
    return "[" + ", ".join(f"({a}, {b})" for a, b in pads) + "]"


def ref_conv(x, w, b, pads, stride, dilation, groups):
    """Direct N-d convolution: one shifted, strided slice of the padded input per tap."""
    spatial = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(pads))
    k = w.shape[2:]
    out = [(xp.shape[2 + d] - ((k[d] - 1) * dilation[d] + 1)) // stride[d] + 1
           for d in range(spatial)]
    n, c = x.shape[:2]
    o = w.shape[0]
    y = np.zeros((n, o, *out))
    cg, og = c // groups, o // groups
    for tap in itertools.product(*[range(e) for e in k]):
        window = tuple(slice(tap[d] * dilation[d],
                             tap[d] * dilation[d] + (out[d] - 1) * stride[d] + 1, stride[d])
                       for d in range(spatial))
        xs = xp[(slice(None), slice(None)) + window]
        for g in range(groups):
            wg = w[g * og:(g + 1) * og, :, *tap].astype(np.float64)
            y[:, g * og:(g + 1) * og] += np.einsum("oc,nc...->no...", wg,
                                                   xs[:, g * cg:(g + 1) * cg])
    b = np.asarray(b, np.float64).reshape(-1)
    y += b.reshape((1, -1) + (1,) * spatial) if b.size > 1 else b[0]
    return y.astype(np.float32)


def same_padding(size, k, stride, dilation):
    pads = []
    for d in range(len(size)):
        out = -(-size[d] // stride[d])
        total = max(0, (out - 1) * stride[d] + (k[d] - 1) * dilation[d] + 1 - size[d])
        pads.append((total // 2, total - total // 2))
    return pads


# ---------------------------------------------------------------- elementwise

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "min": np.minimum, "max": np.maximum, "pow": np.power}
BROADCASTS = [((3, 5, 7), (3, 5, 7)), ((3, 1, 7), (5, 1)), ((2, 3, 4, 5), (1, 3, 1, 1)),
              ((7,), (2, 3, 7)), ((1, 1), (9, 1, 13)), ((1,), (4, 3))]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_binary(op, shapes):
    a, b = rand(*shapes[0]), rand(*shapes[1])
    if op == "pow":
        a = np.abs(a) + 0.5
    if op == "div":
        b = np.sign(b) * (np.abs(b) + 0.5)
    check({"a": a, "b": b}, [f"y = {op}(a, b);"], BINARY[op](a, b).astype(np.float32))


def test_binary_rank0_variable(op="mul"):
    a, k = rand(4, 3), np.array(0.75, np.float32)
    check({"a": a}, ["y = mul(k, a);"], k * a, {"k": k})


@pytest.mark.parametrize("op", ["add", "mul", "max", "sub"])
def test_binary_with_literal_and_variable(op):
    a, w = rand(2, 5, 3), rand(5, 1)
    expected = BINARY[op](BINARY[op](a, np.float32(0.25)), w)
    check({"a": a}, [f"t = {op}(a, 0.25);", f"y = {op}(t, w);"], expected, {"w": w})


UNARY = {
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "abs": np.abs, "neg": np.negative, "copy": np.copy,
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    x = rand(3, 17, 5, low=-4, high=4)
    if op in ("log", "sqrt", "rsqrt"):
        x = np.abs(x) + 0.1
    check({"x": x}, [f"y = {op}(x);"], UNARY[op](x).astype(np.float32))


def test_copy_keeps_integer_type():
    x = RNG.integers(-100, 100, size=(3, 4)).astype(np.int64)
    check({"x": x}, ["y = copy(x);"], x)


def test_clamp_scalar_and_tensor_bounds():
    x, lo, hi = rand(2, 3, 11, low=-3, high=3), rand(3, 1, low=-1, high=0), rand(11, low=0, high=1)
    check({"x": x}, ["y = clamp(x, -0.5, 0.75);"], np.clip(x, -0.5, 0.75))
    check({"x": x, "lo": lo, "hi": hi}, ["y = clamp(x, lo, hi);"],
          np.minimum(np.maximum(x, lo), hi))


# ---------------------------------------------------------------- matmul

MATMUL_CASES = [
    ((3, 5), (5, 7), False, False), ((5, 3), (5, 7), True, False),
    ((3, 5), (7, 5), False, True), ((5, 3), (7, 5), True, True),
    ((2, 13, 17), (17, 19), False, False), ((4, 1, 6, 9), (3, 9, 5), False, False),
    ((1, 33, 70), (2, 21, 70), False, True), ((2, 3, 8, 4), (2, 3, 4, 6), False, False),
]


@pytest.mark.parametrize("constant", ["none", "a", "b"])
@pytest.mark.parametrize("a_shape,b_shape,ta,tb", MATMUL_CASES, ids=str)
def test_matmul(a_shape, b_shape, ta, tb, constant):
    a, b = rand(*a_shape), rand(*b_shape)
    at = np.swapaxes(a, -1, -2) if ta else a
    bt = np.swapaxes(b, -1, -2) if tb else b
    expected = np.matmul(at, bt)
    inputs = {"a": a, "b": b}
    variables = {}
    if constant != "none":
        variables[constant] = inputs.pop(constant)
    check(inputs, [f"y = matmul(a, b, transposeA = {str(ta).lower()}, "
                   f"transposeB = {str(tb).lower()});"], expected, variables)


@pytest.mark.parametrize("tb", [False, True])
def test_matmul_constant_b_packed_in_slabs(tb):
    """A constant B past matmul's 1 MB packing slab (blocks of rows of a [K, N] B, of
    panels of a transposed one; N not a multiple of any nr), one matrix and two."""
    a, b = rand(2, 3, 700), rand(2, 700, 1003)
    for a_used, b_used in ((a[0], b[0]), (a, b)):
        stored = np.swapaxes(b_used, -1, -2).copy() if tb else b_used
        (got,) = run({"a": a_used}, [f"y = matmul(a, b, transposeB = {str(tb).lower()});"],
                     ("y",), {"b": stored})
        # 700-term float32 sums: against the exact sums, within a bound that scales with
        # them (a float32 reference differs from any other summation order by ~1e-5)
        exact = np.matmul(a_used.astype(np.float64), b_used.astype(np.float64))
        bound = 2e-6 * np.matmul(np.abs(a_used), np.abs(b_used)).astype(np.float64)
        assert got.shape == exact.shape and (np.abs(got - exact) <= bound).all()


def test_matmul_add_clamp_fused():
    a, w, bias = rand(2, 7, 33), rand(33, 10), rand(10)
    expected = np.clip(a @ w + bias, -0.3, 0.4)
    check({"a": a}, ["m = matmul(a, w);", "s = add(m, bias);", "y = clamp(s, -0.3, 0.4);"],
          expected, {"w": w, "bias": bias})


def test_matmul_row_bias_fused():
    a, w, bias = rand(5, 12), rand(12, 9), rand(5, 1)
    check({"a": a}, ["m = matmul(a, w);", "y = add(bias, m);"], a @ w + bias,
          {"w": w, "bias": bias})


# ---------------------------------------------------------------- pool reference

# (the pool cases: test_ops_pool.py; the reference stays here for test_small_cnn too)
def ref_pool(x, size, pads, stride, dilation, kind, border):
    out_shape = [(x.shape[d] + pads[d][0] + pads[d][1] - ((size[d] - 1) * dilation[d] + 1))
                 // stride[d] + 1 for d in range(x.ndim)]
    y = np.zeros(out_shape, np.float64)
    for index in itertools.product(*[range(n) for n in out_shape]):
        values = []
        for cell in itertools.product(*[range(s) for s in size]):
            i = [index[d] * stride[d] - pads[d][0] + cell[d] * dilation[d] for d in range(x.ndim)]
            if all(0 <= i[d] < x.shape[d] for d in range(x.ndim)):
                values.append(x[tuple(i)])
        if kind == "max":
            y[index] = max(values) if values else -np.inf
        elif kind == "sum":
            y[index] = sum(values)
        else:
            divisor = len(values) if border == "ignore" else np.prod(size)
            y[index] = sum(values) / divisor
    return y.astype(np.float32)


# ---------------------------------------------------------------- reductions, LRN, softmax

@pytest.mark.parametrize("op", ["sum_reduce", "mean_reduce", "max_reduce"])
@pytest.mark.parametrize("axes", [[1], [0, 2], [3], [1, 2, 3], [0, 1, 2, 3]], ids=str)
def test_reduce(op, axes):
    x = rand(3, 5, 7, 4)
    fn = {"sum_reduce": np.sum, "mean_reduce": np.mean, "max_reduce": np.max}[op]
    check({"x": x}, [f"y = {op}(x, axes = {nnef_list(axes)});"],
          fn(x.astype(np.float64), axis=tuple(axes), keepdims=True).astype(np.float32))


def test_sum_reduce_normalize():
    x = rand(4, 6, 5)
    check({"x": x}, ["y = sum_reduce(x, axes = [1], normalize = true);"],
          x.mean(axis=1, keepdims=True))


@pytest.mark.parametrize("size", [[1, 5, 1, 1], [1, 3, 3, 1], [1, 2, 1, 1]], ids=str)
@pytest.mark.parametrize("alpha, beta", [(0.0003, 0.75), (0.7, 0.5), (2.0, 0.6)])
def test_local_response_normalization(size, alpha, beta):
    """Channel windows take a fast path (β 0.75 and 0.5 by square roots, others by powf),
    other windows the generic loop."""
    x = rand(2, 9, 5, 6)
    bias = 1.5
    x64 = x.astype(np.float64)
    sums = np.zeros_like(x64)
    for index in itertools.product(*[range(n) for n in x.shape]):
        lo = [max(0, index[d] - (size[d] - 1) // 2) for d in range(4)]
        hi = [min(x.shape[d], index[d] - (size[d] - 1) // 2 + size[d]) for d in range(4)]
        sums[index] = np.sum(x64[tuple(slice(a, b) for a, b in zip(lo, hi))] ** 2)
    expected = (x64 / (bias + alpha / np.prod(size) * sums) ** beta).astype(np.float32)
    check({"x": x}, [f"y = local_response_normalization(x, size = {nnef_list(size)}, "
                     f"alpha = {alpha}, beta = {beta}, bias = {bias});"], expected)


def softmax_of(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axes", [[1], [2], [1, 2], [0, 3], None, [3], [2, 3], [3, 2]],
                         ids=str)
def test_softmax(axes):
    """Innermost axes ([3], [2, 3] in either order) take the contiguous-row path."""
    x = rand(3, 7, 5, 4, low=-5, high=5)
    attr = "" if axes is None else f", axes = {nnef_list(axes)}"
    check({"x": x}, [f"y = softmax(x{attr});"], softmax_of(x, tuple(axes or [1])))


@pytest.mark.parametrize("length", [1, 8, 37, 300])
def test_softmax_rows(length):
    """Contiguous rows across the eight max / sum lanes and their tail; large values
    (exp would overflow without the max) and -inf members (exp 0)."""
    x = rand(6, length, low=-30, high=30)
    x[1] += 500.0
    x[2, 1::3] = -np.inf
    check({"x": x}, ["y = softmax(x, axes = [1]);"], softmax_of(x.astype(np.float64), 1)
          .astype(np.float32))


def test_softmax_row_with_nan_is_nan():
    x = rand(2, 19)
    x[0, 11] = np.nan
    (got,) = run({"x": x}, ["y = softmax(x, axes = [1]);"], ("y",))
    assert np.isnan(got[0]).all()
    np.testing.assert_allclose(got[1], softmax_of(x[1:], 1)[0], rtol=RTOL, atol=ATOL)


def test_erf():
    """tract_onnx_erf through the CPU's vectorised kernel, within about 1 ulp of erf."""
    x = np.concatenate([np.linspace(-6, 6, 1001), [0.0, -0.0, 1e-30, np.inf, -np.inf]])
    x = x.astype(np.float32)
    expected = np.array([math.erf(v) for v in x.astype(np.float64)], np.float32)
    check({"x": x}, ["y = tract_onnx_erf(x);"], expected)


# ---------------------------------------------------------------- shape ops

def test_reshape_variants():
    x = rand(2, 3, 4, 5)
    check({"x": x}, ["y = reshape(x, shape = [6, -1]);"], x.reshape(6, -1))
    check({"x": x}, ["y = reshape(x, shape = [0, 0, 20]);"], x.reshape(2, 3, 20))
    check({"x": x}, ["y = reshape(x, shape = [12], axis_start = 1, axis_count = 2);"],
          x.reshape(2, 12, 5))
    check({"x": x}, ["y = reshape(x, shape = [-1, 1], axis_start = 3, axis_count = 1);"],
          x.reshape(2, 3, 4, 5, 1))


def test_reshape_then_compute_and_output_view():
    x = rand(2, 6)
    outs = run({"x": x}, ["r = reshape(x, shape = [3, 4]);", "y = relu(r);"], ("r", "y"))
    np.testing.assert_array_equal(outs[0], x.reshape(3, 4))
    np.testing.assert_array_equal(outs[1], np.maximum(x.reshape(3, 4), 0))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_transpose(dtype):
    x = (rand(2, 3, 4, 5) * 100).astype(dtype)
    check({"x": x}, ["y = transpose(x, axes = [3, 1, 0, 2]);"], x.transpose(3, 1, 0, 2))
    check({"x": x}, ["y = transpose(x, axes = [1, 0]);"], x.transpose(1, 0, 2, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concat(dtype, axis):
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for i, s in enumerate(shapes):
        s[axis] = i + 1
    xs = [(rand(*s) * 100).astype(dtype) for s in shapes]
    inputs = {f"x{i}": x for i, x in enumerate(xs)}
    check(inputs, [f"y = concat([x0, x1, x2], axis = {axis});"], np.concatenate(xs, axis))


def test_concat_with_constant():
    x, c = rand(2, 3), rand(2, 4)
    check({"x": x}, ["y = concat([c, x, c], axis = 1);"], np.concatenate([c, x, c], 1), {"c": c})


def test_squeeze_unsqueeze():
    x = rand(1, 3, 1, 5)
    check({"x": x}, ["y = squeeze(x, axes = [0, 2]);"], x.reshape(3, 5))
    check({"x": x}, ["y = unsqueeze(x, axes = [0, 5]);"], x.reshape(1, 1, 3, 1, 5, 1))


SLICES = [
    ([1], [1], [3], None, np.s_[:, 1:3]),
    ([0, 2], [1, -4], [0, -1], None, np.s_[1:, :, -4:-1]),
    ([2], [0], [7], [2], np.s_[:, :, 0:7:2]),
    ([1], [-1], [-100], [-1], np.s_[:, ::-1]),
    ([2], [5], [1], [-2], np.s_[:, :, 5:1:-2]),
    ([0, 1], [0, 10], [100, 20], None, np.s_[0:100, 10:20]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("case", range(len(SLICES)))
def test_slice(case, dtype):
    axes, begin, end, stride, index = SLICES[case]
    x = (rand(3, 4, 7) * 100).astype(dtype)
    stride_attr = "" if stride is None else f", stride = {nnef_list(stride)}"
    check({"x": x}, [f"y = slice(x, axes = {nnef_list(axes)}, begin = {nnef_list(begin)}, "
                     f"end = {nnef_list(end)}{stride_attr});"], x[index])


# ---------------------------------------------------------------- graphs

def test_alias_literal_and_chain():
    x = rand(2, 3)
    c = np.array([[1.0, 2.0, 3.0]], np.float32)
    check({"x": x}, ["k = [[1.0, 2.0, 3.0]];", "a = mul(x, k);", "b = a;", "y = sub(b, 0.5);"],
          x * c - 0.5)


def test_small_cnn():
    x = rand(2, 1, 8, 8)
    w1, b1, w2 = rand(4, 1, 3, 3), rand(4), rand(10, 64)
    h = np.maximum(ref_conv(x, w1, b1, [(1, 1), (1, 1)], [1, 1], [1, 1], 1), 0)
    h = ref_pool(h, [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2], [1, 1, 1, 1], "max", "constant")
    logits = h.reshape(2, 64) @ w2.T
    e = np.exp(logits - logits.max(1, keepdims=True))
    check({"x": x},
          ["c = conv(x, w1, b1, padding = [(1, 1), (1, 1)]);", "r = relu(c);",
           "p = max_pool(r, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);",
           "f = reshape(p, shape = [2, 64]);", "l = matmul(f, w2, transposeB = true);",
           "y = softmax(l, axes = [1]);"],
          e / e.sum(1, keepdims=True), {"w1": w1, "b1": b1, "w2": w2})


def test_odd_graph_outputs():
    # An input, a constant, a view of a constant, and one value twice; `dead` is unused.
    x, c = rand(2, 3), rand(3, 2)
    outs = run({"x": x}, ["dead = exp(x);", "r = reshape(c, shape = [6]);", "y = relu(x);"],
               ("x", "c", "r", "y", "y"), {"c": c})
    for got, want in zip(outs, [x, c, c.reshape(6), np.maximum(x, 0), np.maximum(x, 0)]):
        np.testing.assert_array_equal(got, want)


def test_long_chain_reuses_arena():
    # Many intermediates: the arena must hand out overlapping bytes only to values not
    # alive together, which the numbers check.
    x = rand(4, 33)
    body, expected, prev = [], x.astype(np.float64), "x"
    for i in range(40):
        body.append(f"t{i} = add({prev}, x);" if i % 2 else f"t{i} = mul({prev}, 0.5);")
        expected = expected + x if i % 2 else expected * 0.5
        prev = f"t{i}"
    body.append(f"y = copy({prev});")
    check({"x": x}, body, expected.astype(np.float32))


def test_variable_label_with_directory():
    x, w = rand(3, 4), rand(4, 2)
    check({"x": x}, ["y = matmul(x, layer1_w);"], x @ w, {"layer1/w": w})


# ---------------------------------------------------------------- errors

def run_error(body, inputs=None, variables=None):
    inputs = inputs or {"x": rand(1, 3, 8, 8)}
    with pytest.raises(Exception) as caught:
        run(inputs, body, ("y",), variables)
    return str(caught.value)


def test_error_unknown_op_names_file_line_node():
    message = run_error(["y = frobnicate(x);"])
    assert "graph.nnef:" in message and "'y'" in message and "frobnicate" in message


def test_error_conv_shapes_named():
    message = run_error(["y = conv(x, w);"], variables={"w": rand(4, 2, 3, 3)})
    assert "conv" in message and "[1, 3, 8, 8]" in message and "[4, 2, 3, 3]" in message


def test_error_broadcast_shapes_named():
    message = run_error(["y = add(x, w);"], variables={"w": rand(5, 7)})
    assert "[5, 7]" in message and "'y'" in message


def test_error_symbolic_shape_unsupported():
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "graph.nnef"), "w") as f:
            f.write("version 1.0;\ngraph g(x) -> (y)\n{\n  x = external<scalar>(shape = [S, 3]);\n"
                    "  y = relu(x);\n}\n")
        with pytest.raises(Exception) as caught:
            run_directory(directory, [rand(2, 3)])
    assert "'S'" in str(caught.value)


def test_error_newer_plan_version():
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "graph.nnef"), "w") as f:
            f.write('version 1.0;\nfragment tract_core_properties() -> (properties: '
                    '(string, tensor<scalar>)[])\n{\n  properties = [("ember.plan_version", 99)];\n}\n'
                    "graph g(x) -> (y)\n{\n  x = external<scalar>(shape = [2, 3]);\n"
                    "  y = relu(x);\n}\n")
        with pytest.raises(Exception) as caught:
            run_directory(directory, [rand(2, 3)])
    assert "99" in str(caught.value) and "version" in str(caught.value)


def test_wrong_input_shape_message():
    with tempfile.TemporaryDirectory() as directory:
        write_plan(directory, {"data_0": rand(1, 3, 4)}, ["y = relu(data_0);"], ["y"])
        with pytest.raises(Exception) as caught:
            run_directory(directory, [rand(1, 3)])
    assert "input 0 'data_0': expected f32 [1, 3, 4], got f32 [1, 3]" in str(caught.value)
