"""Which functions of ember-run a run reaches, in the order runs first reach them: writes
csrc/code_order.txt, the order SConstruct lays them out in (the code of a process is
mapped in 64 KiB windows around every page it runs, so the code runs reach, packed
together, is what a small model's peak carries; docs/runtime.md, "ember-run").

Each subject (the light zoo, the torch exports, a one-relu plan with --memory) runs once
under gdb, natively and under each `EMBER_ISA` the machine can run, with a temporary
breakpoint on every function of the binary: the first hit of each is recorded. What
every run reached comes first (the loader, the parser, prepare, the common ops), then
what one ISA's runs reached, then one model's (`ranked`). The names of the earlier list
that this binary does not define (another architecture's kernels) are kept after the
new ones: the list is an order, never a filter.

    python benchmarks/code_order.py            # needs gdb and build/host/ember-run
    python benchmarks/code_order.py --isa avx2_fma --isa scalar   # the ISAs to add
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import ember  # noqa: E402
import zoo  # noqa: E402
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
for line in subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True,
                           text=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 3 and fields[1] in "tTwW":
        starts.setdefault(int(fields[0], 16), fields[2])
gdb.execute("set pagination off")
gdb.execute("set confirm off")
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


def write_plans(directory):
    """(plan path, input .npy or None, extra ember-run arguments) per subject."""
    import onnx
    from onnx import TensorProto, helper
    subjects = []
    for name in zoo.light_model_names() + list(TORCH_MODELS):
        proto, shape = subject(name)
        onnx_path = os.path.join(directory, f"{name}.onnx")
        plan = os.path.join(directory, f"{name}.nnef.tar")
        onnx.save(proto, onnx_path)
        ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan)
        x = os.path.join(directory, f"{name}.npy")
        np.save(x, np.random.default_rng(0).random(shape, dtype=np.float32))
        subjects.append((plan, x, []))
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in "xy"]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "base", io[:1], io[1:])
    onnx_path, plan = os.path.join(directory, "base.onnx"), os.path.join(directory, "base.tar")
    onnx.save(helper.make_model(graph), onnx_path)
    ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan)
    subjects.append((plan, None, ["--memory"]))
    return subjects


def first_hits(ember_run, plan, x, extra, isa, directory):
    out = os.path.join(directory, "hits.txt")
    env = dict(os.environ, CODE_ORDER_OUT=out)
    if isa:
        env["EMBER_ISA"] = isa
    command = [ember_run, plan] + (["-i", x] if x else []) + extra
    subprocess.run(["gdb", "-q", "-batch", "-ex", "python exec(" + repr(GDB_SCRIPT) + ")",
                    "--args"] + command, env=env, check=True, capture_output=True)
    with open(out) as f:
        hits = [line.strip() for line in f if line.strip()]
    if "main" not in hits:
        sys.exit(f"code_order: {' '.join(command)} reached no main under gdb")
    return hits


def ranked(runs):
    """Names in groups: those every ISA's runs reached, then those of one ISA only, ISA
    by ISA (a machine runs one ISA's kernels: the others' stay out of its windows); in a
    group by the subjects that reached them (most first, the same subjects together),
    then by when they first ran. `runs` holds (isa, subject, first hits)."""
    isas = list(dict.fromkeys(isa for isa, _, _ in runs))
    reached, position = {}, {}
    for isa, subject_index, hits in runs:
        for index, name in enumerate(hits):
            reached.setdefault(name, set()).add((isa, subject_index))
            position[name] = position.get(name, 0.0) + index / len(hits)

    def key(name):
        by_isa = {isa for isa, _ in reached[name]}
        group = 0 if len(by_isa) == len(isas) else 1 + min(isas.index(i) for i in by_isa)
        subjects = tuple(sorted({s for _, s in reached[name]}))
        return (group, -len(subjects), subjects, position[name] / len(reached[name]), name)
    return sorted(reached, key=key)


def functions_of(binary):
    listing = subprocess.run(["nm", "--defined-only", binary], capture_output=True,
                             text=True, check=True).stdout
    return {fields[2] for fields in map(str.split, listing.splitlines())
            if len(fields) == 3 and fields[1] in "tTwW"}


def previous_order():
    if not os.path.exists(ORDER):
        return []
    with open(ORDER) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ember-run", default=EMBER_RUN)
    parser.add_argument("--isa", action="append", default=["avx2_fma"],
                        help="an EMBER_ISA to run under besides the native one")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as directory:
        subjects = write_plans(directory)
        for isa in [None] + args.isa:
            for index, (plan, x, extra) in enumerate(subjects):
                runs.append((isa, index, first_hits(args.ember_run, plan, x, extra, isa,
                                                    directory)))
    order = ranked(runs)
    defined = set(order) | functions_of(args.ember_run)
    kept = [name for name in previous_order() if name not in defined]
    with open(ORDER, "w") as f:
        f.write(HEADER + "\n".join(order + kept) + "\n")
    print(f"{len(order)} functions reached over {len(runs)} runs "
          f"({len(kept)} kept from the earlier list): {ORDER}")


if __name__ == "__main__":
    main()
