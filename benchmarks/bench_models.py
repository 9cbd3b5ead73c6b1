"""ember vs onnxruntime vs tract, one thread: the model-zoo "light" architectures and the
torch exports of tests/data/torch (voice and mobile models, symbolic axes kept).

The weights are seeded random (tests/zoo.py); the input random, of the shape given
(light models: 1x3x224x224). For each engine: load time (file → ready to run) and the
median of the run times, all in this one process, engines interleaved per round so
machine noise hits them alike; the ratio columns are the medians of the rounds' ratios.
ember loads a .tar plan; for a torch model the plan keeps its symbolic axes, and the
first run prepares the binding (included in "load").

    python benchmarks/bench_models.py [--rounds 7] [model ...]
    python benchmarks/bench_models.py --torch           # tcn, mobilenet_v3, encoder, …
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import ember  # noqa: E402
import zoo  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - t0) * 1e3


# torch exports (tests/data/torch/<name>.onnx) and the input shape each is run at
TORCH_MODELS = {
    "tcn.legacy": (1, 40, 100),
    "mobilenet_v3.dynamo": (1, 3, 96, 96),
    "mobilenet_v2.legacy": (1, 3, 224, 224),
    "encoder.dynamo": (1, 50, 40),
    "lstm.legacy": (1, 100, 40),
    "lstm.dynamo": (1, 100, 40),
    "gru.legacy": (1, 100, 40),
    "gru.dynamo": (1, 100, 40),
}


def subject(name):
    """(ONNX proto, input shape) of a light model or a torch export."""
    if name in TORCH_MODELS:
        path = os.path.join(ROOT, "tests", "data", "torch", name + ".onnx")
        return zoo.randomized_model(path, seed=0), TORCH_MODELS[name]
    return zoo.randomized_light_model(name, seed=0), (1, 3, 224, 224)


def engines(onnx_path, plan_path, shape):
    import onnxruntime as ort
    import tract

    def load_ember():
        model = ember.load_model(plan_path)
        runnable = model.into_runnable()   # a static plan is prepared here
        if model.symbols:                  # a symbolic one at its first run, for its shapes
            runnable.run([np.zeros(shape, np.float32)])
        return runnable

    def load_ort():
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3   # no shape warnings on dynamic exports
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return lambda x: session.run(None, {name: x})

    def load_tract():
        model = tract.onnx().load(onnx_path)
        model.set_input_fact(0, ",".join(map(str, shape)) + ",f32")
        return model.into_model().into_runnable()

    return {
        "ember": (load_ember, lambda r, x: r.run([x])),
        "onnxruntime": (load_ort, lambda r, x: r(x)),
        "tract": (load_tract, lambda r, x: r.run([x])),
    }


def bench(name, rounds):
    proto, shape = subject(name)
    with tempfile.TemporaryDirectory() as directory:
        onnx_path = os.path.join(directory, f"{name}.onnx")
        import onnx
        onnx.save(proto, onnx_path)
        plan_path = os.path.join(directory, f"{name}.nnef.tar")
        specs = engines(onnx_path, plan_path, shape)
        try:
            ember.nnef().write_model_to_tar(ember.onnx().load(onnx_path).into_model(),
                                            plan_path)
        except ember.cook.CookError as error:
            print(f"  {name}: ember cannot cook it: {str(error).splitlines()[0][:120]}")
            del specs["ember"]
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        loaded, load_ms, run_ms = {}, {}, {}
        for engine, (load, _run) in list(specs.items()):
            try:
                loaded[engine], load_ms[engine] = timed(load)
            except Exception as error:          # noqa: BLE001 (an engine may refuse a model)
                print(f"  {name}: {engine} cannot run it: {str(error).splitlines()[0][:100]}")
                del specs[engine]
            run_ms[engine] = []
        for engine, (_load, run) in specs.items():
            run(loaded[engine], x)  # warm-up
        for _ in range(rounds):
            for engine, (_load, run) in specs.items():
                run_ms[engine].append(timed(lambda: run(loaded[engine], x))[1])
        # (load, median run, the per-round runs: a round's engines ran back to back)
        return {engine: (load_ms[engine], statistics.median(run_ms[engine]), run_ms[engine])
                for engine in specs}


def cell(result, engine, index, width):
    return f"{result[engine][index]:{width - 2}.2f}ms" if engine in result else " " * (width - 1) + "–"


def paired_ratio(result, engine):
    """ember's time over `engine`'s as the median of the rounds' ratios: each round runs
    the engines back to back, so a burst of load on the shared machine weighs on both
    sides of a round's ratio (a ratio of the two medians mixes rounds far apart)."""
    return statistics.median(e / o for e, o in zip(result["ember"][2], result[engine][2]))


def ratio(result, engine, width):
    if engine not in result or "ember" not in result:
        return " " * (width - 1) + "–"
    return f"{paired_ratio(result, engine):{width}.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--torch", action="store_true", help="the torch exports")
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()
    models = args.models or (list(TORCH_MODELS) if args.torch else zoo.light_model_names())
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"{'model':14} {'ember load':>11} {'ort load':>9} {'tract load':>11} "
          f"{'ember run':>10} {'ort run':>9} {'tract run':>10} {'ember/ort':>10} {'ember/tract':>12}")
    ratios = []
    for name in models:
        r = bench(name, args.rounds)
        if "ember" in r and "onnxruntime" in r:
            ratios.append(paired_ratio(r, "onnxruntime"))
        print(f"{name:14} {cell(r, 'ember', 0, 11)} {cell(r, 'onnxruntime', 0, 9)} "
              f"{cell(r, 'tract', 0, 11)} {cell(r, 'ember', 1, 10)} "
              f"{cell(r, 'onnxruntime', 1, 9)} {cell(r, 'tract', 1, 10)} "
              f"{ratio(r, 'onnxruntime', 10)} {ratio(r, 'tract', 12)}", flush=True)
    if ratios:
        print(f"geometric mean ember/ort: {float(np.exp(np.mean(np.log(ratios)))):.2f} "
              f"over {len(ratios)} models")
    lib = os.path.join(ROOT, "build", "host", "libember.so")
    if os.path.exists(lib):
        print(f"libember.so: {os.path.getsize(lib)} bytes")


if __name__ == "__main__":
    main()
