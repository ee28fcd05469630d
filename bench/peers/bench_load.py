#!/usr/bin/env python3
"""Forward pass on a busy machine: vinfer at its defaults, vinfer on one thread
and the peers at their defaults, each under the same loads, side by side in
one run.

    .venv-peers/bin/python bench/peers/bench_load.py [--models densenet121,resnet50] [--passes 60]

Loads (each started before an engine's process loads and stopped after it
exits): none; one and two busy loops at nice 0; one at nice 19; another
vinfer process at its defaults (nice 5) running the same network; and, where
this process may create a cgroup (v1 cpu controller or v2), a CPU quota of
one core around the engine's process. Every engine runs --passes forward
passes after 5 untimed ones, in its own process, a fresh one per load; the
figures are its p50 and mean. The two-process row runs two copies of each
vinfer setting at once and adds their throughputs.

Networks are the ONNX exports in build/models (tests/models/export_models.py;
random weights: speed does not depend on them). Writes out/bench_load.{json,md}.
"""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, VINFER, cpu_description, timed_loop  # noqa: E402

MODEL_DIR = os.path.join(ROOT, "build", "models")
BUSY = ["sh", "-c", "while :; do :; done"]


def cgroup_dir():
    """A fresh cgroup with a quota of one CPU, or None where none can be made."""
    for base, quota in (("/sys/fs/cgroup/cpu", "cpu.cfs_quota_us"), ("/sys/fs/cgroup", "cpu.max")):
        path = os.path.join(base, "vinfer_bench_load")
        try:
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, quota), "w") as f:
                f.write("100000" if quota == "cpu.cfs_quota_us" else "100000 100000")
            return path
        except OSError:
            continue
    return None


def in_cgroup(path, cmd):
    """cmd, started inside the cgroup at path (the process joins it before it execs)."""
    tasks = os.path.join(path, "tasks" if os.path.exists(os.path.join(path, "tasks")) else "cgroup.procs")
    return ["sh", "-c", f'echo $$ > {tasks} && exec "$@"', "sh", *cmd]


