#!/usr/bin/env python3
"""Forward pass side by side: vinfer, ONNX Runtime, OpenVINO and PyTorch on the
same networks (random weights; speed does not depend on them), batch 1, on
this machine, in one run.

    .venv-peers/bin/python bench/peers/bench_engine.py [--models densenet121,...] [--loops 10] [--rounds 5]

Every engine and setting runs in its own worker process, all of them loaded
at once for a network; in each round they take turns, --loops timed passes
each after one untimed (the previous turn's engine has evicted the caches),
with a short pause between turns so that no engine's threads still spin
while the next one runs, the order rotated from round to round. A shared
host's slow and fast phases, which last seconds, so hit every engine alike;
each figure is the median over all its rounds' samples, and each ratio is
paired within rounds. vinfer's worker is build/bench/bench_worker.
Settings: "threads=cores" sets each engine's intra-op threads to the number of
cores, "threads=N" to N (threads=1 with threads=cores gives the two-thread
speed-up); "default" leaves the engine alone. Each threads setting is also put
against the direct-convolution limit (`vinfer profile`). Writes
out/bench_engine.{json,md}.
"""
import argparse
import json
import os
import tempfile
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, EXPORT, ROOT, VINFER, Worker, serve_turns, vinfer_worker_cmd  # noqa: E402


def setting_threads(setting):
    """Intra-op threads a setting asks for; None leaves the engine's default."""
    if setting == "default":
        return None
    if setting == "threads=cores":
        return CORES
    if setting.startswith("threads=") and setting[8:].isdigit() and int(setting[8:]) > 0:
        return int(setting[8:])
    raise SystemExit(f"unknown setting {setting!r} (threads=cores, threads=N or default)")


def runner(engine, setting, model_dir, name):
    """One forward pass of a peer engine as a function, and its version."""
    import numpy as np
    onnx_path = os.path.join(model_dir, name + ".onnx")
    x = np.load(os.path.join(model_dir, name + ".input.npy"))
    threads = setting_threads(setting)
    if engine == "onnxruntime":
        import onnxruntime as ort
        so = ort.SessionOptions()
        if threads:
            so.intra_op_num_threads = threads
        s = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        feed = {s.get_inputs()[0].name: x}
        return (lambda: s.run(None, feed)), ort.__version__
    if engine == "openvino":
        import openvino as ov
        core = ov.Core()
        # Best settings keep float32: OpenVINO's default on CPUs with bf16 support is
        # bfloat16 inference, which misses the 1e-3 parity bar (reported as "default").
        cfg = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"}
        cm = core.compile_model(onnx_path, "CPU", cfg if threads else {})
        req = cm.create_infer_request()
        prec = str(cm.get_property("INFERENCE_PRECISION_HINT")).replace("<Type: '", "").replace("'>", "")
        return (lambda: req.infer({0: x})), f"{ov.__version__.split('-')[0]} ({setting}: {prec})"
    if engine == "pytorch":
        import torch
        import torchvision
        if threads:
            torch.set_num_threads(threads)
        m = getattr(torchvision.models, name)().eval()
        t = torch.from_numpy(x)

        def fwd():
            with torch.inference_mode():
                m(t)
        return fwd, f"{torch.__version__} ({torch.get_num_threads()} threads)"
    raise SystemExit("unknown engine " + engine)


def worker(engine, setting, model_dir, name):
    if engine == "vinfer":
        threads = setting_threads(setting)
        return Worker(vinfer_worker_cmd(os.path.join(model_dir, name + ".onnx"), os.path.join(model_dir, name + ".input.npy"),
                                        *(["--threads", str(threads)] if threads else [])))
    return Worker([sys.executable, __file__, "--model-dir", model_dir, "--worker", engine, setting, name])


