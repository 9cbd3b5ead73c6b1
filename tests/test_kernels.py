"""Kernel tests: tests/c/test_kernels.c (GEMM), tests/c/test_gemv.c (GEMV),
tests/c/test_vmath.c (the elementwise transcendentals), tests/c/test_dwconv.c (depthwise
conv runs), tests/c/test_winograd.c (the Winograd transforms), tests/c/test_pool_row.c and
tests/c/test_softmax_row.c (pool and softmax rows) and tests/c/test_pack.c (the GEMM
operands' packing) natively and, cross-built, under QEMU.

test_kernels checks every GEMM kernel this CPU supports against the scalar reference,
test_vmath every vexp / vsigmoid / vtanh / verf kernel against double-precision libm (see
their header comments); both end with "N passed, M failed". Natively it runs with the default
dispatch and with EMBER_ISA=scalar; the build is expected to exist (conftest runs scons).
For aarch64 and armv7 this module cross-builds once (`scons arch=<arch>`) and runs the
program under QEMU, with the NEON kernels and with EMBER_ISA=scalar. Under QEMU,
test_vmath runs its full sweep (~10^7 points per kernel) once, and `--quick` (1/16 of it)
for the EMBER_ISA=scalar run, which only changes dispatch.
"""
import os
import platform
import re
import subprocess

import pytest

import cross

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")


def program(arch, name="test_kernels"):
    return os.path.join(ROOT, "build", arch, "tests", name)


def environment(isa):
    env = dict(os.environ)
    env.pop("EMBER_ISA", None)
    if isa != "default":
        env["EMBER_ISA"] = isa
    return env


def check_run(result, isa, name="test_kernels"):
    output = result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, f"{name} exited {result.returncode}:\n{output[-4000:]}"
    assert lines, f"{name} printed nothing:\n{output}"
    summary = SUMMARY.match(lines[-1])
    assert summary, f"unexpected last line {lines[-1]!r}:\n{output[-4000:]}"
    assert int(summary.group(2)) == 0 and int(summary.group(1)) > 0, output[-4000:]
    dispatch = next((line for line in lines if line.startswith("dispatch:")), "")
    if isa == "scalar" and name == "test_kernels":
        assert "f32_gemm_4x4__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_gemv":
        assert "f32_gemv -> f32_gemv__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_dwconv":
        assert "f32_dwconv -> f32_dwconv__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_winograd":
        assert "f32_winograd -> f32_winograd__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_pool_row":
        assert "f32_pool_row -> f32_pool_row__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_pack":
        assert "f32_pack_scaled -> f32_pack_scaled__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_softmax_row":
        assert "f32_softmax_row -> f32_softmax_row__scalar" in dispatch, dispatch
    if isa == "scalar" and name == "test_vmath":
        for family in ("vexp", "vsigmoid", "vtanh", "verf"):
            assert f"f32_{family} -> f32_{family}__scalar" in dispatch, dispatch


PROGRAMS = ["test_kernels", "test_gemv", "test_vmath", "test_dwconv", "test_winograd",
            "test_pool_row", "test_softmax_row", "test_pack"]


@pytest.mark.parametrize("isa", ["default", "scalar"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_native(name, isa):
    path = program("host", name)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: build the host tree first (`scons -j2` at the "
                    "repository root)", pytrace=False)
    result = subprocess.run([path], env=environment(isa), capture_output=True, text=True,
                            timeout=600)
    check_run(result, isa, name)


def test_gemm_driver_prefetches():
    """The GEMM driver's software prefetches survive compilation: helpers that only
    prefetch were once deleted whole by GCC (they write nothing), silently. On x86 the
    object holds the next panel's and the next C tile's prefetches; elsewhere none
    (kernels.h's EMBER_PREFETCHES: not measured there)."""
    obj = os.path.join(ROOT, "build", "host", "obj", "csrc", "kernels", "f32_gemm.o")
    assert os.path.exists(obj), f"{obj} missing: build the host first (scons)"
    listing = subprocess.run(["objdump", "-d", obj], capture_output=True, text=True,
                             check=True).stdout
    prefetches = len(re.findall(r"\bprefetch|\bprfm\b", listing))
    if platform.machine() in ("x86_64", "AMD64", "i686"):
        assert prefetches >= 3, listing
    else:
        assert prefetches == 0, listing


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="the x86 kernels are built on x86 hosts only")
@pytest.mark.parametrize("kernel", ["f32_gemm_8x32__avx512f", "f32_gemm_12x32__avx512f",
                                    "f32_gemm_6x16__avx2_fma"])
def test_gemm_kernels_prefetch_in_their_loops(kernel):
    """The x86 GEMM kernels spread the driver's prefetch (ember_f32_gemm_params.prefetch)
    over their k loops: a prefetch among the multiply-adds of a loop, not only the
    at-once prefetch before it."""
    obj = os.path.join(ROOT, "build", "host", "obj", "csrc", "kernels", "x86", kernel + ".o")
    assert os.path.exists(obj), f"{obj} missing: build the host first (scons)"
    lines = subprocess.run(["objdump", "-d", obj], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    in_loops = [i for i, line in enumerate(lines) if re.search(r"\bprefetcht[012]\b", line) and
                sum("vfmadd" in later for later in lines[i + 1:i + 30]) >= 8]
    assert in_loops, "no prefetch among the multiply-adds"


@pytest.fixture(scope="module", params=["aarch64", "armv7"])
def cross_arch(request):
    arch = request.param
    cross.require_cross(arch)
    cross.cross_build(arch)
    return arch


@pytest.mark.parametrize("isa", ["default", "scalar"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_under_qemu(cross_arch, name, isa):
    path = program(cross_arch, name)
    assert os.path.exists(path), f"{path} missing after the {cross_arch} cross build"
    quick = name == "test_vmath" and isa == "scalar"  # dispatch only: 1/16 of the sweep
    result = cross.run_under_qemu(cross_arch, [path] + (["--quick"] if quick else []),
                                  env=environment(isa), timeout=1800)
    check_run(result, isa, name)
