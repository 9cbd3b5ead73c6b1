"""Helpers of the cook tests: tiny ONNX models and their comparison with onnxruntime."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx

RTOL, ATOL = 1e-4, 1e-5


def make_model(nodes, inputs, outputs, initializers=None, opset=13):
    """nodes: onnx NodeProtos; inputs: {name: array or (shape, dtype)}; outputs: names."""
    value_infos = []
    for name, spec in inputs.items():
        if isinstance(spec, np.ndarray):
            shape, dtype = spec.shape, spec.dtype
        else:
            shape, dtype = spec
        value_infos.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape)))
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(nodes, "test", value_infos,
                              [helper.make_empty_tensor_value_info(o) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 9
    return model


def run_ort(model, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_close(got, expected, rtol=RTOL, atol=ATOL, what=""):
    assert len(got) == len(expected), what
    for index, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape, f"{what} output {index}: shape {g.shape} != {e.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"{what} output {index}")


def check_onnx(model, feeds, rtol=RTOL, atol=ATOL, round_trip=True):
    """run_reference (typed, decluttered, and through a plan round trip) == onnxruntime."""
    expected = run_ort(model, feeds)
    names = [i.name for i in model.graph.input if i.name in feeds]
    inputs = [feeds[n] for n in names]
    typed = cook_onnx.load(model).into_typed()
    assert_close(typed.run_reference(inputs), expected, rtol, atol, "typed")
    decluttered = cook_onnx.load(model).into_model()
    assert_close(decluttered.run_reference(inputs), expected, rtol, atol, "decluttered")
    if round_trip:
        reread = cook_nnef.load(cook_nnef.to_tar_bytes(decluttered))
        assert_close(reread.run_reference(inputs), expected, rtol, atol, "plan round trip")
    return decluttered


def node(op_type, inputs, outputs, **attrs):
    return helper.make_node(op_type, inputs, outputs, **attrs)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


__all__ = ["make_model", "run_ort", "assert_close", "check_onnx", "node", "rand", "onnx"]
