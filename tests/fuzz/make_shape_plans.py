"""Writes the plans of fuzz_shapes into tests/fuzz/shape_plans/: small real symbolic
plans (.tar) whose inputs have dims N, T, T+2…, or whose sizes values decide. Each is
checked to run in C at two shapes before it is kept. Run from the repository root:

    python tests/fuzz/make_shape_plans.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "shape_plans")
F, I64 = TensorProto.FLOAT, TensorProto.INT64
rng = np.random.default_rng(0)


def model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(o, t, None) for o, t in outputs],
                              [numpy_helper.from_array(v, k) for k, v in dict(inits).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def weights(*shape):
    return (rng.standard_normal(shape) * 0.3).astype(np.float32)


def graphs():
    N = helper.make_node
    torch = os.path.join(ROOT, "tests", "data", "torch")
    yield "tcn", onnx.load(os.path.join(torch, "tcn.dynamo.onnx")), [(1, 40, 9), (2, 40, 30)]
    yield "encoder", onnx.load(os.path.join(torch, "encoder.dynamo.onnx")), \
        [(1, 5, 40), (2, 11, 40)]
    yield "slices", model(
        [N("Pad", ["x", "pads"], ["p"]),
         N("Slice", ["p", "starts", "ends", "axes"], ["s"]),
         N("Concat", ["p", "s"], ["c"], axis=1),
         N("Softmax", ["c"], ["m"], axis=1),
         N("MatMul", ["m", "w"], ["y"])],
        [("x", F, ["N", "T", 4])], [("y", F)],
        {"pads": np.array([0, 1, 0, 0, 1, 0], np.int64), "starts": np.array([1], np.int64),
         "ends": np.array([-1], np.int64), "axes": np.array([1], np.int64),
         "w": weights(4, 3)}), [(1, 3, 4), (3, 8, 4)]
    yield "conv_stride", model(
        [N("Conv", ["x", "w"], ["c"], strides=[2], pads=[1, 1]),
         N("ConvTranspose", ["c", "wt"], ["u"], strides=[2]),
         N("ReduceMean", ["u"], ["y"], axes=[2], keepdims=1)],
        [("x", F, [1, 3, "T"])], [("y", F)], {"w": weights(5, 3, 3), "wt": weights(5, 2, 4)}), \
        [(1, 3, 6), (1, 3, 17)]
    yield "value_sized", model(
        [N("Greater", ["x", "zero"], ["positive"]),
         N("NonZero", ["positive"], ["where"]),
         N("Transpose", ["where"], ["idx"], perm=[1, 0]),
         N("GatherND", ["x", "idx"], ["picked"]),
         N("Unique", ["picked"], ["u"], sorted=1),
         N("ReduceSum", ["u"], ["y"], keepdims=0)],
        [("x", F, ["N", "T"])], [("y", F), ("picked", F)],
        {"zero": np.array(0, np.float32)}, opset=13), [(2, 3), (4, 7)]
    yield "run_time_operands", model(
        [N("Range", ["start", "limit", "delta"], ["r"]),
         N("Cast", ["r"], ["rf"], to=F),
         N("Shape", ["x"], ["shape"]),
         N("Reshape", ["x", "shape"], ["same"]),
         N("Tile", ["same", "reps"], ["tiled"]),
         N("ReduceSum", ["tiled"], ["y"], keepdims=0)],
        [("x", F, ["T"]), ("start", I64, []), ("limit", I64, []), ("delta", I64, []),
         ("reps", I64, [1])], [("y", F), ("rf", F)]), [(3,), (9,)]


def feeds_for(typed, shape):
    feeds = []
    for index, fact in enumerate(typed.input_facts()):
        if index == 0:
            feeds.append(rng.standard_normal(shape).astype(fact.dtype))
        else:
            feeds.append(np.full([1] * fact.rank, 2, fact.dtype))
    return feeds


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, onnx_model, shapes in graphs():
        typed = ember.onnx().load(onnx_model).into_model()
        runnable = typed.into_runnable()
        for shape in shapes:
            runnable.run(feeds_for(typed, shape))
        path = os.path.join(OUT, name + ".tar")
        ember.nnef().write_model_to_tar(typed, path)
        print(f"wrote {os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
