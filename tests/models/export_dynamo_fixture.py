#!/usr/bin/env python3
"""Writes tests/data/onnx20/: a small CNN (convolutions with BatchNorm and
non-trivial statistics, ReLU, a max pool, a residual addition, global
average pooling, a linear layer, softmax) as torch 2.x's default (dynamo)
exporter writes it (IR 10, opset 20, weights as external data), with its
input and PyTorch's output. Committed, so CI (Debian's torch 1.13, which
cannot write this) tests the newer format:

    .venv-peers/bin/python tests/models/export_dynamo_fixture.py
"""
import os
import shutil

import numpy as np
import onnx
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "onnx20")


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(16)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.b1(self.c1(x))), 3, 2, 1)
        y = torch.relu(y + self.b2(self.c2(y)))
        return torch.softmax(self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)), 1)


def main():
    torch.manual_seed(0)
    m = Small()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for bn in (m.b1, m.b2):
            bn.running_mean.copy_(torch.randn(16, generator=g) * 0.2)
            bn.running_var.copy_(torch.rand(16, generator=g) * 0.5 + 0.75)
            bn.weight.copy_(torch.rand(16, generator=g) * 0.5 + 0.75)
            bn.bias.copy_(torch.randn(16, generator=g) * 0.1)
    m.eval()
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        y = m(x)
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    path = os.path.join(OUT, "small.onnx")
    torch.onnx.export(m, (x,), path, input_names=["input"], output_names=["probs"], dynamo=True, external_data=True)
    model = onnx.load(path, load_external_data=False)
    print("IR", model.ir_version, "opset", [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")],
          "ops", sorted({n.op_type for n in model.graph.node}), "torch", torch.__version__)
    np.save(os.path.join(OUT, "small.input.npy"), x.numpy())
    np.save(os.path.join(OUT, "small.torch.npy"), y.numpy())


if __name__ == "__main__":
    main()
