"""Symbolic dimensions: simplification, equality, evaluation, text forms (property tests)."""
import os
import tempfile

import pytest
from hypothesis import configuration, given, settings
from hypothesis import strategies as st

from ember.cook import CookError, dims

# hypothesis keeps a cache directory: not in the source tree
configuration.set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "ember-hypothesis"))

S, T = dims.symbol("S"), dims.symbol("T")
SYMBOLS = ("S", "T")


def test_canonical_forms():
    p = dims.parse
    assert p("S+2-2") == S
    assert p("2*S/2") == S
    assert p("S*2 - S") == S
    assert p("(S/2)/3") == p("S/6")
    assert dims.to_str(p("(S-3)/2+1")) == "(S+1)/2-1"
    assert p("(S-3)/2+1") == p("(S+1)/2-1")
    assert dims.to_str(p("S+2")) == "S+2" and dims.to_str(p("2*S")) == "2*S"
    assert p("S-S") == 0 and isinstance(p("S-S"), int)
    assert p("min(S, S+1)") == S and p("max(S, S+1)") == p("S+1")
    assert p("max(3, S, 4)") == dims.maximum(S, 4)
    assert dims.div_ceil(S, 2) == p("(S+1)/2")
    assert p("4*S+2") // 2 == p("2*S+1")
    assert S + T == T + S and S * T == T * S
    assert S != T and S != 1 and S + 1 != S
    assert dims.parse("224") == 224
    assert dims.product([S, 3, 4]) == 12 * S


def test_window_output_symbolic():
    h = dims.symbol("H")
    out = dims.window_output(h, 3, 2, 1, 1, 1)
    assert dims.to_str(out) == "(H+1)/2"
    assert dims.evaluate(out, {"H": 224}) == 112
    assert dims.window_output(h, 3, 1, 1, 1, 1) == h
    assert dims.same_padding(h, 3, 1, 1) == (1, 1)


def test_errors_and_order():
    with pytest.raises(CookError, match="symbolic"):
        dims.to_int(S)
    with pytest.raises(CookError, match="no value"):
        dims.evaluate(S + T, {"S": 1})
    with pytest.raises(CookError, match="negative"):
        dims.parse("-3")
    with pytest.raises(CookError):
        dims.parse("S+")
    with pytest.raises(CookError, match="compare"):
        bool(S < T)
    assert S + 1 > S and S >= 0 and S + 2 > 1
    assert dims.substitute(S + T, {"S": 3}) == T + 3


# -- property tests ---------------------------------------------------------------------
def trees():
    leaves = st.one_of(st.integers(-20, 20).map(lambda v: ("int", v)),
                       st.sampled_from(SYMBOLS).map(lambda s: ("sym", s)))

    def extend(children):
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "min", "max"]), children, children),
            st.tuples(st.sampled_from(["//", "ceil"]), children, st.integers(1, 6)))
    return st.recursive(leaves, extend, max_leaves=8)


def build(tree):
    kind = tree[0]
    if kind == "int":
        return tree[1]
    if kind == "sym":
        return dims.symbol(tree[1])
    a = build(tree[1])
    if kind in ("//", "ceil"):
        return dims.div_floor(a, tree[2]) if kind == "//" else dims.div_ceil(a, tree[2])
    b = build(tree[2])
    return {"+": dims.add, "-": dims.sub, "*": dims.mul, "min": dims.minimum,
            "max": dims.maximum}[kind](a, b)


def direct(tree, values):
    kind = tree[0]
    if kind == "int":
        return tree[1]
    if kind == "sym":
        return values[tree[1]]
    a = direct(tree[1], values)
    if kind == "//":
        return a // tree[2]
    if kind == "ceil":
        return -((-a) // tree[2])
    b = direct(tree[2], values)
    return {"+": a + b, "-": a - b, "*": a * b, "min": min(a, b), "max": max(a, b)}[kind]


VALUES = st.fixed_dictionaries({s: st.integers(0, 60) for s in SYMBOLS})


@settings(max_examples=300, deadline=None, database=None)
@given(trees(), VALUES)
def test_simplified_evaluates_like_the_original(tree, values):
    assert dims.evaluate(build(tree), values) == direct(tree, values)


@settings(max_examples=200, deadline=None, database=None)
@given(trees(), VALUES)
def test_text_round_trip(tree, values):
    dim = build(tree)
    text = dims.to_str(dim)
    if dims.is_concrete(dim) and dim < 0:
        return
    again = dims.parse(text)
    assert again == dim, text
    assert dims.evaluate(again, values) == direct(tree, values)


@settings(max_examples=300, deadline=None, database=None)
@given(trees(), trees(), st.lists(VALUES, min_size=3, max_size=3))
def test_equality_is_sound(tree_a, tree_b, samples):
    a, b = build(tree_a), build(tree_b)
    if a == b:
        assert hash(a) == hash(b)
        for values in samples:
            assert direct(tree_a, values) == direct(tree_b, values)


@settings(max_examples=100, deadline=None, database=None)
@given(trees(), VALUES)
def test_substitution_is_evaluation(tree, values):
    dim = build(tree)
    partial = dims.substitute(dim, {"S": values["S"]})
    assert dims.evaluate(partial, values) == direct(tree, values)
