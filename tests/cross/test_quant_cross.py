"""Quantized ops give the same bits on aarch64 and armv7 (under QEMU) as on the host.

Rounding (half to even), saturation and the f64 requantization must not depend on the
target: one host-cooked plan chaining every quantized op runs through the cross-built
ember-run, and its integer and float outputs must equal the host's exactly.
"""
import os
import subprocess

import numpy as np
import pytest
from onnx import helper, numpy_helper

import cross
import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_EMBER_RUN = os.path.join(ROOT, "build", "host", "ember-run")


def quant_model():
    rng = np.random.default_rng(7)
    inits = {
        "sx": np.float32(0.02), "zx": np.uint8(120),
        "w": rng.integers(0, 256, size=(4, 3, 3, 3)).astype(np.uint8),
        "sw": rng.uniform(0.001, 0.01, size=4).astype(np.float32), "zw": np.uint8(128),
        "sy": np.float32(0.05), "zy": np.uint8(100),
        "bias": rng.integers(-3000, 3000, size=4).astype(np.int32),
        "b": rng.integers(-128, 128, size=(7, 6)).astype(np.int8), "zb": np.int8(-3),
        "sb": np.float16(0.0123), "zq": np.int8(5), "sq": np.float16(0.25),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"],
                         ["yq"], pads=[1, 1, 1, 1], strides=[2, 1]),
        helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]),
        helper.make_node("DynamicQuantizeLinear", ["a"], ["aq", "as", "az"]),
        helper.make_node("MatMulInteger", ["aq", "b", "az", "zb"], ["p"]),
        helper.make_node("BitCast", ["p"], ["pf"], to=1),
        helper.make_node("QuantizeLinear", ["a", "sq", "zq"], ["aq2"]),
        helper.make_node("DequantizeLinear", ["aq2", "sq", "zq"], ["a16"]),
    ]
    inputs = [helper.make_tensor_value_info("x", 1, [1, 3, 9, 8]),
              helper.make_tensor_value_info("a", 1, [5, 7])]
    outputs = [helper.make_empty_tensor_value_info(n) for n in ("y", "pf", "as", "az", "a16")]
    graph = helper.make_graph(nodes, "quant", inputs, outputs,
                              [numpy_helper.from_array(np.asarray(v), k)
                               for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    model.ir_version = 10
    x = (rng.normal(size=(1, 3, 9, 8)) * 2).astype(np.float32)
    a = (np.round(rng.normal(size=(5, 7)) * 16) / 8).astype(np.float32)  # many ties
    return model, [x, a]


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("quant-cross"))
    model, inputs = quant_model()
    typed = ember.onnx().load(model.SerializeToString()).into_model()
    path = os.path.join(directory, "quant.nnef.tgz")
    ember.nnef().write_model_to_tar_gz(typed, path)
    paths = []
    for i, x in enumerate(inputs):
        paths.append(os.path.join(directory, f"in{i}.npy"))
        np.save(paths[-1], x)
    return path, paths, inputs


def run(program, plan, inputs, directory, arch=None):
    command = [program, plan]
    for path in inputs:
        command += ["-i", path]
    outputs = [str(directory / f"out{i}.npy") for i in range(5)]
    for path in outputs:
        command += ["-o", path]
    if arch is None:
        subprocess.run(command, check=True, capture_output=True, timeout=300)
    else:
        result = cross.run_under_qemu(arch, command, timeout=900)
        assert result.returncode == 0, result.stderr
    return [np.load(path) for path in outputs]


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_quant_ops_bit_exact_across_targets(arch, plan, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    path, input_paths, inputs = plan
    (tmp_path / "host").mkdir()
    (tmp_path / arch).mkdir()
    host = run(HOST_EMBER_RUN, path, input_paths, tmp_path / "host")
    bound = ember.load_model(path).into_runnable().run(inputs)
    target = run(os.path.join(ROOT, "build", arch, "ember-run"), path, input_paths,
                 tmp_path / arch, arch)
    for index, (h, b, t) in enumerate(zip(host, bound, target)):
        assert h.dtype == t.dtype == b.dtype, index
        if h.dtype.kind == "f":        # bit for bit (NaN payloads of the bit cast too)
            unsigned = np.dtype(f"u{h.dtype.itemsize}")
            h, b, t = h.view(unsigned), b.view(unsigned), t.view(unsigned)
        np.testing.assert_array_equal(h, b, err_msg=f"output {index}: host vs binding")
        np.testing.assert_array_equal(t, h, err_msg=f"output {index}: {arch} vs host")
