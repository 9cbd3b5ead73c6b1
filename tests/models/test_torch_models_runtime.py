"""Torch-exported models through the C runtime with their symbolic axes kept: each plan
is cooked once, one runnable runs it at two input shapes (batch and/or time), and every
output matches onnxruntime. The models (tests/data/torch, see export.py there): a causal
dilated TCN (keyword-spotting style, explicit padding), a MobileNetV3-style net
(hard-swish, hard-sigmoid squeeze-excite), MobileNetV2, a transformer encoder with
exact GELU and LayerNorm, a bidirectional LSTM and a 2-layer GRU, from both torch exporters where they keep the axes dynamic."""
import os

import numpy as np
import pytest

import ember
import zoo

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "torch")

# (name, flavor) -> the two input shapes run on one runnable
CASES = {
    ("tcn", "legacy"): [(1, 40, 37), (2, 40, 100)],
    ("tcn", "dynamo"): [(1, 40, 37), (2, 40, 100)],
    ("mobilenet_v3", "legacy"): [(1, 3, 96, 96), (3, 3, 96, 96)],
    ("mobilenet_v3", "dynamo"): [(1, 3, 96, 96), (3, 3, 96, 96)],
    ("mobilenet_v2", "legacy"): [(1, 3, 224, 224), (2, 3, 224, 224)],
    ("mobilenet_v2", "dynamo"): [(1, 3, 224, 224), (2, 3, 224, 224)],
    ("encoder", "dynamo"): [(1, 7, 40), (2, 23, 40)],
    ("lstm", "legacy"): [(1, 7, 40), (3, 23, 40)],
    ("lstm", "dynamo"): [(1, 7, 40), (3, 23, 40)],
    ("gru", "legacy"): [(1, 7, 40), (3, 23, 40)],
    ("gru", "dynamo"): [(1, 7, 40), (3, 23, 40)],
}


def assert_close(got, expected):
    scale = max(float(np.abs(expected).max()), 1e-3)
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4 * scale)


@pytest.mark.parametrize("name,flavor", sorted(CASES))
def test_symbolic_plan_matches_onnxruntime_at_two_shapes(name, flavor, tmp_path):
    import onnxruntime as ort
    model = zoo.randomized_model(os.path.join(DATA, f"{name}.{flavor}.onnx"), seed=0)
    typed = ember.onnx().load(model).into_model()
    assert typed.input_symbols(), "the exported axes should stay symbolic"
    plan = str(tmp_path / "plan.nnef.tar")
    ember.nnef().write_model_to_tar(typed, plan)
    runnable = ember.load_model(plan).into_runnable()
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    for seed, shape in enumerate(CASES[(name, flavor)]):
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        expected = session.run(None, {session.get_inputs()[0].name: x})
        got = runnable.run([x])
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape
            assert_close(g, e)
        assert float(np.std(expected[0])) > 0.05, "degenerate output: randomization failed"
