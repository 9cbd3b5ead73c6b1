"""Pools of every path on aarch64 and armv7 (under QEMU) against the host: the
whole-plane path of stride-1 pools that keep the plane's size (pool_plane.c: 3×3 padded
by 1, a 5×5 padded unevenly, average with and without the padded cells counted, max), the
step-2 path onto half the plane (pool_step2.c: 3×3 max and averages padded left, 2×2, the
odd width's last column kept apart; ARM has no pool-row kernel, so its loop), the per-row
path and the general loop (dilated). The host's results are checked against a direct
reference by tests/runtime/test_ops_pool.py, and here against onnxruntime with each of
the host's pool-row kernels."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import cross
import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_EMBER_RUN = os.path.join(ROOT, "build", "host", "ember-run")

# output: (op, kernel, pads (top, left, bottom, right), strides, extra attributes)
POOLS = {
    "avg_same_3x3": ("AveragePool", [3, 3], [1, 1, 1, 1], [1, 1], {}),
    "avg_same_3x3_count_pad": ("AveragePool", [3, 3], [1, 1, 1, 1], [1, 1],
                               {"count_include_pad": 1}),
    "max_same_3x3": ("MaxPool", [3, 3], [1, 1, 1, 1], [1, 1], {}),
    "avg_same_5x5_uneven": ("AveragePool", [5, 5], [1, 4, 3, 0], [1, 1], {}),
    "max_3x3_stride2": ("MaxPool", [3, 3], [0, 0, 1, 1], [2, 2], {}),
    "max_3x3_stride2_pad_left": ("MaxPool", [3, 3], [1, 1, 1, 0], [2, 2], {}),
    "avg_3x3_stride2_pad_left": ("AveragePool", [3, 3], [1, 1, 1, 0], [2, 2], {}),
    "avg_3x3_stride2_count_pad": ("AveragePool", [3, 3], [1, 1, 1, 0], [2, 2],
                                  {"count_include_pad": 1}),
    "avg_2x2_stride2": ("AveragePool", [2, 2], [0, 0, 0, 0], [2, 2], {}),
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


def host_isas():
    """EMBER_ISA values to run the host's ember-run with: its default, the scalar kernels,
    and AVX2 where the CPU has it (an ISA the CPU lacks is an error)."""
    isas = ["default", "scalar"]
    flags = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    if " avx2" in flags and " fma" in flags:
        isas.append("avx2_fma")
    return isas


def test_pool_paths_match_onnxruntime_with_each_kernel(tmp_path):
    """The plan on the host with each of its f32_pool_row kernels — the default, AVX2 and
    the scalar ones (no kernel: the loops ARM runs) — against onnxruntime."""
    import subprocess

    import onnxruntime as ort
    plan, (x_path,) = cook(str(tmp_path))
    session = ort.InferenceSession(os.path.join(str(tmp_path), "pools.onnx"),
                                   providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": np.load(x_path)})
    for isa in host_isas():
        env = dict(os.environ, EMBER_ISA=isa) if isa != "default" else None
        outs = [str(tmp_path / f"{isa}-{name}.npy") for name in POOLS]
        subprocess.run([HOST_EMBER_RUN, plan, "-i", x_path] +
                       [arg for out in outs for arg in ("-o", out)],
                       check=True, capture_output=True, timeout=300, env=env)
        for name, out, want in zip(POOLS, outs, expected):
            np.testing.assert_allclose(np.load(out), want, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{name} with EMBER_ISA={isa}")


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_pool_paths_match_the_host_under_qemu(arch, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    plan, inputs = cook(str(tmp_path))
    problem = cross.compare_plan(arch, plan, inputs, len(POOLS), str(tmp_path), "pools",
                                 rtol=1e-6, atol=1e-6)
    assert problem is None, problem
