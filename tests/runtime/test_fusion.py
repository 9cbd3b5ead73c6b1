"""Epilogue fusion through the C runtime: a conv's skip connection (add of a computed
tensor, then relu) folded into the conv on every conv path, and the cases that must not
fold (the residual computed after the conv, a clamp before the add), each checked against
numpy and, through the per-node profile, for which nodes still run."""
import tempfile

import numpy as np
import pytest

import ember.runtime as rt
from test_ops import check, rand, ref_conv, write_plan


# path: (x shape, filter shape, padding, stride) — which conv.c path runs it on x86 AVX2
PATHS = {
    "implicit": ((1, 8, 20, 20), (16, 8, 3, 3), 1, 1),
    "im2col-stride5": ((1, 4, 31, 31), (6, 4, 3, 3), 1, 5),
    "pointwise": ((1, 8, 11, 13), (10, 8, 1, 1), 0, 1),
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
