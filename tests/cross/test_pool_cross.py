"""Pools of every path on aarch64 and armv7 (under QEMU) against the host: the
whole-plane path of stride-1 pools that keep the plane's size (pool_plane.c: 3×3 padded
by 1, a 5×5 padded unevenly, average with and without the padded cells counted, max), the
per-row path (3×3 stride 2) and the general loop (dilated). The host's results are checked
against a direct reference by tests/runtime/test_ops_pool.py."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import cross
import ember

# output: (op, kernel, pads (top, left, bottom, right), strides, extra attributes)
POOLS = {
    "avg_same_3x3": ("AveragePool", [3, 3], [1, 1, 1, 1], [1, 1], {}),
    "avg_same_3x3_count_pad": ("AveragePool", [3, 3], [1, 1, 1, 1], [1, 1],
                               {"count_include_pad": 1}),
    "max_same_3x3": ("MaxPool", [3, 3], [1, 1, 1, 1], [1, 1], {}),
    "avg_same_5x5_uneven": ("AveragePool", [5, 5], [1, 4, 3, 0], [1, 1], {}),
    "max_3x3_stride2": ("MaxPool", [3, 3], [0, 0, 1, 1], [2, 2], {}),
    "max_dilated": ("MaxPool", [2, 2], [1, 1, 1, 1], [1, 1], {"dilations": [2, 2]}),
}


def cook(directory):
    nodes = [helper.make_node(op, ["x"], [name], kernel_shape=kernel, pads=pads,
                              strides=strides, **extra)
             for name, (op, kernel, pads, strides, extra) in POOLS.items()]
    graph = helper.make_graph(
        nodes, "pools", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 14, 13])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in POOLS])
    source = os.path.join(directory, "pools.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), source)
    plan = os.path.join(directory, "pools.nnef.tar")
    ember.nnef().write_model_to_tar(ember.onnx().load(source).into_model(), plan)
    x = os.path.join(directory, "pools.x.npy")
    np.save(x, np.random.default_rng(3).standard_normal((1, 5, 14, 13)).astype(np.float32))
    return plan, [x]


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_pool_paths_match_the_host_under_qemu(arch, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    plan, inputs = cook(str(tmp_path))
    problem = cross.compare_plan(arch, plan, inputs, len(POOLS), str(tmp_path), "pools",
                                 rtol=1e-6, atol=1e-6)
    assert problem is None, problem
