#!/usr/bin/env python3
"""Throughput side by side: a folder of JPEGs, file -> top-5 written, images/s,
vinfer against PyTorch, ONNX Runtime and OpenVINO (float32), the same network
(one ONNX export, random weights, dynamic batch) on this machine, in one run.

    .venv-peers/bin/python bench/peers/bench_throughput.py [--models densenet121,resnet50] [--images 500]

Also, per network, the forward pass alone at --forward-batch (32) against
ONNX Runtime at the same batch, alternating, time per image.

The folder: --images JPEGs made from the photos in ../shared/data/images
(else tests/data/images), each resized to 0.2-2 megapixels and re-encoded
(quality 90), seeded (out/throughput/images). Every engine reads each file,
decodes and preprocesses it as torchvision's ImageNet preset does (shorter
side to 256, bilinear, centre crop 224, normalize), runs the network and
writes the top-5 as a JSON line; timed from the first file read to the last
line written, the network loaded (and for the peers run once) before:
  - vinfer: `vinfer classify MODEL DIR --batch B --workers W --streams S -o FILE`
    (S copies of the network, threads split among them), its own figure
    (classification only, loading excluded);
  - PyTorch: torchvision's transforms in a DataLoader(num_workers=2),
    batched forward under inference_mode;
  - ONNX Runtime: PIL preprocessing in a thread pool of 2, session.run on
    batches;
  - OpenVINO: PERFORMANCE_HINT=THROUGHPUT, an AsyncInferQueue of its optimal
    number of requests, PIL preprocessing in a thread pool of 2.
Each engine runs in its own process; every configuration runs once per
round, --rounds rounds one after the other (so that a machine whose speed
drifts affects all alike), and the best round counts. Writes
out/bench_throughput.{json,md}.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, EXPORT, ROOT, VINFER  # noqa: E402

OUT = os.path.join(ROOT, "out", "throughput")
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def make_images(n, folder):
    """n JPEGs of 0.2-2 MP from the photos, seeded; kept between runs."""
    from PIL import Image
    os.makedirs(folder, exist_ok=True)
    have = sorted(f for f in os.listdir(folder) if f.endswith(".jpg"))
    if len(have) == n:
        return
    for f in have:
        os.remove(os.path.join(folder, f))
    src = os.path.join(ROOT, "..", "shared", "data", "images")
    if not os.path.isdir(src):
        src = os.path.join(ROOT, "tests", "data", "images")
    photos = [Image.open(os.path.join(src, f)).convert("RGB") for f in sorted(os.listdir(src))]
    rng = random.Random(7)
    for i in range(n):
        p = photos[i % len(photos)]
        mp = rng.uniform(0.2, 2.0) * 1e6
        aspect = p.width / p.height * rng.uniform(0.8, 1.25)
        w = max(64, int((mp * aspect) ** 0.5))
        h = max(64, int(mp / w))
        p.resize((w, h), Image.BICUBIC).save(os.path.join(folder, f"img{i:05d}.jpg"), quality=90)


def files(folder):
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".jpg")]


def pil_tensor(path):
    """torchvision's ImageNet preprocessing with PIL and NumPy (CHW float32)."""
    import numpy as np
    from PIL import Image
    im = Image.open(path).convert("RGB")
    s = 256 / min(im.size)
    im = im.resize((max(256, int(im.width * s)), max(256, int(im.height * s))), Image.BILINEAR)
    left, top = (im.width - 224) // 2, (im.height - 224) // 2
    x = np.asarray(im.crop((left, top, left + 224, top + 224)), np.float32) / 255
    return np.ascontiguousarray(((x - MEAN) / STD).transpose(2, 0, 1), dtype=np.float32)


def write_top5(f, path, logits):
    import numpy as np
    e = np.exp(logits - logits.max())
    p = e / e.sum()
    top = np.argsort(-p, kind="stable")[:5]
    f.write(json.dumps({"image": path, "topk": [{"index": int(i), "prob": float(p[i])} for i in top]}) + "\n")


