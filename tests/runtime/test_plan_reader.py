"""The plan layer's C tests: tests/c/test_plan_nnef.c (NNEF parser),
tests/c/test_plan_archive.c (tar/tgz/directory archives, DEFLATE/gzip) and
tests/c/test_plan_dat.c (.dat files). Built by scons into build/host/tests/NAME
(the session fixture in tests/conftest.py runs scons first); a missing binary is a
failure, not a skip, so a broken build cannot pass silently.
"""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = ["test_plan_nnef", "test_plan_archive", "test_plan_dat"]
FIXTURES = os.path.join(ROOT, "tests", "c", "fixtures")


@pytest.mark.parametrize("name", PROGRAMS)
def test_plan_reader_c_tests_pass(name):
    program = os.path.join(ROOT, "build", "host", "tests", name)
    assert os.path.exists(program), f"{program} is missing: run scons"
    result = subprocess.run([program, FIXTURES], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    last_line = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", last_line)
    assert summary, f"no summary line; stdout={result.stdout[-2000:]!r} stderr={result.stderr[-4000:]}"
    assert result.returncode == 0 and summary.group(2) == "0", result.stderr[-4000:]
    assert int(summary.group(1)) > 0
