"""Concat without copies (core/instance.c places a one-row concat's inputs inside its
output, and their producers write there): every case where an input may or must not be
placed, checked through the C runtime against numpy — nested concats (DenseNet), an input
read again after the concat, the same value twice, graph inputs and outputs, constants,
views, fused epilogues, several rows (batch 2), integer data."""
import numpy as np
import pytest

from test_ops import check, rand, run


def test_producers_write_into_the_concat():
    a, b = rand(1, 3, 4, 5), rand(1, 2, 4, 5)
    body = ["p = relu(a);", "q = exp(b);", "y = concat([p, q], axis = 1);"]
    check({"a": a, "b": b}, body, np.concatenate([np.maximum(a, 0), np.exp(b)], axis=1))


def test_nested_concats_grow_in_one_buffer():
    """DenseNet's features: each concat holds the previous one and a new block's output."""
    x = rand(1, 2, 3, 3)
    body = ["f0 = relu(x);", "n1 = neg(f0);", "f1 = concat([f0, n1], axis = 1);",
            "n2 = exp(f1);", "f2 = concat([f1, n2], axis = 1);",
            "n3 = abs(f2);", "y = concat([f2, n3], axis = 1);"]
    f0 = np.maximum(x, 0)
    f1 = np.concatenate([f0, -f0], axis=1)
    f2 = np.concatenate([f1, np.exp(f1)], axis=1)
    check({"x": x}, body, np.concatenate([f2, np.abs(f2)], axis=1))


def test_an_input_read_after_the_concat_keeps_its_value():
    a, b = rand(1, 3, 2, 2), rand(1, 3, 2, 2)
    body = ["p = relu(a);", "q = neg(b);", "c = concat([p, q], axis = 1);", "d = exp(c);",
            "s = sum_reduce(d, axes = [1]);", "y = mul(p, s);"]
    c = np.concatenate([np.maximum(a, 0), -b], axis=1)
    check({"a": a, "b": b}, body, np.maximum(a, 0) * np.exp(c).sum(axis=1, keepdims=True))


def test_the_same_value_twice_is_copied():
    a = rand(1, 2, 3, 3)
    body = ["p = relu(a);", "y = concat([p, p], axis = 1);"]
    check({"a": a}, body, np.concatenate([np.maximum(a, 0)] * 2, axis=1))


def test_a_value_in_two_concats():
    a, b = rand(1, 2, 3, 3), rand(1, 1, 3, 3)
    body = ["p = relu(a);", "q = neg(b);", "c1 = concat([p, q], axis = 1);",
            "c2 = concat([q, p], axis = 1);", "y = add(c1, c2);"]
    p, q = np.maximum(a, 0), -b
    check({"a": a, "b": b}, body,
          np.concatenate([p, q], axis=1) + np.concatenate([q, p], axis=1))


def test_graph_inputs_outputs_and_constants_stay_where_they_are():
    a, k = rand(1, 2, 3), rand(1, 4, 3)
    body = ["p = exp(a);", "y = concat([a, p, k], axis = 1);"]
    got_y, got_p = run({"a": a}, body, ("y", "p"), {"k": k})
    np.testing.assert_allclose(got_y, np.concatenate([a, np.exp(a), k], axis=1), rtol=1e-6)
    np.testing.assert_allclose(got_p, np.exp(a), rtol=1e-6)


def test_a_view_and_a_fused_epilogue_as_inputs():
    """reshape's bytes are its input's; a relu fused into the conv makes the conv's
    output the one placed in the concat."""
    x, w, b = rand(1, 2, 4, 4), rand(3, 2, 1, 1), rand(3)
    body = ["c = conv(x, w, b);", "r = relu(c);", "e = exp(x);",
            "v = reshape(e, shape = [1, 2, 4, 4]);", "y = concat([r, v], axis = 1);"]
    conv = np.einsum("oi,nihw->nohw", w[:, :, 0, 0], x) + b[None, :, None, None]
    check({"x": x}, body, np.concatenate([np.maximum(conv, 0), np.exp(x)], axis=1),
          {"w": w, "b": b})


@pytest.mark.parametrize("axis", [0, 2, 3])
def test_other_axes(axis):
    """axis 0 and axes after 1s are still one row; axis 3 of [1, 2, …] is two rows."""
    a, b = rand(1, 1, 3, 4), rand(1, 1, 3, 4)
    body = ["p = relu(a);", "q = neg(b);", f"y = concat([p, q], axis = {axis});"]
    check({"a": a, "b": b}, body, np.concatenate([np.maximum(a, 0), -b], axis=axis))


def test_batch_two_is_copied_row_by_row():
    a, b = rand(2, 3, 2, 2), rand(2, 1, 2, 2)
    body = ["p = relu(a);", "q = neg(b);", "y = concat([p, q], axis = 1);"]
    check({"a": a, "b": b}, body, np.concatenate([np.maximum(a, 0), -b], axis=1))


def test_integer_inputs():
    a = np.arange(6, dtype=np.int64).reshape(1, 2, 3)
    b = np.arange(3, dtype=np.int64).reshape(1, 1, 3)
    body = ["p = neg(a);", "q = abs(b);", "y = concat([p, q], axis = 1);"]
    check({"a": a, "b": b}, body, np.concatenate([-a, np.abs(b)], axis=1))
