"""Paths and helpers shared by the side-by-side drivers."""
import os
import subprocess
import sys
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


def tune_cache():
    """Where `vinfer bench` keeps its timed 3x3 choices (its --tune-cache default)."""
    if os.environ.get("VINFER_TUNE_CACHE") is not None:
        return os.environ["VINFER_TUNE_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vinfer", "tune.txt")


def vinfer_worker_cmd(onnx_path, input_npy, *options):
    """build/bench/bench_worker's command line, loading as `vinfer bench` does."""
    return [BENCH_WORKER, onnx_path, input_npy, "--tune-cache", tune_cache(), *options]


def serve_turns(fn, version):
    """A peer's side of Worker: "ready VERSION", then for each line N on stdin,
    N passes' milliseconds on one line (bench_worker's protocol)."""
    print("ready", version, flush=True)
    for line in sys.stdin:
        print(" ".join(f"{t:.4f}" for t in timed_loop(fn, int(line), 0)), flush=True)


class Worker:
    """An engine loaded once in its own process (bench_worker, or a script's
    serve_turns), running passes when asked, so that engines can take turns."""

    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        first = self.p.stdout.readline().split()
        if not first or first[0] != "ready":
            raise SystemExit("a worker did not start: " + " ".join(cmd))
        self.version = " ".join(first[1:])

    def passes(self, n):
        self.p.stdin.write(f"{n}\n")
        self.p.stdin.flush()
        ts = [float(t) for t in self.p.stdout.readline().split()]
        if len(ts) != n:
            raise SystemExit("a worker stopped: " + " ".join(self.p.args))
        return ts

    def turn(self, n):
        """After a pause (the last turn's threads stop spinning), one untimed
        pass (the last engine evicted the caches), then n timed ones."""
        time.sleep(0.05)
        return self.passes(n + 1)[1:]

    def close(self):
        self.p.stdin.close()
        self.p.wait()
