#!/usr/bin/env python3
"""vinfer serve side by side with vinfer itself: what the Open Inference
Protocol over HTTP adds to classifying one image, and how it holds up under
concurrent clients. Run with the tests' environment (tritonclient):

    .venv-test/bin/python bench/peers/bench_serve.py [--model out/cold/densenet121.onnx] [--seconds 60] [--clients 8]

- Overhead: p50 of `infer` with one encoded JPEG (tests/data/images/squirrel_cls.jpg,
  0.23 MP) from tritonclient.http (binary data, top-5 outputs), one request
  at a time, and the same request from a plain blocking client (http.client),
  against `vinfer bench MODEL IMAGE` (file -> top-5 in one process; run
  before and after the server, the mean of the two p50s). DenseNet121's
  forward pass here differs from process to process by up to 20 % (18-19 ms
  or 22 ms), so the protocol's own cost is also given: the client's mean
  latency less the server's mean preprocess and inference time (/metrics).
- Load: `--clients` threads, each with its own tritonclient connection,
  sending that request for `--seconds` (bounded); errors, images/s, p50/p99;
  against `vinfer classify`'s throughput mode on the same image (400 times,
  the better of --streams 1 and 2). --max-batch / --batch-delay-ms are passed
  to the server (dynamic batching).
Writes out/bench_serve.{json,md}.
"""
import argparse
import json
import os
import re
import http.client
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import numpy as np
import tritonclient.http as httpclient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORES, ROOT, VINFER  # noqa: E402

IMAGE = os.path.join(ROOT, "tests", "data", "images", "squirrel_cls.jpg")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def request_parts(data):
    inp = httpclient.InferInput("image", [1], "BYTES")
    inp.set_data_from_numpy(np.array([data], dtype=np.object_), binary_data=True)
    outs = [httpclient.InferRequestedOutput(n, binary_data=True) for n in ("topk_indices", "topk_probabilities")]
    return [inp], outs


