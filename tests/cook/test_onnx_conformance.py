"""The conformance ledger: the ONNX backend tests through cook and run_reference.

`conformance_passing.txt` lists the tests that pass. This test fails when one of them no
longer passes (a regression) and prints the tests that pass but are not listed yet; it
also checks that docs/ops.md is what `python -m ember.cook.onnx.docs` generates.

    python tests/cook/test_onnx_conformance.py --update    # rewrite the list and docs/ops.md
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LEDGER = os.path.join(HERE, "conformance_passing.txt")
OPS_MD = os.path.join(ROOT, "docs", "ops.md")


def read_ledger():
    with open(LEDGER) as handle:
        return {line.strip() for line in handle if line.strip() and not line.startswith("#")}


def write_ledger(results):
    names = sorted(r.name for r in results if r.passed)
    with open(LEDGER, "w") as handle:
        handle.write("# ONNX backend tests that pass through cook + run_reference.\n"
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
    assert committed == docs.render(results), \
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
        write_ledger(results)
        with open(OPS_MD, "w", encoding="utf-8") as handle:
            handle.write(docs.render(results))
        print(f"wrote {os.path.relpath(LEDGER, ROOT)} and {os.path.relpath(OPS_MD, ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
