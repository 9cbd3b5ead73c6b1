"""Peak memory of ember-run against onnxruntime, one thread, one run: the model-zoo "light"
architectures (tests/zoo.py, seeded random weights) and vgg19.

Each engine runs in a process of its own, which reports its own peak resident size (on
Linux VmHWM, the high-water mark of the process's own memory: getrusage's ru_maxrss would
also carry the high-water mark of this benchmark, its parent, which holds the model):
ember is `build/host/ember-run PLAN.tar --memory`, onnxruntime a Python process that
loads the .onnx and runs it once (the interpreter, numpy and onnxruntime alone — "ort
base" — are part of its peak). ember's report gives its weights (the plan's constants)
and arena, and the target ratio peak / (weights + arena), which the issue wants at most
1.1; "private" is the same ratio without the pages mapped from files at exit (ember-run's
code and read-only data, about 1 MB: a fixed cost, shared by every process running it). An ember-run given with --before (one without --memory will do) is measured from
outside: its ru_maxrss, as a grandchild started by a small launcher process.

    python benchmarks/bench_memory.py [model ...]
    python benchmarks/bench_memory.py --before /work/main/build/host/ember-run vgg19
        # also the peak of another ember-run on the same plan (one without --memory works)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import ember  # noqa: E402
import zoo  # noqa: E402

EMBER_RUN = os.path.join(ROOT, "build", "host", "ember-run")
MB = 1e6

ORT_IMPORTS = """
import sys
import numpy as np
import onnxruntime as ort
"""
ORT_SESSION = """
options = ort.SessionOptions()
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
session = ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
first = session.get_inputs()[0]
session.run(None, {first.name: np.zeros((1, 3, 224, 224), np.float32)})
"""
PRINT_PEAK = """
print(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")))
"""
ORT_RUN = ORT_IMPORTS + ORT_SESSION + PRINT_PEAK
ORT_BASE = ORT_IMPORTS + PRINT_PEAK
# Forks the command and prints its ru_maxrss: the command's high-water mark starts from
# this small process's memory, not from the benchmark's.
LAUNCHER = """import os, sys
child = os.fork()
if child == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(child, 0)
print("ru_maxrss", usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run(command):
    result = subprocess.run(command, capture_output=True, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {(result.stdout + result.stderr)[-300:]}")
    return result.stdout


def vm_hwm(output):
    return int(re.search(r"VmHWM:\s*(\d+) kB", output).group(1)) * 1024


def ember_report(ember_run, plan):
    """ember-run --memory's breakdown and peak, in bytes."""
    output = run([ember_run, plan, "--memory"])
    found = re.search(r"memory: constants ([\d.]+) MB \(resident ([\d.]+) MB\), packed "
                      r"([\d.]+) MB, arena ([\d.]+) MB\npeak RSS: ([\d.]+) MB", output)
    constants, resident, packed, arena, peak = (float(v) * MB for v in found.groups())
    files = re.search(r"resident now: [\d.]+ MB private, ([\d.]+) MB mapped from files", output)
    return {"weights": constants, "resident": resident, "packed": packed, "arena": arena,
            "peak": peak, "files": float(files.group(1)) * MB if files else 0.0}


def launched_peak(command):
    words = run([sys.executable, "-c", LAUNCHER] + command).split()
    maxrss, code = int(words[-2]), int(words[-1])
    if code != 0:
        raise RuntimeError(f"{command[0]} exited with {code}")
    return maxrss * 1024   # KiB on Linux


def measure(name, ember_run, before):
    with tempfile.TemporaryDirectory() as directory:
        onnx_path = os.path.join(directory, f"{name}.onnx")
        plan = os.path.join(directory, f"{name}.nnef.tar")
        import onnx
        onnx.save(zoo.randomized_light_model(name, seed=0), onnx_path)
        ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan)
        result = ember_report(ember_run, plan)
        result["ort"] = vm_hwm(run([sys.executable, "-c", ORT_RUN, onnx_path]))
        if before:
            result["before"] = launched_peak([before, plan])
        return result


def ember_base(ember_run):
    """The peak of ember-run on a one-relu plan: the process, the C library and the
    runtime's code, which every model's peak carries."""
    import onnx
    from onnx import TensorProto, helper
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in "xy"]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "base", io[:1], io[1:])
    with tempfile.TemporaryDirectory() as directory:
        onnx_path, plan = os.path.join(directory, "base.onnx"), os.path.join(directory, "base.tar")
        onnx.save(helper.make_model(graph), onnx_path)
        ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan)
        return ember_report(ember_run, plan)["peak"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another ember-run whose peak to show alongside")
    parser.add_argument("--ember-run", default=EMBER_RUN, help="the ember-run measured "
                        "(default: this tree's build/host/ember-run)")
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()
    models = args.models or sorted(set(zoo.light_model_names()) | {"vgg19"})
    ort_base = vm_hwm(run([sys.executable, "-c", ORT_BASE]))
    print(f"ort base (interpreter + numpy + onnxruntime, no model): {ort_base / MB:.1f} MB")
    print(f"ember base (ember-run on a one-relu plan: the process, libc, the runtime's code): "
          f"{ember_base(args.ember_run) / MB:.1f} MB")
    print(f"{'model':13} {'weights':>9} {'arena':>8} {'packed':>9} {'resident':>9} "
          f"{'ember peak':>11} {'peak/(w+a)':>11} {'private':>8} {'ort peak':>9} {'ember/ort':>10}"
          + (f" {'before':>9}" if args.before else ""))
    for name in models:
        r = measure(name, args.ember_run, args.before)
        target = r["peak"] / (r["weights"] + r["arena"])
        private = (r["peak"] - r["files"]) / (r["weights"] + r["arena"])
        print(f"{name:13} {r['weights'] / MB:8.1f}M {r['arena'] / MB:7.1f}M "
              f"{r['packed'] / MB:8.1f}M {r['resident'] / MB:8.1f}M {r['peak'] / MB:10.1f}M "
              f"{target:11.2f} {private:8.2f} {r['ort'] / MB:8.1f}M {r['peak'] / r['ort']:10.2f}"
              + (f" {r['before'] / MB:8.1f}M" if args.before else ""), flush=True)


if __name__ == "__main__":
    main()
