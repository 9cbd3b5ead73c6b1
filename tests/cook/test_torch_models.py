"""Models exported from torch 2.13 by both of its ONNX exporters (tests/data/torch): a
MobileNetV2, a bidirectional LSTM and a 2-layer GRU with dynamic batch and time axes, a
transformer encoder, a causal dilated TCN and a MobileNetV3-style net. Each must type completely with its symbols kept, declutter to core ops, and
match onnxruntime through run_reference at several values of its symbols."""
import os

import numpy as np
import pytest

import zoo
from cook_testing import run_ort
from ember.cook import onnx as cook_onnx
from test_light_models import assert_logits_close

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "torch")

# name -> (input shapes to run, symbols of the input after typing, ops that must be gone)
MODELS = {
    "mobilenet_v2": ([(1, 3, 224, 224), (2, 3, 224, 224)], {"N"},
                     {"Clip", "BatchNorm", "Copy", "Shape", "Gather"}),
    "lstm": ([(1, 7, 40), (3, 23, 40)], {"N", "T"},
             {"Copy", "Shape", "Gather", "Concat", "Broadcast"}),
    "gru": ([(1, 7, 40), (3, 23, 40)], {"N", "T"},
            {"Copy", "Shape", "Gather", "Concat", "Broadcast", "Slice"}),
    "encoder": ([(1, 7, 40), (2, 23, 40)], {"N", "T"}, {"Copy", "Shape", "Gather", "Erf"}),
    "tcn": ([(1, 40, 37), (2, 40, 100)], {"N", "T"}, {"Copy", "Shape", "Gather"}),
    "mobilenet_v3": ([(1, 3, 96, 96), (3, 3, 96, 96)], {"N"},
                     {"BatchNorm", "Copy", "Shape", "Gather"}),
}
# the TorchScript exporter traces the encoder's attention with fixed sizes: its graph
# only runs at the traced shape (onnxruntime refuses other shapes too)
TRACED_SHAPES = {("encoder", "legacy"): [(2, 50, 40)]}
CASES = [(name, flavor) for name in MODELS for flavor in ("legacy", "dynamo")]


def load(name, flavor):
    return zoo.randomized_model(os.path.join(DATA, f"{name}.{flavor}.onnx"), seed=0)


@pytest.mark.parametrize("name,flavor", CASES)
def test_types_completely_and_matches_onnxruntime(name, flavor):
    shapes, symbols, gone = MODELS[name]
    shapes = TRACED_SHAPES.get((name, flavor), shapes)
    model = load(name, flavor)
    inference = cook_onnx.load(model)
    if (name, flavor) in TRACED_SHAPES:
        inference.set_input_fact(0, ",".join(map(str, shapes[0])) + ",f32")
    typed = inference.into_model()
    for node in typed.nodes():
        for fact in node.outputs:
            assert fact.datum_type is not None and fact.shape is not None, node
    if (name, flavor) not in TRACED_SHAPES:
        assert typed.input_symbols() == symbols
    assert not set(typed.op_types()) & gone, sorted(typed.op_types())
    for seed, shape in enumerate(shapes):
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        expected = run_ort(model, {model.graph.input[0].name: x})
        got = typed.run_reference([x])
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_logits_close(g, e)
        assert float(np.std(expected[0])) > 0.05, "degenerate output: randomization failed"


def test_lstm_time_axis_stays_symbolic():
    typed = cook_onnx.load(load("lstm", "dynamo")).into_model()
    assert [str(d) for d in typed.output_facts()[0].shape] == ["N", "T", "32"]
    bound = typed.set_symbols({"N": 1, "T": 10})
    assert tuple(bound.output_facts()[0].shape) == (1, 10, 32)


def test_traced_sizes_contradicting_symbols_name_the_node():
    with pytest.raises(Exception) as error:
        cook_onnx.load(load("encoder", "legacy")).into_model()
    message = str(error.value)
    assert "self_attn/Reshape" in message and "cannot become [50" in message
