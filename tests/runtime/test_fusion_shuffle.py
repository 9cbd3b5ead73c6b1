"""A channel shuffle (ShuffleNet's reshape, transpose, reshape) folded into the grouped conv
before it, which then stores its channels shuffled: checked against numpy on the conv
paths that take it, and, through the per-node profile, for which nodes still run; and the
cases that must keep their transpose."""
import numpy as np
import pytest

from test_fusion import ops_run
from test_ops import check, rand, ref_conv


def shuffled(y, groups):
    n, c = y.shape[:2]
    return (y.reshape(n, groups, c // groups, *y.shape[2:]).swapaxes(1, 2)
            .reshape(y.shape))


def shuffle_lines(groups, shape, source="c", axes="[0, 2, 1, 3, 4]"):
    n, c, h, w = shape
    return [f"s = reshape({source}, shape = [{n}, {groups}, {c // groups}, {h}, {w}]);",
            f"t = transpose(s, axes = {axes});",
            f"y = reshape(t, shape = [{n}, {c}, {h}, {w}]);"]


def grouped_conv(x, w, b, groups, pad, stride, relu=True):
    """The conv's line and its numpy result."""
    line = (f"c0 = conv(x, w, b, padding = [({pad}, {pad}), ({pad}, {pad})], "
            f"stride = [{stride}, {stride}], groups = {groups});")
    conv = ref_conv(x, w, b, [(pad, pad)] * 2, [stride] * 2, [1, 1], groups)
    if relu:
        return [line, "c = relu(c0);"], np.maximum(conv, 0)
    return [line.replace("c0 =", "c =")], conv


# (x shape, filter shape, groups, padding, stride): ShuffleNet's grouped 1x1 at two plane
# sizes (7x7 would take the transposed few-pixel GEMM unshuffled), batch 2, and a 3x3
# through im2col
CASES = {
    "pointwise-28x28": ((1, 24, 28, 28), (36, 6, 1, 1), 4, 0, 1),
    "pointwise-7x7": ((1, 32, 7, 7), (48, 8, 1, 1), 4, 0, 1),
    "pointwise-batch2": ((2, 12, 9, 11), (18, 4, 1, 1), 3, 0, 1),
    "im2col-3x3-stride2": ((1, 8, 17, 17), (12, 4, 3, 3), 2, 1, 2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_shuffle_folds_into_the_grouped_conv(case):
    xs, ws, groups, pad, stride = CASES[case]
    x, w, b = rand(*xs), rand(*ws), rand(ws[0])
    body, conv = grouped_conv(x, w, b, groups, pad, stride)
    body += shuffle_lines(groups, conv.shape)
    check({"x": x}, body, shuffled(conv, groups), {"w": w, "b": b})
    assert ops_run({"x": x}, body, ["y"], {"w": w, "b": b}) == ["conv"]


def test_shuffle_of_other_groups_keeps_its_transpose():
    x, w, b = rand(1, 12, 8, 8), rand(24, 6, 1, 1), rand(24)
    body, conv = grouped_conv(x, w, b, 2, 0, 1)
    body += shuffle_lines(4, conv.shape)
    check({"x": x}, body, shuffled(conv, 4), {"w": w, "b": b})
    assert "transpose" in ops_run({"x": x}, body, ["y"], {"w": w, "b": b})


def test_other_transpose_stays():
    """Square planes: swapping their axes instead keeps every shape the shuffle has."""
    x, w, b = rand(1, 12, 8, 8), rand(24, 3, 1, 1), rand(24)
    body, conv = grouped_conv(x, w, b, 4, 0, 1)
    body += shuffle_lines(4, conv.shape, axes="[0, 1, 2, 4, 3]")
    expected = conv.reshape(1, 4, 6, 8, 8).swapaxes(3, 4).reshape(1, 24, 8, 8)
    check({"x": x}, body, expected, {"w": w, "b": b})
    assert "transpose" in ops_run({"x": x}, body, ["y"], {"w": w, "b": b})


def test_shuffle_after_a_residual_stays():
    x, w, b = rand(1, 12, 8, 8), rand(24, 3, 1, 1), rand(24)
    r = rand(1, 24, 8, 8)
    body, conv = grouped_conv(x, w, b, 4, 0, 1, relu=False)
    body = [body[0].replace("c =", "c1 ="), "c = add(c1, r);"] + shuffle_lines(4, conv.shape)
    check({"x": x, "r": r}, body, shuffled(conv + r, 4), {"w": w, "b": b})
    assert "transpose" in ops_run({"x": x, "r": r}, body, ["y"], {"w": w, "b": b})


def test_shuffle_read_halfway_stays():
    x, w, b = rand(1, 12, 8, 8), rand(24, 3, 1, 1), rand(24)
    body, conv = grouped_conv(x, w, b, 4, 0, 1)
    body += shuffle_lines(4, conv.shape)
    body[-1] = body[-1].replace("y = ", "u = ")
    body += ["v = reshape(s, shape = [1, 24, 8, 8]);", "y = add(u, v);"]
    check({"x": x}, body, shuffled(conv, 4) + conv, {"w": w, "b": b})
    assert "transpose" in ops_run({"x": x}, body, ["y"], {"w": w, "b": b})
