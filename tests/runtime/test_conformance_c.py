"""The conformance ledger through the C runtime: ONNX → cook → plan → C.

Every ONNX backend test listed in tests/cook/conformance_passing_c.txt must still pass
when its model is cooked, written as a plan and run by the C runtime (the same checks as
the reference ledger: shapes, dtypes, values at the test's tolerance). Tests that pass
but are not listed are printed; `python tests/cook/test_onnx_conformance.py --update`
rewrites the list (it may only grow) and docs/ops.md's C-runtime column.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cook"))

from test_onnx_conformance import LEDGER, LEDGER_C, read_ledger, read_short_list  # noqa: E402


def test_c_runtime_ledger_has_no_regression():
    from ember.cook.onnx import conformance
    listed = read_ledger(LEDGER_C)
    results = conformance.run_all(engine="c")
    passing = {r.name for r in results if r.passed}
    reasons = {r.name: r.reason for r in results}
    new = sorted(passing - listed)
    if new:
        print(f"\n{len(new)} tests pass through C that the C ledger does not list:\n  " +
              "\n  ".join(new))
    regressions = sorted(listed - passing)
    assert not regressions, "regressions through the C runtime:\n" + "\n".join(
        f"  {name}: {reasons.get(name, 'no longer in the suite')}" for name in regressions)


def test_c_runtime_meets_its_target():
    """Every test the reference passes passes through C, or is on the committed short list
    with one of the reasons cook/onnx/conformance.py accepts."""
    from ember.cook.onnx import conformance
    reasons = {reason for _, reason in conformance.C_SHORT_LIST}
    short_list = read_short_list()
    missing = read_ledger(LEDGER) - read_ledger(LEDGER_C)
    unexplained = sorted(n for n in missing if short_list.get(n) not in reasons)
    assert not unexplained, "tests the reference passes, failing through C, not on the " \
                            "short list:\n  " + "\n  ".join(unexplained)


def test_c_ledger_is_within_the_reference():
    """A test cannot pass through C and fail in the reference: that would mean the two
    disagree, and the reference is the judge."""
    assert read_ledger(LEDGER_C) <= read_ledger(LEDGER)
