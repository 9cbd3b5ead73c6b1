"""The conformance ledger: the ONNX backend tests through cook and run_reference.

`conformance_passing.txt` lists the tests that pass. This test fails when one of them no
longer passes (a regression) and prints the tests that pass but are not listed yet; it
also checks that docs/ops.md is what `python -m ember.cook.onnx.docs` generates (its
C-runtime column comes from `conformance_passing_c.txt`, the ledger of the same tests
through the C runtime, checked by tests/runtime/test_conformance_c.py).

    python tests/cook/test_onnx_conformance.py --update    # rewrite both lists and docs/ops.md
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LEDGER = os.path.join(HERE, "conformance_passing.txt")
LEDGER_C = os.path.join(HERE, "conformance_passing_c.txt")
SHORT_LIST_C = os.path.join(HERE, "conformance_short_list_c.txt")
OPS_MD = os.path.join(ROOT, "docs", "ops.md")


def read_ledger(path=LEDGER):
    with open(path) as handle:
        return {line.strip() for line in handle if line.strip() and not line.startswith("#")}


def read_short_list(path=SHORT_LIST_C):
    """{test name: reason} of the tests the reference passes and C may fail."""
    from ember.cook.onnx import docs
    return docs.read_c_short_list(path)


def write_short_list(results, c_results, path=SHORT_LIST_C):
    from ember.cook.onnx import conformance
    reference = {r.name for r in results if r.passed}
    rows = sorted((r.name, conformance.c_short_list_reason(r.reason))
                  for r in c_results if r.name in reference and not r.passed)
    with open(path, "w") as handle:
        handle.write("# Tests the reference passes and the C runtime may fail (the short list\n"
                     "# of cook/onnx/conformance.py), tab-separated: name, reason.\n"
                     "# Rewrite with: python tests/cook/test_onnx_conformance.py --update\n")
        for name, reason in rows:
            if reason is not None:
                handle.write(f"{name}\t{reason}\n")


def write_ledger(results, path=LEDGER, through="cook + run_reference"):
    names = sorted(r.name for r in results if r.passed)
    with open(path, "w") as handle:
        handle.write(f"# ONNX backend tests that pass through {through}.\n"
                     "# Rewrite with: python tests/cook/test_onnx_conformance.py --update\n")
        handle.write("".join(name + "\n" for name in names))
    return names


@pytest.fixture(scope="module")
def results():
    from ember.cook.onnx import conformance
    return conformance.run_all()


def test_no_regression(results):
    listed = read_ledger()
    passing = {r.name for r in results if r.passed}
    reasons = {r.name: r.reason for r in results}
    regressions = sorted(listed - passing)
    new = sorted(passing - listed)
    if new:
        print(f"\n{len(new)} tests pass that the ledger does not list (run "
              "`python tests/cook/test_onnx_conformance.py --update`):\n  " + "\n  ".join(new))
    assert not regressions, "regressions:\n" + "\n".join(
        f"  {name}: {reasons.get(name, 'no longer in the suite')}" for name in regressions)


def test_ops_md_is_generated(results):
    from ember.cook.onnx import docs
    with open(OPS_MD, encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == docs.render(results, read_ledger(LEDGER_C), read_short_list()), \
        "docs/ops.md is stale: run `python tests/cook/test_onnx_conformance.py --update`"


def main(argv):
    sys.path.insert(0, HERE)
    import conftest  # noqa: F401  (makes ember.cook importable from the tree)
    from ember.cook.onnx import conformance, docs
    results = conformance.run_all()
    passed = sum(r.passed for r in results)
    print(f"{passed} / {len(results)} pass; " + ", ".join(
        f"{k}: {v}" for k, v in docs.summary(results).items()))
    if "--update" in argv:
        c_results = conformance.run_all(engine="c")
        print(f"{sum(r.passed for r in c_results)} / {len(c_results)} pass through C")
        write_ledger(results)
        write_ledger(c_results, LEDGER_C, "cook + plan + the C runtime")
        write_short_list(results, c_results)
        with open(OPS_MD, "w", encoding="utf-8") as handle:
            handle.write(docs.render(results, read_ledger(LEDGER_C), read_short_list()))
        print(f"wrote {os.path.relpath(LEDGER, ROOT)}, {os.path.relpath(LEDGER_C, ROOT)} and "
              f"{os.path.relpath(OPS_MD, ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
