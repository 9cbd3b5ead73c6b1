"""Node by node, ember against onnxruntime, one thread: where one model's time goes in each
engine, the nodes matched, sorted by how much longer ember takes.

ember's times are its per-node profile (runnable.profile, the C runtime's clock around
each node); onnxruntime's come from its own profiler (SessionOptions.enable_profiling,
each kernel's time). The rounds alternate the engines, each round `--runs` runs of each
after a warm-up; a node's time is the median over rounds of its mean per run. The machine
is shared and its speed moves between rounds: read the two columns of one row against
each other, not against another run's.

Nodes are matched by their ONNX node: ember names a node after the ONNX node it was
cooked from (with '/' and '.' made '_', a suffix where it split one: Gemm's
"NAME_matmul"); onnxruntime names a node it fused after the first node of the chain, or
(its NCHWc layout) after the chain's last output, "OUTPUT_nchwc". onnxruntime's nodes of
its own (the layout's reorders) are listed apart. ember's ops that onnxruntime fuses
(a BatchNorm folded into a conv on both sides) and the reverse show as a time on one
side only.

    python benchmarks/bench_nodes.py squeezenet [--rounds 5] [--runs 50] [--top 25]
    python benchmarks/bench_nodes.py mobilenet_v2.legacy     # a torch export
"""
import argparse
import collections
import json
import os
import re
import statistics
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import ember  # noqa: E402
from bench_models import subject  # noqa: E402

# the ops onnxruntime folds into the node before them (its fused chains)
FUSED_AFTER = {"BatchNormalization", "Relu", "Clip", "Add", "Mul", "Sum", "Sigmoid",
               "HardSigmoid", "LeakyRelu"}


def identifier(name):
    """An ONNX name as ember's plans spell it."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def chain_heads(graph):
    """{name: the ONNX node it stands for}: every node's name, and every output of a chain
    that starts at a node and runs on through single-consumer ops onnxruntime fuses."""
    consumers = collections.defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)
    heads = {}
    for node in graph.node:
        heads[identifier(node.name)] = identifier(node.name)
        last = node
        while True:
            heads.setdefault(identifier(last.output[0]), identifier(node.name))
            following = consumers[last.output[0]]
            if len(following) != 1 or following[0].op_type not in FUSED_AFTER:
                break
            last = following[0]
    return heads


def ember_node_times(runnable, x, runs):
    return {n["name"]: (n["seconds"] * 1e6, n["op"], n["form"], n["shape"])
            for n in runnable.profile([x], runs)}


def ort_node_times(onnx_path, x, runs):
    """{onnxruntime node name: (microseconds per run, op)} of `runs` profiled runs."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as directory:
        options.profile_file_prefix = os.path.join(directory, "ort")
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        session.run(None, feed)  # warm-up
        for _ in range(runs):
            session.run(None, feed)
        with open(session.end_profiling()) as f:
            events = json.load(f)
    times = collections.defaultdict(list)
    ops = {}
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            name = event["name"][:-len("_kernel_time")]
            times[name].append(event["dur"])
            ops[name] = event.get("args", {}).get("op_name", "")
    return {name: (sum(t[-runs:]) / len(t[-runs:]), ops[name]) for name, t in times.items()}


def ember_key(name, heads):
    """The ONNX node an ember node stands for ('NAME_matmul' is NAME's)."""
    if name in heads:
        return heads[name]
    base = name.rsplit("_", 1)[0]
    return heads.get(base, name)


