#!/usr/bin/env python3
"""Cold start side by side: whole processes that load a network and classify
one image, vinfer against ONNX Runtime and OpenVINO (float32), on the same
ONNX files (random weights), on this machine, in one run.

    .venv-peers/bin/python bench/peers/bench_coldstart.py [--models densenet121,resnet50,vgg19] [--rounds 5]

Per network and engine, each round starts fresh processes, one after the
other (the files stay in the page cache: a first round, not counted, warms it
and vinfer's tune cache):
  - load: vinfer, the whole `vinfer info MODEL` process (process start to a
    compiled model, printing included); ONNX Runtime, creating the
    InferenceSession; OpenVINO, read_model + compile_model. The peers' figures
    leave out starting Python and importing the package (reported apart);
    vinfer's include starting its process.
  - classify: the whole process, wall time and peak resident memory (the
    kernel's maxrss for that child): `vinfer classify MODEL IMAGE`, and a
    Python process that imports the engine, loads the network and runs it
    once on the image preprocessed with PIL.
Figures are medians over the rounds. Writes out/bench_coldstart.{json,md}.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, EXPORT, ROOT, VINFER  # noqa: E402

IMAGE = os.path.join(ROOT, "tests", "data", "images", "squirrel_cls.jpg")

# Runs in a fresh interpreter: prints {"import": s, "load": s, "run": s}.
PEER = r"""
import json, sys, time
t0 = time.perf_counter()
engine, path, image, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import numpy as np
from PIL import Image
if engine == "onnxruntime":
    import onnxruntime as ort
else:
    import openvino as ov
t1 = time.perf_counter()
if engine == "onnxruntime":
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    run = lambda x: s.run(None, {s.get_inputs()[0].name: x})[0]
else:
    core = ov.Core()
    cm = core.compile_model(core.read_model(path), "CPU", {"PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"})
    req = cm.create_infer_request()
    run = lambda x: req.infer({0: x})[0]
t2 = time.perf_counter()
im = Image.open(image).convert("RGB").resize((256, 256), Image.BILINEAR).crop((16, 16, 240, 240))
x = (np.asarray(im, np.float32) / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
y = run(np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "run": t3 - t2, "top1": int(np.argmax(y))}))
"""


def timed(cmd):
    """Runs cmd under /usr/bin/time: (stdout, wall seconds, the child's peak resident MiB)."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    m = re.search(r"MAXRSS_KB=(\d+)", p.stderr)
    return p.stdout, wall, int(m.group(1)) / 1024 if m else float("nan")


def one_round(model_dir, name, threads):
    path = os.path.join(model_dir, name + ".onnx")
    r = {}
    out, wall, _ = timed([VINFER, "info", path, "--threads", str(threads)])
    m = re.search(r"load (\d+) ms \((.*?)\)", out)
    r["vinfer_load_s"] = wall
    r["vinfer_load_internal_s"] = int(m.group(1)) / 1000 if m else float("nan")
    r["vinfer_stages"] = m.group(2) if m else ""
    w = re.search(r"weights ([\d.]+) MiB", out)
    r["weights_mib"] = float(w.group(1)) if w else float("nan")
    out, wall, rss = timed([VINFER, "classify", path, IMAGE, "--threads", str(threads)])
    r["vinfer_classify_s"], r["vinfer_rss_mib"] = wall, rss
    for engine in ("onnxruntime", "openvino"):
        out, wall, rss = timed([sys.executable, "-c", PEER, engine, path, IMAGE, str(threads)])
        d = json.loads(out)
        r[f"{engine}_import_s"], r[f"{engine}_load_s"] = d["import"], d["load"]
        r[f"{engine}_classify_s"], r[f"{engine}_rss_mib"] = wall, rss
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="densenet121,resnet50,vgg19")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "out", "models"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=CORES)
    a = ap.parse_args()
    names = a.models.split(",")
    missing = [n for n in names if not os.path.exists(os.path.join(a.model_dir, n + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, EXPORT, a.model_dir] + missing, check=True,
                       env=dict(os.environ, VINFER_OPSET=os.environ.get("VINFER_OPSET", "17")))
    rows = {}
    for name in names:
        one_round(a.model_dir, name, a.threads)  # warms the page cache and the tune cache
        rounds = [one_round(a.model_dir, name, a.threads) for _ in range(a.rounds)]
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0] if isinstance(rounds[0][k], float)}
        med["vinfer_stages"] = rounds[len(rounds) // 2]["vinfer_stages"]
        rows[name] = med
        print(name, json.dumps(med), flush=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    import onnxruntime
    import openvino
    lines = [f"Cold start, {time.strftime('%Y-%m-%d')}, {cpu}, {a.threads} threads, medians of {a.rounds} rounds "
             f"(ONNX Runtime {onnxruntime.__version__}, OpenVINO {openvino.__version__.split('-')[0]} f32)", "",
             "| network | weights MiB | vinfer load ms | ORT session ms | OpenVINO compile ms | vinfer / ORT "
             "| classify s: vinfer / ORT / OpenVINO | peak MiB: vinfer / ORT / OpenVINO | vinfer bound MiB |",
             "|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for name, m in rows.items():
        bound = 1.2 * m["weights_mib"] + 100
        lines.append(
            f"| {name} | {m['weights_mib']:.0f} | {m['vinfer_load_s'] * 1000:.0f} | {m['onnxruntime_load_s'] * 1000:.0f} "
            f"| {m['openvino_load_s'] * 1000:.0f} | {m['vinfer_load_s'] / m['onnxruntime_load_s']:.2f} "
            f"| {m['vinfer_classify_s']:.2f} / {m['onnxruntime_classify_s']:.2f} / {m['openvino_classify_s']:.2f} "
            f"| {m['vinfer_rss_mib']:.0f} / {m['onnxruntime_rss_mib']:.0f} / {m['openvino_rss_mib']:.0f} | {bound:.0f} |")
    lines += ["", "vinfer's load stages (ms, median round): " +
              "; ".join(f"{n}: {m['vinfer_stages']}" for n, m in rows.items())]
    os.makedirs(os.path.join(ROOT, "out"), exist_ok=True)
    with open(os.path.join(ROOT, "out", "bench_coldstart.json"), "w") as f:
        json.dump({"cpu": cpu, "threads": a.threads, "rows": rows}, f, indent=1)
    with open(os.path.join(ROOT, "out", "bench_coldstart.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