def direct_limit(model_dir, name, threads):
    """The direct-convolution limit: the network's convolution and
    GEMM work counted as direct multiply-adds (Winograd layers too), over the
    register-only FP32 peak `vinfer profile` measures on `threads` threads.
    Returns (GFLOP, peak GFLOP/s, limit ms)."""
    fd, out = tempfile.mkstemp(prefix=f"vinfer_profile_{name}_", suffix=".json")
    os.close(fd)
    subprocess.run([VINFER, "profile", os.path.join(model_dir, name + ".onnx"), "--runs", "1", "--threads", str(threads),
                    "--input", os.path.join(model_dir, name + ".input.npy"), "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        j = json.load(f)
    os.remove(out)
    gflop = sum(layer["flops"] for layer in j["layers"]) / 1e9
    return gflop, j["peak_gflops"], 1e3 * gflop / j["peak_gflops"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="densenet121,densenet169,densenet201,vgg19,resnet50")
    ap.add_argument("--engines", default="vinfer,onnxruntime,openvino,pytorch")
    ap.add_argument("--settings", default="threads=cores,default")
    ap.add_argument("--loops", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "out", "models"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench_engine"))
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        serve_turns(*runner(*a.worker[:2], a.model_dir, a.worker[2]))
        return
    models = a.models.split(",")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    env = dict(os.environ, VINFER_OPSET="17")
    subprocess.run([sys.executable, EXPORT, a.model_dir] + models, check=True, env=env)
    samples, versions, round_p50 = {}, {}, {}
    pairs = [(setting, engine) for setting in a.settings.split(",") for engine in a.engines.split(",")]
    for name in models:
        workers = {pair: worker(pair[1], pair[0], a.model_dir, name) for pair in pairs}
        for (setting, engine), w in workers.items():
            w.passes(a.warmup)
            versions[f"{engine} [{setting}]"] = w.version
        for r in range(a.rounds):
            for setting, engine in pairs[r % len(pairs):] + pairs[:r % len(pairs)]:
                ts = workers[(setting, engine)].turn(a.loops)
                samples.setdefault((name, setting, engine), []).extend(ts)
                round_p50[(r, name, setting, engine)] = statistics.median(ts)
                print(f"round {r + 1}: {name:12s} {setting:14s} {engine:12s} p50 {statistics.median(ts):8.2f} ms", flush=True)
        for w in workers.values():
            w.close()
    rows = []
    for (name, setting, engine), ts in samples.items():
        ts = sorted(ts)
        rows.append({"model": name, "setting": setting, "engine": engine, "p50": statistics.median(ts), "min": ts[0],
                     "p90": ts[int(0.9 * (len(ts) - 1))], "mean": statistics.fmean(ts), "n": len(ts)})
    # The model name alone ("AMD EPYC" in these VMs) named Zen 4 and Zen 5 hosts alike.
    info = {}
    for line in open("/proc/cpuinfo").read().split("\n\n")[0].splitlines():
        k, _, v = line.partition(":")
        info[k.strip()] = v.strip()
    cpu = info.get("model name", "?")
    if "cpu family" in info:
        cpu += f" (family {info['cpu family']} model {info.get('model', '?')})"
    isa = "AVX-512" if "avx512f" in open("/proc/cpuinfo").read() else "AVX2"
    meta = {"cpu": cpu, "cores": CORES, "isa": isa, "versions": versions, "loops": a.loops, "rounds": a.rounds}
    # Each threads=N setting against the direct-convolution limit, when vinfer ran.
    limits = []
    if "vinfer" in a.engines.split(","):
        for name in models:
            for setting in a.settings.split(","):
                if setting != "default":
                    gflop, peak, ms = direct_limit(a.model_dir, name, setting_threads(setting))
                    limits.append({"model": name, "setting": setting, "gflop": gflop, "peak_gflops": peak, "limit_ms": ms})
        # A busy minute lowers one measurement of the peak: each setting takes its best.
        for lim in limits:
            lim["peak_gflops"] = max(m["peak_gflops"] for m in limits if m["setting"] == lim["setting"])
            lim["limit_ms"] = 1e3 * lim["gflop"] / lim["peak_gflops"]
    with open(a.out + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows, "limits": limits}, f, indent=1)
    def p50(name, setting, engine):
        return next(r["p50"] for r in rows if r["model"] == name and r["setting"] == setting and r["engine"] == engine)

    lines = [f"Forward pass, batch 1, p50 ms (median of {a.rounds} rounds x {a.loops} loops); CPU {cpu}, {CORES} cores, {isa}.",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()), ""]
    engines = a.engines.split(",")
    lines.append("| model | setting | " + " | ".join(engines) + " | " + " | ".join(f"vinfer/{e}" for e in engines[1:]) + " |")
    lines.append("|---|---|" + "---:|" * (2 * len(engines) - 1))
    for name in models:
        for setting in a.settings.split(","):
            p = {e: p50(name, setting, e) for e in engines}
            lines.append(f"| {name} | {setting} | " + " | ".join(f"{p[e]:.1f}" for e in engines) + " | " +
                         " | ".join(f"{p['vinfer'] / p[e]:.2f}" for e in engines[1:]) + " |")
    # On a noisy shared host a slow phase shifts whole rounds: the ratio of
    # the two engines within each round (turns next to each other) is
    # steadier than the ratio of pooled medians. Median over rounds, and the range.
    if a.rounds > 1 and len(engines) > 1:
        lines += ["", f"Paired: vinfer / engine within each round, median of {a.rounds} rounds [min-max]", "",
                  "| model | setting | " + " | ".join(f"vinfer/{e}" for e in engines[1:]) + " |",
                  "|---|---|" + "---:|" * (len(engines) - 1)]
        for name in models:
            for setting in a.settings.split(","):
                cells = []
                for e in engines[1:]:
                    q = sorted(round_p50[(r, name, setting, "vinfer")] / round_p50[(r, name, setting, e)] for r in range(a.rounds))
                    cells.append(f"{statistics.median(q):.2f} [{q[0]:.2f}-{q[-1]:.2f}]")
                lines.append(f"| {name} | {setting} | " + " | ".join(cells) + " |")
    # The speed-up from one thread to all cores, per engine: pooled p50s, and paired within each round.
    settings = a.settings.split(",")
    if "threads=1" in settings and "threads=cores" in settings and CORES > 1:
        lines += ["", f"Speed-up from 1 to {CORES} threads: p50 at threads=1 / p50 at threads=cores, then the same within each",
                  f"round (both settings took their turns in it), median of {a.rounds} rounds [min-max]", "",
                  "| model | " + " | ".join(engines) + " |", "|---|" + "---:|" * len(engines)]
        for name in models:
            cells = []
            for e in engines:
                p1, pc = p50(name, "threads=1", e), p50(name, "threads=cores", e)
                q = sorted(round_p50[(r, name, "threads=1", e)] / round_p50[(r, name, "threads=cores", e)] for r in range(a.rounds))
                cells.append(f"{p1 / pc:.2f}x; {statistics.median(q):.2f}x [{q[0]:.2f}-{q[-1]:.2f}]")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if limits:
        lines += ["", "Against the direct-convolution limit: convolution and GEMM work counted as direct multiply-adds, over the",
                  "register-only FP32 peak `vinfer profile` measured (over 100 % is Winograd doing fewer multiplications)", "",
                  "| model | setting | GFLOP | peak GFLOP/s | limit ms | " + " | ".join(engines) + " | vinfer's share of the limit |",
                  "|---|---|" + "---:|" * (4 + len(engines))]
        for lim in limits:
            p = {e: p50(lim["model"], lim["setting"], e) for e in engines}
            lines.append(f"| {lim['model']} | {lim['setting']} | {lim['gflop']:.2f} | {lim['peak_gflops']:.1f} | {lim['limit_ms']:.1f} | " +
                         " | ".join(f"{p[e]:.1f}" for e in engines) + f" | {100 * lim['limit_ms'] / p['vinfer']:.0f} % |")
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