@contextlib.contextmanager
def load(kind, onnx):
    """Starts the background work of a load, stops it on exit."""
    procs = []
    if kind in ("busy", "busy_x2", "busy_nice19"):
        for _ in range(2 if kind == "busy_x2" else 1):
            procs.append(subprocess.Popen((["nice", "-n", "19"] if kind == "busy_nice19" else []) + BUSY))
    elif kind == "beside_vinfer":
        procs.append(subprocess.Popen(["nice", "-n", "5", VINFER, "bench", onnx, "--forward-only", "--loops", "1000000",
                                       "--warmup", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(0.5 if procs else 0)
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def engine_cmd(engine, onnx, passes, out):
    if engine.startswith("vinfer"):
        extra = {"vinfer": [], "vinfer_1": ["--threads", "1"], "vinfer_fixed": ["--fixed-threads"]}[engine]
        return [VINFER, "bench", onnx, "--forward-only", "--loops", str(passes), "--warmup", "5", "--json", out] + extra
    return [sys.executable, os.path.abspath(__file__), "--worker", engine, onnx, str(passes), out]


def times(out):
    with open(out) as f:
        j = json.load(f)
    return j["per_iter_ms"], j.get("runs_on_one_thread")


def measure(engine, onnx, passes, cgroup=None, copies=1):
    """[(p50, mean, runs on one thread)] of `copies` processes run at once."""
    outs = [tempfile.mktemp(suffix=".json") for _ in range(copies)]
    cmds = [engine_cmd(engine, onnx, passes, o) for o in outs]
    procs = [subprocess.Popen(in_cgroup(cgroup, c) if cgroup else c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for c in cmds]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"{engine} failed on {onnx}")
    res = []
    for o in outs:
        ms, single = times(o)
        os.unlink(o)
        res.append((statistics.median(ms), statistics.fmean(ms), single))
    return res


def worker(engine, onnx, passes, out):
    """A peer's passes, written as `vinfer bench --json` writes them."""
    import numpy as np
    if engine == "onnxruntime":
        import onnxruntime as ort
        s = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        x = np.random.RandomState(0).randn(*[d if isinstance(d, int) else 1 for d in s.get_inputs()[0].shape]).astype(np.float32)
        feed = {s.get_inputs()[0].name: x}
        fn = lambda: s.run(None, feed)  # noqa: E731
    elif engine == "openvino":
        import openvino as ov
        c = ov.Core().compile_model(onnx, "CPU", {"PERFORMANCE_HINT": "LATENCY"})
        r = c.create_infer_request()
        x = np.random.RandomState(0).randn(*c.inputs[0].shape).astype(np.float32)
        fn = lambda: r.infer({0: x})  # noqa: E731
    else:
        raise SystemExit(f"unknown engine {engine}")
    ms = timed_loop(fn, passes, 5)
    with open(out, "w") as f:
        json.dump({"per_iter_ms": ms}, f)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="densenet121,resnet50,mobilenet_v2")
    ap.add_argument("--engines", default="vinfer,vinfer_1,onnxruntime")
    ap.add_argument("--loads", default="idle,busy,busy_x2,busy_nice19,beside_vinfer,quota_1cpu,two_processes")
    ap.add_argument("--passes", type=int, default=60)
    ap.add_argument("--out", default=os.path.join(ROOT, "out"))
    a = ap.parse_args()
    engines = a.engines.split(",")
    quota = cgroup_dir() if "quota_1cpu" in a.loads else None
    rows = []
    for model in a.models.split(","):
        onnx = os.path.join(MODEL_DIR, model + ".onnx")
        if not os.path.exists(onnx):
            raise SystemExit(f"{onnx} is missing: python3 tests/models/export_models.py build/models {model}")
        for kind in a.loads.split(","):
            if kind == "quota_1cpu" and not quota:
                print(f"{model}: no cgroup can be made here: the quota row is left out", file=sys.stderr)
                continue
            row = {"model": model, "load": kind}
            for engine in engines:
                if kind == "two_processes":
                    if not engine.startswith("vinfer"):
                        continue
                    r = measure(engine, onnx, a.passes, copies=2)
                    row[engine] = {"images_per_s": sum(1000 / m for _, m, _ in r), "p50": statistics.fmean(p for p, _, _ in r)}
                    continue
                with load("idle" if kind == "quota_1cpu" else kind, onnx):
                    (p50, mean, single), = measure(engine, onnx, a.passes, cgroup=quota if kind == "quota_1cpu" else None)
                row[engine] = {"p50": p50, "mean": mean, "runs_on_one_thread": single}
            rows.append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(a.out, exist_ok=True)
    result = {"cpu": cpu_description(), "date": time.strftime("%Y-%m-%d"), "passes": a.passes, "rows": rows}
    with open(os.path.join(a.out, "bench_load.json"), "w") as f:
        json.dump(result, f, indent=2)
    lines = [f"CPU: {result['cpu']}, {result['date']}, {a.passes} passes per cell, p50 (mean) ms", "",
             "| network | load | " + " | ".join(engines) + " | vinfer / its one thread | vinfer / ONNX Runtime |",
             "|---|---|" + "---:|" * (len(engines) + 2)]
    for r in rows:
        if r["load"] == "two_processes":
            cells = [f"{r[e]['images_per_s']:.1f}/s" if e in r else "" for e in engines]
            ratio = r["vinfer"]["images_per_s"] / r["vinfer_1"]["images_per_s"] if "vinfer_1" in r else float("nan")
            lines.append(f"| {r['model']} | two processes, images/s together | " + " | ".join(cells) + f" | {ratio:.2f} of | |")
            continue
        cells = [f"{r[e]['p50']:.1f} ({r[e]['mean']:.1f})" for e in engines]
        own = r["vinfer"]["p50"] / r["vinfer_1"]["p50"] if "vinfer_1" in r else float("nan")
        ort = r["vinfer"]["p50"] / r["onnxruntime"]["p50"] if "onnxruntime" in r else float("nan")
        lines.append(f"| {r['model']} | {r['load']} | " + " | ".join(cells) + f" | {own:.2f} | {ort:.2f} |")
    with open(os.path.join(a.out, "bench_load.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
