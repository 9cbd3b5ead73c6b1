"""ember vs onnxruntime vs tract on the model-zoo "light" architectures, one thread.

The weights are seeded random (tests/zoo.py), the input a 1x3x224x224 random image.
For each engine: load time (file → ready to run) and the median of the run times, all
in this one process, engines interleaved per round so machine noise hits them alike.

    python benchmarks/bench_models.py [--rounds 7] [model ...]
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


def engines(onnx_path, plan_path):
    import onnxruntime as ort
    import tract

    def load_ember():
        return ember.load_model(plan_path).into_runnable()

    def load_ort():
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return lambda x: session.run(None, {name: x})

    def load_tract():
        return tract.onnx().load(onnx_path).into_model().into_runnable()

    return {
        "ember": (load_ember, lambda r, x: r.run([x])),
        "onnxruntime": (load_ort, lambda r, x: r(x)),
        "tract": (load_tract, lambda r, x: r.run([x])),
    }


def bench(name, rounds):
    proto = zoo.randomized_light_model(name, seed=0)
    with tempfile.TemporaryDirectory() as directory:
        onnx_path = os.path.join(directory, f"{name}.onnx")
        import onnx
        onnx.save(proto, onnx_path)
        plan_path = os.path.join(directory, f"{name}.nnef.tgz")
        ember.nnef().write_model_to_tar_gz(ember.onnx().load(onnx_path).into_model(), plan_path)
        x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
        loaded, load_ms, run_ms = {}, {}, {}
        for engine, (load, _run) in engines(onnx_path, plan_path).items():
            loaded[engine], load_ms[engine] = timed(load)
            run_ms[engine] = []
        specs = engines(onnx_path, plan_path)
        for engine, (_load, run) in specs.items():
            run(loaded[engine], x)  # warm-up
        for _ in range(rounds):
            for engine, (_load, run) in specs.items():
                run_ms[engine].append(timed(lambda: run(loaded[engine], x))[1])
        return {engine: (load_ms[engine], statistics.median(run_ms[engine]))
                for engine in specs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("models", nargs="*", default=zoo.light_model_names())
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"{'model':14} {'ember load':>11} {'ort load':>9} {'tract load':>11} "
          f"{'ember run':>10} {'ort run':>9} {'tract run':>10} {'ember/ort':>10} {'ember/tract':>12}")
    for name in args.models:
        r = bench(name, args.rounds)
        (el, er), (ol, orr), (tl, tr) = r["ember"], r["onnxruntime"], r["tract"]
        print(f"{name:14} {el:9.1f}ms {ol:7.1f}ms {tl:9.1f}ms {er:8.1f}ms {orr:7.1f}ms "
              f"{tr:8.1f}ms {er / orr:10.2f} {er / tr:12.2f}", flush=True)
    lib = os.path.join(ROOT, "build", "host", "libember.so")
    if os.path.exists(lib):
        print(f"libember.so: {os.path.getsize(lib)} bytes")


if __name__ == "__main__":
    main()
