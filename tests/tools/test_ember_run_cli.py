"""ember-run as a careless user meets it: --version, --help, --kernels, --memory; an
EMBER_ISA that names no ISA (or one the CPU lacks) is an error naming the usable ones; an
.onnx file says to cook it first; more -o files than outputs is refused before running; a directory
that is not a plan (/tmp given by mistake) is refused before it is walked, and a plan
directory is read without following links out of it. Also the library's symbol
hygiene: every global symbol of libember.a starts with ember_, and libember.so exports
only the ember_ API; and ember-run is one static file."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build", "host")
EMBER_RUN = os.path.join(BUILD, "ember-run")
CORE_CLASSES = ("generic", "zen5", "zen4", "sapphire_rapids", "zen3")  # as EMBER_CORE names them


def run(*args, env=None):
    assert os.path.exists(EMBER_RUN), "build/host/ember-run is missing: run scons"
    full_env = dict(os.environ)
    full_env.pop("EMBER_ISA", None)
    full_env.update(env or {})
    return subprocess.run([EMBER_RUN, *args], capture_output=True, text=True, timeout=60,
                          env=full_env)


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory):
    """The digits model cooked into a plan directory (its labels nest as folders)."""
    im = ember.onnx().load(os.path.join(ROOT, "examples", "digits.onnx"))
    im.set_input_fact(0, "1,1,8,8,f32")
    directory = str(tmp_path_factory.mktemp("plans") / "digits")
    ember.nnef().write_model_to_dir(im.into_model(), directory)
    return directory


def test_version_help_and_kernels():
    assert run("--version").stdout.strip() == f"ember-run {ember.version()}"
    help_text = run("--help")
    assert help_text.returncode == 0
    for flag in ("-i X.npy", "-o Y.npy", "--bench", "--stream", "--memory", "--kernels",
                 "--version"):
        assert flag in help_text.stdout
    kernels = run("--kernels").stdout.splitlines()
    assert [line.split()[0] for line in kernels] == [
        "f32_gemm", "f32_gemv", "f32_vexp", "f32_vsigmoid", "f32_vtanh", "f32_verf",
        "f32_dwconv", "f32_winograd", "f32_hard_swish", "f32_pool_row", "f32_softmax_row",
        "f32_pack_scaled", "core"]
    assert kernels[-1].split()[1] in CORE_CLASSES
    for core in CORE_CLASSES:
        assert run("--kernels", env={"EMBER_CORE": core}).stdout.splitlines()[-1] == "core " + core
    scalar = run("--kernels", env={"EMBER_ISA": "scalar"}).stdout
    assert "f32_hard_swish f32_hard_swish__scalar" in scalar
    assert "f32_gemm f32_gemm_4x4__scalar" in scalar
    assert "f32_gemv f32_gemv__scalar" in scalar
    assert "f32_winograd f32_winograd__scalar" in scalar
    assert "f32_pool_row f32_pool_row__scalar" in scalar
    assert "f32_softmax_row f32_softmax_row__scalar" in scalar
    assert "f32_pack_scaled f32_pack_scaled__scalar" in scalar


@pytest.mark.parametrize("value, message", [
    ("avx9", "EMBER_ISA=avx9 names no ISA; this CPU has scalar"),
    ("neon_armv7", "EMBER_ISA=neon_armv7: this CPU has no neon_armv7"),
])
def test_a_bad_ember_isa_is_an_error(plan_dir, value, message):
    result = run(plan_dir, env={"EMBER_ISA": value})
    assert result.returncode == 1 and message in result.stderr, result.stderr
    with pytest.raises(ember.EmberError, match=message.split(";")[0]):
        old = os.environ.get("EMBER_ISA")
        os.environ["EMBER_ISA"] = value
        try:
            ember.load_model(plan_dir).into_runnable()
        finally:
            os.environ.pop("EMBER_ISA") if old is None else os.environ.update(EMBER_ISA=old)
    assert run(plan_dir, env={"EMBER_ISA": "scalar"}).returncode == 0


def test_a_bad_ember_core_is_an_error(plan_dir):
    result = run(plan_dir, env={"EMBER_CORE": "zen9"})
    assert result.returncode == 1, result.stderr
    assert ("EMBER_CORE=zen9 names no core class (" + ", ".join(CORE_CLASSES) + ")"
            in result.stderr)
    for core in CORE_CLASSES:
        assert run(plan_dir, env={"EMBER_CORE": core}).returncode == 0


def test_memory_prints_the_report_and_the_peak(plan_dir):
    """--memory: the constants are the plan's .dat items (a directory is read into memory:
    all resident), packed weights and arena are there, and the peak RSS is the process's
    (at least the memory the runnable holds)."""
    import re
    result = run(plan_dir, "--memory", "--bench", "2")
    assert result.returncode == 0, result.stderr
    report = re.search(r"^memory: constants ([\d.]+) MB \(resident ([\d.]+) MB\), "
                       r"packed ([\d.]+) MB, arena ([\d.]+) MB$", result.stdout, re.M)
    peak = re.search(r"^peak RSS: ([\d.]+) MB$", result.stdout, re.M)
    assert report and peak, result.stdout
    constants, resident, packed, arena = map(float, report.groups())
    items = sum(os.path.getsize(os.path.join(folder, name)) - 128
                for folder, _, names in os.walk(plan_dir) for name in names
                if name.endswith(".dat"))
    assert constants == round(items / 1e6, 2) and resident == constants
    assert packed > 0 and arena > 0
    assert float(peak.group(1)) >= packed + arena
    # Linux: what is resident now, split into the process's own pages and the file-backed
    # ones (its code); together at most the peak, the own ones holding the runnable
    now = re.search(r"^resident now: ([\d.]+) MB private, ([\d.]+) MB mapped from files$",
                    result.stdout, re.M)
    if sys.platform.startswith("linux"):
        assert now, result.stdout
        private, files = map(float, now.groups())
        assert private + files <= float(peak.group(1)) + 0.02
        assert private >= packed + arena and files > 0
    assert "run: median" in result.stdout      # with --bench: its report, then this one


def test_an_input_read_into_the_runnable_gives_what_a_copied_one_gives(plan_dir, tmp_path):
    """One run reads each .npy straight into the runnable's input buffer; --bench keeps a
    copy of its own (every run reuses that buffer); f64 files are narrowed in a buffer of
    their own. All give the same outputs; a file of the wrong shape or a truncated one is
    an error naming it."""
    x = np.random.default_rng(3).standard_normal((1, 1, 8, 8))
    np.save(tmp_path / "x.npy", x.astype(np.float32))
    np.save(tmp_path / "x64.npy", x)
    outputs = {}
    for name, args in {"in place": ["-i", "x.npy"], "copied": ["--bench", "2", "-i", "x.npy"],
                       "f64": ["-i", "x64.npy"]}.items():
        out = str(tmp_path / f"{name}.npy")
        result = run(plan_dir, *[str(tmp_path / a) if a.endswith(".npy") else a
                                 for a in args], "-o", out)
        assert result.returncode == 0, result.stderr
        outputs[name] = np.load(out)
    assert np.array_equal(outputs["in place"], outputs["copied"])
    assert np.array_equal(outputs["in place"], outputs["f64"])
    assert float(np.abs(outputs["copied"]).max()) > 0
    np.save(tmp_path / "wide.npy", np.zeros((1, 1, 8, 9), np.float32))
    result = run(plan_dir, "-i", str(tmp_path / "wide.npy"))
    assert result.returncode == 1 and "expected f32 [1, 1, 8, 8], got f32 [1, 1, 8, 9]" \
        in result.stderr, result.stderr
    (tmp_path / "short.npy").write_bytes((tmp_path / "x.npy").read_bytes()[:-20])
    result = run(plan_dir, "-i", str(tmp_path / "short.npy"))
    assert result.returncode == 1 and "short.npy: truncated" in result.stderr, result.stderr


def test_an_onnx_file_says_cook_it_first():
    result = run(os.path.join(ROOT, "examples", "digits.onnx"))
    assert result.returncode == 2
    assert "is an ONNX model; cook it into a plan first" in result.stderr
    assert "write_model_to_tar" in result.stderr


def test_more_output_files_than_outputs_is_refused_before_running(plan_dir, tmp_path):
    result = run(plan_dir, "-o", str(tmp_path / "a.npy"), "-o", str(tmp_path / "b.npy"))
    assert result.returncode == 1 and "2 -o files for 1 outputs" in result.stderr
    assert not (tmp_path / "a.npy").exists()


def test_an_unsupported_npy_dtype_names_the_supported_ones(plan_dir, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 8, 8), np.complex64))
    result = run(plan_dir, "-i", str(tmp_path / "x.npy"))
    assert result.returncode == 1
    assert "f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64 or bool" in result.stderr


def test_a_directory_that_is_not_a_plan_is_refused_unwalked(tmp_path):
    (tmp_path / "deep" / "deeper").mkdir(parents=True)
    (tmp_path / "deep" / "deeper" / "w.dat").write_bytes(b"not read")
    result = run(str(tmp_path))
    assert result.returncode == 1
    assert "not a plan directory (no graph.nnef in it)" in result.stderr


def test_links_out_of_a_plan_directory_are_not_followed(plan_dir, tmp_path):
    plan = tmp_path / "plan"
    shutil.copytree(plan_dir, plan)
    # a link to a directory outside: not entered (its dangling .dat would fail the load)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(tmp_path / "nowhere", outside / "gone.dat")
    os.symlink(outside, plan / "elsewhere")
    assert run(str(plan)).returncode == 0
    (plan / "elsewhere").unlink()
    shutil.copytree(outside, plan / "inside", symlinks=True)
    assert "gone.dat" in run(str(plan)).stderr     # a real folder is entered
    shutil.rmtree(plan / "inside")
    # a .dat the graph reads, replaced by a link out of the plan: refused
    dat = next(os.path.join(d, f) for d, _, files in os.walk(plan) for f in files
               if f.endswith(".dat") and "elsewhere" not in d)
    shutil.move(dat, tmp_path / "moved.dat")
    os.symlink(tmp_path / "moved.dat", dat)
    result = run(str(plan))
    assert result.returncode == 1 and "a link out of the plan directory" in result.stderr
    # the same link to a file inside the plan is fine
    os.remove(dat)
    shutil.move(tmp_path / "moved.dat", plan / "kept.bin")
    os.symlink(plan / "kept.bin", dat)
    assert run(str(plan)).returncode == 0


def symbols(library, *flags):
    nm = shutil.which("nm")
    assert nm, "nm (binutils) is needed for the symbol check"
    out = subprocess.run([nm, "-g", "--defined-only", *flags, library], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines()
            if len(line.split()) == 3 and line.split()[1] in "TDBRVW"}


def test_every_global_symbol_starts_with_ember():
    static = symbols(os.path.join(BUILD, "libember.a"))
    assert static and not {s for s in static if not s.startswith("ember_")}
    shared = symbols(os.path.join(BUILD, "libember.so"), "-D")
    assert "ember_model_load" in shared
    assert not {s for s in shared if not s.startswith("ember_")}


def test_ember_run_is_one_static_file():
    """ember-run needs no shared library, so the file runs on a board whatever its C
    library (SConstruct links it statically where the toolchain has a static libc, as
    Debian's libc6-dev does): no dynamic section, no interpreter."""
    out = subprocess.run(["readelf", "-d", "-l", EMBER_RUN], capture_output=True, text=True,
                         check=True).stdout
    assert "There is no dynamic section" in out and "NEEDED" not in out, out
    assert "INTERP" not in out, out


def section_ranges(binary):
    """{section name: (start, end)} of a program's allocated sections."""
    out = subprocess.run(["readelf", "-S", "-W", binary], capture_output=True, text=True,
                         check=True).stdout
    ranges = {}
    for fields in (line.replace("[ ", "[").split() for line in out.splitlines()):
        if len(fields) > 5 and fields[0].startswith("[") and fields[0] != "[Nr]":
            start, size = int(fields[3], 16), int(fields[5], 16)
            ranges[fields[1]] = (start, start + size)
    return ranges


def site_code_order():
    """site_scons/code_order.py, the build's reader of csrc/code_order.txt (by path:
    benchmarks/code_order.py has the same module name)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "site_code_order", os.path.join(ROOT, "site_scons", "code_order.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_math_librarys_tables_lie_after_the_unwind_tables():
    """A static ember-run's libm tables (__sincostab, __exp_data) lie in
    .rodata.math_tables, after .eh_frame and out of .rodata; the float functions' data
    (__exp2f_data, expf's) stays in .rodata."""
    script = open(os.path.join(BUILD, "code_order_static.ld")).read()
    assert ".rodata.math_tables" in script and "INSERT AFTER .eh_frame" in script, script
    ranges = section_ranges(EMBER_RUN)
    rodata, unwind, tables = (ranges[name] for name in
                              (".rodata", ".eh_frame", ".rodata.math_tables"))
    assert rodata[1] <= unwind[0] and unwind[1] <= tables[0], ranges
    symbols = subprocess.run(["nm", "--defined-only", EMBER_RUN], capture_output=True,
                             text=True, check=True).stdout
    address = {fields[2]: int(fields[0], 16) for fields in map(str.split, symbols.splitlines())
               if len(fields) == 3}
    for name in ("__sincostab", "__exp_data"):
        assert tables[0] <= address[name] < tables[1], (name, hex(address[name]), ranges)
    assert rodata[0] <= address["__exp2f_data"] < rodata[1], (hex(address["__exp2f_data"]),
                                                                ranges)


@pytest.mark.parametrize("binary", ["ember-run", "libember.so"])
def test_the_code_runs_reach_is_laid_out_first(binary):
    """csrc/code_order.txt's functions lie in .text.run_order, before .text: the C
    library's startup and printf beside the loader, the parser and the common kernels in
    ember-run (and the start files' code: _start), ember's own in libember.so; a member
    the list names itself (ARCHIVE:MEMBER, for a local function several members define)
    goes whole; a function no listed run reaches (the determinant's) stays in .text,
    with the rest."""
    path = os.path.join(BUILD, binary)
    ranges = section_ranges(path)
    hot, rest = ranges[".text.run_order"], ranges[".text"]
    assert hot[1] <= rest[0], ranges
    symbols = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                             check=True).stdout
    address = {fields[2]: int(fields[0], 16) for fields in map(str.split, symbols.splitlines())
               if len(fields) == 3 and fields[1] in "tT"}
    order = site_code_order().read_order(os.path.join(ROOT, "csrc", "code_order.txt"))
    listed = ["ember_runnable_run", "ember_nnef_parse", "ember_instance_execute"]
    if "ember_f32_gemm_6x16__avx2_fma" in address:      # an x86 build
        listed.append("ember_f32_gemm_6x16__avx2_fma")
    if binary == "ember-run":
        listed += ["main", "__libc_start_main", "__printf_fp_l", "_int_malloc"]
        # the start files' code, laid out first without being listed
        assert hot[0] <= address["_start"] < hot[1], (hex(address["_start"]), ranges)
        # the members the list names are laid out whole, by the script of this build
        members = [name for name in order if ":" in name]
        assert members, "the list names no member"
        script = open(os.path.join(BUILD, "code_order_static.ld")).read()
        for member in members:
            assert f"    *{member}(.text .text.*)" in script, member
    # a function's cold part (NAME.cold, gcc's section .text.unlikely.NAME) too
    cold = [name for name in order if name.endswith(".cold") and name in address]
    assert cold, "the list names no cold part this build defines"
    for name in listed + cold:
        assert name in order, name
        assert hot[0] <= address[name] < hot[1], (name, hex(address[name]), ranges)
    assert "det_run" not in order
    assert rest[0] <= address["det_run"] < rest[1]
