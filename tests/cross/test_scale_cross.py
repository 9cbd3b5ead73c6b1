"""A mul by a per-axis constant hosting its epilogue (ops/scale.c: the add of a
constant on the same axis and a clamp, fused by core/fuse.c) on aarch64 and armv7 (under
QEMU) against the host: a BatchNorm and relu before any conv (DenseNet's pre-activation,
channel rows), a LayerNorm-style affine along the innermost axis, and hardswish (a single
scale and bias, clamped, times the scale's own operand). The host's results
are checked against numpy, to the last bit, by tests/runtime/test_fusion.py."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import cross
import ember


def cook(directory):
    rng = np.random.default_rng(5)
    channels, width = 6, 16
    weights = {
        "scale": rng.standard_normal(channels), "shift": rng.standard_normal(channels),
        "mean": rng.standard_normal(channels), "var": rng.random(channels) + 0.5,
        "gamma": rng.standard_normal(width), "beta": rng.standard_normal(width),
    }
    nodes = [
        helper.make_node("BatchNormalization", ["x", "scale", "shift", "mean", "var"], ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
        helper.make_node("Mul", ["z", "gamma"], ["m"]),
        helper.make_node("Add", ["m", "beta"], ["w"]),
        helper.make_node("HardSwish", ["u"], ["h"]),
    ]
    graph = helper.make_graph(
        nodes, "scales",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 9, 11]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 5, width]),
         helper.make_tensor_value_info("u", TensorProto.FLOAT, [1, 4, 10, 11])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in "ywh"],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    source = os.path.join(directory, "scales.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), source)
    plan = os.path.join(directory, "scales.nnef.tar")
    ember.nnef().write_model_to_tar(ember.onnx().load(source).into_model(), plan)
    inputs = []
    for name, shape in (("x", (1, channels, 9, 11)), ("z", (1, 5, width)), ("u", (1, 4, 10, 11))):
        inputs.append(os.path.join(directory, f"scales.{name}.npy"))
        np.save(inputs[-1], (rng.standard_normal(shape) * 4).astype(np.float32))
    return plan, inputs


def test_the_plan_fuses_the_scales(tmp_path):
    plan, inputs = cook(str(tmp_path))
    runnable = ember.load_model(plan).into_runnable()
    ops = [node["op"] for node in runnable.profile([np.load(p) for p in inputs], runs=1)]
    assert sorted(ops) == ["mul", "mul", "mul"], ops


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_scales_match_the_host_under_qemu(arch, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    plan, inputs = cook(str(tmp_path))
    problem = cross.compare_plan(arch, plan, inputs, 3, str(tmp_path), "scales",
                                 rtol=1e-6, atol=1e-6)
    assert problem is None, problem
