"""Which functions of ember-run a run reaches, in the order runs first reach them: writes
csrc/code_order.txt, the order SConstruct lays them out in (the code of a process is
mapped in 64 KiB windows around every page it runs, so the code runs reach, packed
together, is what a small model's peak carries; docs/runtime.md, "ember-run").

Each subject (the light zoo, the torch exports, a plan of one add and relu with --memory)
runs once under gdb, with a temporary breakpoint on every function of the binary: the
first hit of each is recorded (a local function several C library members define, by the
member that holds it: the binary's link map, BINARY.map, tells). An x86 binary runs
natively and under each `--isa`; an ARM one under QEMU (its gdb stub, with
gdb-multiarch). Per binary the names go in nested segments, smallest plan first (`ranked`):
what the add-relu plan reached (the loader, the parser, prepare, the C library's start),
then what the next smallest subject reached beyond it, and so on, so that each model's
code is the front of the list up to its segment; the binaries' orders are merged by
relative position (`merged`). Names of the earlier list that only another CPU runs
(AVX-512 kernels, glibc's EVEX string functions, on a machine without AVX-512) keep
their order after the new ones, then those no binary measured defines: the list is an
order, never a filter.

    python benchmarks/code_order.py            # needs gdb and build/host/ember-run
    python benchmarks/code_order.py --ember-run build/host/ember-run \
        --ember-run build/musl/ember-run --ember-run build/aarch64/ember-run \
        --ember-run build/armv7/ember-run --cross-models squeezenet shufflenet \
        mobilenet_v2.legacy tcn.legacy lstm.legacy encoder.dynamo mobilenet_v3.dynamo
        # the order on main: x86 (glibc, musl), ARM
    python benchmarks/code_order.py --merge     # and what this machine's runs reach
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import ember  # noqa: E402
import zoo  # noqa: E402
import cross  # noqa: E402
from bench_models import TORCH_MODELS, subject  # noqa: E402

EMBER_RUN = os.path.join(ROOT, "build", "host", "ember-run")
ORDER = os.path.join(ROOT, "csrc", "code_order.txt")
HEADER = ("# The functions ember-run's runs reach, in the order SConstruct lays them out "
          "first:\n# written by benchmarks/code_order.py; edit by running it again.\n")

# Run inside gdb: a temporary breakpoint on every function, then record each first hit.
GDB_SCRIPT = r"""
import gdb, os, subprocess
binary = gdb.current_progspace().filename
starts = {}
thumb_bit = 1 if gdb.selected_inferior().architecture().name().startswith("arm") else 0
for line in subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True,
                           text=True).stdout.splitlines():
    fields = line.split()
    # ($x, $d, $a, $t: ARM's mapping symbols, which mark code and data, name nothing)
    # (a Thumb function's symbol is its address + 1, its code at the even address)
    if len(fields) == 3 and fields[1] in "tTwW" and not fields[2].startswith("$"):
        starts.setdefault(int(fields[0], 16) & ~thumb_bit, fields[2])
# a name several functions have (a local of several C library members) is recorded with
# its address, for code_order.py to find its member
import collections
names = collections.Counter(starts.values())
starts = {address: name if names[name] == 1 else "%s@%x" % (name, address)
          for address, name in starts.items()}
gdb.execute("set pagination off")
gdb.execute("set confirm off")
if os.environ.get("CODE_ORDER_REMOTE"):
    import time
    for attempt in range(100):      # until QEMU listens
        try:
            gdb.execute("target remote " + os.environ["CODE_ORDER_REMOTE"], to_string=True)
            break
        except gdb.error:
            time.sleep(0.1)
else:
    gdb.execute("starti", to_string=True)
gdb.execute("set breakpoint always-inserted on")
for address in starts:
    gdb.Breakpoint("*0x%x" % address, internal=True, temporary=True)
first_hits = []
while True:
    try:
        gdb.execute("continue", to_string=True)
        pc = int(gdb.parse_and_eval("$pc"))
    except gdb.error:
        break
    if pc in starts:
        first_hits.append(starts[pc])
with open(os.environ["CODE_ORDER_OUT"], "w") as out:
    out.write("\n".join(first_hits) + "\n")
