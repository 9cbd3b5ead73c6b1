"""Epilogue fusion through the C runtime: a conv's skip connection (add of a computed
tensor, then relu) folded into the conv on every conv path, and the cases that must not
fold (the residual computed after the conv, a clamp before the add), each checked against
numpy and, through the per-node profile, for which nodes still run."""
import tempfile

import numpy as np
import pytest

import ember.runtime as rt
from test_ops import check, rand, ref_conv, run, write_plan


# path: (x shape, filter shape, padding, stride) — which conv.c path runs it on x86 AVX2
PATHS = {
    "implicit": ((1, 8, 20, 20), (16, 8, 3, 3), 1, 1),
    "im2col-stride5": ((1, 4, 31, 31), (6, 4, 3, 3), 1, 5),
    "pointwise": ((1, 8, 11, 13), (10, 8, 1, 1), 0, 1),
    "pointwise-in-place": ((1, 64, 6, 8), (20, 64, 1, 1), 0, 1),  # B read in place
    "few-pixels": ((1, 8, 7, 7), (96, 8, 3, 3), 1, 1),
    "one-pixel-batch2": ((2, 5, 3, 3), (7, 5, 3, 3), 0, 1),
}


def conv_line(pad, stride, x="x", out="c"):
    return (f"{out} = conv({x}, w, b, padding = [({pad}, {pad}), ({pad}, {pad})], "
            f"stride = [{stride}, {stride}]);")


def ops_run(inputs, body, outputs, variables):
    with tempfile.TemporaryDirectory() as directory:
        write_plan(directory, inputs, body, outputs, variables)
        runnable = rt.load_model(directory).into_runnable()
        return [node["op"] for node in runnable.profile(list(inputs.values()), runs=1)]


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("order", ["add(c, r)", "add(r, c)"])
def test_residual_and_relu_fold_into_the_conv(path, order):
    xs, ws, pad, stride = PATHS[path]
    x, w, b = rand(*xs), rand(*ws), rand(ws[0])
    conv = ref_conv(x, w, b, [(pad, pad)] * 2, [stride] * 2, [1, 1], 1)
    r = rand(*conv.shape) * 3  # large enough that relu(conv) + r and relu(conv + r) differ
    body = [conv_line(pad, stride), f"s = {order};", "y = relu(s);"]
    variables = {"w": w, "b": b}
    check({"x": x, "r": r}, body, np.maximum(conv + r, 0), variables)
    assert ops_run({"x": x, "r": r}, body, ["y"], variables) == ["conv"]


def test_residual_computed_after_the_conv_is_not_folded():
    x, w, b, z = rand(1, 4, 9, 9), rand(6, 4, 3, 3), rand(6), rand(1, 6, 9, 9)
    conv = ref_conv(x, w, b, [(1, 1)] * 2, [1, 1], [1, 1], 1)
    body = [conv_line(1, 1), "r = mul(z, 2.0);", "y = add(c, r);"]
    check({"x": x, "z": z}, body, conv + 2 * z, {"w": w, "b": b})
    assert "add" in ops_run({"x": x, "z": z}, body, ["y"], {"w": w, "b": b})


def test_clamp_before_the_add_keeps_the_add():
    x, w, b, r = rand(1, 4, 9, 9), rand(6, 4, 3, 3), rand(6), rand(1, 6, 9, 9)
    conv = ref_conv(x, w, b, [(1, 1)] * 2, [1, 1], [1, 1], 1)
    body = [conv_line(1, 1), "d = relu(c);", "y = add(d, r);"]
    check({"x": x, "r": r}, body, np.maximum(conv, 0) + r, {"w": w, "b": b})
    assert ops_run({"x": x, "r": r}, body, ["y"], {"w": w, "b": b}) == ["conv", "add"]


def test_residual_read_again_after_the_add():
    """The residual stays alive (and unchanged) for a later reader."""
    x, w, b = rand(1, 4, 9, 9), rand(6, 4, 3, 3), rand(6)
    conv = ref_conv(x, w, b, [(1, 1)] * 2, [1, 1], [1, 1], 1)
    r_in = rand(1, 6, 9, 9)
    body = ["r = mul(q, 0.5);", conv_line(1, 1), "s = add(c, r);", "t = relu(s);",
            "y = mul(t, r);"]
    check({"x": x, "q": r_in}, body, np.maximum(conv + 0.5 * r_in, 0) * (0.5 * r_in),
          {"w": w, "b": b})
    assert ops_run({"x": x, "q": r_in}, body, ["y"], {"w": w, "b": b}) == ["mul", "conv", "mul"]


