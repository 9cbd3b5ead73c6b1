"""Every op family of the C runtime on aarch64 and armv7 (under QEMU): one ONNX backend
test per op of the C ledger (tests/cook/conformance_passing_c.txt) is cooked on the host
into a plan, run by the cross-built ember-run on the test's inputs, and must give what
the host's C runtime gives (floats within 1e-5 relative, the rest exactly): the portable
references and the NEON kernels against the x86 build, op by op."""
import os
import sys

import numpy as np
import pytest

import cross
import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "cook"))


def one_case_per_op():
    """{op_type: Case}: the first test (by name) of each op that passes through C."""
    from ember.cook.onnx import conformance
    from test_onnx_conformance import LEDGER_C, read_ledger
    listed = read_ledger(LEDGER_C)
    chosen = {}
    for case in sorted(conformance.node_cases(), key=lambda c: c.name):
        if case.name in listed and case.op_type not in chosen:
            chosen[case.op_type] = case
    return chosen


def cook(case, directory):
    """The plan and the .npy inputs of one case; None if it has no input to feed."""
    from ember.cook.onnx import conformance
    from ember.cook import UnsupportedOp
    from ember.cook.errors import ShapeError
    model, inputs, _ = case.load()
    try:
        typed = conformance.typed_model(model, inputs)
        ember.nnef().write_model_to_tar(typed, os.path.join(directory, "probe.tar"))
    except (UnsupportedOp, ShapeError):  # attribute-like inputs: fixed as values (still fed), as the
        typed = conformance.typed_model(model, inputs, freeze=True)
    plan = os.path.join(directory, case.name + ".nnef.tar")
    ember.nnef().write_model_to_tar(typed, plan)
    paths = []
    for index, (value, fact) in enumerate(zip(inputs, typed.input_facts())):
        path = os.path.join(directory, f"{case.name}.in{index}.npy")
        np.save(path, np.asarray(value).astype(fact.dtype))
        paths.append(path)
    return plan, paths, len(typed.output_facts())


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_every_op_matches_the_host_under_qemu(arch, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    failures, checked = [], 0
    for op_type, case in sorted(one_case_per_op().items()):
        plan, inputs, n_outputs = cook(case, str(tmp_path))
        problem = cross.compare_plan(arch, plan, inputs, n_outputs, str(tmp_path), case.name)
        if problem:
            failures.append(f"{op_type} ({case.name}): {problem}")
        checked += 1
    assert checked > 0
    assert not failures, f"{len(failures)} of {checked} ops differ on {arch}:\n" + \
        "\n".join(failures)