"""


def write_plans(directory, models):
    """(plan path, input .npy or None, extra ember-run arguments) per subject."""
    import onnx
    from onnx import TensorProto, helper
    subjects = []
    for name in models:
        proto, shape = subject(name)
        onnx_path = os.path.join(directory, f"{name}.onnx")
        plan = os.path.join(directory, f"{name}.nnef.tar")
        onnx.save(proto, onnx_path)
        ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan)
        x = os.path.join(directory, f"{name}.npy")
        np.save(x, np.random.default_rng(0).random(shape, dtype=np.float32))
        subjects.append((plan, x, []))
    # a relu of a sum with a constant: --memory reports the constant's resident bytes
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in "xy"]
    c = helper.make_tensor("c", TensorProto.FLOAT, [1, 4], [0.5, -0.5, 1.0, -1.0])
    graph = helper.make_graph([helper.make_node("Add", ["x", "c"], ["s"]),
                               helper.make_node("Relu", ["s"], ["y"])], "base", io[:1],
                              io[1:], [c])
    onnx_path, plan = os.path.join(directory, "base.onnx"), os.path.join(directory, "base.tar")
    onnx.save(helper.make_model(graph), onnx_path)
    ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan)
    subjects.append((plan, None, ["--memory"]))
    return subjects


# ELF e_machine: the architectures ember builds for
MACHINES = {62: "host", 183: "aarch64", 40: "armv7"}


def architecture(binary):
    with open(binary, "rb") as f:
        head = f.read(20)
    machine = MACHINES.get(int.from_bytes(head[18:20], "little"))
    if head[:4] != b"\x7fELF" or machine is None:
        sys.exit(f"code_order: {binary} is not an x86-64, aarch64 or armv7 program")
    return machine


def first_hits(ember_run, arch, plan, x, extra, isa, directory):
    out = os.path.join(directory, "hits.txt")
    env = dict(os.environ, CODE_ORDER_OUT=out)
    if isa:
        env["EMBER_ISA"] = isa
    command = [ember_run, plan] + (["-i", x] if x else []) + extra
    gdb = ["gdb", "-q", "-batch", "-ex", "python exec(" + repr(GDB_SCRIPT) + ")"]
    if arch == "host":
        subprocess.run(gdb + ["--args"] + command, env=env, check=True, capture_output=True)
    else:   # the program waits under QEMU's gdb stub for gdb-multiarch to connect
        port = str(20000 + os.getpid() % 20000)
        qemu = cross.qemu_command(arch, command)
        target = subprocess.Popen(qemu[:1] + ["-g", port] + qemu[1:], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        env["CODE_ORDER_REMOTE"] = "localhost:" + port
        subprocess.run(["gdb-multiarch"] + gdb[1:] + [ember_run], env=env, check=True,
                       capture_output=True)
        target.wait(timeout=600)
    with open(out) as f:
        hits = [line.strip() for line in f if line.strip()]
    if "main" not in hits:
        sys.exit(f"code_order: {' '.join(command)} reached no main under gdb")
    return hits


def member_code(binary):
    """(start, end, archive, member) of each C library member's code (its one .text
    section: the C library has no function sections) in a binary's link map
    (BINARY.map, which SConstruct writes beside a static ember-run); none without one."""
    try:
        with open(binary + ".map") as f:
            text = f.read()
    except OSError:
        return []
    # " .text  0x0000000000512850  0x1fc5 /usr/lib/.../libc.a(printf-parsemb.o)"
    pattern = re.compile(r"^ \.text\s+0x([0-9a-f]+)\s+0x([0-9a-f]+) (\S+)\((\S+)\)$", re.M)
    return [(int(start, 16), int(start, 16) + int(size, 16), os.path.basename(archive), member)
            for start, size, archive, member in pattern.findall(text)]


def resolved(hits, members):
    """The first hits with each NAME@ADDRESS (a name several functions have) made the
    C library member holding it, ARCHIVE:MEMBER (site_scons/code_order.py lays the
    member out whole), or its bare name where it is none's (a function section of
    ember's)."""
    def name_of(hit):
        name, _, address = hit.partition("@")
        at = int(address, 16) if address else None
        place = next((m for m in members if at is not None and m[0] <= at < m[1]), None)
        return f"{place[2]}:{place[3]}" if place else name
    return list(dict.fromkeys(map(name_of, hits)))


def kernels_under(ember_run, isa):
    env = dict(os.environ)
    env.pop("EMBER_ISA", None)
    if isa:
        env["EMBER_ISA"] = isa
    return subprocess.run([ember_run, "--kernels"], env=env, capture_output=True,
                          text=True).stdout


def measured(ember_run, arch, subjects, isas, directory):
    """(isa, subject, first hits) of every run of one binary; an ISA whose kernels are
    the native ones (AVX2 on a core without AVX-512) is not run twice."""
    if arch != "host":
        isas = []           # ARM: one ISA each (NEON)
    else:
        native = kernels_under(ember_run, None)
        isas = [isa for isa in isas if kernels_under(ember_run, isa) != native]
    members = member_code(ember_run)
    return [(isa, plan, resolved(first_hits(ember_run, arch, plan, x, extra, isa, directory),
                                 members))
            for isa in [None] + isas for plan, x, extra in subjects]


