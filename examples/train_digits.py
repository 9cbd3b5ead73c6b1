"""Train the demo model: a small CNN on scikit-learn's 8x8 digits, exported to ONNX.

Run once by a developer (needs torch and scikit-learn); its outputs are committed:
examples/digits.onnx and examples/digits_test.npz (the held-out split, so the main
job needs neither torch nor scikit-learn).

    python examples/train_digits.py
"""
import os

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),                                     # 16 x 4 x 4
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AvgPool2d(2),                                     # 32 x 2 x 2
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    torch.manual_seed(0)
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]   # N x 1 x 8 x 8, in [0, 1]
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target, test_size=0.25, random_state=0, stratify=digits.target)
    model = DigitsNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    for epoch in range(40):
        model.train()
        for batch in torch.randperm(len(xt)).split(64):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xt[batch]), yt[batch])
            loss.backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(torch.from_numpy(x_test)).argmax(1).numpy() == y_test).mean()
    print(f"test accuracy {accuracy:.4f} on {len(y_test)} held-out digits")
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(HERE, "digits.onnx"),
                      input_names=["image"], output_names=["logits"], opset_version=13,
                      dynamo=False)
    np.savez_compressed(os.path.join(HERE, "digits_test.npz"),
                        images=np.round(x_test * 16).astype(np.uint8), labels=y_test.astype(np.uint8))


if __name__ == "__main__":
    main()
