"""Cross-building ember for ARM and running its programs under QEMU user-mode emulation.

Shared by every test that runs a cross-built program (kernel tests, ember-run on plans):

    cross.require_cross("aarch64")      # skip (or fail under CI=true) when tools are missing
    cross.cross_build("aarch64")        # `scons arch=aarch64 -j2`, once per test process
    result = cross.run_under_qemu("aarch64", [path_to_program, arg, ...], env=..., timeout=...)

`run_under_qemu` returns the subprocess.CompletedProcess (output captured as text unless
told otherwise). Nothing here knows about any particular program.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Target:
    compiler: str  # cross compiler SConstruct uses for this arch
    qemu: str      # QEMU user-mode emulator
    sysroot: str   # target libraries, passed as `qemu -L` (dynamic loader, libc, libm)
    packages: str  # Debian packages that provide the above


TARGETS = {
    "aarch64": Target("aarch64-linux-gnu-gcc", "qemu-aarch64", "/usr/aarch64-linux-gnu",
                      "gcc-aarch64-linux-gnu qemu-user"),
    "armv7": Target("arm-linux-gnueabihf-gcc", "qemu-arm", "/usr/arm-linux-gnueabihf",
                    "gcc-arm-linux-gnueabihf qemu-user"),
}


def target(arch):
    try:
        return TARGETS[arch]
    except KeyError:
        raise ValueError(f"unknown cross arch {arch!r}; expected one of {', '.join(TARGETS)}")


def scons_command():
    """How to invoke SCons: the module of this Python (a build dependency), else PATH."""
    if importlib.util.find_spec("SCons") is not None:
        return [sys.executable, "-m", "SCons"]
    found = shutil.which("scons")
    return [found] if found else None


def missing_tools(arch):
    """What is missing to cross-build and run `arch` programs, as readable strings."""
    t = target(arch)
    missing = []
    if shutil.which(t.compiler) is None:
        missing.append(f"{t.compiler} (apt: {t.packages.split()[0]})")
    if shutil.which(t.qemu) is None:
        missing.append(f"{t.qemu} (apt: qemu-user)")
    if not os.path.isdir(t.sysroot):
        missing.append(f"{t.sysroot} (apt: {t.packages.split()[0]})")
    if scons_command() is None:
        missing.append("scons (pip: scons)")
    return missing


def require_cross(arch):
    """Skip the calling test when `arch` cannot be built or run here; fail instead under
    CI=true, where the cross tests are mandatory."""
    missing = missing_tools(arch)
    if not missing:
        return
    reason = f"cannot cross-test {arch}: missing {', '.join(missing)}"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true: cross tests are mandatory)", pytrace=False)
    pytest.skip(reason)


_build_lock = threading.Lock()
_build_results = {}  # arch -> None on success, else the failure message


def cross_build(arch, jobs=2):
    """`scons arch=<arch> -j<jobs>` from the repository root, once per process: later
    calls return at once (or fail again with the first failure's message)."""
    target(arch)
    with _build_lock:
        if arch not in _build_results:
            command = scons_command() + ["-C", ROOT, "-Q", f"arch={arch}", f"-j{jobs}"]
            result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            if result.returncode == 0:
                _build_results[arch] = None
            else:
                tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
                _build_results[arch] = (f"cross build failed: {' '.join(command)} "
                                        f"(exit {result.returncode})\n{tail}")
    if _build_results[arch] is not None:
        pytest.fail(_build_results[arch], pytrace=False)


def build_dir(arch):
    """build/<arch>, where cross_build puts the library, ember-run and tests/."""
    return os.path.join(ROOT, "build", arch)


def qemu_command(arch, argv, cpu=None):
    """The command line running `argv` (a cross-built program and its arguments) under QEMU;
    `cpu` is QEMU's -cpu model, to reach a particular ISA path."""
    t = target(arch)
    command = [t.qemu, "-L", t.sysroot]
    if cpu:
        command += ["-cpu", cpu]
    return command + [os.fspath(a) for a in argv]


def run_under_qemu(arch, argv, cpu=None, **kw):
    """Run `argv` under QEMU for `arch`; keyword arguments go to subprocess.run (env=None
    inherits this environment; output is captured as text unless overridden)."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run(qemu_command(arch, argv, cpu), **kw)


def compare_plan(arch, plan, inputs, n_outputs, directory, name, rtol=1e-5, atol=1e-6):
    """Run `plan` on the .npy `inputs` with the host's and the target's ember-run; returns
    a description of how the target's outputs differ, or None when they match (floats
    within rtol/atol, the rest exactly)."""
    import subprocess

    import numpy as np
    host_run = os.path.join(ROOT, "build", "host", "ember-run")
    target_run = os.path.join(ROOT, "build", arch, "ember-run")
    args = [a for path in inputs for a in ("-i", path)]
    host_out = [os.path.join(directory, f"{name}.host{i}.npy") for i in range(n_outputs)]
    arm_out = [os.path.join(directory, f"{name}.{arch}{i}.npy") for i in range(n_outputs)]
    host = subprocess.run([host_run, plan] + args + [a for p in host_out for a in ("-o", p)],
                          capture_output=True, text=True, timeout=120)
    assert host.returncode == 0, f"{name} on the host: {host.stderr}"
    result = run_under_qemu(arch, [target_run, plan] + args +
                            [a for p in arm_out for a in ("-o", p)], timeout=300)
    if result.returncode != 0:
        return f"exit {result.returncode}: {result.stderr.strip()[:200]}"
    for h, a in zip(host_out, arm_out):
        want, got = np.load(h), np.load(a)
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"{got.dtype}{got.shape}, host {want.dtype}{want.shape}"
        if want.dtype.kind in "fc":
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                worst = np.nanmax(np.abs(got.astype(np.float64) - want))
                return f"differs by {worst:.3g}"
        elif not np.array_equal(got, want):
            return "integer outputs differ"
    return None
