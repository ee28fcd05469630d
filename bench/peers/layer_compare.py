#!/usr/bin/env python3
"""Where the time goes, by kind of layer: vinfer against ONNX Runtime on one
network, from each engine's own per-operator profile.

    .venv-peers/bin/python bench/peers/layer_compare.py out/models/resnet50.onnx [--runs 30] [--rounds 3] [--threads N]

vinfer: `vinfer profile MODEL --runs R --json` (each op timed inside whole
passes; its median over the runs). ONNX Runtime: its session profiler
(enable_profiling), each node's median over R passes, named after the
optimized graph, which the script saves to read each node's kernel size and
stride. Layers are grouped by kind (a convolution by kernel and stride, pools,
fully connected, the rest), because the two engines fuse differently (ONNX
Runtime runs DenseNet's BatchNorm + ReLU as nodes of their own, vinfer inside
the next convolution): per kind, the sums of the medians, in ms. The engines
alternate, --rounds times, and each figure is the median over the rounds.
Both profilers add a little to every op; the sums are close to, not equal to,
a pass.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import VINFER  # noqa: E402

OTHER = "other (normalization, activation, concat, layout)"


def node_kinds(model):
    """Node name -> kind of layer, for every node of an ONNX graph."""
    dims = {i.name: list(i.dims) for i in model.graph.initializer}
    kinds = {}
    for n in model.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Conv":
            k = attrs.get("kernel_shape") or dims.get(n.input[1], [0, 0, 0, 0])[2:]
            s = attrs.get("strides", [1, 1])
            w = dims.get(n.input[1], [0, 0])
            if attrs.get("group", 1) > 1 and list(k) == [1, 1] and w[1] == 1:
                kinds[n.name] = OTHER  # a per-channel scale: ONNX Runtime's BatchNorm on NCHWc
            else:
                kind = f"conv {k[0]}x{k[1]} stride {s[0]}"
                kinds[n.name] = kind + " grouped" if attrs.get("group", 1) > 1 else kind
        elif n.op_type in ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
            kinds[n.name] = "pool"
        elif n.op_type in ("Gemm", "MatMul", "FusedMatMul", "FusedGemm"):
            kinds[n.name] = "fully connected"
        else:
            kinds[n.name] = OTHER
    return kinds


def vinfer_round(path, kinds, runs, threads, input_npy):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        # The same input as ONNX Runtime's: a fully connected layer's time depends on its zeros.
        cmd = [VINFER, "profile", path, "--runs", str(runs), "--json", out, "--input", input_npy]
        if threads:
            cmd += ["--threads", str(threads)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            layers = json.load(f)["layers"]
    sums = collections.Counter()
    for layer in layers:
        # "Conv 'name'": a node of the graph (with what vinfer fused into it);
        # anything else ("to plain 'value'") is a layout conversion.
        label = layer["layer"]
        name = label[label.find("'") + 1:label.rfind("'")] if "'" in label else ""
        sums[kinds.get(name, OTHER)] += layer["ms_p50"]
    return sums


def session_options(threads):
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
    so.log_severity_level = 3
    return so


def ort_kinds(path, threads, tmp):
    """Kinds of the nodes ONNX Runtime runs: those of its optimized graph."""
    so = session_options(threads)
    so.optimized_model_filepath = os.path.join(tmp, "optimized.onnx")
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return node_kinds(onnx.load(so.optimized_model_filepath))


def ort_round(path, opt_kinds, runs, threads, tmp, x):
    so = session_options(threads)
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmp, "ort")
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    warmup = 5
    for _ in range(warmup + runs):
        sess.run(None, {inp.name: x})
    trace = sess.end_profiling()
    with open(trace) as f:
        events = json.load(f)
    os.remove(trace)
    per_node = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[e["name"][: -len("_kernel_time")]].append(e["dur"] / 1000.0)
    sums = collections.Counter()
    for name, ms in per_node.items():
        sums[opt_kinds.get(name, OTHER)] += statistics.median(ms[warmup:] or ms)
    return sums


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="ONNX file")
    ap.add_argument("--runs", type=int, default=30, help="passes per engine per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="intra-op threads for both (default: cores)")
    args = ap.parse_args()
    if not os.path.exists(VINFER):
        sys.exit("build vinfer first (build/vinfer not found)")
    kinds = node_kinds(onnx.load(args.model, load_external_data=False))
    rounds = {"vinfer": [], "onnxruntime": []}
    with tempfile.TemporaryDirectory() as tmp:
        opt_kinds = ort_kinds(args.model, args.threads, tmp)
        shape = [d.dim_value or 1 for d in onnx.load(args.model, load_external_data=False).graph.input[0].type.tensor_type.shape.dim]
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        input_npy = os.path.join(tmp, "input.npy")
        np.save(input_npy, x)
        for r in range(args.rounds):
            rounds["vinfer"].append(vinfer_round(args.model, kinds, args.runs, args.threads, input_npy))
            rounds["onnxruntime"].append(ort_round(args.model, opt_kinds, args.runs, args.threads, tmp, x))
            print(f"round {r + 1}: vinfer {sum(rounds['vinfer'][-1].values()):.2f} ms, "
                  f"onnxruntime {sum(rounds['onnxruntime'][-1].values()):.2f} ms (sums of per-op medians)", file=sys.stderr)
    all_kinds = sorted({k for rs in rounds.values() for s in rs for k in s},
                       key=lambda k: -statistics.median(s[k] for s in rounds["onnxruntime"]))
    med = {e: {k: statistics.median(s[k] for s in rs) for k in all_kinds} for e, rs in rounds.items()}
    print(f"{os.path.basename(args.model)}, {args.threads} threads, ms per pass by kind of layer "
          f"(sum of per-op medians over {args.runs} passes, median of {args.rounds} rounds); "
          f"onnxruntime {ort.__version__}")
    print()
    print("| kind | vinfer | onnxruntime | vinfer/onnxruntime |")
    print("|---|---:|---:|---:|")
    for k in all_kinds + ["total"]:
        if k == "total":  # the median of the rounds' totals
            v, o = (statistics.median(sum(s.values()) for s in rounds[e]) for e in ("vinfer", "onnxruntime"))
        else:
            v, o = med["vinfer"][k], med["onnxruntime"][k]
        ratio = f"{v / o:.2f}" if o > 0 and v > 0 else "-"
        print(f"| {k} | {v:.2f} | {o:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
