"""Test-session setup shared by every suite.

The C programs (build/host/ember-run, build/host/tests/*) come from `scons`; the Python
extension links build/host/libember.a at `pip install -e .` time. Before any test runs,
scons brings build/host up to date (a no-op when it is), and the session stops early if
the extension is older than the library it was linked from — a stale binding would test
old C code.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def pytest_sessionstart(session):
    subprocess.run([sys.executable, "-m", "SCons", "-C", ROOT, "-Q", "-j2"], check=True,
                   stdout=subprocess.DEVNULL)
    import ember._native as native
    library = os.path.join(ROOT, "build", "host", "libember.a")
    if os.path.getmtime(native.__file__) < os.path.getmtime(library):
        pytest.exit(f"{native.__file__} is older than {library}: the C library changed "
                    "since the binding was built; run `pip install -e .` again", returncode=3)
