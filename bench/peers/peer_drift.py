#!/usr/bin/env python3
"""Peer drift: regenerates every conformance fixture with the peers of a given
Python environment (by default this one) and prints what differs from the
committed fixtures, case by case, with the peer versions on both sides.

The committed fixtures were made with the pinned peers
(bench/peers/requirements.txt); CI compares vinfer with them and cannot see
a newer release behave differently. Run this against the newest releases:

    python3 -m venv .venv-drift && .venv-drift/bin/pip install -U numpy pillow \\
        opencv-python-headless torch torchvision tensorflow-cpu tf-keras
    python3 bench/peers/peer_drift.py --python .venv-drift/bin/python [--json out/drift.json]

Exit code 0 whether or not anything changed (it reports; docs/compat.md says
what each known difference means); 2 if the generator itself failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
GEN = os.path.join(ROOT, "tests", "conformance", "gen_fixtures.py")


def manifests(data):
    cases, versions = {}, {}
    fx = os.path.join(data, "fixtures")
    for name in sorted(os.listdir(fx)):
        if name.startswith("manifest_") and name.endswith(".json"):
            m = json.load(open(os.path.join(fx, name)))
            versions.update(m.get("versions", {}))
            for c in m["cases"]:
                cases[c["id"]] = c
    return cases, versions


def expected(data, case):
    """The case's expected array (or its sha256 where only that is kept)."""
    if "png" in case:
        return np.array(Image.open(os.path.join(data, case["png"])))
    if "npy" in case:
        return np.load(os.path.join(data, case["npy"]))
    return case.get("sha256")


def same_file(a, b):
    try:
        return open(a, "rb").read() == open(b, "rb").read()
    except OSError:
        return False


def compare(old, new):
    """(same, words)."""
    if isinstance(old, str) or isinstance(new, str):
        return old == new, "identical" if old == new else "different sha256"
    if old.shape != new.shape:
        return False, f"shape {old.shape} -> {new.shape}"
    d = np.abs(old.astype(np.float64) - new.astype(np.float64))
    if not d.any():
        return True, "identical"
    if old.dtype == np.uint8:
        return False, f"{np.count_nonzero(d)} of {d.size} values differ ({100 * np.count_nonzero(d) / d.size:.2f} %), max {int(d.max())} level(s)"
    scale = max(1e-12, float(np.abs(old).max()))
    return False, f"max |diff| {d.max():.3g} ({d.max() / scale:.2e} of max |value|)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter whose peers regenerate the fixtures")
    ap.add_argument("--json", help="also write the comparison here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.join(DATA, "images"), os.path.join(tmp, "images"))
        r = subprocess.run([a.python, GEN], env={**os.environ, "VINFER_FIXTURE_DATA": tmp})
        if r.returncode != 0:
            print("peer_drift: the fixture generator failed with these peers", file=sys.stderr)
            return 2
        old_cases, old_v = manifests(DATA)
        new_cases, new_v = manifests(tmp)
        print("peer versions (committed -> regenerated):")
        for k in sorted(set(old_v) | set(new_v)):
            print(f"  {k}: {old_v.get(k, '-')} -> {new_v.get(k, '-')}")
        rows = []
        for cid in sorted(set(old_cases) | set(new_cases)):
            if cid not in new_cases or cid not in old_cases:
                rows.append((cid, "only in the " + ("committed" if cid in old_cases else "regenerated") + " set"))
                continue
            src = old_cases[cid].get("input", "")
            if src.startswith("fixtures/") and not same_file(os.path.join(DATA, src), os.path.join(tmp, new_cases[cid].get("input", ""))):
                rows.append((cid, "its input was written differently by the new peers (an encoder change), so the output is not comparable"))
                continue
            same, words = compare(expected(DATA, old_cases[cid]), expected(tmp, new_cases[cid]))
            if not same:
                rows.append((cid, words))
        print(f"\n{len(old_cases)} committed cases; {len(rows)} differ:")
        for cid, words in rows:
            print(f"  {cid}: {words}")
        if a.json:
            os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
            json.dump({"versions": {"committed": old_v, "regenerated": new_v},
                       "differences": [{"id": c, "what": w} for c, w in rows]}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