def stage_means(port):
    """The server's /metrics: stage -> (sum ms, count)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        text = r.read().decode()
    out = {}
    for stage in ("preprocess", "inference", "request"):
        total = float(re.search(r'vinfer_stage_ms_sum\{model="m",stage="%s"\} ([0-9.]+)' % stage, text).group(1))
        count = int(re.search(r'vinfer_stage_ms_count\{model="m",stage="%s"\} (\d+)' % stage, text).group(1))
        out[stage] = (total, count)
    return out


def plain_request(data):
    """The same request as a plain blocking HTTP client sends it (http.client, binary extension)."""
    header = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1],
                                     "parameters": {"binary_data_size": len(data) + 4}}],
                         "outputs": [{"name": n, "parameters": {"binary_data": True}}
                                     for n in ("topk_indices", "topk_probabilities")]}).encode()
    return header + struct.pack("<I", len(data)) + data, {"Inference-Header-Content-Length": str(len(header)),
                                                           "Content-Type": "application/octet-stream"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "out", "cold", "densenet121.onnx"))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--loops", type=int, default=200)
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--max-batch", type=int, default=1)
    ap.add_argument("--batch-delay-ms", type=int, default=0)
    args = ap.parse_args()
    data = open(IMAGE, "rb").read()

    def vinfer_bench():
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "bench.json")
            subprocess.run([VINFER, "bench", args.model, IMAGE, "--loops", str(args.loops), "--json", out],
                           capture_output=True, check=True)
            return json.load(open(out))["latency_ms"]["p50"]

    def classify_rate(streams, n=400):
        """vinfer classify's throughput mode on the same image, n times: images/s (its own figure)."""
        with tempfile.TemporaryDirectory() as d:
            listing = os.path.join(d, "list.txt")
            with open(listing, "w") as f:
                f.write((IMAGE + "\n") * n)
            out = subprocess.run([VINFER, "classify", args.model, "--files-from", listing, "--streams", str(streams), "--threads",
                                  str(max(1, CORES // streams)), "-o", os.path.join(d, "out.jsonl"), "--no-progress"],
                                 capture_output=True, text=True, check=True)
            return float(re.search(r"\(([\d.]+) images/s\)", out.stderr).group(1))

    bench_before = vinfer_bench()

    batching = ["--max-batch", str(args.max_batch)] + (["--batch-delay-ms", str(args.batch_delay_ms)] if args.batch_delay_ms else [])
    p = subprocess.Popen([VINFER, "serve", "--model", f"m={args.model}", "--port", "0", "--instances", str(args.instances),
                          "--max-queue", "1000"] + batching, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(re.search(r":(\d+) ", p.stdout.readline()).group(1))
    try:
        c = httpclient.InferenceServerClient(url=f"127.0.0.1:{port}")
        inputs, outputs = request_parts(data)
        for _ in range(20):
            c.infer("m", inputs, outputs=outputs)
        lat = []
        m0 = stage_means(port)
        for _ in range(args.loops):
            t = time.perf_counter()
            c.infer("m", inputs, outputs=outputs)
            lat.append((time.perf_counter() - t) * 1000)
        m1 = stage_means(port)
        served = {k: (m1[k][0] - m0[k][0]) / max(1, m1[k][1] - m0[k][1]) for k in m1}
        body, headers = plain_request(data)
        conn = http.client.HTTPConnection("127.0.0.1", port)
        plain = []
        for i in range(args.loops + 20):
            t = time.perf_counter()
            conn.request("POST", "/v2/models/m/infer", body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200, resp.status
            if i >= 20:
                plain.append((time.perf_counter() - t) * 1000)
        conn.close()

        stop_at = time.time() + args.seconds
        per_client, errors = [[] for _ in range(args.clients)], []

        def client(i):
            cc = httpclient.InferenceServerClient(url=f"127.0.0.1:{port}", network_timeout=120)
            ins, outs = request_parts(data)
            while time.time() < stop_at:
                t = time.perf_counter()
                try:
                    cc.infer("m", ins, outputs=outs)
                    per_client[i].append((time.perf_counter() - t) * 1000)
                except Exception as e:  # noqa: BLE001 - every failure counts
                    errors.append(repr(e)[:200])

        t0 = time.time()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.time() - t0
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
    load = [x for xs in per_client for x in xs]
    bench_after = vinfer_bench()  # (this VM's speed drifts: the mean of before and after)
    classify_ips = max(classify_rate(1), classify_rate(2))
    bench_p50 = (bench_before + bench_after) / 2
    r = {
        "date": time.strftime("%Y-%m-%d"), "cores": CORES, "model": os.path.basename(args.model), "instances": args.instances,
        "vinfer_bench_p50_ms": bench_p50, "vinfer_bench_p50_before_after_ms": [bench_before, bench_after], "serve_p50_ms": statistics.median(lat), "serve_p90_ms": pct(lat, 90),
        "overhead_ms": statistics.median(lat) - bench_p50,
        "plain_p50_ms": statistics.median(plain), "plain_overhead_ms": statistics.median(plain) - bench_p50,
        "server_means_ms": served, "serve_mean_ms": statistics.mean(lat),
        "protocol_ms": statistics.mean(lat) - served["preprocess"] - served["inference"],
        "load_clients": args.clients, "load_seconds": round(wall, 1), "load_requests": len(load), "load_errors": len(errors),
        "load_images_per_s": len(load) / wall, "load_p50_ms": pct(load, 50), "load_p99_ms": pct(load, 99),
        "bench_images_per_s": 1000 / bench_p50, "classify_images_per_s": classify_ips,
        "max_batch": args.max_batch, "batch_delay_ms": args.batch_delay_ms, "errors": errors[:5],
    }
    os.makedirs(os.path.join(ROOT, "out"), exist_ok=True)
    with open(os.path.join(ROOT, "out", "bench_serve.json"), "w") as f:
        json.dump(r, f, indent=1)
    md = (f"| model | vinfer bench p50 ms | serve p50 ms: tritonclient / plain HTTP | overhead ms: tritonclient / plain | "
          f"protocol ms | {args.clients} clients: images/s | p50 / p99 ms | errors | vinfer bench images/s | "
          f"vinfer classify images/s (best of --streams 1, 2) | serve / classify |\n"
          f"|---|---:|---|---|---:|---:|---|---:|---:|---:|---:|\n"
          f"| {r['model']} | {bench_p50:.2f} | {r['serve_p50_ms']:.2f} / {r['plain_p50_ms']:.2f} | "
          f"{r['overhead_ms']:.2f} / {r['plain_overhead_ms']:.2f} | {r['protocol_ms']:.2f} | {r['load_images_per_s']:.1f} | "
          f"{r['load_p50_ms']:.1f} / {r['load_p99_ms']:.1f} | {len(errors)} of {len(load) + len(errors)} | {r['bench_images_per_s']:.1f} | "
          f"{classify_ips:.1f} | {r['load_images_per_s'] / classify_ips:.2f} |\n")
    with open(os.path.join(ROOT, "out", "bench_serve.md"), "w") as f:
        f.write(md)
    print(json.dumps(r))
    print(md)


if __name__ == "__main__":
    main()
