#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (small, valid inputs of every kind the
parsers take; the fuzzers mutate them). Committed under fuzz/corpus/; rerun
with the peers' environment to regenerate:

    .venv-peers/bin/python fuzz/make_corpus.py
"""
import io
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
C = os.path.join(HERE, "corpus")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
from export_models import save_hostile, save_safetensors  # noqa: E402


def out(kind, name, data):
    os.makedirs(os.path.join(C, kind), exist_ok=True)
    with open(os.path.join(C, kind, name), "wb") as f:
        f.write(data)


def downsample_block_onnx(kw):
    """A ResNet downsampling block (stride-2 3x3 on a 28x28 map of 16 channels,
    stride-2 1x1 shortcut, residual add): reaches the stride-2 Winograd."""
    class Down(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1)
            self.c2 = torch.nn.Conv2d(16, 32, 1)
            self.short = torch.nn.Conv2d(16, 32, 1, stride=2, bias=False)

        def forward(self, x):
            return torch.relu(self.c2(torch.relu(self.c1(x))) + self.short(x))
    torch.manual_seed(0)
    b = io.BytesIO()
    torch.onnx.export(Down().eval(), torch.randn(1, 16, 28, 28), b, opset_version=13, **kw)
    return b.getvalue()


def main():
    shutil.rmtree(C, ignore_errors=True)
    rng = np.random.default_rng(0)
    rgb = Image.fromarray(rng.integers(0, 255, (13, 11, 3), dtype=np.uint8))
    for name, img, kw in [("baseline.jpg", rgb, {}), ("progressive.jpg", rgb, {"progressive": True}),
                          ("gray.jpg", rgb.convert("L"), {}), ("cmyk.jpg", rgb.convert("CMYK"), {}),
                          ("s444.jpg", rgb, {"subsampling": 0}), ("s422.jpg", rgb, {"subsampling": 1})]:
        b = io.BytesIO()
        img.save(b, "JPEG", quality=80, **kw)
        out("decode", name, b.getvalue())
    for name, img in [("rgb.png", rgb), ("gray.png", rgb.convert("L")), ("la.png", rgb.convert("LA")), ("rgba.png", rgb.convert("RGBA")),
                      ("palette.png", rgb.convert("P")), ("i16.png", Image.fromarray((rng.integers(0, 65535, (9, 7))).astype(np.uint16)))]:
        b = io.BytesIO()
        img.save(b, "PNG")
        out("decode", name, b.getvalue())

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.c2 = torch.nn.Conv2d(8, 8, 1)
            self.fc = torch.nn.Linear(16, 4)

        def forward(self, x):
            y = torch.relu(self.bn(self.c1(x)))
            y = torch.nn.functional.max_pool2d(y, 3, 2, ceil_mode=True)
            y = torch.cat([y, torch.clamp(self.c2(y), 0, 6)], 1)
            y = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)
            return torch.softmax(self.fc(y), 1)
    m = Tiny().eval()
    b = io.BytesIO()
    kw = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
    torch.onnx.export(m, torch.randn(1, 3, 8, 8), b, opset_version=13, **kw)
    out("onnx", "tiny.onnx", b.getvalue())
    out("onnx", "downsample.onnx", downsample_block_onnx(kw))

    sd = {"w": torch.randn(3, 2), "b": torch.arange(4), "h": torch.randn(2).half()}
    b = io.BytesIO()
    torch.save(sd, b)
    out("checkpoint", "zip.pth", b.getvalue())
    b = io.BytesIO()
    torch.save(sd, b, _use_new_zipfile_serialization=False)
    out("checkpoint", "legacy.pth", b.getvalue())
    save_safetensors({"w": sd["w"], "b": sd["b"]}, os.path.join(C, "checkpoint", "t.safetensors"))
    save_hostile(os.path.join(C, "checkpoint", "hostile.pth"))

    for i, t in enumerate(["torch:nearest", "pil:bicubic", "opencv:area", "tf:bilinear", "torchvision", "keras-caffe", "pil:lanczos"]):
        out("params", f"p{i}", bytes([20 + i, 17, 9 + i, 33, i, i]) + t.encode())


if __name__ == "__main__":
    main()
