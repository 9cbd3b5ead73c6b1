"""The nine model-zoo "light" architectures, cooked and run on the C runtime, match
onnxruntime.

Their shipped weights are one constant each, which would hide almost any bug, so
tests/zoo.py replaces them with seeded random values (BatchNorm statistics recalibrated
layer by layer) and exposes the logits (the input of the final Softmax) as an output:
logits are compared, not only probabilities.
"""
import numpy as np
import pytest

import ember
import zoo

RTOL, ATOL = 1e-3, 1e-4


@pytest.mark.parametrize("name", zoo.light_model_names())
def test_light_model_on_c_runtime_matches_onnxruntime(name):
    import onnxruntime as ort
    proto, logits_name = zoo.with_logits_output(zoo.randomized_light_model(name, seed=0),
                                                copy=False)
    x = zoo.light_model_input(name, seed=0)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {session.get_inputs()[0].name: x})

    model = ember.onnx().load(proto).into_model()
    runnable = model.into_runnable()
    got = runnable.run([x])
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL)
    logits = got[[o.name for o in proto.graph.output].index(logits_name)]
    assert logits.std() > 1e-3, "degenerate logits: the random weights did not propagate"


@pytest.mark.parametrize("flavor", ["legacy", "dynamo"])
def test_torch_mobilenet_v2_on_c_runtime_matches_onnxruntime(flavor):
    """MobileNetV2 as torch exports it (tests/data/torch): depthwise convs, ReLU6 from
    Clip, residual adds; the batch symbol N bound to 1 before the plan is written."""
    import os

    import onnxruntime as ort
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                        "torch", f"mobilenet_v2.{flavor}.onnx")
    proto = zoo.randomized_model(path, seed=0)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {session.get_inputs()[0].name: x})

    model = ember.onnx().load(proto).into_model().set_symbols({"N": 1})
    got = model.into_runnable().run([x])
    np.testing.assert_allclose(got[0], expected[0], rtol=RTOL, atol=ATOL)
    assert got[0].std() > 1e-3
