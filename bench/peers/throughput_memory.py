#!/usr/bin/env python3
"""Resident memory over a long `vinfer classify` run: the folder of
bench_throughput.py listed again and again (--count paths in all), records
streamed to a JSONL file; the process's VmRSS sampled every 0.2 s against
the records written so far.

    python3 bench/peers/throughput_memory.py [--model resnet18] [--count 20000] [--batch 8]

Prints RSS at the 1,000th record and at the end, and their ratio (the
target: within 10 %). Needs out/throughput/images (bench_throughput.py makes it).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, VINFER  # noqa: E402


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args()
    folder = os.path.join(ROOT, "out", "throughput", "images")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jpg"))
    if not files:
        raise SystemExit(f"no images in {folder}: run bench/peers/bench_throughput.py first")
    with tempfile.TemporaryDirectory() as tmp:
        listing = os.path.join(tmp, "list.txt")
        with open(listing, "w") as f:
            for i in range(a.count):
                f.write(files[i % len(files)] + "\n")
        out = os.path.join(tmp, "out.jsonl")
        p = subprocess.Popen([VINFER, "classify", a.model, "--files-from", listing, "--batch", str(a.batch), "--workers",
                              str(a.workers), "-o", out, "--no-progress"], stderr=subprocess.PIPE, text=True)
        samples = []  # (records written, RSS MiB)
        while p.poll() is None:
            try:
                with open(out, "rb") as f:
                    n = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
                samples.append((n, rss_mib(p.pid)))
            except (FileNotFoundError, ProcessLookupError):
                pass
            time.sleep(0.2)
        err = p.stderr.read()
    if p.returncode != 0:
        raise SystemExit(f"vinfer failed ({p.returncode}): {err[-400:]}")
    at_1000 = next(r for n, r in samples if n >= 1000)
    at_end = samples[-1][1]
    peak = max(r for _, r in samples)
    print(f"{a.model}, batch {a.batch}, {a.count} images: RSS {at_1000:.1f} MiB at record 1,000, {at_end:.1f} MiB at "
          f"record {samples[-1][0]:,}, peak {peak:.1f} MiB; end / 1,000th = {at_end / at_1000:.3f}")
    print(err.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
