"""Paths and helpers shared by the side-by-side drivers."""
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
VINFER = os.path.join(ROOT, "build", "vinfer")
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
