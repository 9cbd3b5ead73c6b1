"""Where an ARM inference's instructions go: instructions per function of one inference of
a cross-built ember-run under QEMU, exact and repeatable (arm_icount.py's counts, split
by function). A small QEMU plugin (benchmarks/arm_profile.c) counts the instructions of
every translation block run; each block counts to the function its start lies in (the
binaries are static and not position-independent). The program runs twice, with
`--bench 1` and `--bench 1+K`: the difference over K is one inference, load and prepare
cancelled out.

    python benchmarks/arm_profile.py PLAN [-i X.npy] [--arch armv7] [--runs K] [--top N]
        [--ember-run build/aarch64/ember-run] [--cpu cortex-a76]
    python benchmarks/arm_profile.py lstm      # a model of arm_icount.py's table, cooked
    python benchmarks/arm_profile.py PLAN --lines ember_conv_depthwise_run \
        --ember-run build/aarch64-g/ember-run
        # that function's instructions by source line, from a build with debug lines:
        # scons arch=aarch64 builddir=build/aarch64-g CFLAGS=-g (the same code, with -g)

Needs qemu-user and QEMU's plugin header, which ../shared/tools/arm-icount fetches on its
first use (this script runs it once if the header is missing). Instructions are not time:
for memory-bound code they say little (arm-icount's README).
"""
import argparse
import bisect
import collections
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import cross  # noqa: E402
from arm_icount import ARM_ICOUNT, CPUS, cook  # noqa: E402
from code_order import function_starts  # noqa: E402

ICOUNT_DIR = os.environ.get("ARM_ICOUNT_DIR", "/tmp/arm-icount")


def plugin(ember_run, directory):
    """The plugin, built against the QEMU header arm-icount keeps (fetched first if need be)."""
    header = os.path.join(ICOUNT_DIR, "include", "qemu-plugin.h")
    if not os.path.exists(header):
        subprocess.run([ARM_ICOUNT, "--", ember_run, "--version"], check=True,
                       capture_output=True)
    path = os.path.join(directory, "arm_profile.so")
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-I", os.path.dirname(header), "-o",
                    path, os.path.join(ROOT, "benchmarks", "arm_profile.c")], check=True)
    return path


def counted(so, arch, cpu, command, directory):
    """{block start: instructions run} of one run of `command` under QEMU."""
    out = os.path.join(directory, "blocks.txt")
    qemu = cross.qemu_command(arch, command, cpu)
    qemu[1:1] = ["-plugin", f"{so},out={out}"]
    subprocess.run(qemu, check=True, capture_output=True)
    totals = collections.Counter()
    with open(out) as f:
        for line in f:
            start, insns, runs = line.split()
            totals[int(start, 16)] += int(insns) * int(runs)
    return totals


def by_line(blocks, starts, names, function, ember_run, arch):
    """{source line: instructions} of `function`'s blocks, each counted to its start's
    line (addr2line; the binary needs debug lines)."""
    inside = {start: insns for start, insns in blocks.items()
              if names[bisect.bisect_right(starts, start) - 1] == function}
    tool = {"aarch64": "aarch64-linux-gnu-addr2line",
            "armv7": "arm-linux-gnueabihf-addr2line"}[arch]
    addresses = sorted(inside)
    # one line an address, "FILE:LINE" or "FILE:LINE (discriminator N)"
    lines = [line.split(" ")[0] for line in
             subprocess.run([tool, "-e", ember_run, *map(hex, addresses)], capture_output=True,
                            text=True, check=True).stdout.splitlines()]
    totals = collections.Counter()
    for address, line in zip(addresses, lines):
        totals[line.replace(ROOT + os.sep, "")] += inside[address]
    return totals


def by_function(blocks, starts, names):
    totals = collections.Counter()
    for start, insns in blocks.items():
        at = bisect.bisect_right(starts, start) - 1
        totals[names[at] if at >= 0 else "(before the first function)"] += insns
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", help="a plan, or a model of arm_icount.py's table")
    parser.add_argument("-i", dest="inputs", action="append", default=[],
                        help="an input .npy, in model order (ember-run's -i)")
    parser.add_argument("--arch", choices=sorted(CPUS), default="aarch64")
    parser.add_argument("--cpu", help="QEMU's -cpu (default: cortex-a76, armv7 cortex-a15)")
    parser.add_argument("--ember-run", help="the cross-built ember-run "
                        "(default build/<arch>/ember-run)")
    parser.add_argument("--runs", type=int, default=1, help="K: inferences counted (default 1)")
    parser.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    parser.add_argument("--lines", metavar="FUNCTION", help="that function's instructions "
                        "by source line instead (a binary with debug lines)")
    args = parser.parse_args()
    ember_run = args.ember_run or os.path.join(ROOT, "build", args.arch, "ember-run")
    cpu = args.cpu or CPUS[args.arch]
    table = function_starts(ember_run)
    starts, names = [s for s, _ in table], [n for _, n in table]
    inputs = [a for path in args.inputs for a in ("-i", path)]
    with tempfile.TemporaryDirectory() as directory:
        if not os.path.exists(args.plan):
            args.plan = cook(args.plan, directory)
        so = plugin(ember_run, directory)
        blocks = [counted(so, args.arch, cpu, [ember_run, args.plan, *inputs, "--bench", str(n)],
                          directory) for n in (1, 1 + args.runs)]
    if args.lines:
        runs = [by_line(b, starts, names, args.lines, ember_run, args.arch) for b in blocks]
    else:
        runs = [by_function(b, starts, names) for b in blocks]
    per_run = {name: (runs[1][name] - runs[0][name]) / args.runs
               for name in set(runs[0]) | set(runs[1])}
    total = sum(per_run.values())
    print(f"{os.path.basename(args.plan)}: {total / 1e6:.2f}M instructions per inference"
          f"{' in ' + args.lines if args.lines else ''} ({args.arch}, {cpu}; {ember_run})")
    for name, count in sorted(per_run.items(), key=lambda item: -item[1])[:args.top]:
        print(f"{count / 1e6:10.3f}M {100 * count / total:6.2f}%  {name}")


if __name__ == "__main__":
    main()