def run_peer(engine, model, folder, batch, threads, out):
    """One peer, in this process: prints {"images": n, "seconds": s}."""
    import numpy as np
    paths = files(folder)
    if engine == "pytorch":
        import torch
        import torchvision
        from torchvision import transforms as T
        torch.set_num_threads(threads)
        name = os.path.basename(model)[:-len(".onnx")]
        net = getattr(torchvision.models, name)().eval()
        if os.path.exists(model[:-len(".onnx")] + ".pth"):  # the export's weights
            net.load_state_dict(torch.load(model[:-len(".onnx")] + ".pth"))
        tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])

        class Files(torch.utils.data.Dataset):
            def __len__(self):
                return len(paths)

            def __getitem__(self, i):
                from PIL import Image
                return tf(Image.open(paths[i]).convert("RGB")), i

        loader = torch.utils.data.DataLoader(Files(), batch_size=batch, num_workers=2)
        with torch.inference_mode():
            net(torch.zeros(batch, 3, 224, 224))
            t = time.perf_counter()
            with open(out, "w") as f:
                for x, idx in loader:
                    y = net(x).numpy()
                    for k, i in enumerate(idx.tolist()):
                        write_top5(f, paths[i], y[k])
            s = time.perf_counter() - t
    elif engine == "onnxruntime":
        import onnxruntime as ort
        from concurrent.futures import ThreadPoolExecutor
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        sess.run(None, {name: np.zeros((batch, 3, 224, 224), np.float32)})
        t = time.perf_counter()
        with ThreadPoolExecutor(2) as pool, open(out, "w") as f:
            tensors = pool.map(pil_tensor, paths)  # in order, up to the pool's pace
            for b in range(0, len(paths), batch):
                xs = [next(tensors) for _ in paths[b:b + batch]]
                y = sess.run(None, {name: np.stack(xs)})[0]
                for k, p in enumerate(paths[b:b + batch]):
                    write_top5(f, p, y[k])
        s = time.perf_counter() - t
    else:
        import openvino as ov
        from concurrent.futures import ThreadPoolExecutor
        core = ov.Core()
        cm = core.compile_model(core.read_model(model), "CPU", {"PERFORMANCE_HINT": "THROUGHPUT",
                                                                "INFERENCE_NUM_THREADS": threads,
                                                                "INFERENCE_PRECISION_HINT": "f32"})
        cm.create_infer_request().infer({0: np.zeros((1, 3, 224, 224), np.float32)})
        results = {}
        queue = ov.AsyncInferQueue(cm)
        queue.set_callback(lambda req, i: results.__setitem__(i, req.get_output_tensor(0).data[0].copy()))
        t = time.perf_counter()
        with ThreadPoolExecutor(2) as pool, open(out, "w") as f:
            written = 0
            for i, x in enumerate(pool.map(pil_tensor, paths)):
                queue.start_async({0: x[None]}, i)
                while written in results:  # in order, as they finish
                    write_top5(f, paths[written], results.pop(written))
                    written += 1
            queue.wait_all()
            for i in range(written, len(paths)):
                write_top5(f, paths[i], results.pop(i))
        s = time.perf_counter() - t
    print(json.dumps({"images": len(paths), "seconds": s}))


