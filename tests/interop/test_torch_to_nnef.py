"""Archives written by torch-to-nnef load and run in ember, matching torch.

Each model is exported at test time with `torch_to_nnef` for the tract target (0.23.9).
The exporter only asks the tract command line for its version, so a stand-in script
that prints it takes the binary's place. Each archive runs two ways: straight into the C
runtime (`ember.load_model`), and through the Python reader (`ember.nnef().load`), which
is where cooking a foreign plan further starts.

The recurrent exports (LSTM and GRU: a `tract_core_scan` over a fragment body, `tile`
repeats computed by `tract_core_shape_of`) run through the Python reader, which types the
scan's body and writes it as ember_scan for the C runtime; the C loader alone refuses
them, saying so. So does the transformer encoder (`tract_transformers_sdpa`, reshapes
to sizes computed by `tract_core_shape_of`, the `layer_norm` fragments), which the Python
reader reads as ember's attention.
"""
import logging
import os
import stat

import numpy as np
import pytest

import torch
import torch_to_nnef as t2n

import ember
from ember.cook.nnef import plan_files

nn = torch.nn


class Recurrent(nn.Module):
    """A 2-layer LSTM or GRU (or a bidirectional one-layer LSTM) returning its sequence."""

    def __init__(self, kind, batch_first, layers=2, bidirectional=False):
        super().__init__()
        self.rnn = getattr(nn, kind)(16, 32, num_layers=layers, batch_first=batch_first,
                                     bidirectional=bidirectional)

    def forward(self, x):
        return self.rnn(x)[0]


class TCN(nn.Module):
    """Dilated 1-d convolutions, an explicit causal pad and a batch norm: the
    `batch_normalization` of the NNEF standard library and `pad` as torch-to-nnef writes
    it ([before, after] lists)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(8, 16, 3, padding=2, dilation=2)
        self.c2 = nn.Conv1d(16, 16, 3, padding=1)
        self.bn = nn.BatchNorm1d(16)

    def forward(self, x):
        y = nn.functional.pad(torch.relu(self.c1(x)), (2, 0))
        return self.bn(self.c2(y))


def inverted_residual(cin, cout, stride, expand):
    hidden = cin * expand
    return nn.Sequential(
        nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
        nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
        nn.BatchNorm2d(hidden), nn.ReLU6(),
        nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))


class Residual(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return x + self.body(x)


class MobileNetV2(nn.Module):
    """MobileNetV2's building blocks at a small width: a strided stem, inverted residual
    blocks (expansion, depthwise 3x3, projection; a residual where shapes allow), global
    pooling and a linear head. torch-to-nnef writes ReLU6 as its `hard_tanh` fragment."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(),
            inverted_residual(16, 24, 2, 6), Residual(inverted_residual(24, 24, 1, 6)),
            inverted_residual(24, 32, 2, 6), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(32, 10))

    def forward(self, x):
        return self.features(x)


def randomize_batch_norms(model, generator):
    """Statistics away from (0, 1), so a wrong batch norm cannot pass as an identity."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            n = module.num_features
            module.running_mean.copy_(torch.randn(n, generator=generator) * 0.3)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            module.bias.data.copy_(torch.randn(n, generator=generator) * 0.2)
    return model


@pytest.fixture(scope="module")
def stand_in_tract(tmp_path_factory):
    path = tmp_path_factory.mktemp("tract") / "tract"
    path.write_text("#!/bin/sh\necho tract 0.23.9\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def export(model, example, directory, tract_binary, dynamic_axes=None):
    """The torch-to-nnef archive of `model` (a .nnef.tar), and the model in eval mode."""
    target = t2n.TractNNEF(version="0.23.9", check_io=False,
                           dynamic_axes={"input": dynamic_axes} if dynamic_axes else None,
                           specific_tract_binary_path=tract_binary)
    base = directory / "model.nnef"
    t2n.export_model_to_nnef(model, (example,), base, target, input_names=["input"],
                             output_names=["output"], log_level=logging.ERROR)
    path = str(base) + ".tar"
    assert os.path.exists(path)
    return path


def runnables(path):
    return {"C loader": ember.load_model(path).into_runnable(),
            "Python reader": ember.nnef().load(path).into_runnable()}


@pytest.fixture(scope="module")
def generator():
    return torch.Generator().manual_seed(0)


def test_mobilenet_v2(tmp_path, stand_in_tract, generator):
    torch.manual_seed(0)
    model = randomize_batch_norms(MobileNetV2(), generator).eval()
    x = torch.randn(1, 3, 64, 64, generator=generator)
    path = export(model, x, tmp_path, stand_in_tract)
    with torch.no_grad():
        expected = model(x).numpy()
    for how, runnable in runnables(path).items():
        got = runnable.run([x.numpy()])[0]
        assert got.shape == expected.shape, how
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=how)


def test_tcn_with_a_dynamic_time_axis_at_two_lengths(tmp_path, stand_in_tract, generator):
    torch.manual_seed(1)
    model = randomize_batch_norms(TCN(), generator).eval()
    path = export(model, torch.randn(1, 8, 50), tmp_path, stand_in_tract,
                  dynamic_axes={2: "T"})
    assert ember.load_model(path).symbols == ["T"]
    for how, runnable in runnables(path).items():
        for length in (50, 31):              # one runnable, two lengths
            x = torch.randn(1, 8, length, generator=generator)
            with torch.no_grad():
                expected = model(x).numpy()
            got = runnable.run([x.numpy()])[0]
            assert got.shape == expected.shape == (1, 16, length + 2), how
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=how)


@pytest.mark.parametrize("kind, batch_first, layers, bidirectional", [
    ("LSTM", True, 2, False), ("LSTM", False, 2, False), ("GRU", True, 2, False),
    ("GRU", False, 2, False), ("LSTM", True, 1, True)])
def test_recurrent_with_a_dynamic_time_axis_at_two_lengths(tmp_path, stand_in_tract, generator,
                                                           kind, batch_first, layers,
                                                           bidirectional):
    torch.manual_seed(2)
    model = Recurrent(kind, batch_first, layers, bidirectional).eval()
    time_axis = 1 if batch_first else 0
    shape = (1, 20, 16) if batch_first else (20, 1, 16)
    path = export(model, torch.randn(*shape), tmp_path, stand_in_tract,
                  dynamic_axes={time_axis: "T"})
    cooked = ember.nnef().load(path)
    assert "ember_scan(" in plan_files(cooked)["graph.nnef"].decode()
    runnable = cooked.into_runnable()             # the C runtime
    for length in (20, 7):
        shape = (1, length, 16) if batch_first else (length, 1, 16)
        x = torch.randn(*shape, generator=generator)
        with torch.no_grad():
            expected = model(x).numpy()
        got = runnable.run([x.numpy()])[0]
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(ember.EmberError, match="tile|ember.nnef"):
        ember.load_model(path).into_runnable().run([x.numpy()])


def test_transformer_encoder_with_a_dynamic_time_axis_at_two_lengths(tmp_path, stand_in_tract,
                                                                     generator):
    torch.manual_seed(3)
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    with torch.no_grad():                 # layer norms away from the identity
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.uniform_(-0.5, 0.5, generator=generator)
    path = export(model, torch.randn(1, 10, 32), tmp_path, stand_in_tract,
                  dynamic_axes={1: "T"})
    runnable = ember.nnef().load(path).into_runnable()
    for length in (10, 6):
        x = torch.randn(1, length, 32, generator=generator)
        with torch.no_grad():
            expected = model(x).numpy()
        got = runnable.run([x.numpy()])[0]
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