def ranked(runs, sizes):
    """Names in nested segments, the smallest subject's first: what the smallest
    subject's runs reached, then what the next smallest reached beyond that, and so on
    (`sizes`: a subject's plan bytes). The smaller a model, the larger the share of its
    peak its code's windows are: each subject's code is then the front of the list up to
    its segment. In a segment, what every ISA's runs reached comes first, then what one
    ISA's only, ISA by ISA (a machine runs one ISA's kernels: the others' stay out of its
    windows where they can); then by the subjects that reached them (most first, the
    same subjects together), then by when they first ran. `runs` holds (isa, subject,
    first hits)."""
    isas = list(dict.fromkeys(isa for isa, _, _ in runs))
    size_rank = {subject: rank for rank, subject in
                 enumerate(sorted(sizes, key=lambda subject: (sizes[subject], subject)))}
    reached, position = {}, {}
    for isa, subject, hits in runs:
        for index, name in enumerate(hits):
            reached.setdefault(name, set()).add((isa, subject))
            position[name] = position.get(name, 0.0) + index / len(hits)

    def key(name):
        by_isa = {isa for isa, _ in reached[name]}
        group = 0 if len(by_isa) == len(isas) else 1 + min(isas.index(i) for i in by_isa)
        subjects = tuple(sorted({s for _, s in reached[name]}))
        segment = min(size_rank[s] for s in subjects)
        return (segment, group, -len(subjects), subjects,
                position[name] / len(reached[name]), name)
    return sorted(reached, key=key)


def merged(orders):
    """One order from each binary's: a name at the earliest relative place any of them
    gives it, so each binary's own names keep about their order."""
    place = {}
    for order in orders:
        for index, name in enumerate(order):
            place[name] = min(place.get(name, 1.0), index / len(order))
    return sorted(place, key=lambda name: (place[name], name))


def function_starts(binary):
    """Sorted (start address, name) of a binary's functions: a Thumb symbol's bit 0
    cleared, ARM's mapping symbols ($a, $t, $d, $x: they name nothing) left out."""
    listing = subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True,
                             text=True, check=True).stdout
    thumb = 1 if architecture(binary) == "armv7" else 0
    found = {}
    for fields in map(str.split, listing.splitlines()):
        if len(fields) == 3 and fields[1] in "tTwW" and not fields[2].startswith("$"):
            found.setdefault(int(fields[0], 16) & ~thumb, fields[2])
    return sorted(found.items())


def functions_of(binary):
    return {name for _, name in function_starts(binary)}


def has_avx512():
    """Whether this machine's CPU has AVX-512 (Linux's /proc/cpuinfo says)."""
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


def cpu_specific(name):
    """An AVX-512 kernel of ember's or an EVEX string function of glibc's."""
    return re.search(r"avx512|evex", name) is not None


def previous_order():
    if not os.path.exists(ORDER):
        return []
    with open(ORDER) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ember-run", action="append",
                        help="an ember-run to measure (again for more; default the host's)")
    parser.add_argument("--isa", action="append", default=["avx2_fma"],
                        help="an EMBER_ISA an x86 binary runs under besides the native one")
    parser.add_argument("--models", nargs="+", help="the subjects (default: the light zoo "
                        "and the torch exports; the add-relu plan always)")
    parser.add_argument("--cross-models", nargs="+", help="the subjects of a program run "
                        "under QEMU (default: --models), where gdb's breakpoints make a "
                        "run some 20x slower (ResNet50 5 minutes)")
    parser.add_argument("--merge", action="store_true", help="fold the measured order into "
                        "the earlier list (as one more binary's) instead of replacing it: "
                        "what another machine's runs reach (glibc's string functions are "
                        "chosen by the CPU: AVX2 ones on a Zen 3, EVEX ones on a Zen 5)")
    args = parser.parse_args()
    binaries = args.ember_run or [EMBER_RUN]
    orders, runs = ([previous_order()] if args.merge else []), 0
    with tempfile.TemporaryDirectory() as directory:
        models = args.models or zoo.light_model_names() + list(TORCH_MODELS)
        subjects = write_plans(directory, models)
        sizes = {plan: os.path.getsize(plan) for plan, _, _ in subjects}
        cross_subjects = [subjects[models.index(name)] for name in args.cross_models or models]
        cross_subjects.append(subjects[-1])         # the add-relu plan
        for binary in binaries:
            arch = architecture(binary)
            measurements = measured(binary, arch, subjects if arch == "host" else cross_subjects,
                                    args.isa, directory)
            orders.append(ranked(measurements, sizes))
            runs += len(measurements)
    order = merged(orders)
    defined = set(order).union(*map(functions_of, binaries))
    # what only another CPU runs (AVX-512 kernels, glibc's EVEX string functions) keeps
    # its earlier order, after what was measured; then the names no binary here defines
    elsewhere = [] if has_avx512() else [
        name for name in previous_order()
        if name in defined and name not in order and cpu_specific(name)]
    kept = [name for name in previous_order() if name not in defined]
    with open(ORDER, "w") as f:
        f.write(HEADER + "\n".join(order + elsewhere + kept) + "\n")
    print(f"{len(order)} functions reached over {runs} runs of {len(binaries)} programs "
          f"({len(elsewhere)} of another CPU's and {len(kept)} undefined here kept from "
          f"the earlier list): {ORDER}")


if __name__ == "__main__":
    main()