def test_depthwise_conv_keeps_its_add():
    x, w, b, r = rand(1, 6, 9, 9), rand(6, 1, 3, 3), rand(6), rand(1, 6, 9, 9)
    conv = ref_conv(x, w, b, [(1, 1)] * 2, [1, 1], [1, 1], 6)
    body = ["c = conv(x, w, b, padding = [(1, 1), (1, 1)], groups = 0);", "y = add(c, r);"]
    check({"x": x, "r": r}, body, conv + r, {"w": w, "b": b})
    assert "add" in ops_run({"x": x, "r": r}, body, ["y"], {"w": w, "b": b})


# ---------------------------------------------------------------- mul by a constant

# (x shape, k shape, b shape or None, after): the scale's epilogue cases
SCALES = {
    "batchnorm-relu": ((1, 6, 5, 7), (1, 6, 1, 1), (1, 6, 1, 1), "relu"),
    "scalar-k-channel-b-clamp": ((2, 4, 3, 5), (), (4, 1, 1), "clamp"),
    "layernorm-affine": ((1, 9, 16), (16,), (16,), None),
    "channel-k-scalar-b": ((1, 3, 4, 4), (1, 3, 1, 1), (), "relu"),
    "wide-planes": ((1, 3, 40, 37), (1, 3, 1, 1), (1, 3, 1, 1), "relu"),  # 1024-item blocks
    "hardsigmoid": ((2, 4, 30, 31), (), (), "clamp"),  # one long row of single k and b
}


def scale_body(b_shape, after, out="y"):
    """mul(x, k), then add(·, b) unless b_shape is None, then `after` (relu, clamp,
    clamp6 or None), into `out`."""
    body = ["s = mul(x, k);"]
    last = "s"
    if b_shape is not None:
        body.append("t = add(s, b);")
        last = "t"
    if after == "relu":
        body.append(f"{out} = relu({last});")
    elif after in ("clamp", "clamp6"):
        body.append(f"{out} = clamp({last}, 0.0, {0.5 if after == 'clamp' else 6.0});")
    else:
        body[-1] = body[-1].replace(f"{last} =", f"{out} =", 1)
    return body


@pytest.mark.parametrize("case", sorted(SCALES))
def test_add_and_clamp_fold_into_a_scale(case):
    """mul by a per-axis constant, then add of a constant on that axis and a clamp: one
    pass, with each step rounded as the unfused ops round it (so equal to the last bit)."""
    xs, ks, bs, after = SCALES[case]
    x, k = rand(*xs), rand(*ks) * 2
    variables = {"k": k}
    expected = x * k
    if bs is not None:
        variables["b"] = rand(*bs)
        expected = expected + variables["b"]
    if after == "relu":
        expected = np.maximum(expected, 0)
    elif after == "clamp":
        expected = np.clip(expected, 0, 0.5)
    body = scale_body(bs, after)
    (got,) = run({"x": x}, body, ("y",), variables)
    np.testing.assert_array_equal(got, expected.astype(np.float32))
    assert ops_run({"x": x}, body, ["y"], variables) == ["mul"]


def test_bias_on_another_axis_keeps_the_add():
    x, k, b = rand(1, 4, 3, 5), rand(1, 4, 1, 1), rand(1, 1, 1, 5)
    body = ["s = mul(x, k);", "t = add(s, b);", "y = relu(t);"]
    check({"x": x}, body, np.maximum(x * k + b, 0), {"k": k, "b": b})
    assert ops_run({"x": x}, body, ["y"], {"k": k, "b": b}) == ["mul", "add", "relu"]


def test_product_of_two_tensors_absorbs_only_the_relu():
    x, z = rand(1, 4, 3, 5), rand(1, 4, 3, 5)
    body = ["s = mul(x, z);", "y = relu(s);"]
    check({"x": x, "z": z}, body, np.maximum(x * z, 0), {})
    assert ops_run({"x": x, "z": z}, body, ["y"], {}) == ["mul"]