def ort_forward(model, batch, threads, loops):
    """ONNX Runtime's forward pass at `batch`, in this process: prints p50 ms per image."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    x = {sess.get_inputs()[0].name: np.random.default_rng(0).standard_normal((batch, 3, 224, 224), np.float32)}
    sess.run(None, x)
    ts = []
    for _ in range(loops):
        t = time.perf_counter()
        sess.run(None, x)
        ts.append((time.perf_counter() - t) * 1000 / batch)
    print(json.dumps({"ms_per_image": sorted(ts)[len(ts) // 2]}))


def forward_rows(name, model, batch, threads, rounds, loops=5):
    """vinfer and ONNX Runtime, forward pass only at `batch`, alternating, best p50 per image."""
    mine, theirs = [], []
    for _ in range(rounds):
        p = subprocess.run([VINFER, "bench", model, "--forward-only", "--batch", str(batch), "--loops", str(loops), "--warmup", "1",
                            "--threads", str(threads)], capture_output=True, text=True)
        m = re.search(r"per image: p50 ([\d.]+) ms", p.stdout)
        if p.returncode != 0 or not m:
            raise SystemExit(f"vinfer bench failed: {p.stderr[-400:]}")
        mine.append(float(m.group(1)))
        p = subprocess.run([sys.executable, __file__, "--threads", str(threads), "--forward", model, str(batch), str(loops)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"onnxruntime failed: {p.stderr[-400:]}")
        theirs.append(json.loads(p.stdout.strip().splitlines()[-1])["ms_per_image"])
    return {"model": name, "batch": batch, "vinfer_ms": min(mine), "onnxruntime_ms": min(theirs)}


def run_vinfer(model, folder, batch, workers, streams, threads, out):
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([VINFER, "classify", model, folder, "--batch", str(batch), "--workers", str(workers), "--streams",
                        str(streams), "--threads", str(max(1, threads // streams)), "-o", out, "--no-progress"],
                       capture_output=True, text=True)
    m = re.search(r"(\d+) image\(s\) in ([\d.]+) s", p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit(f"vinfer failed ({p.returncode}): {p.stderr[-400:]}")
    return int(m.group(1)), float(m.group(2))


def top1(path):
    return {r["image"]: r["topk"][0]["index"] for r in map(json.loads, open(path))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="densenet121,resnet50")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "out", "models-dynamic"))
    ap.add_argument("--images", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=CORES)
    ap.add_argument("--vinfer", default="1x1x1,1x1x2,8x1x1,32x1x1", help="vinfer's BATCHxWORKERSxSTREAMS configurations")
    ap.add_argument("--peer-batches", default="1,8")
    ap.add_argument("--forward-batch", type=int, default=32, help="forward pass only at this batch, against ONNX Runtime (0: not)")
    ap.add_argument("--run", nargs=5, metavar=("ENGINE", "MODEL", "FOLDER", "BATCH", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--forward", nargs=3, metavar=("MODEL", "BATCH", "LOOPS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run:
        engine, model, folder, batch, out = a.run
        return run_peer(engine, model, folder, int(batch), a.threads, out)
    if a.forward:
        return ort_forward(a.forward[0], int(a.forward[1]), a.threads, int(a.forward[2]))
    folder = os.path.join(OUT, "images")
    make_images(a.images, folder)
    names = a.models.split(",")
    missing = [n for n in names if not os.path.exists(os.path.join(a.model_dir, n + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, EXPORT, a.model_dir] + missing, check=True,
                       env=dict(os.environ, VINFER_OPSET=os.environ.get("VINFER_OPSET", "17")))
    rows = []
    for name in names:
        model = os.path.join(a.model_dir, name + ".onnx")
        # Every configuration once per round, rounds one after the other: a
        # machine that slows down or speeds up meanwhile affects all alike.
        configs = [("vinfer", tuple(map(int, (c + "x1").split("x")[:3]))) for c in a.vinfer.split(",")]
        for engine in ("pytorch", "onnxruntime", "openvino"):
            configs += [(engine, (b,)) for b in ([1] if engine == "openvino" else map(int, a.peer_batches.split(",")))]
        secs = {c: [] for c in configs}
        outs = {}
        for _ in range(a.rounds):
            for engine, cfg in configs:
                out = outs[(engine, cfg)] = os.path.join(OUT, f"{name}.{engine}.{'x'.join(map(str, cfg))}.jsonl")
                if engine == "vinfer":
                    secs[(engine, cfg)].append(run_vinfer(model, folder, *cfg, a.threads, out)[1])
                    continue
                p = subprocess.run([sys.executable, __file__, "--threads", str(a.threads), "--run", engine, model, folder,
                                    str(cfg[0]), out], capture_output=True, text=True)
                if p.returncode != 0:
                    raise SystemExit(f"{engine} failed: {p.stderr[-600:]}")
                secs[(engine, cfg)].append(json.loads(p.stdout.strip().splitlines()[-1])["seconds"])
        ref = top1(outs[configs[0]])
        for engine, cfg in configs:
            row = {"model": name, "engine": engine, "ips": a.images / min(secs[(engine, cfg)]),
                   "ips_all": [a.images / t for t in secs[(engine, cfg)]]}
            if engine == "vinfer":
                row["config"] = f"batch {cfg[0]}, {cfg[1]} loader(s), {cfg[2]} stream(s)"
            else:
                got = top1(outs[(engine, cfg)])
                row["top1_agree"] = sum(got.get(k) == v for k, v in ref.items()) / len(ref)
                row["config"] = "THROUGHPUT hint, AsyncInferQueue" if engine == "openvino" else f"batch {cfg[0]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
    forward = [forward_rows(n, os.path.join(a.model_dir, n + ".onnx"), a.forward_batch, a.threads, a.rounds)
               for n in names] if a.forward_batch > 0 else []
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    import onnxruntime
    import openvino
    import torch
    lines = [f"Throughput, {time.strftime('%Y-%m-%d')}, {cpu}, {a.threads} threads, {a.images} JPEGs of 0.2-2 MP, "
             f"file -> top-5 written, best of {a.rounds} (PyTorch {torch.__version__}, ONNX Runtime "
             f"{onnxruntime.__version__}, OpenVINO {openvino.__version__.split('-')[0]} f32)", "",
             "| network | engine | configuration | images/s | vinfer's best / this | top-1 as vinfer |",
             "|---|---|---|---:|---:|---:|"]
    for name in names:
        mine = [r for r in rows if r["model"] == name]
        best = max(r["ips"] for r in mine if r["engine"] == "vinfer")
        for r in mine:
            agree = f"{100 * r['top1_agree']:.0f} %" if "top1_agree" in r else ""
            lines.append(f"| {name} | {r['engine']} | {r['config']} | {r['ips']:.1f} | {best / r['ips']:.2f} | {agree} |")
    if forward:
        lines += ["", f"Forward pass only, batch {a.forward_batch}, ms per image (p50 of 5 passes, best of {a.rounds} "
                      f"alternating rounds, the same ONNX file):", "",
                  "| network | vinfer | ONNX Runtime | vinfer / ONNX Runtime |", "|---|---:|---:|---:|"]
        for r in forward:
            lines.append(f"| {r['model']} | {r['vinfer_ms']:.1f} | {r['onnxruntime_ms']:.1f} | {r['vinfer_ms'] / r['onnxruntime_ms']:.2f} |")
    with open(os.path.join(ROOT, "out", "bench_throughput.json"), "w") as f:
        json.dump({"cpu": cpu, "threads": a.threads, "images": a.images, "rows": rows, "forward": forward}, f, indent=1)
    with open(os.path.join(ROOT, "out", "bench_throughput.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
