#!/usr/bin/env python3
"""The Python package side by side with the frameworks and with vinfer's own
CLI, in one run (vinfer installed into the peers' environment:
`.venv-peers/bin/pip install .`):

  1. preprocess: vinfer.preprocess(path, "torchvision") against
     T.Compose([Resize([224,224]), ToTensor(), Normalize(...)])(Image.open(path)),
     on the bundled photos and a 2 MP JPEG, with the tensors compared;
  2. the questions' loop written in Python: Model.classify(path) on DenseNet121
     against `vinfer bench` on the same image (what the binding adds) and
     against PyTorch's corrected loop (no_grad, warm, threads set);
  3. threads: 200 classifications by one Python thread on a Model with one
     compiled copy, against four Python threads on a Model with two.

    .venv-peers/bin/python bench/peers/bench_python.py [--loops 30] [--json out/bench_python.json]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import transforms as T

import vinfer
from common import ROOT, VINFER as CLI, timed_loop

IMAGES = os.path.join(ROOT, "tests", "data", "images")


def p50(samples):
    return statistics.median(samples)


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def bench_preprocess(loops, photos, rounds=5):
    """Each photo in rounds, the three timings in turn within each round (the
    shared host drifts within a minute); the speed-ups are the rounds'
    median ratios."""
    tv = T.Compose([T.Resize([224, 224]), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    rows = []
    for path in photos:
        want = tv(Image.open(path).convert("RGB")).unsqueeze(0).numpy()
        got = vinfer.preprocess(path)
        diff = float(np.abs(got - want).max())
        t_tv, t_v, t_v2 = [], [], []
        for _ in range(rounds):
            t_tv.append(p50(timed_loop(lambda: tv(Image.open(path).convert("RGB")), loops, 3)))
            t_v.append(p50(timed_loop(lambda: vinfer.preprocess(path, threads=1), loops, 3)))
            t_v2.append(p50(timed_loop(lambda: vinfer.preprocess(path, threads=2), loops, 3)))
        rows.append({"image": os.path.basename(path), "torchvision_ms": p50(t_tv), "vinfer_ms": p50(t_v),
                     "vinfer_2t_ms": p50(t_v2), "speedup": p50([a / b for a, b in zip(t_tv, t_v)]),
                     "speedup_2t": p50([a / b for a, b in zip(t_tv, t_v2)]),
                     "speedup_2t_range": [min(a / b for a, b in zip(t_tv, t_v2)), max(a / b for a, b in zip(t_tv, t_v2))],
                     "max_abs_diff": diff})
    return rows


def bench_vinfer_loop(loops, photo, threads, rounds=7):
    """Model.classify against `vinfer bench` on the same image, alternating in
    rounds, each pair in turn Python first and CLI first (this shared host
    drifts by more than the binding could cost)."""
    model = vinfer.Model("densenet121", threads=threads)
    py, cli = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b.json")

        def python_round():
            py.append(p50(timed_loop(lambda: model.classify(photo, topk=5), loops, warmup=10)))

        def cli_round():
            subprocess.run([CLI, "bench", "densenet121", photo, "--loops", str(loops), "--warmup", "10", "--threads",
                            str(threads), "--json", out], check=True, capture_output=True)
            cli.append(json.load(open(out))["latency_ms"]["p50"])
        for r in range(rounds):
            for run in ((python_round, cli_round) if r % 2 == 0 else (cli_round, python_round)):
                run()
    ratios = [a / b for a, b in zip(py, cli)]
    return {"threads": threads, "vinfer_python_ms": p50(py), "vinfer_cli_ms": p50(cli), "python_over_cli": p50(ratios),
            "python_over_cli_range": [min(ratios), max(ratios)]}


def bench_torch_loop(loops, photo, r):
    torch.set_num_threads(r["threads"])
    net = torchvision.models.densenet121().eval()
    tv = T.Compose([T.Resize([224, 224]), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def torch_loop():
        with torch.inference_mode():
            y = net(tv(Image.open(photo).convert("RGB")).unsqueeze(0))
            torch.topk(torch.softmax(y, 1), 5)
    r["torch_corrected_ms"] = p50(timed_loop(torch_loop, loops, warmup=5))
    r["torch_over_python"] = r["torch_corrected_ms"] / r["vinfer_python_ms"]
    return r


def bench_threads(n_images, photos, rounds=3):
    work = [photos[i % len(photos)] for i in range(n_images)]

    def run(model, n_threads):
        chunks = [work[k::n_threads] for k in range(n_threads)]
        ts = [threading.Thread(target=lambda c=c: [model.classify(p, topk=1) for p in c]) for c in chunks]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return time.perf_counter() - t0

    one = vinfer.Model("densenet121", threads=1, instances=1)
    two = vinfer.Model("densenet121", threads=1, instances=2)
    both_cores = vinfer.Model("densenet121", threads=0, instances=1)
    for m in (one, two, both_cores):
        m.classify(photos[0])
    # In rounds, alternating which goes first: the host drifts within a minute.
    t1, t4 = [], []
    for r in range(rounds):
        if r % 2 == 0:
            t1.append(run(one, 1))
            t4.append(run(two, 4))
        else:
            t4.append(run(two, 4))
            t1.append(run(one, 1))
    t1b = run(both_cores, 1)
    ratios = [a / b for a, b in zip(t1, t4)]
    return {"images": n_images, "rounds": rounds, "one_thread_s": p50(t1), "four_threads_two_copies_s": p50(t4),
            "speedup": p50(ratios), "speedup_range": [min(ratios), max(ratios)], "one_thread_model_on_all_cores_s": t1b}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loops", type=int, default=30)
    ap.add_argument("--images", type=int, default=200)
    ap.add_argument("--json")
    a = ap.parse_args()
    photos = [os.path.join(IMAGES, f) for f in ("squirrel_cls.jpg", "chelsea.png", "retina.jpg")]
    cores = os.cpu_count()
    # vinfer first, before PyTorch has run anything in this process: a vinfer
    # Model created after PyTorch's own OpenMP work ran here can lose half its
    # two-thread speed (docs/benchmarks.md, "Python").
    mine = [bench_vinfer_loop(a.loops, photos[0], t) for t in (1, cores)]
    thr = bench_threads(a.images, photos)
    loop = [bench_torch_loop(a.loops, photos[0], r) for r in mine]
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "photo_2mp.jpg")
        Image.open(photos[2]).convert("RGB").resize((1632, 1224), Image.BICUBIC).save(big, quality=90)
        pre = bench_preprocess(a.loops, photos + [big])
    head = (f"{time.strftime('%Y-%m-%d')}, {cpu_name()}, {cores} cores; vinfer {vinfer.__version__}, torch {torch.__version__}, "
            f"torchvision {torchvision.__version__}, Python {platform.python_version()}")
    print(head + "\n")
    print("| image | PIL + torchvision ms | vinfer.preprocess ms (1 / 2 threads) | speed-up (1 / 2 threads; rounds' median) | 2 threads' range | max abs diff |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in pre:
        print(f"| {r['image']} | {r['torchvision_ms']:.2f} | {r['vinfer_ms']:.2f} / {r['vinfer_2t_ms']:.2f} | "
              f"{r['speedup']:.2f}x / {r['speedup_2t']:.2f}x | {r['speedup_2t_range'][0]:.2f}-{r['speedup_2t_range'][1]:.2f} | "
              f"{r['max_abs_diff']:.1e} |")
    print("\n| threads | Model.classify ms | vinfer bench ms | Python / CLI (rounds' median [range]) | PyTorch corrected ms | PyTorch / Python |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in loop:
        lo, hi = r["python_over_cli_range"]
        print(f"| {r['threads']} | {r['vinfer_python_ms']:.2f} | {r['vinfer_cli_ms']:.2f} | {r['python_over_cli']:.3f} [{lo:.3f}-{hi:.3f}] | "
              f"{r['torch_corrected_ms']:.2f} | {r['torch_over_python']:.2f}x |")
    print(f"\n{thr['images']} classifications: one Python thread, one copy (1 engine thread) {thr['one_thread_s']:.2f} s; "
          f"four Python threads, two copies {thr['four_threads_two_copies_s']:.2f} s: {thr['speedup']:.2f}x "
          f"(median of {thr['rounds']} alternating rounds, range {thr['speedup_range'][0]:.2f}-{thr['speedup_range'][1]:.2f}x); "
          f"one Python thread on a Model using every core {thr['one_thread_model_on_all_cores_s']:.2f} s")
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        json.dump({"header": head, "preprocess": pre, "loop": loop, "threads": thr}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
