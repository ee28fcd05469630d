#!/usr/bin/env python3
"""Image pipeline side by side: vinfer against PyTorch, TensorFlow, Pillow and
OpenCV on the seeds' jobs, in one run on this machine.

    .venv-peers/bin/python bench/peers/bench_image.py [--quick] [--out out/bench_image]

Each peer runs in its own process (PyTorch and TensorFlow clash in one), at
its defaults and, where it has a thread setting, with threads = cores.
Writes OUT.json and OUT.md (a table with each peer's ratio to vinfer).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, ROOT, VINFER, timeit  # noqa: E402

IMAGE = os.path.join(ROOT, "tests", "data", "images", "retina.jpg")
SMALL = os.path.join(ROOT, "tests", "data", "images", "squirrel_cls.jpg")


# ------------------------------------------------------------------ peers (run in child processes)
def part_torch(iters):
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torchvision.transforms as T
    from PIL import Image
    out = []
    default_threads = torch.get_num_threads()
    for threads, label in ((default_threads, "default"), (CORES, "threads=cores"), (1, "1 thread")):
        torch.set_num_threads(threads)
        img1 = T.Grayscale(num_output_channels=1)(Image.open(IMAGE))
        k = 3
        size = (int(img1.size[1] / k), int(img1.size[0] / k))

        def seed():
            x = torch.from_numpy(np.array(img1)).permute(0, 1).unsqueeze(0).unsqueeze(0).float()
            F.interpolate(x, size=size)
        out.append(("resize", f"torch-seed ({label}, {threads}t)", timeit(seed, iters)))
        x = torch.from_numpy(np.array(img1)).unsqueeze(0).unsqueeze(0).float()
        out.append(("resize", f"torch F.interpolate only ({label}, {threads}t)", timeit(lambda: F.interpolate(x, size=size), iters)))

        def seed_decode():
            im = Image.open(IMAGE)
            im = T.Grayscale(num_output_channels=1)(im)
            x = torch.from_numpy(np.array(im)).permute(0, 1).unsqueeze(0).unsqueeze(0).float()
            F.interpolate(x, size=(int(im.size[1] / k), int(im.size[0] / k)))
        out.append(("resize-decode", f"torch-seed ({label}, {threads}t)", timeit(seed_decode, max(20, iters // 10))))
        tv = T.Compose([T.Resize([224, 224]), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        out.append(("preprocess", f"PIL + torchvision transforms ({label}, {threads}t)",
                    timeit(lambda: tv(Image.open(IMAGE).convert("RGB")), max(20, iters // 10))))
    return out


def part_tf(iters):
    import tensorflow as tf
    out = []
    raw = tf.io.read_file(IMAGE)
    img1 = tf.image.rgb_to_grayscale(tf.image.decode_image(raw))
    k = 3
    size = [int(img1.shape[0] / k), int(img1.shape[1] / k)]

    def seed():
        with tf.device("/cpu:0"):
            tf.image.resize(img1, size)
    out.append(("resize", "tf-seed tf.image.resize bilinear (default threads)", timeit(seed, iters)))

    def seed_decode():
        im = tf.image.decode_image(tf.io.read_file(IMAGE))
        im = tf.image.rgb_to_grayscale(im)
        with tf.device("/cpu:0"):
            tf.image.resize(im, [int(im.shape[0] / k), int(im.shape[1] / k)])
    out.append(("resize-decode", "tf-seed (default threads)", timeit(seed_decode, max(20, iters // 10))))
    return out


def part_pil_cv(iters):
    import cv2
    from PIL import Image
    out = []
    img1 = Image.open(IMAGE).convert("L")
    w, h = img1.size
    size = (int(w / 3), int(h / 3))
    out.append(("resize", "pillow NEAREST", timeit(lambda: img1.resize(size, Image.NEAREST), iters)))
    out.append(("resize", "pillow BILINEAR (antialiased)", timeit(lambda: img1.resize(size, Image.BILINEAR), iters)))
    rgb = Image.open(IMAGE).convert("RGB")
    out.append(("resize-rgb224", "pillow BILINEAR RGB -> 224x224", timeit(lambda: rgb.resize((224, 224), Image.BILINEAR), iters // 5)))
    import numpy as np
    g = np.array(img1)
    for threads, label in ((cv2.getNumThreads(), "default"), (1, "1 thread")):
        cv2.setNumThreads(threads)
        for name, flag in (("INTER_NEAREST", cv2.INTER_NEAREST), ("INTER_LINEAR", cv2.INTER_LINEAR), ("INTER_AREA", cv2.INTER_AREA)):
            out.append(("resize", f"opencv {name} ({label}, {threads}t)", timeit(lambda: cv2.resize(g, size, interpolation=flag), iters)))
        out.append(("resize-decode", f"opencv imread gray + INTER_AREA ({label}, {threads}t)",
                    timeit(lambda: cv2.resize(cv2.imread(IMAGE, cv2.IMREAD_GRAYSCALE), size, interpolation=cv2.INTER_AREA), max(20, iters // 10))))

    def draft():
        im = Image.open(IMAGE)
        im.draft("L", size)
        im.convert("L").resize(size, Image.BILINEAR)
    out.append(("resize-decode", "pillow draft('L') + BILINEAR", timeit(draft, max(20, iters // 10))))
    return out


def part_pillow_simd(iters):
    # Runs in .venv-simd (scripts/peers builds Pillow-SIMD there when it compiles).
    from PIL import Image
    import PIL
    img1 = Image.open(IMAGE).convert("L")
    size = (int(img1.size[0] / 3), int(img1.size[1] / 3))
    rgb = Image.open(IMAGE).convert("RGB")
    return [("resize", f"pillow-simd {PIL.__version__} BILINEAR (antialiased)", timeit(lambda: img1.resize(size, Image.BILINEAR), iters)),
            ("resize-rgb224", f"pillow-simd {PIL.__version__} BILINEAR RGB -> 224x224", timeit(lambda: rgb.resize((224, 224), Image.BILINEAR), iters // 5))]


PARTS = {"torch": part_torch, "tf": part_tf, "pilcv": part_pil_cv, "pillow-simd": part_pillow_simd}
PYTHON = {"pillow-simd": os.path.join(ROOT, ".venv-simd", "bin", "python")}


# ------------------------------------------------------------------ vinfer (through its CLI)
def vinfer_runs(iters):
    out = []

    def run(args, name, scenario):
        path = "/tmp/vinfer_bench_image.json"
        subprocess.run([VINFER] + args + ["--json", path], check=True, stdout=subprocess.DEVNULL)
        r = json.load(open(path))["per_iter_ms"]
        out.append((scenario, name, {"p50": r["p50"], "mean": r["mean"], "min": r["min"]}))

    n = str(iters)
    for threads in ("1", str(CORES)):
        t = ["--threads", threads]
        run(["bench-resize", IMAGE, "--gray", "--iters", n, "--compat", "torch", "--filter", "nearest"] + t,
            f"vinfer torch nearest, f32 out ({threads}t)", "resize")
        run(["bench-resize", IMAGE, "--gray", "--iters", n, "--compat", "pil", "--filter", "bilinear"] + t,
            f"vinfer pil bilinear ({threads}t)", "resize")
        run(["bench-resize", IMAGE, "--gray", "--iters", n, "--compat", "tf", "--filter", "bilinear"] + t,
            f"vinfer tf bilinear, f32 out ({threads}t)", "resize")
        for f in ("nearest", "bilinear", "area"):
            run(["bench-resize", IMAGE, "--gray", "--iters", n, "--compat", "opencv", "--filter", f] + t,
                f"vinfer opencv {f} ({threads}t)", "resize")
        m = str(max(20, iters // 10))
        run(["bench-resize", IMAGE, "--gray", "--iters", m, "--decode-in-loop", "--compat", "torch"] + t,
            f"vinfer seed loop, exact ({threads}t)", "resize-decode")
        run(["bench-resize", IMAGE, "--gray", "--iters", m, "--decode-in-loop", "--fast", "--compat", "torch"] + t,
            f"vinfer seed loop, fast: luma + DCT-scaled ({threads}t)", "resize-decode")
        run(["bench-preprocess", IMAGE, "--preset", "torchvision", "--iters", m] + t,
            f"vinfer torchvision preset, exact ({threads}t)", "preprocess")
        run(["bench-preprocess", IMAGE, "--preset", "torchvision", "--iters", m, "--fast"] + t,
            f"vinfer torchvision preset, fast ({threads}t)", "preprocess")
        run(["bench-resize", IMAGE, "--iters", str(iters // 5), "--compat", "pil", "--filter", "bilinear", "--size", "224x224"] + t,
            f"vinfer pil bilinear RGB -> 224x224 ({threads}t)", "resize-rgb224")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench_image"))
    a = ap.parse_args()
    iters = 200 if a.quick else 1000
    if a.part:
        print(json.dumps(PARTS[a.part](iters)))
        return
    results = []
    for part in PARTS:
        py = PYTHON.get(part, sys.executable)
        if not os.path.exists(py):
            print(f"peer {part} missing: {py} not found", file=sys.stderr)
            results.append(("missing", part, None))
            continue
        p = subprocess.run([py, os.path.abspath(__file__), "--part", part] + (["--quick"] if a.quick else []),
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"peer {part} failed (reported as missing):\n{p.stderr[-2000:]}", file=sys.stderr)
            results.append(("missing", part, None))
            continue
        results += [tuple(r) for r in json.loads(p.stdout.strip().splitlines()[-1])]
    results += vinfer_runs(iters)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    json.dump({"image": IMAGE, "cores": CORES, "iters": iters, "results": results}, open(a.out + ".json", "w"), indent=1)
    lines = [f"Image: {os.path.relpath(IMAGE, ROOT)} (1411x1411 JPEG), {CORES} cores, p50 of {iters} iterations (decode loops: fewer)", ""]
    for scen in ("resize", "resize-decode", "preprocess", "resize-rgb224"):
        rows = [r for r in results if r[0] == scen]
        if not rows:
            continue
        lines += [f"### {scen}", "", "| what | p50 (ms) | mean (ms) |", "|---|---|---|"]
        for _, name, t in sorted(rows, key=lambda r: r[2]["p50"]):
            lines.append(f"| {name} | {t['p50']:.3f} | {t['mean']:.3f} |")
        lines.append("")
    for _, part, _ in [r for r in results if r[0] == "missing"]:
        lines.append(f"Peer '{part}' missing: it failed to run here.")
    open(a.out + ".md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
