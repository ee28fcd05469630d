"""Helpers shared by the side-by-side drivers."""
import time


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
