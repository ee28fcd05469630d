#!/usr/bin/env python3
"""The seeds' scenarios, vinfer and its peers side by side, in one run, with a
report that explains the gap cause by cause.

    .venv-peers/bin/python bench/peers/compare.py [--model densenet121] [--image F] [--loops 30] [--out out/compare]
                                                  [--peers torch,keras,ort,openvino,resize] [--quick] [--device cpu|cuda]

Classification (seeds 000/001): every engine runs the whole loop, file -> top-5,
one image at a time, on the same photo; vinfer, PyTorch, ONNX Runtime and
OpenVINO with the same weights (a torchvision state_dict with random weights
and BatchNorm statistics, exported by tests/models/export_models.py: no
pretrained weights can be downloaded here). Keras runs its own DenseNet (random
weights; Keras's network is not torchvision's), as the seed does.
  torch-seed       the seed's loop as written (.cuda() dropped: no GPU here): PIL open, Resize([224,224]),
                   ToTensor, Normalize, model(x) with autograd on, default threads, no warm-up; the seed's
                   figure is the mean over LOOP=10 iterations including the first
  torch-corrected  the same preprocessing, torch.inference_mode(), threads = cores, warm-up, p50
  keras-seed       load_img(target_size) -> img_to_array -> expand_dims -> model.predict, as written
  keras-corrected  the same preprocessing, the model as a tf.function (warm), threads = cores
  vinfer-keras     vinfer on Keras's network with the Keras run's weights (keras:NAME, Keras's preprocessing)
  ort / openvino   torchvision preprocessing (PIL), then the engine (threads = cores; OpenVINO in float32)
  vinfer           `vinfer bench MODEL --weights W.pth` (its own decode/resize/normalize, exact torchvision preset)
Resize (the resize question's loop): bench/peers/bench_image.py's runs (PyTorch, TensorFlow, Pillow, Pillow-SIMD, OpenCV).

--device cuda (a machine with an NVIDIA GPU): vinfer runs with --device cuda
(resize + normalize on the GPU), PyTorch with the model and input on the GPU
(the seed's .cuda(); the corrected loop waits for the result, the seed's as
written times what Python sees); ONNX Runtime with its CUDA provider. A peer
without a GPU path here (tensorflow-cpu, OpenVINO's CPU plugin, an ONNX
Runtime without the CUDA provider) is reported as missing, with the reason.

Every peer runs in its own process. A peer that fails to import or run is
reported as missing, never replaced by a guess. Writes OUT/report.md,
OUT/report.json (a list `runs`: name, scenario, latency_ms.{p50,p90,mean},
ratio_to_vinfer) and OUT/classify.png.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, EXPORT, HERE, ROOT, VINFER, timed_loop  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def summary(ts):
    s = sorted(ts)
    if not s:
        return None
    q = lambda p: s[min(len(s) - 1, int(round(p * (len(s) - 1))))]
    return {"p50": statistics.median(s), "p90": q(0.9), "mean": statistics.fmean(s), "min": s[0], "max": s[-1], "n": len(s)}


# ------------------------------------------------------------------ peers (each in a child process)
def torch_parts(a):
    import torch
    import torchvision
    import torchvision.transforms as T
    from PIL import Image
    out = []
    default_threads = torch.get_num_threads()
    model = getattr(torchvision.models, a.model)()
    model.load_state_dict(torch.load(a.weights))
    model.eval()
    dev = torch.device(a.device)
    if a.device == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("torch sees no CUDA device")
        model = model.cuda()
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    tf = T.Compose([T.Resize([224, 224]), T.ToTensor(), T.Normalize(MEAN, STD)])

    def seed_iter():
        img = Image.open(a.image)
        x = tf(img).float().unsqueeze_(0).to(dev)
        preds = model(x)
        return preds.topk(5)

    # The seed's loop exactly: LOOP iterations, the first included, mean.
    seed_ts = timed_loop(seed_iter, 10, 0)
    steady = seed_ts[1:] + timed_loop(seed_iter, a.loops - 9, 0)
    out.append({"name": "torch-seed", "scenario": "classify", "seed_mean_ms": statistics.fmean(seed_ts), "first_ms": seed_ts[0],
                "samples": steady, "threads": default_threads, "version": torch.__version__})
    # Causes, each alone.
    x = tf(Image.open(a.image)).unsqueeze(0).to(dev)

    def fwd():
        y = model(x)
        sync()
        return y
    fwd_grad = timed_loop(fwd, a.loops, 3)
    with torch.inference_mode():
        fwd_default = timed_loop(fwd, a.loops, 3)
        torch.set_num_threads(CORES)
        fwd_cores = timed_loop(fwd, a.loops, 3)
        torch.set_num_threads(1)
        fwd_one = timed_loop(fwd, max(5, a.loops // 3), 2)
        torch.set_num_threads(CORES)
    pre = timed_loop(lambda: tf(Image.open(a.image)).unsqueeze(0), a.loops, 3)

    def corrected():
        with torch.inference_mode():
            x = tf(Image.open(a.image)).unsqueeze(0).to(dev, non_blocking=True)
            return model(x).topk(5).indices.cpu()  # waits for the GPU
    out.append({"name": "torch-corrected", "scenario": "classify", "samples": timed_loop(corrected, a.loops, 5),
                "threads": CORES, "version": torch.__version__})
    out.append({"name": "torch-causes", "scenario": "causes", "default_threads": default_threads,
                "forward_autograd_default_threads": summary(fwd_grad), "forward_inference_default_threads": summary(fwd_default),
                "forward_inference_cores": summary(fwd_cores), "forward_inference_1_thread": summary(fwd_one),
                "preprocess_pil_torchvision": summary(pre)})
    return out


def keras_parts(a):
    import numpy as np
    import tensorflow as tf
    from tensorflow.keras.preprocessing import image
    name = {"densenet121": "DenseNet121", "densenet169": "DenseNet169", "densenet201": "DenseNet201", "vgg16": "VGG16",
            "vgg19": "VGG19", "resnet50": "ResNet50"}.get(a.model)
    if not name:
        raise SystemExit(f"no Keras counterpart for {a.model}")
    if a.device == "cuda" and not tf.config.list_physical_devices("GPU"):
        raise SystemExit("this TensorFlow sees no GPU (tensorflow-cpu)")
    tf.config.threading.set_intra_op_parallelism_threads(CORES)
    model = getattr(tf.keras.applications, name)(weights=None)
    model.save_weights(os.path.join(a.out, f".keras_{a.model}.weights.h5"))  # vinfer runs the same network and weights
    out = []

    def seed_iter():
        img = image.load_img(a.image, target_size=(224, 224))
        img = image.img_to_array(img)
        img = np.expand_dims(img, axis=0)
        return model.predict(img, verbose=0)
    seed_ts = timed_loop(seed_iter, 10, 0)
    out.append({"name": "keras-seed", "scenario": "classify", "seed_mean_ms": statistics.fmean(seed_ts), "first_ms": seed_ts[0],
                "samples": seed_ts[1:] + timed_loop(seed_iter, max(1, a.loops - 9), 0), "version": tf.__version__})

    fn = tf.function(lambda x: model(x, training=False))  # a graph, as predict uses, without its per-call pipeline

    def corrected():
        img = image.img_to_array(image.load_img(a.image, target_size=(224, 224)))[None]
        return fn(img).numpy()
    out.append({"name": "keras-corrected", "scenario": "classify", "samples": timed_loop(corrected, a.loops, 5),
                "version": tf.__version__})
    x = image.img_to_array(image.load_img(a.image, target_size=(224, 224)))[None]
    out.append({"name": "keras-causes", "scenario": "causes",
                "predict_per_call": summary(timed_loop(lambda: model.predict(x, verbose=0), a.loops, 3)),
                "call_training_false": summary(timed_loop(lambda: fn(x), a.loops, 3)),
                "eager_call": summary(timed_loop(lambda: model(x, training=False), max(3, a.loops // 4), 1))})
    return out


def engine_part(a, engine):
    import numpy as np
    from PIL import Image
    mean, std = np.array(MEAN, np.float32)[:, None, None], np.array(STD, np.float32)[:, None, None]

    # torchvision's Resize([224, 224]) -> ToTensor -> Normalize on a PIL image, in PIL + numpy:
    # importing torch here would put its spinning thread pool beside the engine's.
    class _Pre:
        def __call__(self, img):
            x = np.asarray(img.convert("RGB").resize((224, 224), Image.BILINEAR), np.float32).transpose(2, 0, 1) / 255.0
            return _T((x - mean) / std)

    class _T:
        def __init__(self, x):
            self.x = x

        def unsqueeze(self, _):
            return _T(self.x[None])

        def numpy(self):
            return np.ascontiguousarray(self.x, np.float32)
    tf = _Pre()
    onnx_path = a.weights.replace(".pth", ".onnx")
    if engine == "ort":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = CORES
        provider = "CUDAExecutionProvider" if a.device == "cuda" else "CPUExecutionProvider"
        if provider not in ort.get_available_providers():
            raise SystemExit(f"this onnxruntime has no {provider}")
        s = ort.InferenceSession(onnx_path, so, providers=[provider])
        name = s.get_inputs()[0].name
        run, version = (lambda x: s.run(None, {name: x})[0]), ort.__version__
    else:
        if a.device == "cuda":
            raise SystemExit("OpenVINO has no CUDA device plugin here")
        import openvino as ov
        cm = ov.Core().compile_model(onnx_path, "CPU", {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": CORES,
                                                         "INFERENCE_PRECISION_HINT": "f32"})
        req = cm.create_infer_request()
        run, version = (lambda x: req.infer({0: x})[cm.output(0)]), ov.__version__

    def loop():
        x = tf(Image.open(a.image)).unsqueeze(0).numpy()
        y = run(x)
        return np.argsort(y[0])[-5:]
    x = tf(Image.open(a.image)).unsqueeze(0).numpy()
    return [{"name": engine, "scenario": "classify", "samples": timed_loop(loop, a.loops, 5), "threads": CORES,
             "forward_ms": summary(timed_loop(lambda: run(x), a.loops, 3)), "version": version}]


def vinfer_keras(a):
    """vinfer on Keras's own network with the Keras child's weights (keras-torch/caffe preset, NHWC)."""
    w = os.path.join(a.out, f".keras_{a.model}.weights.h5")
    if not os.path.exists(w):
        return []
    path = os.path.join(a.out, ".vinfer-keras.json")
    subprocess.run([VINFER, "bench", "keras:" + a.model, a.image, "--weights", w, "--loops", str(a.loops), "--warmup", "5",
                    "--threads", str(CORES), "--device", a.device, "--json", path], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    j = json.load(open(path))
    os.remove(path)
    return [{"name": "vinfer-keras", "scenario": "classify", "samples": j["per_iter_ms"], "threads": j["machine"]["threads"],
             "version": j["vinfer"], "stages": {k: v["p50"] for k, v in j["stages"].items()}}]


def vinfer_parts(a):
    out = []
    for mode, extra in (("vinfer", []), ("vinfer-forward", ["--forward-only"])):
        path = os.path.join(a.out, f".{mode}.json")
        cmd = [VINFER, "bench", a.model, "--weights", a.weights, "--loops", str(a.loops), "--warmup", "5", "--threads", str(CORES),
               "--device", a.device, "--json", path] + ([] if extra else [a.image]) + extra
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        j = json.load(open(path))
        os.remove(path)
        r = {"name": mode, "scenario": "classify" if mode == "vinfer" else "forward", "samples": j["per_iter_ms"],
             "threads": j["machine"]["threads"], "version": j["vinfer"]}
        if "stages" in j:
            r["stages"] = {k: v["p50"] for k, v in j["stages"].items()}
        out.append(r)
    return out


# ------------------------------------------------------------------ driver
def child(part, a):
    if part == "torch":
        return torch_parts(a)
    if part == "keras":
        return keras_parts(a)
    return engine_part(a, part)


def run_child(part, a):
    args = [sys.executable, os.path.abspath(__file__), "--child", part, "--model", a.model, "--image", a.image, "--loops",
            str(a.loops), "--weights", a.weights, "--out", a.out, "--device", a.device]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"peer {part} missing: {tail}", file=sys.stderr)
        return [{"name": part, "scenario": "missing", "why": tail}]
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(v):
    return f"{v:.2f}" if v < 100 else f"{v:.0f}"


def write_report(a, runs, resize):
    by = {r["name"]: r for r in runs}
    ref = by["vinfer"]["latency_ms"]["p50"]
    for r in runs:
        if r["scenario"] == "classify":
            r["ratio_to_vinfer"] = r["latency_ms"]["p50"] / ref
    L = [f"# vinfer compare: {a.model}, one image at a time, networks on the {a.device.upper()}", "",
         f"Image `{os.path.relpath(a.image, ROOT)}`; {CORES} cores; {a.rounds} rounds x {a.loops} timed iterations per engine, "
         "pooled (p50, p90, mean in ms; the seed's own figure from the first round). "
         "Weights: a torchvision state_dict with random weights (labels meaningless; speed does not depend on them).", "",
         "## Classification: file -> top-5", "",
         "| engine | p50 | p90 | mean | seed's figure (mean of 10, first included) | × vinfer (p50) |", "|---|---:|---:|---:|---:|---:|"]
    for r in sorted([r for r in runs if r["scenario"] == "classify"], key=lambda r: r["latency_ms"]["p50"]):
        l = r["latency_ms"]
        seed = fmt(r["seed_mean_ms"]) if "seed_mean_ms" in r else ""
        L.append(f"| {r['name']} | {fmt(l['p50'])} | {fmt(l['p90'])} | {fmt(l['mean'])} | {seed} | {r['ratio_to_vinfer']:.2f} |")
    missing = [r for r in runs if r["scenario"] == "missing"]
    for r in missing:
        L.append(f"\nPeer **{r['name']}** missing: {r['why']}")
    v = by["vinfer"]
    L += ["", "vinfer's stages (p50 ms): " + ", ".join(f"{k} {x:.3f}" for k, x in v.get("stages", {}).items()), ""]
    # The causes, each measured in this run.
    L += ["## Why the seed's PyTorch figure differs from the corrected one (each cause measured here)", ""]
    tc = by.get("torch-causes")
    ts = by.get("torch-seed")
    tcor = by.get("torch-corrected")
    if tc and ts and tcor:
        fwd_v = by["vinfer-forward"]["latency_ms"]["p50"]
        rows = [
            ("first call (seed includes it; no warm-up)", f"first iteration {fmt(ts['first_ms'])} ms vs p50 {fmt(ts['latency_ms']['p50'])} ms; "
             f"it moves the seed's mean-of-10 to {fmt(ts['seed_mean_ms'])} ms"),
            ("autograd on (no torch.no_grad / inference_mode)", f"forward {fmt(tc['forward_autograd_default_threads']['p50'])} ms with autograd vs "
             f"{fmt(tc['forward_inference_default_threads']['p50'])} ms without (default threads)"),
            ("threads", f"default is {tc['default_threads']}; forward {fmt(tc['forward_inference_1_thread']['p50'])} ms on 1 thread, "
             f"{fmt(tc['forward_inference_cores']['p50'])} ms on {CORES}"),
            ("preprocessing library", f"PIL open + Resize + ToTensor + Normalize {fmt(tc['preprocess_pil_torchvision']['p50'])} ms vs vinfer's "
             f"read+decode+resize+normalize {sum(x for k, x in v.get('stages', {}).items() if k not in ('infer', 'topk')):.2f} ms (same tensor)"),
            ("framework per call, forward only", f"PyTorch {fmt(tc['forward_inference_cores']['p50'])} ms vs vinfer {fmt(fwd_v)} ms "
             f"({CORES} threads; vinfer: folded BatchNorm, fused activations, no-copy concatenation, one arena, packed weights)"),
        ]
        L += ["| cause | measured |", "|---|---|"] + [f"| {c} | {m} |" for c, m in rows]
    kc = by.get("keras-causes")
    if kc:
        L += ["", f"Keras: `model.predict` per image {fmt(kc['predict_per_call']['p50'])} ms vs the model as a `tf.function` "
              f"{fmt(kc['call_training_false']['p50'])} ms (predict builds a data pipeline per call; an eager `model(x)` takes "
              f"{fmt(kc['eager_call']['p50'])} ms). Keras's `load_img` resizes with "
              "NEAREST (not the bilinear+antialias of torchvision), and Keras DenseNet is not the same network as torchvision's."]
    if a.device == "cuda":
        L += ["", "GPU asynchrony: torch-seed times `model(x)` as the seed does, without `torch.cuda.synchronize()`, so it "
              "measures kernel launches, not the work (PyTorch docs, CUDA semantics: asynchronous execution); torch-corrected "
              "waits for the top-5 on the host, as vinfer's loop does.", ""]
    else:
        L += ["", "Not measurable here: GPU asynchrony. On a GPU the seed's loop times `model(x)` without "
              "`torch.cuda.synchronize()`, so it measures kernel launches, not the work (PyTorch docs, CUDA semantics: asynchronous "
              "execution); these networks ran on the CPU (`--device cuda` puts them on a GPU), so the seed's `.cuda()` was dropped "
              "and every figure here is a CPU figure.", ""]
    if resize:
        L += ["## Resize (the resize question's loop): gray 1411² → 470², and with decoding in the loop", "", "| scenario | what | p50 | mean |", "|---|---|---:|---:|"]
        for r in resize:
            L.append(f"| {r['scenario']} | {r['name']} | {r['latency_ms']['p50']:.3f} | {r['latency_ms']['mean']:.3f} |")
        L.append("")
    L += ["Reproduce: `.venv-peers/bin/python bench/peers/compare.py " + " ".join(sys.argv[1:]) + "`"]
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump({"model": a.model, "image": a.image, "cores": CORES, "loops": a.loops, "runs": runs + resize}, f, indent=1)
    # A bar chart of the classification p50s (gnuplot, as vinfer's own plots).
    rows = sorted([r for r in runs if r["scenario"] == "classify"], key=lambda r: r["latency_ms"]["p50"])
    dat = os.path.join(a.out, ".classify.dat")
    with open(dat, "w") as f:
        for r in rows:
            f.write(f'"{r["name"]}" {r["latency_ms"]["p50"]:.3f}\n')
    gp = (f"set terminal pngcairo size 900,420 font 'sans,10'\nset output '{os.path.join(a.out, 'classify.png')}'\n"
          f"set title '{a.model}: file -> top-5, p50 ms ({CORES} cores)'\nset style data histograms\nset style fill solid 0.7\n"
          f"set boxwidth 0.7 relative\nset yrange [0:*]\nset logscale y\nset yrange [1:*]\nset xtics rotate by -25\n"
          f"plot '{dat}' using 2:xtic(1) notitle lc rgb '#3366aa'\n")
    subprocess.run(["gnuplot"], input=gp, text=True, check=False)
    os.remove(dat)
    print("\n".join(L))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="densenet121")
    ap.add_argument("--image", default=os.path.join(ROOT, "tests", "data", "images", "squirrel_cls.jpg"))
    ap.add_argument("--loops", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--peers", default="torch,keras,ort,openvino,resize")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "compare"))
    ap.add_argument("--weights")
    ap.add_argument("--quick", action="store_true", help="fewer resize iterations")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the networks run (see the docstring)")
    ap.add_argument("--child")
    a = ap.parse_args()
    a.image = os.path.abspath(a.image)
    if a.child:
        print(json.dumps(child(a.child, a)))
        return
    os.makedirs(a.out, exist_ok=True)
    if a.device == "cuda":
        devs = json.loads(subprocess.run([VINFER, "devices", "--json"], capture_output=True, text=True, check=True).stdout)
        cuda = next((b for b in devs if b["backend"] == "cuda"), None)
        if not cuda or not cuda["devices"]:
            sys.exit("compare.py: --device cuda: vinfer sees no CUDA device (" + (cuda["note"] if cuda else "no CUDA backend") + ")")
    if not a.weights:
        models = os.path.join(ROOT, "out", "models")
        subprocess.run([sys.executable, EXPORT, models, a.model], check=True, env=dict(os.environ, VINFER_OPSET="17"))
        a.weights = os.path.join(models, a.model + ".pth")
    peers = a.peers.split(",")
    # Every engine once per round, the rounds one after another: drift on a shared
    # machine then hits every engine alike. Samples of all rounds are pooled.
    merged = {}
    for rnd in range(a.rounds):
        got = vinfer_parts(a)
        for p in [p for p in peers if p != "resize"]:
            got += run_child(p, a)
        if "keras" in peers:
            got += vinfer_keras(a)
        for r in got:
            if r["name"] not in merged:
                merged[r["name"]] = r
            elif "samples" in r:
                merged[r["name"]]["samples"] += r["samples"]
    runs = list(merged.values())
    for r in runs:
        if "samples" in r:
            r["latency_ms"] = summary(r.pop("samples"))
    resize = []
    if "resize" in peers:
        out = os.path.join(a.out, "resize")
        p = subprocess.run([sys.executable, os.path.join(HERE, "bench_image.py"), "--out", out] + (["--quick"] if a.quick else []),
                           capture_output=True, text=True)
        if p.returncode == 0:
            res = json.load(open(out + ".json"))["results"]
            refs = {sc: next((t for s, n, t in res if s == sc and n.startswith(pref)), None)
                    for sc, pref in (("resize", "vinfer torch nearest, f32 out (%d" % CORES), ("resize-decode", "vinfer seed loop, exact (%d" % CORES))}
            for s, n, t in res:
                if s in ("resize", "resize-decode") and t:
                    resize.append({"name": n, "scenario": s, "latency_ms": {"p50": t["p50"], "p90": None, "mean": t["mean"]},
                                   "ratio_to_vinfer": t["p50"] / refs[s]["p50"] if refs.get(s) else None})
                elif s == "missing":
                    resize.append({"name": n, "scenario": "missing", "why": "failed to run (see bench_image.py)",
                                   "latency_ms": {"p50": None, "p90": None, "mean": None}})
        else:
            print("resize scenario failed: " + p.stderr[-500:], file=sys.stderr)
    write_report(a, runs, [r for r in resize if r["scenario"] != "missing"])


if __name__ == "__main__":
    main()
