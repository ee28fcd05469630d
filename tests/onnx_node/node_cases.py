"""ONNX's own node tests (onnx.backend.test, the onnx package pinned in the
test environment) as vinfer runs them: through vinfer.backend, each either
answered within the test's tolerance or refused with an UnsupportedError.

    python node_cases.py --write     # runs every case in a child process; rewrites refused.txt
                                     # and docs/onnx_operators.md
    python node_cases.py --check     # the same, and says what differs from refused.txt
"""
import os
import re
import sys

import numpy as np
from onnx.backend.test.loader import load_model_tests

HERE = os.path.dirname(os.path.abspath(__file__))
REFUSED = os.path.join(HERE, "refused.txt")
DOCS = os.path.join(HERE, "..", "..", "docs", "onnx_operators.md")
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


def write_docs(res):
    """The operator table: per operator, its node tests passed and refused, and why."""
    import onnx
    by_op = {}
    for c in cases():
        ops = {n.op_type for n in c.model.graph.node}
        if c.name.endswith("_expanded") or len(ops) != 1:
            continue  # (tests of one operator only: the expanded forms test the ones they expand to)
        op = ops.pop()
        kind, why = res[c.name]
        e = by_op.setdefault(op, {"pass": 0, "refused": 0, "why": {}, "opset": set()})
        e["opset"].add(opset_of(c.model))
        e[kind if kind in ("pass", "refused") else "refused"] += 1
        if kind == "refused":
            short = why.split(": ", 1)[1] if why.startswith(op + " '") and ": " in why else why
            short = re.sub(r" \(node '[^']*'\)", "", short)
            e["why"][short] = e["why"].get(short, 0) + 1
    total = {k: sum(v == k for v, _ in res.values()) for k in ("pass", "refused")}
    import datetime
    import platform
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [
        "# ONNX operators: what vinfer runs, by ONNX's own node tests",
        "",
        f"onnx {onnx.__version__}'s node tests of opsets 7 to 23 ({len(res)} cases) run through `vinfer.backend`",
        "(the ONNX backend API) in the test suite (`onnx_node_tests`), and through the C++ general API in",
        "every build, the sanitizer one included (`onnx_node_cases_cpp`): "
        f"{total['pass']} pass within the test's tolerance,",
        f"{total['refused']} are refused with one line, none crashes or answers wrongly "
        f"({datetime.date.today().isoformat()}, {cpu}; the",
        "counts do not depend on the CPU). A refusal is the answer for what vinfer does not run; the lines are",
        "in `tests/onnx_node/refused.txt`. Graphs other than one float32 input to float32 outputs run on",
        "the reference evaluator (exact, slow). Inputs that vinfer needs as constants (axes, target shapes,",
        "clip bounds) are bound by the backend to the values given at each run.",
        "",
        "Generated by `.venv-test/bin/python tests/onnx_node/node_cases.py --write` (counting the cases that",
        "test one operator alone; the expanded forms count for the operators they expand to).",
        "",
        "| operator | opsets tested | pass | refused | why refused |",
        "|---|---|---:|---:|---|",
    ]
    for op in sorted(by_op):
        e = by_op[op]
        why = "; ".join(f"{w} ({n})" if n > 1 else w for w, n in sorted(e["why"].items(), key=lambda kv: -kv[1])[:3])
        why = why.replace("|", "\\|")
        ops = ", ".join(str(o) for o in sorted(e["opset"]))
        lines.append(f"| {op} | {ops} | {e['pass']} | {e['refused']} | {why} |")
    with open(DOCS, "w") as f:
        f.write("\n".join(lines) + "\n")


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
        write_docs(res)
    elif "--check" in sys.argv:
        old = read_refused()
        for name, (kind, why) in sorted(res.items()):
            if kind == "refused" and old.get(name) != why:
                print(f"newly refused or reason changed\t{name}\t{why}")
            if kind == "pass" and name in old:
                print(f"now passes\t{name}")


if __name__ == "__main__":
    main()
