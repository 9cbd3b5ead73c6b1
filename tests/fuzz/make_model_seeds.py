"""Writes the seeds of fuzz_model into tests/fuzz/model_seeds/: small real plans as .tar
(cooked from ONNX graphs built here with onnx.helper, and examples/digits.onnx), and
each plan's graph.nnef alone as .nnef text (the harness's main input mode: it
synthesises the weights). Run from the repository root:

    python tests/fuzz/make_model_seeds.py
"""
import os
import sys
import tarfile
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "model_seeds")
F = TensorProto.FLOAT
rng = np.random.default_rng(0)


def init(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs],
                              list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def graphs():
    N = helper.make_node
    yield "conv_relu", model(
        [N("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
         N("Relu", ["c"], ["y"])],
        [("x", [1, 3, 8, 8])], ["y"], [init("w", [4, 3, 3, 3]), init("b", [4])])
    yield "conv_group_dilate", model(
        [N("Conv", ["x", "w"], ["y"], group=2, dilations=[2, 2], strides=[2, 1],
           pads=[2, 1, 0, 1])],
        [("x", [1, 4, 9, 7])], ["y"], [init("w", [6, 2, 3, 2])])
    yield "conv_depthwise_1d", model(
        [N("Conv", ["x", "w"], ["y"], group=3, pads=[1, 1])],
        [("x", [2, 3, 10])], ["y"], [init("w", [3, 1, 3])])
    yield "pools", model(
        [N("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
         N("AveragePool", ["m"], ["a"], kernel_shape=[2, 2], pads=[0, 0, 1, 1],
           count_include_pad=0),
         N("GlobalAveragePool", ["a"], ["y"])],
        [("x", [1, 2, 9, 9])], ["y"])
    yield "avgpool_pad", model(
        [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
           count_include_pad=1)],
        [("x", [1, 2, 5, 5])], ["y"])
    yield "matmul_gemm", model(
        [N("MatMul", ["x", "w"], ["m"]),
         N("Gemm", ["m", "w2", "b"], ["y"], transB=1)],
        [("x", [3, 5])], ["y"], [init("w", [5, 4]), init("w2", [6, 4]), init("b", [6])])
    yield "matmul_batched", model(
        [N("MatMul", ["x", "z"], ["y"])],
        [("x", [2, 1, 3, 4]), ("z", [3, 4, 5])], ["y"])
    yield "shape_ops", model(
        [N("Concat", ["x", "z"], ["c"], axis=1),
         N("Reshape", ["c", "shape"], ["r"]),
         N("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
         N("Slice", ["t", "starts", "ends", "axes", "steps"], ["s"]),
         N("Unsqueeze", ["s", "uaxes"], ["u"]),
         N("Squeeze", ["u", "uaxes"], ["y"])],
        [("x", [2, 3, 4]), ("z", [2, 1, 4])], ["y"],
        [ints("shape", [2, 8, 2]), ints("starts", [1, 0]), ints("ends", [7, 2]),
         ints("axes", [2, 1]), ints("steps", [2, 1]), ints("uaxes", [0])])
    yield "softmax", model(
        [N("Softmax", ["x"], ["y"], axis=-1)], [("x", [2, 3, 5])], ["y"])
    yield "lrn", model(
        [N("LRN", ["x"], ["y"], size=3, alpha=1e-4, beta=0.75, bias=2.0)],
        [("x", [1, 5, 4, 4])], ["y"])
    yield "elementwise", model(
        [N("Add", ["x", "b"], ["a"]), N("Mul", ["a", "x"], ["m"]), N("Sigmoid", ["m"], ["s"]),
         N("Tanh", ["s"], ["t"]), N("Exp", ["t"], ["e"]), N("Sqrt", ["e"], ["q"]),
         N("Sub", ["q", "b"], ["d"]), N("Div", ["d", "e"], ["v"]),
         N("Max", ["v", "x"], ["mx"]), N("Clip", ["mx", "lo", "hi"], ["y"])],
        [("x", [2, 3, 4])], ["y"],
        [init("b", [1, 3, 1]),
         numpy_helper.from_array(np.array(-1, np.float32), "lo"),
         numpy_helper.from_array(np.array(1, np.float32), "hi")])
    yield "reduce", model(
        [N("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
         N("ReduceSum", ["m"], ["s"], axes=[2], keepdims=1),
         N("ReduceMax", ["s"], ["y"], axes=[0, 3], keepdims=1)],
        [("x", [2, 3, 4, 5])], ["y"])
    yield "digits", onnx.load(os.path.join(ROOT, "examples", "digits.onnx"))


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, proto in graphs():
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(proto, path)
            try:
                im = ember.onnx().load(path)
                tar_path = os.path.join(OUT, name + ".tar")
                ember.nnef().write_model_to_tar(im.into_model(), tar_path)
            except Exception as e:  # an op the cook side lacks: skip that seed
                print(f"skip {name}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            with tarfile.open(tar_path) as tar:
                text = tar.extractfile("graph.nnef").read()
            with open(os.path.join(OUT, name + ".nnef"), "wb") as f:
                f.write(text)
            print("wrote", name)


if __name__ == "__main__":
    main()
