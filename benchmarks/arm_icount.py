"""Instructions per inference of ember on aarch64 (emulated Cortex-A76, one thread), next to
onnxruntime 1.31.1's counts on the same emulated core (the figures of issue 10): the table
of benchmarks/arm_icount.md, reproduced. With --arch armv7, ember's counts on an emulated
Cortex-A15 (32-bit, NEON without FMA), for which there is no onnxruntime figure.

Cooks each model into a plan (the light zoo and MobileNetV2 with seeded random weights,
tests/zoo.py; 2-layer LSTM / GRU of 128 units over 100 frames of 40 features), cross-builds
`build/aarch64/ember-run` (`scons arch=aarch64`), and counts one inference exactly with
`../shared/tools/arm-icount --per-run 1 --cpu cortex-a76` (load and prepare cancel out).
Counts are exact and repeatable, so the machine's load does not matter; each model takes
a minute or more under QEMU.

    python benchmarks/arm_icount.py [model ...]      # default: every model of the table
    python benchmarks/arm_icount.py --arch armv7 [--ember-run OTHER/build/armv7/ember-run]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import ember  # noqa: E402
import zoo  # noqa: E402

ARM_ICOUNT = os.path.join(ROOT, "..", "shared", "tools", "arm-icount", "arm-icount")

# onnxruntime 1.31.1, millions of instructions per inference (issue 10)
ONNXRUNTIME = {"mobilenet_v2": 180.8, "squeezenet": 136.5, "shufflenet": 85.5,
               "inception_v1": 588.8, "inception_v2": 754.5, "resnet50": 1442.0,
               "densenet121": 1169.0, "lstm": 10.6, "gru": 8.7}


def onnx_model(name):
    if name == "mobilenet_v2":
        path = os.path.join(ROOT, "tests", "data", "torch", "mobilenet_v2.legacy.onnx")
        return zoo.randomized_model(path, seed=0), "1,3,224,224,f32"
    if name in ("lstm", "gru"):
        import bench_recurrent
        return bench_recurrent.stacked(name.upper(), hidden=128, features=40)[0], None
    return zoo.randomized_light_model(name, seed=0), None


def cook(name, directory):
    import onnx
    proto, fact = onnx_model(name)
    source = os.path.join(directory, name + ".onnx")
    onnx.save(proto, source)
    cooked = ember.onnx().load(source)
    if fact:
        cooked.set_input_fact(0, fact)
    plan = os.path.join(directory, name + ".nnef.tar")
    ember.nnef().write_model_to_tar(cooked.into_model(), plan)
    return plan


CPUS = {"aarch64": "cortex-a76", "armv7": "cortex-a15"}


def count(plan, arch, program):
    result = subprocess.run([ARM_ICOUNT, "--arch", arch, "--per-run", "1", "--cpu", CPUS[arch],
                             "--", program, plan, "--bench", "{n}"],
                            capture_output=True, text=True, check=True)
    found = re.search(r"per_run=(\d+)", result.stdout + result.stderr)
    if not found:
        raise RuntimeError(f"arm-icount printed no count:\n{result.stdout}{result.stderr}")
    return int(found.group(1)) / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(ONNXRUNTIME))
    parser.add_argument("--arch", choices=sorted(CPUS), default="aarch64")
    parser.add_argument("--ember-run", help="count this cross-built ember-run (another "
                        "build, for a before and after) instead of this tree's")
    args = parser.parse_args()
    program = args.ember_run or os.path.join(ROOT, "build", args.arch, "ember-run")
    if not args.ember_run:
        subprocess.run(["scons", "-Q", "-j2", f"arch={args.arch}"], cwd=ROOT, check=True)
    if args.arch == "aarch64":
        print("| model | onnxruntime | ember | ember / ort |\n|---|---|---|---|", flush=True)
    else:
        print(f"| model | ember ({CPUS[args.arch]}) |\n|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        for name in args.models:
            millions = count(cook(name, directory), args.arch, program)
            if args.arch == "aarch64":
                print(f"| {name} | {ONNXRUNTIME[name]:,.1f} | {millions:,.1f} | "
                      f"{millions / ONNXRUNTIME[name]:.2f} |", flush=True)
            else:
                print(f"| {name} | {millions:,.1f} |", flush=True)


if __name__ == "__main__":
    main()
