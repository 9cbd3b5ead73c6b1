"""Real voice models on aarch64 and armv7 (under QEMU): the main silero-vad model (its If
on the sample rate kept in the plan, LSTM inside), torch's bidirectional LSTM and 2-layer
GRU with a dynamic time axis and torch's transformer encoder (attention's softmax rows, erf GELU,
LayerNorm), cooked on the host, run by the cross-built ember-run, and compared with the
host's C runtime."""
import importlib.util
import os
import sys

import numpy as np
import pytest

import cross
import ember
from ember.cook import onnx as cook_onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def silero():
    spec = importlib.util.find_spec("silero_vad")
    assert spec is not None, "the test extra installs silero-vad"
    model = cook_onnx.load(os.path.join(os.path.dirname(spec.origin), "data",
                                        "silero_vad.onnx"))
    model.set_input_fact(0, "1,512,f32")
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal((1, 512)) * 0.3).astype(np.float32),
              (rng.standard_normal((2, 1, 128)) * 0.1).astype(np.float32),
              np.array(16000, np.int64)]
    return model.into_model(), inputs


def torch_model(name, shape):
    import zoo
    model = zoo.randomized_model(os.path.join(ROOT, "tests", "data", "torch",
                                              f"{name}.onnx"), seed=0)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    return cook_onnx.load(model).into_model(), [x]


def torch_lstm():
    return torch_model("lstm.dynamo", (2, 13, 40))


def torch_gru():
    return torch_model("gru.legacy", (2, 13, 40))


def torch_encoder():
    return torch_model("encoder.dynamo", (1, 23, 40))


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
@pytest.mark.parametrize("name, make", [("silero_vad", silero), ("torch_lstm", torch_lstm),
                                        ("torch_gru", torch_gru),
                                        ("torch_encoder", torch_encoder)])
def test_model_matches_the_host_under_qemu(arch, name, make, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    typed, inputs = make()
    plan = str(tmp_path / f"{name}.tar")
    ember.nnef().write_model_to_tar(typed, plan)
    paths = []
    for index, value in enumerate(inputs):
        paths.append(str(tmp_path / f"{name}.in{index}.npy"))
        np.save(paths[-1], value)
    problem = cross.compare_plan(arch, plan, paths, len(typed.output_facts()),
                                 str(tmp_path), name, rtol=1e-4, atol=1e-5)
    assert problem is None, f"{name} on {arch}: {problem}"
