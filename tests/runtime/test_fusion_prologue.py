"""A scale before a 1×1 conv (DenseNet's pre-activation BatchNorm and relu: mul, add, relu)
folded into the conv as its prologue, applied as the conv packs its input: checked
against numpy on the conv paths that take it, bit for bit against the same graph with the
fusion blocked (the scale's result also a graph output), through the per-node profile for
which nodes still run; and the cases that must keep their scale."""
import numpy as np
import pytest

from test_fusion import ops_run, scale_body
from test_ops import check, rand, ref_conv, run

# (x shape, filter shape, groups): the paths a 1×1 conv takes on x86 and ARM
CASES = {
    "pointwise": ((1, 40, 11, 13), (24, 40, 1, 1), 1),
    "pointwise-in-place": ((1, 64, 6, 8), (20, 64, 1, 1), 1),  # B in place without one
    "few-pixels-7x7": ((1, 64, 7, 7), (96, 64, 1, 1), 1),
    "batch2": ((2, 12, 9, 11), (18, 12, 1, 1), 1),
    "groups2": ((1, 16, 10, 10), (12, 8, 1, 1), 2),
    "sliced-depth": ((1, 400, 6, 7), (16, 400, 1, 1), 1),  # K past one slice: channel offsets
    "one-pixel": ((2, 24, 1, 1), (10, 24, 1, 1), 1),
}

# (k shape, b shape or None, what follows): the scales DenseNet and others leave
SCALES = {
    "bn-relu": ((1, "C", 1, 1), (1, "C", 1, 1), "relu"),
    "scale-relu": ((1, "C", 1, 1), None, "relu"),
    "bn": ((1, "C", 1, 1), (1, "C", 1, 1), None),
    "single-k-clamp": ((), (), "clamp"),
    "bn-relu6": (("C", 1, 1), (1, "C", 1, 1), "clamp6"),
}


def shaped(spec, channels):
    return tuple(channels if d == "C" else d for d in spec)


def scale_lines(has_shift, after):
    return scale_body(() if has_shift else None, after, out="r")


def scaled(x, k, b, after):
    v = x * k
    if b is not None:
        v = v + b
    if after == "relu":
        return np.maximum(v, 0)
    if after == "clamp":
        return np.clip(v, 0, 0.5)
    if after == "clamp6":
        return np.clip(v, 0, 6)
    return v


def case_model(case, scale):
    xs, ws, groups = CASES[case]
    ks, bs, after = SCALES[scale]
    channels = xs[1]
    x, w, bias = rand(*xs), rand(*ws), rand(ws[0])
    variables = {"k": rand(*shaped(ks, channels)) * 2, "w": w, "bias": bias}
    if bs is not None:
        variables["b"] = rand(*shaped(bs, channels))
    body = scale_lines(bs is not None, after) + [
        f"y = conv(r, w, bias, padding = [(0, 0), (0, 0)], stride = [1, 1], groups = {groups});"]
    r = scaled(x, variables["k"], variables.get("b"), after)
    expected = ref_conv(r, w, bias, [(0, 0)] * 2, [1, 1], [1, 1], groups)
    return x, body, variables, expected