def test_scale_read_twice_is_not_fused():
    """The product is needed as is by a second reader: the add stays its own node."""
    x, k, b = rand(1, 3, 4, 4), rand(1, 3, 1, 1), rand(1, 3, 1, 1)
    body = ["s = mul(x, k);", "t = add(s, b);", "y = add(t, s);"]
    check({"x": x}, body, (x * k + b) + x * k, {"k": k, "b": b})
    assert ops_run({"x": x}, body, ["y"], {"k": k, "b": b}) == ["mul", "add", "add"]


@pytest.mark.parametrize("gate", ["mul(x, g)", "mul(g, x)"])
@pytest.mark.parametrize("shape", [(1, 4, 7, 9), (1, 3, 40, 37)], ids=str)
def test_hardswish_folds_into_one_scale(gate, shape):
    """x · clamp(x/6 + 1/2, 0, 1): the scale hosts the add, the clamp and the gate (its
    own operand x), and rounds each step as the unfused ops do."""
    x = rand(*shape, low=-5, high=5)
    body = ["s = mul(x, 0.16666667);", "t = add(s, 0.5);", "g = clamp(t, 0.0, 1.0);",
            f"y = {gate};"]
    g = np.clip(x * np.float32(0.16666667) + np.float32(0.5), 0, 1)
    (got,) = run({"x": x}, body, ("y",), {})
    np.testing.assert_array_equal(got, (x * g).astype(np.float32))
    assert ops_run({"x": x}, body, ["y"], {}) == ["mul"]


def test_a_gate_that_is_not_the_scales_operand_stays():
    """hardsigmoid(x) applied to another tensor (a squeeze-excite's channel weights)."""
    x, z = rand(1, 4, 1, 1), rand(1, 4, 5, 5)
    body = ["s = mul(x, 0.16666667);", "t = add(s, 0.5);", "g = clamp(t, 0.0, 1.0);",
            "y = mul(z, g);"]
    check({"x": x, "z": z}, body, z * np.clip(x * np.float32(0.16666667) + 0.5, 0, 1), {})
    assert ops_run({"x": x, "z": z}, body, ["y"], {}) == ["mul", "mul"]


def test_nothing_folds_after_the_gate():
    x = rand(1, 3, 6, 6, low=-5, high=5)
    body = ["s = mul(x, 0.16666667);", "t = add(s, 0.5);", "g = clamp(t, 0.0, 1.0);",
            "h = mul(x, g);", "y = relu(h);"]
    check({"x": x}, body, np.maximum(x * np.clip(x * np.float32(0.16666667) + 0.5, 0, 1), 0),
          {})
    assert ops_run({"x": x}, body, ["y"], {}) == ["mul", "relu"]


# ---------------------------------------------------------------- hardswish into a conv

# every conv path the hard swish is applied on (x86 AVX2's choice): the GEMM micro-kernels
# (in registers), and the paths that store otherwise (after their writes)
HARD_SWISH_PATHS = dict(PATHS, **{
    "winograd": ((1, 256, 21, 19), (62, 256, 3, 3), 1, 1),
    "implicit-k-passes": ((1, 40, 12, 12), (8, 40, 3, 3), 1, 1),  # K = 360: two passes
    "implicit-rows-direct": ((2, 4, 12, 95), (8, 4, 3, 3), 1, 2),  # 48 wide: a GEMM a row
})
# depthwise: (x shape, filter shape, padding, stride), groups = channels
HARD_SWISH_DEPTHWISE = {
    "same-in-place": ((1, 3, 16, 20), (3, 1, 3, 3), 1, 1),
    "stride2-in-place": ((1, 2, 9, 101), (2, 1, 3, 3), 1, 2),
    "blocked": ((2, 9, 7, 7), (9, 1, 3, 3), 1, 1),
    "laid-out-5x5": ((1, 4, 17, 19), (4, 1, 5, 5), 2, 1),
    "multiplier": ((1, 3, 15, 16), (6, 1, 3, 3), 1, 1),
}
HARD_SWISH = ["s = mul(c, 0.16666667);", "t = add(s, 0.5);", "g = clamp(t, 0.0, 1.0);"]


