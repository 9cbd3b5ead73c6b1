"""ConvTranspose: ember (lowered to a convolution of the zero-spread input) vs onnxruntime,
one thread each, interleaved, medians of 15 runs. Voice decoders upsample with strided 1-D
transposed convolutions; the 2-D case is a UNet/FPN decoder step.

    python benchmarks/bench_deconv.py
"""
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(0)
CASES = [  # channels, kernel, stride, length, spatial dims
    (256, 8, 4, 100, 1), (256, 16, 8, 50, 1), (64, 4, 2, 32, 2)]


def model(channels, kernel, stride, length, spatial):
    w = (RNG.standard_normal((channels, channels) + (kernel,) * spatial) * 0.05
         ).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[stride] * spatial,
                            pads=[(kernel - stride) // 2] * 2 * spatial)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, channels] + [length] * spatial)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main(rounds=15):
    for channels, kernel, stride, length, spatial in CASES:
        onnx_model = model(channels, kernel, stride, length, spatial)
        x = RNG.standard_normal((1, channels) + (length,) * spatial).astype(np.float32)
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(onnx_model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        runnable = ember.onnx().load(onnx_model).into_model().into_runnable()
        np.testing.assert_allclose(runnable.run([x])[0], session.run(None, {"x": x})[0],
                                   rtol=1e-3, atol=1e-3)
        times = {"ember": [], "ort": []}
        for _ in range(rounds):
            for engine, call in (("ember", lambda: runnable.run([x])),
                                 ("ort", lambda: session.run(None, {"x": x}))):
                start = time.perf_counter()
                call()
                times[engine].append(time.perf_counter() - start)
        ember_ms, ort_ms = (float(np.median(times[e])) * 1e3 for e in ("ember", "ort"))
        print(f"{spatial}-D, {channels} channels, kernel {kernel}, stride {stride}, "
              f"length {length}: ember {ember_ms:.2f} ms, onnxruntime {ort_ms:.2f} ms, "
              f"ember/ort {ember_ms / ort_ms:.2f}")


if __name__ == "__main__":
    main()
