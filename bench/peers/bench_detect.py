#!/usr/bin/env python3
"""Detection and segmentation networks: vinfer against ONNX Runtime on the
same ONNX file, every output compared, forward pass timed side by side.

    .venv-peers/bin/python bench/peers/bench_detect.py yolov8n.onnx yolov8n-seg.onnx [--loops 30]

The files come from Ultralytics (random weights: no pretrained weights can
be downloaded here, so the boxes mean nothing; the arithmetic is the same):

    YOLO_OFFLINE=1 python -c "from ultralytics import YOLO; YOLO('yolov8n.yaml').export(format='onnx')"

Each engine runs in this process, one after the other for --rounds rounds;
a figure is the median of all its passes. Exits 1 when an output differs
from ONNX Runtime's by more than 1e-3 x its largest magnitude.
"""
import argparse
import os
import statistics
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, timed_loop  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "build", "python"))
import vinfer  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--loops", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    worst = 0.0
    print("| network | outputs | max diff / max magnitude | vinfer ms | ONNX Runtime ms | ratio |\n|---|---|---:|---:|---:|---:|")
    for path in a.models:
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        v = vinfer.Session(path)
        name = s.get_inputs()[0].name
        shape = [d if isinstance(d, int) else 1 for d in s.get_inputs()[0].shape]
        x = np.random.RandomState(0).rand(*shape).astype(np.float32)
        want, got = s.run(None, {name: x}), v.run(None, {name: x})
        rel = max(float(np.abs(w - g).max() / max(np.abs(w).max(), 1e-30)) for w, g in zip(want, got))
        worst = max(worst, rel)
        tv, to = [], []
        for _ in range(a.rounds):
            tv += timed_loop(lambda: v.run(None, {name: x}), a.loops, 1)
            to += timed_loop(lambda: s.run(None, {name: x}), a.loops, 1)
        mv, mo = statistics.median(tv), statistics.median(to)
        outs = ", ".join("x".join(map(str, w.shape)) for w in want)
        print(f"| {os.path.basename(path)} | {outs} | {rel:.1e} | {mv:.1f} | {mo:.1f} | {mv / mo:.2f} |")
    return 1 if worst > 1e-3 else 0


if __name__ == "__main__":
    sys.exit(main())
