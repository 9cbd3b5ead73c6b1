"""The nine model-zoo "light" models: typed completely, decluttered, and run_reference
equal to onnxruntime on seeded random weights (tests/zoo.py), logits compared."""
import numpy as np
import pytest

import zoo
from cook_testing import run_ort
from ember.cook import onnx as cook_onnx

NAMES = zoo.light_model_names()


def assert_logits_close(got, expected, rtol=1e-4):
    """Deep nets accumulate f32 rounding differently: compare at the scale of the output."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    scale = max(float(np.abs(expected).max()), 1e-3)
    error = float(np.abs(got - expected).max())
    assert error <= rtol * scale, f"max error {error} for outputs of scale {scale}"


@pytest.mark.parametrize("name", NAMES)
def test_light_model_matches_onnxruntime(name):
    model, logits = zoo.with_logits_output(zoo.randomized_light_model(name, seed=0), copy=False)
    x = zoo.light_model_input(name, seed=0)
    expected = run_ort(model, {model.graph.input[0].name: x})

    typed = cook_onnx.load(model).into_model()
    assert typed.input_facts()[0].shape == (1, 3, 224, 224)
    assert typed.output_names[-1] == logits
    ops = set(typed.op_types())
    assert not ops & {"BatchNorm", "Copy", "Sub", "Div", "Shape", "Gather", "Cast"}, ops
    got = typed.run_reference([x])
    for g, e in zip(got, expected):
        assert_logits_close(g, e)
    # the logits are the input of the final softmax (or the output itself)
    assert float(np.std(expected[-1])) > 0.05, "degenerate logits: randomization failed"


def test_batchnorm_folded_into_convolutions():
    model = cook_onnx.load(zoo.randomized_light_model("resnet50")).into_model()
    ops = model.op_types()
    assert ops.count("Conv") == 53
    assert "Mul" not in ops          # every BN followed a conv: all folded
    assert ops.count("Add") == 17    # 16 residual sums + the classifier bias


def test_light_model_names():
    assert len(NAMES) == 9
    assert "resnet50" in NAMES and "vgg19" in NAMES
