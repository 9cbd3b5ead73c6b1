"""Export the torch test models: MobileNetV2, a bidirectional LSTM, a 2-layer GRU, a
transformer encoder, a causal dilated TCN (keyword-spotting style) and a MobileNetV3-style
net.

    pip install torch==2.13.0 onnxscript && python tests/data/torch/export.py

Each model is exported twice, by torch's two ONNX exporters: the TorchScript one
(`dynamo=False`, opset 17) and the torch.export one (the default since torch 2.9,
opset 20); they emit quite different graphs for the same module (Clip vs Relu6 patterns,
LayerNormalization, Gelu, Shape chains, Expand…). Batch and time axes are exported as
dynamic (`N`, `T`) where the exporter keeps them so.

To keep the repository small, each weight of more than WEIGHT_KEPT_BELOW elements is
stored the way the onnx package's "light" zoo models store theirs, as a ConstantOfShape
node of its shape; tests/zoo.py fills those with seeded random weights. The graphs are
exactly what torch wrote. CI does not need torch: the .onnx files are committed.
"""
import os

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHT_KEPT_BELOW = 1024


def conv_bn(inputs, outputs, kernel, stride, groups=1, act=True):
    layers = [nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, groups=groups,
                        bias=False), nn.BatchNorm2d(outputs)]
    if act:
        layers.append(nn.ReLU6(inplace=True))
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, inputs, outputs, stride, expand):
        super().__init__()
        hidden = inputs * expand
        layers = [] if expand == 1 else [conv_bn(inputs, hidden, 1, 1)]
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden),
                   conv_bn(hidden, outputs, 1, 1, act=False)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and inputs == outputs

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    """MobileNetV2 (Sandler et al. 2018), width 1.0, 1000 classes."""

    # expansion, output channels, repeats, first stride
    BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
              (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, classes=1000):
        super().__init__()
        layers, channels = [conv_bn(3, 32, 3, 2)], 32
        for expand, outputs, repeats, stride in self.BLOCKS:
            for index in range(repeats):
                layers.append(InvertedResidual(channels, outputs,
                                               stride if index == 0 else 1, expand))
                channels = outputs
        layers.append(conv_bn(channels, 1280, 1, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.classifier(x)


class SpeechLstm(nn.Module):
    """40 filterbank features per frame -> 2 bidirectional LSTM layers -> 32 scores."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(40, 64, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(128, 32)

    def forward(self, x):
        return self.out(self.lstm(x)[0])


class SpeechGru(nn.Module):
    """Keyword spotting or voice activity: 40 features per frame -> 2 GRU layers of 128
    units -> 12 scores per frame."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(40, 128, num_layers=2, batch_first=True)
        self.out = nn.Linear(128, 12)

    def forward(self, x):
        return self.out(self.gru(x)[0])


class Encoder(nn.Module):
    """A small transformer encoder: 2 layers, d_model 64, 4 heads, GELU feed-forward."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(40, 64)
        layer = nn.TransformerEncoderLayer(64, 4, 128, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.out = nn.Linear(64, 10)

    def forward(self, x):
        return self.out(self.encoder(self.embed(x)))


class Tcn(nn.Module):
    """Keyword spotting: 40 features per frame, 4 causal dilated conv1d blocks (explicit
    left padding, dilation 1, 2, 4, 8) with residuals, then 12 scores per frame."""

    def __init__(self, channels=32):
        super().__init__()
        self.inp = nn.Conv1d(40, channels, 1)
        self.blocks = nn.ModuleList(nn.Conv1d(channels, channels, 3, dilation=d)
                                    for d in (1, 2, 4, 8))
        self.out = nn.Conv1d(channels, 12, 1)

    def forward(self, x):                      # x: [N, 40, T]
        y = torch.relu(self.inp(x))
        for block in self.blocks:
            pad = 2 * block.dilation[0]        # causal: all the padding on the left
            y = y + torch.relu(block(nn.functional.pad(y, (pad, 0))))
        return self.out(y)


class SqueezeExcite(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.reduce = nn.Conv2d(channels, channels // 4, 1)
        self.expand = nn.Conv2d(channels // 4, channels, 1)

    def forward(self, x):
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * nn.functional.hardsigmoid(self.expand(torch.relu(self.reduce(s))))


class MobileNetV3Small(nn.Module):
    """A MobileNetV3-style net (hard-swish, hard-sigmoid squeeze-excite), 10 classes."""

    def __init__(self):
        super().__init__()
        act = nn.Hardswish

        def block(cin, cout, stride, se):
            hidden = cin * 4
            layers = [nn.Conv2d(cin, hidden, 1), nn.BatchNorm2d(hidden), act(),
                      nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden),
                      nn.BatchNorm2d(hidden), act()]
            if se:
                layers.append(SqueezeExcite(hidden))
            layers += [nn.Conv2d(hidden, cout, 1), nn.BatchNorm2d(cout)]
            return nn.Sequential(*layers)
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), act())
        self.blocks = nn.Sequential(block(16, 16, 2, True), block(16, 24, 2, False),
                                    block(24, 40, 2, True), block(40, 48, 1, True))
        self.head = nn.Sequential(nn.Linear(48, 64), act(), nn.Linear(64, 10))

    def forward(self, x):
        y = self.blocks(self.stem(x))
        return self.head(nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


def export(module, example, name, dynamic):
    """Write <name>.legacy.onnx and <name>.dynamo.onnx; `dynamic` = {axis: symbol}."""
    module.eval()
    for flavor in ("legacy", "dynamo"):
        path = os.path.join(HERE, f"{name}.{flavor}.onnx")
        if flavor == "legacy":
            torch.onnx.export(module, (example,), path, dynamo=False, opset_version=17,
                              input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": dynamic})
        else:
            shapes = ({axis: torch.export.Dim(symbol) for axis, symbol in dynamic.items()},)
            torch.onnx.export(module, (example,), path, input_names=["x"],
                              output_names=["y"], dynamic_shapes=shapes,
                              external_data=False)
        model = onnx.load(path)
        lighten(model)
        onnx.save(model, path)
        print(path, os.path.getsize(path), "bytes")


def lighten(model):
    """Replace each big initializer by ConstantOfShape(its shape), as the light zoo does."""
    graph = model.graph
    kept, nodes = [], []
    for init in graph.initializer:
        value = numpy_helper.to_array(init)
        if value.size < WEIGHT_KEPT_BELOW or value.dtype != np.float32:
            kept.append(init)
            continue
        shape_name = init.name + "__shape"
        kept.append(numpy_helper.from_array(np.array(value.shape, np.int64), shape_name))
        nodes.append(helper.make_node("ConstantOfShape", [shape_name], [init.name],
                                      name=init.name + "__fill"))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    weights = {n.output[0] for n in nodes}
    inputs = [i for i in graph.input if i.name not in weights]
    del graph.input[:]
    graph.input.extend(inputs)
    body = list(graph.node)
    for node in body:          # stack traces and source locations: bulk, not graph
        node.doc_string = ""
        del node.metadata_props[:]
    del graph.node[:]
    graph.node.extend(nodes + body)


def main():
    torch.manual_seed(0)
    export(MobileNetV2(), torch.randn(2, 3, 224, 224), "mobilenet_v2", {0: "N"})
    export(SpeechLstm(), torch.randn(2, 50, 40), "lstm", {0: "N", 1: "T"})
    export(Encoder(), torch.randn(2, 50, 40), "encoder", {0: "N", 1: "T"})
    export(SpeechGru(), torch.randn(2, 50, 40), "gru", {0: "N", 1: "T"})
    export(Tcn(), torch.randn(2, 40, 50), "tcn", {0: "N", 2: "T"})
    export(MobileNetV3Small(), torch.randn(2, 3, 96, 96), "mobilenet_v3", {0: "N"})


if __name__ == "__main__":
    main()