@pytest.mark.parametrize("scale", sorted(SCALES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_scale_folds_into_the_pointwise_conv(case, scale):
    x, body, variables, expected = case_model(case, scale)
    check({"x": x}, body, expected, variables)
    assert ops_run({"x": x}, body, ["y"], variables) == ["conv"]
    # the same sums, rounded the same: the unfused graph's bits (its scale's result an
    # output, so the scale runs and the conv reads what it wrote)
    (fused,) = run({"x": x}, body, ("y",), variables)
    unfused, _ = run({"x": x}, body, ("y", "r"), variables)
    np.testing.assert_array_equal(fused, unfused)


def test_nan_and_signed_zeros_pass_as_the_scale_passes_them():
    x, body, variables, _ = case_model("pointwise", "bn-relu")
    x[0, :, 0, 0] = np.nan
    x[0, 3, 1, :] = -0.0
    variables["k"][0, 5, 0, 0] = 0.0
    (fused,) = run({"x": x}, body, ("y",), variables)
    unfused, _ = run({"x": x}, body, ("y", "r"), variables)
    np.testing.assert_array_equal(fused, unfused)
    assert np.isnan(fused[0, :, 0, 0]).all()


def conv_after_scale(xs, ws, pad, stride):
    x, w, bias = rand(*xs), rand(*ws), rand(ws[0])
    variables = {"k": rand(1, xs[1], 1, 1), "b": rand(1, xs[1], 1, 1), "w": w, "bias": bias}
    body = scale_lines(True, "relu") + [
        f"y = conv(r, w, bias, padding = [({pad}, {pad}), ({pad}, {pad})], "
        f"stride = [{stride}, {stride}]);"]
    r = scaled(x, variables["k"], variables["b"], "relu")
    return x, body, variables, ref_conv(r, w, bias, [(pad, pad)] * 2, [stride] * 2, [1, 1], 1)


@pytest.mark.parametrize("geometry", [((1, 8, 9, 9), (6, 8, 3, 3), 1, 1),  # a 3×3 conv
                                      ((1, 8, 9, 9), (6, 8, 1, 1), 0, 2)])  # stride 2
def test_other_convs_keep_their_scale(geometry):
    x, body, variables, expected = conv_after_scale(*geometry)
    check({"x": x}, body, expected, variables)
    assert ops_run({"x": x}, body, ["y"], variables) == ["mul", "conv"]


def test_scale_read_twice_stays():
    x, body, variables, expected = conv_after_scale((1, 8, 9, 9), (6, 8, 1, 1), 0, 1)
    body += ["z = add(y, 1.0);", "q = add(r, 1.0);"]
    check({"x": x}, body, expected, variables)
    assert "mul" in ops_run({"x": x}, body, ["y", "q"], variables)


def test_scale_along_another_axis_stays():
    x, w, bias = rand(1, 6, 5, 7), rand(4, 6, 1, 1), rand(4)
    k = rand(1, 1, 1, 7)
    body = ["r = mul(x, k);",
            "y = conv(r, w, bias, padding = [(0, 0), (0, 0)], stride = [1, 1]);"]
    variables = {"k": k, "w": w, "bias": bias}
    check({"x": x}, body, ref_conv(x * k, w, bias, [(0, 0)] * 2, [1, 1], [1, 1], 1), variables)
    assert ops_run({"x": x}, body, ["y"], variables) == ["mul", "conv"]


def test_hardswish_before_the_conv_stays():
    """The scale's gate (x · clamp(x/6 + 1/2, 0, 1)) is no prologue: x times itself."""
    x, w, bias = rand(1, 6, 5, 7) * 4, rand(4, 6, 1, 1), rand(4)
    body = ["s = mul(x, 0.16666667);", "t = add(s, 0.5);", "c = clamp(t, 0.0, 1.0);",
            "r = mul(x, c);", "y = conv(r, w, bias, padding = [(0, 0), (0, 0)], stride = [1, 1]);"]
    gated = x * np.clip(x * np.float32(0.16666667) + 0.5, 0, 1)
    variables = {"w": w, "bias": bias}
    check({"x": x}, body, ref_conv(gated, w, bias, [(0, 0)] * 2, [1, 1], [1, 1], 1), variables)
    assert ops_run({"x": x}, body, ["y"], variables) == ["mul", "conv"]


def test_pre_activation_block_adds_its_input_back():
    """ResNet v2's shape: y = conv(relu(bn(x))) + x, the conv reading x through the scale
    it took and adding x as its residual: x must not be overwritten by the conv's output
    while it is read."""
    x, w, bias = rand(1, 16, 9, 10), rand(16, 16, 1, 1), rand(16)
    variables = {"k": rand(1, 16, 1, 1), "b": rand(1, 16, 1, 1), "w": w, "bias": bias}
    body = scale_lines(True, "relu") + [
        "c = conv(r, w, bias, padding = [(0, 0), (0, 0)], stride = [1, 1]);",
        "y = add(c, x);"]
    r = scaled(x, variables["k"], variables["b"], "relu")
    check({"x": x}, body, ref_conv(r, w, bias, [(0, 0)] * 2, [1, 1], [1, 1], 1) + x, variables)
    assert ops_run({"x": x}, body, ["y"], variables) == ["conv"]


def test_scale_of_a_computed_value():
    """The scale's operand in the arena, not a graph input: kept alive until the conv that
    now reads it, and not shared with the conv's output."""
    x, w, bias = rand(1, 24, 8, 9), rand(32, 24, 1, 1), rand(32)
    variables = {"k": rand(1, 24, 1, 1), "b": rand(1, 24, 1, 1), "w": w, "bias": bias}
    body = ["x0 = add(x, 0.25);"] + [line.replace("mul(x,", "mul(x0,")
                                      for line in scale_lines(True, "relu")] + [
        "y = conv(r, w, bias, padding = [(0, 0), (0, 0)], stride = [1, 1]);"]
    r = scaled(x + np.float32(0.25), variables["k"], variables["b"], "relu")
    check({"x": x}, body, ref_conv(r, w, bias, [(0, 0)] * 2, [1, 1], [1, 1], 1), variables)
    assert ops_run({"x": x}, body, ["y"], variables) == ["add", "conv"]
