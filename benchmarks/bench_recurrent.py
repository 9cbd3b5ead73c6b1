"""Recurrent models: ember (ember_lstm / ember_gru through the C runtime) vs onnxruntime
and tract, one thread each, interleaved, medians of 15 runs: a 2-layer LSTM and a 2-layer
GRU of 256 units over 100 frames of 80 features (a keyword-spotting or enhancement
encoder), and silero-vad on one 512-sample chunk (the call a VAD makes every 32 ms).

    python benchmarks/bench_recurrent.py
"""
import importlib.util
import os
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(0)


def stacked(op, hidden=256, features=80, layers=2):
    gates = {"LSTM": 4, "GRU": 3}[op]
    nodes, inits, x = [], [], "x"
    for layer in range(layers):
        size = features if layer == 0 else hidden
        for name, shape in (("w", (1, gates * hidden, size)), ("r", (1, gates * hidden, hidden)),
                            ("b", (1, 2 * gates * hidden))):
            inits.append(numpy_helper.from_array(
                (RNG.standard_normal(shape) / np.sqrt(hidden)).astype(np.float32),
                f"{name}{layer}"))
        nodes.append(helper.make_node(op, [x, f"w{layer}", f"r{layer}", f"b{layer}"],
                                      [f"y{layer}"], hidden_size=hidden))
        nodes.append(helper.make_node("Squeeze", [f"y{layer}", "one"], [f"h{layer}"]))
        x = f"h{layer}"
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "one"))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [100, 1, features])], [helper.make_tensor_value_info(
            x, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    return model, {"x": RNG.standard_normal((100, 1, features)).astype(np.float32)}, None


def silero():
    spec = importlib.util.find_spec("silero_vad")
    path = os.path.join(os.path.dirname(spec.origin), "data", "silero_vad.onnx")
    feeds = {"input": RNG.standard_normal((1, 512)).astype(np.float32) * 0.3,
             "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    return path, feeds, "1,512,f32"


def engines(model, feeds, fact):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    source = model if isinstance(model, str) else model.SerializeToString()
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    cooked = ember.onnx().load(model)
    if fact:
        cooked.set_input_fact(0, fact)
    runnable = cooked.into_model().into_runnable()
    inputs = [feeds[n] for n in names]
    result = {"ember": lambda: runnable.run(inputs),
              "onnxruntime": lambda: session.run(None, feeds)}
    try:
        import tract
        path = model
        if not isinstance(model, str):
            import tempfile
            path = os.path.join(tempfile.mkdtemp(), "m.onnx")
            with open(path, "wb") as handle:
                handle.write(source)
        tm = tract.onnx().load(path)
        for index, name in enumerate(names):
            value = feeds[name]
            tm.set_input_fact(index, ",".join(map(str, value.shape)) +
                              {np.float32: ",f32", np.int64: ",i64"}[value.dtype.type])
        tract_runnable = tm.into_model().into_runnable()
        result["tract"] = lambda: tract_runnable.run(inputs)
    except Exception as error:       # noqa: BLE001 (report, measure the others)
        print(f"  tract: {type(error).__name__}: {str(error)[:120]}")
    np.testing.assert_allclose(runnable.run(inputs)[0], session.run(None, feeds)[0],
                               rtol=1e-3, atol=1e-4)
    return result


def main(rounds=15):
    for label, make in (("2-layer LSTM 256, 100 frames", lambda: stacked("LSTM")),
                        ("2-layer GRU 256, 100 frames", lambda: stacked("GRU")),
                        ("silero-vad, one 512-sample chunk", silero)):
        model, feeds, fact = make()
        calls = engines(model, feeds, fact)
        times = {name: [] for name in calls}
        for _ in range(rounds):
            for name, call in calls.items():
                start = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - start)
        medians = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
        text = ", ".join(f"{name} {ms:.3f} ms" for name, ms in medians.items())
        ratios = ", ".join(f"ember/{name} {medians['ember'] / ms:.2f}"
                           for name, ms in medians.items() if name != "ember")
        print(f"{label}: {text}; {ratios}")


if __name__ == "__main__":
    main()
