#!/usr/bin/env python3
"""Reduced precision side by side: vinfer and OpenVINO, each at float32,
bfloat16 and int8, on the same ONNX files and inputs, in one run: the
forward pass's speed (batch 1 and batch 32) and how far each reduced
precision moves the logits on the same photos.

    .venv-peers/bin/python bench/peers/bench_precision.py [--models densenet121,...] [--batches 1,32]
                                                          [--precisions f32,bf16,int8] [--rounds 3] [--loops 20]

int8 is post-training static quantization from the same calibration
images for both (the photos in tests/data/images): vinfer's `vinfer
calibrate`, OpenVINO's NNCF (nncf.quantize, its default preset, on the
same preprocessed tensors), whose model then runs with OpenVINO's default
settings (on this CPU, layers left unquantized run in bfloat16).

Speed: for each network and batch, every engine and precision is loaded
once in its own worker process, all threads of the machine, and they take
turns (common.Worker: one untimed pass, then --loops timed ones, a quarter
of them at batch 32; the order rotated each round) for --rounds rounds; a
figure is the median over all rounds' passes (per image). Each round's
vinfer / OpenVINO ratio at each precision is kept too. Error: each engine's reduced-precision logits against its own
float32 ones on the photos in tests/data/images, preprocessed by `vinfer
preprocess --preset torchvision` (the same tensors for both; vinfer's side
is `vinfer check --json`): max |dlogit| / max |logit| (worst image, and the mean over
images), top-1 and top-5 agreement, the lowest cosine similarity. The
networks have random weights (tests/models/export_models.py): the error
measures mean the same for any weights, the agreement less so.
Writes out/bench_precision.{json,md}.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, EXPORT, ROOT, VINFER, Worker, cpu_description, serve_turns, vinfer_worker_cmd  # noqa: E402

PHOTOS = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "images", "*")))
PRECISIONS = ("f32", "bf16", "int8")


def batch_input(model_dir, name, batch):
    """The export's own input, repeated to `batch` images, as a .npy path."""
    path = os.path.join(model_dir, f"{name}.input.b{batch}.npy")
    if not os.path.exists(path):
        x = np.load(os.path.join(model_dir, name + ".input.npy"))
        np.save(path, np.repeat(x, batch, axis=0))
    return path


def photo_tensors(tmp):
    """The photos as the torchvision preset makes them (vinfer preprocess), 1x3x224x224 each."""
    xs = []
    for k, photo in enumerate(PHOTOS):
        path = os.path.join(tmp, f"{k}.npy")
        subprocess.run([VINFER, "preprocess", photo, path, "--preset", "torchvision"], check=True, stdout=subprocess.DEVNULL)
        xs.append(np.load(path).reshape(1, 3, 224, 224))
    return xs


def calibrate(model_dir, name, tmp):
    """Both engines' int8 from the same images: vinfer's calibration file, NNCF's quantized model."""
    import nncf
    import openvino as ov
    onnx_path = os.path.join(model_dir, name + ".onnx")
    subprocess.run([VINFER, "calibrate", onnx_path, *PHOTOS, "-o", os.path.join(model_dir, name + ".calib")], check=True,
                   stdout=subprocess.DEVNULL)
    q = nncf.quantize(ov.Core().read_model(onnx_path), nncf.Dataset(photo_tensors(tmp)), subset_size=len(PHOTOS))
    ov.save_model(q, os.path.join(model_dir, name + ".nncf_int8.xml"))


def openvino_model(onnx_path, precision, batch):
    import openvino as ov
    core = ov.Core()
    cfg = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": CORES}
    if precision == "int8":
        model = core.read_model(onnx_path[:-len(".onnx")] + ".nncf_int8.xml")
    else:
        model = core.read_model(onnx_path)
        cfg["INFERENCE_PRECISION_HINT"] = precision
    model.reshape({model.inputs[0].any_name: [batch, 3, 224, 224]})
    return core.compile_model(model, "CPU", cfg), ov.__version__.split("-")[0]


def serve_openvino(precision, model_dir, name, batch):
    cm, ver = openvino_model(os.path.join(model_dir, name + ".onnx"), precision, batch)
    x = np.load(batch_input(model_dir, name, batch))
    req = cm.create_infer_request()
    got = str(cm.get_property("INFERENCE_PRECISION_HINT")).replace("<Type: '", "").replace("'>", "")
    serve_turns(lambda: req.infer({0: x}), f"{ver} (inference precision {got})")


def worker(engine, precision, model_dir, name, batch):
    if engine == "vinfer":
        return Worker(vinfer_worker_cmd(os.path.join(model_dir, name + ".onnx"), batch_input(model_dir, name, batch), "--batch",
                                        str(batch), "--precision", precision, "--threads", str(CORES),
                                        *calibration_args(model_dir, name, precision)))
    return Worker([sys.executable, __file__, "--model-dir", model_dir, "--worker", precision, name, str(batch)])


def calibration_args(model_dir, name, precision):
    return ["--calibration", os.path.join(model_dir, name + ".calib")] if precision == "int8" else []


def measures(ref, test):
    """The error measures of `vinfer check` for one engine (rows: images)."""
    rel = [float(np.abs(t - r).max() / np.abs(r).max()) for r, t in zip(ref, test)]
    cos = [float(np.dot(r, t) / np.sqrt(np.dot(r, r) * np.dot(t, t))) for r, t in zip(ref, test)]
    top5 = [set(np.argsort(-r)[:5]) == set(np.argsort(-t)[:5]) for r, t in zip(ref, test)]
    return {"max_rel": max(rel), "mean_max_rel": statistics.fmean(rel), "top1": statistics.fmean(
        float(np.argmax(r) == np.argmax(t)) for r, t in zip(ref, test)), "top5": statistics.fmean(map(float, top5)),
        "cosine_min": min(cos)}


