"""ONNX's own node tests (onnx.backend.test, the onnx package pinned in the
test environment) as vinfer runs them: through vinfer.backend, each either
answered within the test's tolerance or refused with an UnsupportedError.

    python node_cases.py --write     # runs every case in a child process; rewrites refused.txt
    python node_cases.py --check     # the same, and says what differs from refused.txt
"""
import os
import sys

import numpy as np
from onnx.backend.test.loader import load_model_tests

HERE = os.path.dirname(os.path.abspath(__file__))
REFUSED = os.path.join(HERE, "refused.txt")
OPSETS = range(7, 24)  # what vinfer reads; later opsets are refused by name


def opset_of(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 0


def cases():
    """Every node test whose model is of opsets 7 to 23, by name. (The onnx
    wheel makes them in memory: each with its model and its data sets.)"""
    return sorted((c for c in load_model_tests(kind="node") if opset_of(c.model) in OPSETS), key=lambda c: c.name)


def run_case(case):
    """'pass', or ('refused', reason); raises AssertionError for a wrong answer."""
    import vinfer
    import vinfer.backend
    try:
        rep = vinfer.backend.prepare(case.model)
        for ins, refs in case.data_sets:
            outs = rep.run(ins)
            assert len(outs) == len(refs), f"{len(outs)} outputs, expected {len(refs)}"
            for k, (ref, out) in enumerate(zip(refs, outs)):
                assert out.dtype == ref.dtype, f"output {k}: dtype {out.dtype}, expected {ref.dtype}"
                assert out.shape == ref.shape, f"output {k}: shape {out.shape}, expected {ref.shape}"
                np.testing.assert_allclose(out, ref, rtol=case.rtol, atol=case.atol, err_msg=f"output {k}")
    except vinfer.UnsupportedError as e:
        return "refused", reason_of(str(e))
    return "pass"


def reason_of(message):
    # Loading from bytes names the model "<bytes>": not part of the reason.
    return message.replace("<bytes>: ", "")


def read_refused():
    out = {}
    if os.path.exists(REFUSED):
        with open(REFUSED) as f:
            for line in f:
                line = line.rstrip("\n")
                if line and not line.startswith("#"):
                    name, _, reason = line.partition("\t")
                    out[name] = reason
    return out


def _child(case, q):
    try:
        r = run_case(case)
        q.put(r if isinstance(r, tuple) else ("pass", ""))
    except AssertionError as e:
        q.put(("wrong", str(e).strip().splitlines()[0] if str(e).strip() else "assertion"))
    except Exception as e:  # noqa: BLE001: a survey records everything
        q.put(("error", f"{type(e).__name__}: {e}"))


def survey(names=None):
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    results = {}
    for c in cases():
        if names and c.name not in names:
            continue
        q = ctx.Queue()
        p = ctx.Process(target=_child, args=(c, q))
        p.start()
        p.join(120)
        if p.is_alive():
            p.kill()
            results[c.name] = ("hang", "")
        elif p.exitcode != 0:
            results[c.name] = ("crash", f"exit code {p.exitcode}")
        else:
            results[c.name] = q.get()
    return results


def main():
    write = "--write" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    res = survey(names or None)
    counts = {}
    for name, (kind, why) in sorted(res.items()):
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in ("pass", "refused"):
            print(f"{kind}\t{name}\t{why}")
    print(" ".join(f"{k} {v}" for k, v in sorted(counts.items())), f"of {len(res)}")
    if write and not names:
        with open(REFUSED, "w") as f:
            f.write("# ONNX node tests (opsets 7-23) that vinfer refuses, and the one line it refuses each with.\n"
                    "# Written by tests/onnx_node/node_cases.py --write; test_node.py checks every case against it.\n")
            for name, (kind, why) in sorted(res.items()):
                if kind == "refused":
                    f.write(f"{name}\t{why}\n")
    elif "--check" in sys.argv:
        old = read_refused()
        for name, (kind, why) in sorted(res.items()):
            if kind == "refused" and old.get(name) != why:
                print(f"newly refused or reason changed\t{name}\t{why}")
            if kind == "pass" and name in old:
                print(f"now passes\t{name}")


if __name__ == "__main__":
    main()