def hard_swish(c):
    """The plan's four ops in float32, each rounded as the C runtime rounds it."""
    g = np.clip(c * np.float32(0.16666667) + np.float32(0.5), np.float32(0), np.float32(1))
    return c * g


def conv_and_hard_swish(line, xs, ws, gate="mul(c, g)"):
    x, w, b = rand(*xs, low=-3, high=3), rand(*ws), rand(ws[0])
    variables = {"w": w, "b": b}
    (c,) = run({"x": x}, [line], ("c",), variables)
    body = [line] + HARD_SWISH + [f"y = {gate};"]
    (got,) = run({"x": x}, body, ("y",), variables)
    return got, c, ops_run({"x": x}, body, ["y"], variables)


@pytest.mark.parametrize("path", sorted(HARD_SWISH_PATHS))
@pytest.mark.parametrize("gate", ["mul(c, g)", "mul(g, c)"])
def test_hardswish_folds_into_the_conv(path, gate):
    """The conv alone, then the hardswish in numpy: the fused run has the same bits."""
    xs, ws, pad, stride = HARD_SWISH_PATHS[path]
    got, c, ops = conv_and_hard_swish(conv_line(pad, stride), xs, ws, gate)
    assert (c < -3).any() and (c > 3).any() and (abs(c) < 3).any()  # both clamp bounds met
    np.testing.assert_array_equal(got, hard_swish(c))
    assert ops == ["conv"]


@pytest.mark.parametrize("path", sorted(HARD_SWISH_DEPTHWISE))
def test_hardswish_folds_into_a_depthwise_conv(path):
    xs, ws, pad, stride = HARD_SWISH_DEPTHWISE[path]
    line = (f"c = conv(x, w, b, padding = [({pad}, {pad}), ({pad}, {pad})], "
            f"stride = [{stride}, {stride}], groups = 0);")
    got, c, ops = conv_and_hard_swish(line, xs, ws)
    np.testing.assert_array_equal(got, hard_swish(c))
    assert ops == ["conv"]


def test_hardswish_after_a_residual_and_clamp():
    """relu6(conv + r) then the hardswish: the residual and clamp first, in the conv."""
    x, w, b, r = rand(1, 8, 20, 20), rand(16, 8, 3, 3), rand(16), rand(1, 16, 20, 20) * 4
    variables = {"w": w, "b": b}
    front = [conv_line(1, 1, out="q"), "a = add(q, r);", "c = clamp(a, 0.0, 6.0);"]
    (c,) = run({"x": x, "r": r}, front, ("c",), variables)
    body = front + HARD_SWISH + ["y = mul(c, g);"]
    (got,) = run({"x": x, "r": r}, body, ("y",), variables)
    np.testing.assert_array_equal(got, hard_swish(c))
    assert ops_run({"x": x, "r": r}, body, ["y"], variables) == ["conv"]


@pytest.mark.parametrize("case", ["conv-read-again", "other-slope-per-channel", "not-its-own"])
def test_hardswish_that_must_not_fold(case):
    x, w, b, z = rand(1, 4, 9, 9), rand(6, 4, 3, 3), rand(6), rand(1, 6, 9, 9)
    k = np.full((1, 6, 1, 1), 0.2, np.float32)
    conv = ref_conv(x, w, b, [(1, 1)] * 2, [1, 1], [1, 1], 1).astype(np.float32)
    body = [conv_line(1, 1)] + HARD_SWISH
    if case == "conv-read-again":  # a third reader needs the conv's result unchanged
        body += ["h = mul(c, g);", "y = add(h, c);"]
        expected = hard_swish(conv) + conv
    elif case == "other-slope-per-channel":  # mul by a tensor, not a scalar
        body[1] = "s = mul(c, k);"
        body += ["y = mul(c, g);"]
        expected = conv * np.clip(conv * 0.2 + 0.5, 0, 1)
    else:  # the gate multiplies another tensor
        body += ["y = mul(z, g);"]
        expected = z * np.clip(conv * np.float32(0.16666667) + 0.5, 0, 1)
    variables = {"w": w, "b": b, "k": k}
    check({"x": x, "z": z}, body, expected, variables)
    assert ops_run({"x": x, "z": z}, body, ["y"], variables)[0] == "conv"
    assert len(ops_run({"x": x, "z": z}, body, ["y"], variables)) > 1