def ort_key(name, heads):
    plain = identifier(name)
    if plain.endswith("_nchwc"):
        plain = plain[:-len("_nchwc")]
    return heads.get(plain)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    import onnx
    proto, shape = subject(args.model)
    heads = chain_heads(proto.graph)
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    with tempfile.TemporaryDirectory() as directory:
        onnx_path = os.path.join(directory, "model.onnx")
        onnx.save(proto, onnx_path)
        plan_path = os.path.join(directory, "model.nnef.tar")
        ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(), plan_path)
        runnable = ember.load_model(plan_path).into_runnable()
        runnable.run([x])
        ember_rounds, ort_rounds = [], []
        for round_ in range(args.rounds):
            order = [0, 1] if round_ % 2 == 0 else [1, 0]
            for engine in order:
                if engine == 0:
                    ember_rounds.append(ember_node_times(runnable, x, args.runs))
                else:
                    ort_rounds.append(ort_node_times(onnx_path, x, args.runs))
    report(ember_rounds, ort_rounds, heads, args.top)


def median(values):
    return statistics.median(values) if values else 0.0


def ember_medians(rounds, heads):
    """({ONNX node: median µs}, {ONNX node: (op, form, shape)}) of ember's rounds."""
    times, about = collections.defaultdict(list), {}
    for round_ in rounds:
        per_key = collections.defaultdict(float)
        for name, (us, op, form, shape) in round_.items():
            key = ember_key(name, heads)
            per_key[key] += us
            about.setdefault(key, (op, form or "-", "[" + ",".join(map(str, shape)) + "]"))
        for key, us in per_key.items():
            times[key].append(us)
    return {key: median(v) for key, v in times.items()}, about


def ort_medians(rounds, heads):
    """({ONNX node: median µs}, {onnxruntime's own node: median µs}) of its rounds."""
    times, own = collections.defaultdict(list), collections.defaultdict(list)
    for round_ in rounds:
        per_key, per_own = collections.defaultdict(float), collections.defaultdict(float)
        for name, (us, op) in round_.items():
            key = ort_key(name, heads)
            if key is None:
                per_own[f"{op} ({name})"] += us
            else:
                per_key[key] += us
        for key, us in per_key.items():
            times[key].append(us)
        for key, us in per_own.items():
            own[key].append(us)
    return ({key: median(v) for key, v in times.items()},
            {key: median(v) for key, v in own.items()})


def report(ember_rounds, ort_rounds, heads, top):
    ember_us, about = ember_medians(ember_rounds, heads)
    ort_us, ort_own = ort_medians(ort_rounds, heads)
    rows = [(ember_us.get(k, 0.0), ort_us.get(k, 0.0), k) for k in set(ember_us) | set(ort_us)]
    rows.sort(key=lambda r: r[1] - r[0])
    own_total = sum(ort_own.values())
    print(f"{len(ember_rounds)} rounds: ember {sum(r[0] for r in rows):.0f} us a run, "
          f"onnxruntime {sum(r[1] for r in rows) + own_total:.0f} us "
          f"({own_total:.0f} in nodes of its own)")
    print(f"{'node':36} {'op':10} {'form':22} {'shape':18} {'ember us':>9} {'ort us':>9} "
          f"{'ratio':>6} {'gap us':>8}")
    by_op = collections.defaultdict(lambda: [0.0, 0.0])
    for rank, (e, o, key) in enumerate(rows):
        op, form, shape = about.get(key, ("(ort only)", "-", ""))
        kind = op if form == "-" else f"{op} {form}"
        by_op[kind][0] += e
        by_op[kind][1] += o
        if rank < top:
            ratio = f"{e / o:6.2f}" if o > 0 else "     –"
            print(f"{key[-36:]:36} {op:10} {form:22} {shape:18} {e:9.1f} {o:9.1f} {ratio} "
                  f"{e - o:+8.1f}")
    print(f"\n{'ember op (form)':36} {'ember us':>9} {'ort us':>9}  "
          "(the same nodes in onnxruntime)")
    for kind, (e, o) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        print(f"{kind:36} {e:9.1f} {o:9.1f}")
    for key, us in sorted(ort_own.items(), key=lambda kv: -kv[1]):
        print(f"{'onnxruntime ' + key:36} {'':9} {us:9.1f}")


if __name__ == "__main__":
    main()
