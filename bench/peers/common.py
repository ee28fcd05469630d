"""Paths and helpers shared by the side-by-side drivers."""
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
VINFER = os.path.join(ROOT, "build", "vinfer")
BENCH_WORKER = os.path.join(ROOT, "build", "bench", "bench_worker")
EXPORT = os.path.join(ROOT, "tests", "models", "export_models.py")
CORES = os.cpu_count() or 1


def timed_loop(fn, loops, warmup):
    """Runs fn warmup times untimed, then loops times; returns each call's milliseconds."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(loops):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1000)
    return ts


def timeit(fn, iters, warmup=10):
    """timed_loop's p50, mean and min, in milliseconds."""
    ts = sorted(timed_loop(fn, iters, warmup))
    return {"p50": ts[len(ts) // 2], "mean": sum(ts) / len(ts), "min": ts[0]}


def cpu_description():
    """The CPU as /proc/cpuinfo names it, with family and model (the name
    alone, "AMD EPYC" in these VMs, names Zen 4 and Zen 5 hosts alike) and
    its widest vector ISA."""
    info = {}
    for line in open("/proc/cpuinfo").read().split("\n\n")[0].splitlines():
        k, _, v = line.partition(":")
        info[k.strip()] = v.strip()
    flags = info.get("flags", "").split()
    isa = "AVX-512" + (" + AVX512_BF16" if "avx512_bf16" in flags else "") if "avx512f" in flags else "AVX2"
    return f"{info.get('model name', '?')} (family {info.get('cpu family', '?')} model {info.get('model', '?')}), {isa}"
