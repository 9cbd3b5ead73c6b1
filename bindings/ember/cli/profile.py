"""`ember MODEL dump --profile [--profile-runs N] [--html REPORT.html]`: time per node on
the C runtime (runnable.profile: one warm-up run, then N timed ones), sorted, with its
share and GFLOP/s, then the share per op kind; --html writes the same as a self-contained
page of bar charts (cli/report.py)."""
from . import report
from .session import CliError


def add_profile_options(parser):
    parser.add_argument("--profile", action="store_true",
                        help="time per node on the C runtime, sorted, with its share")
    parser.add_argument("--profile-runs", type=int, default=10, metavar="N",
                        help="runs the profile averages (default 10)")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="with --profile: the profile as a page of bar charts")


def profile_rows(session, args):
    """[{"name", "op", "ms", "percent", "gflops"}], slowest first."""
    runnable = session.runnable()
    inputs, _ = session.inputs(args, runnable)
    if runnable.model.pulse:
        raise CliError("--profile times batch runs: profile the model without --pulse")
    nodes = runnable.profile(inputs, max(args.profile_runs, 1))
    if args.html:
        with open(args.html, "w") as page:
            page.write(report.html(session.path, nodes))
    total = sum(n["seconds"] for n in nodes)
    rows = [{"name": n["name"], "op": n["op"], "form": n["form"] or "-",
             "ms": n["seconds"] * 1e3,
             "percent": 100 * n["seconds"] / total if total else 0.0,
             "gflops": n["flops"] / n["seconds"] * 1e-9 if n["seconds"] > 0 else 0.0}
            for n in nodes]
    return sorted(rows, key=lambda row: -row["ms"])


def print_profile(rows):
    total = sum(row["ms"] for row in rows)
    print(f"time per node (C runtime, one thread): {total:.3f} ms in all")
    for row in rows:
        print(f"{row['ms']:10.3f} ms {row['percent']:5.1f}% {row['gflops']:7.2f} GFLOP/s  "
              f"{row['op']:<12} {row['form']:<22} {row['name']}")
    by_op = {}
    for row in rows:
        by_op[row["op"]] = by_op.get(row["op"], 0.0) + row["ms"]
    if total:
        print("by op: " + ", ".join(f"{op} {100 * ms / total:.1f}%" for op, ms in
                                    sorted(by_op.items(), key=lambda item: -item[1])))
