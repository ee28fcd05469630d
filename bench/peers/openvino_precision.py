#!/usr/bin/env python3
"""How far OpenVINO's CPU results are from PyTorch's at its default inference
precision (bfloat16 on CPUs with AVX512_BF16 or AMX) and at float32, against
the parity bar the engine is held to (max |diff| <= 1e-3 x max |logit|):

    .venv-peers/bin/python bench/peers/openvino_precision.py [--models densenet121,...]

Reads the exports of tests/models/export_models.py (NAME.onnx, NAME.input.npy,
NAME.torch.npy) from out/models.
"""
import argparse
import os

import numpy as np
import openvino as ov

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="densenet121,densenet169,densenet201,vgg19,resnet50")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "out", "models"))
    a = ap.parse_args()
    core = ov.Core()
    print("| model | OpenVINO default | max abs diff / max abs logit | float32 | max abs diff / max abs logit |")
    print("|---|---|---:|---|---:|")
    for name in a.models.split(","):
        path = os.path.join(a.model_dir, name)
        x, want = np.load(path + ".input.npy"), np.load(path + ".torch.npy")
        model = core.read_model(path + ".onnx")
        cells = []
        for config in ({}, {"INFERENCE_PRECISION_HINT": "f32"}):
            compiled = core.compile_model(model, "CPU", config)
            y = compiled(x)[0]
            rel = float(np.abs(y - want).max() / np.abs(want).max())
            cells += [compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name(), f"{rel:.2e}" + (" (over 1e-3)" if rel > 1e-3 else "")]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