def errors(model_dir, name, tmp, precisions):
    """Each reduced precision against f32, for each engine, on the photos."""
    onnx_path = os.path.join(model_dir, name + ".onnx")
    xs = photo_tensors(tmp)
    logits = {}
    for precision in ("f32",) + precisions:
        cm, _ = openvino_model(onnx_path, precision, 1)
        logits[precision] = [cm(x)[0].reshape(-1).astype(np.float64) for x in xs]
    out = {}
    for precision in precisions:
        fd, path = tempfile.mkstemp(prefix=f"check_{name}_", suffix=".json")
        os.close(fd)
        subprocess.run([VINFER, "check", onnx_path, *PHOTOS, "--precision", precision, "--threads", str(CORES), "--json",
                        path] + calibration_args(model_dir, name, precision), check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            j = json.load(f)
        os.remove(path)
        vin = {"max_rel": j["max_rel_error"]["max"], "mean_max_rel": j["max_rel_error"]["mean"],
               "top1": j["top1_agreement"], "top5": j["top5_agreement"], "cosine_min": j["cosine"]["min"]}
        out[precision] = {"vinfer": vin, "openvino": measures(logits["f32"], logits[precision])}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="densenet121,densenet201,resnet50,vgg19")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--loops", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "out", "models"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench_precision"))
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        precision, name, batch = a.worker
        serve_openvino(precision, a.model_dir, name, int(batch))
        return
    models, batches = a.models.split(","), [int(b) for b in a.batches.split(",")]
    precisions = tuple(a.precisions.split(","))
    reduced = tuple(p for p in precisions if p != "f32")
    if "f32" not in precisions or not reduced or any(p not in PRECISIONS for p in precisions):
        sys.exit("--precisions: f32 and at least one of bf16, int8")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    subprocess.run([sys.executable, EXPORT, a.model_dir] + models, check=True, env=dict(os.environ, VINFER_OPSET="17"))
    with tempfile.TemporaryDirectory() as tmp:
        if "int8" in reduced:
            for name in models:
                calibrate(a.model_dir, name, tmp)
        errs = {name: errors(a.model_dir, name, tmp, reduced) for name in models}
    samples, versions, round_p50 = {}, {}, {}
    pairs = [(engine, precision) for engine in ("vinfer", "openvino") for precision in precisions]
    for name in models:
        for batch in batches:
            # Fewer passes at batch 32: each is 32 images.
            loops, warmup = (a.loops, a.warmup) if batch == 1 else (max(3, a.loops // 4), 1)
            workers = {pair: worker(*pair, a.model_dir, name, batch) for pair in pairs}
            for (engine, precision), w in workers.items():
                w.passes(warmup)
                versions[f"{engine} {precision}"] = w.version
            for r in range(a.rounds):
                for engine, precision in pairs[r % len(pairs):] + pairs[:r % len(pairs)]:
                    ts = [t / batch for t in workers[(engine, precision)].turn(loops)]
                    key = (name, batch, engine, precision)
                    samples.setdefault(key, []).extend(ts)
                    round_p50[(r,) + key] = statistics.median(ts)
                    print(f"round {r + 1}: {name:12s} batch {batch:3d} {engine:9s} {precision:5s} p50 "
                          f"{statistics.median(ts):8.2f} ms/image", flush=True)
            for w in workers.values():
                w.close()
    cpu = cpu_description()
    rows = [{"model": k[0], "batch": k[1], "engine": k[2], "precision": k[3], "p50": statistics.median(ts), "min": min(ts),
             "n": len(ts)} for k, ts in samples.items()]
    with open(a.out + ".json", "w") as f:
        json.dump({"cpu": cpu, "cores": CORES, "versions": versions, "rounds": a.rounds, "rows": rows, "errors": errs}, f,
                  indent=1)

    def p50(*key):
        return statistics.median(samples[key])

    lines = [f"Forward pass per image, p50 ms (median of {a.rounds} rounds), {CORES} threads; CPU {cpu}.",
             "Versions: " + ", ".join(f"{k}: {v}" for k, v in versions.items()), "",
             "| model | batch | precision | vinfer | OpenVINO | vinfer / OpenVINO (paired, median [min-max]) | "
             "vinfer / vinfer f32 |", "|---|---:|---|---:|---:|---:|---:|"]
    for name in models:
        for batch in batches:
            vf = p50(name, batch, "vinfer", "f32")
            for precision in precisions:
                q = sorted(round_p50[(r, name, batch, "vinfer", precision)] /
                           round_p50[(r, name, batch, "openvino", precision)] for r in range(a.rounds))
                v = p50(name, batch, "vinfer", precision)
                lines.append(f"| {name} | {batch} | {precision} | **{v:.2f}** | {p50(name, batch, 'openvino', precision):.2f}"
                             f" | **{statistics.median(q):.2f}x** [{q[0]:.2f}-{q[-1]:.2f}] | {vf / v:.2f}x faster |")
    lines += ["", f"Against the same engine's f32 on {len(PHOTOS)} photos (tests/data/images, preset torchvision; int8 "
              "calibrated on the same photos)", "",
              "| model | precision | engine | max \\|dlogit\\| / max \\|logit\\|: worst | mean | top-1 agreement | "
              "top-5 agreement | min cosine |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for name in models:
        for precision in reduced:
            for engine in ("vinfer", "openvino"):
                e = errs[name][precision][engine]
                lines.append(f"| {name} | {precision} | {engine} | {e['max_rel']:.2e} | {e['mean_max_rel']:.2e} | "
                             f"{100 * e['top1']:.0f} % | {100 * e['top5']:.0f} % | {e['cosine_min']:.6f} |")
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
