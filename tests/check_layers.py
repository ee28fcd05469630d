#!/usr/bin/env python3
"""Checks that the library's layers depend on each other one way only.

Each directory under src/ may include its own headers, the public API
(include/vinfer/) and the layers listed for it below; a few public headers
are denied where they would carry a dependency the layer must not have.
Usage: check_layers.py REPO_ROOT, or check_layers.py --self-test.
"""
import os
import re
import sys
import tempfile

ALLOWED = {
    "util": set(),
    "image": {"util"},                # the image pipeline knows no network
    "graph": set(),                   # the IR knows no backend, runtime or importer
    "backend": {"graph"},             # what backends share: the Executor interface, the planners
    "cpu": {"backend", "graph", "util"},
    "cuda": {"backend", "graph", "image", "util"},   # backends never include each other nor the runtime
    "runtime": {"backend", "graph", "image", "cpu", "cuda", "util"},  # never an importer
    "onnx": {"graph", "util"},
    "zoo": {"graph", "util"},
    "pipeline": {"util"},
    "bench": {"util"},
    "serve": {"util"},
}
# Public headers a layer must not include (they belong to the layers above it).
DENIED = {
    "image": {"vinfer/graph.hpp", "vinfer/engine.hpp", "vinfer/zoo.hpp"},
    "graph": {"vinfer/engine.hpp", "vinfer/zoo.hpp", "vinfer/image.hpp", "vinfer/preprocess.hpp"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def violations(root):
    found = []
    src = os.path.join(root, "src")
    for layer in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, layer)):
            continue
        if layer not in ALLOWED:
            found.append(f"src/{layer}: a layer this check does not know (add it to ALLOWED)")
            continue
        for dirpath, _, files in os.walk(os.path.join(src, layer)):
            for f in files:
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for inc in INCLUDE.findall(text):
                    top = inc.split("/", 1)[0] if "/" in inc else None
                    if top is None or top == layer or inc in ("test_support.hpp",):
                        continue
                    if top == "vinfer":
                        if inc in DENIED.get(layer, ()):
                            found.append(f"{rel}: includes {inc}, which layer '{layer}' must not see")
                        continue
                    if top not in ALLOWED[layer]:
                        found.append(f"{rel}: includes {inc} (layer '{layer}' may use {sorted(ALLOWED[layer]) or 'none'})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as d:
        for sub, text in [("graph/ok.cpp", '#include "graph/x.hpp"\n#include "vinfer/graph.hpp"\n'),
                          ("graph/bad.cpp", '#include "cpu/kernels.hpp"\n'),
                          ("image/bad.hpp", '#include "vinfer/engine.hpp"\n'),
                          ("runtime/bad.cpp", '#include "onnx/onnx_import.hpp"\n')]:
            os.makedirs(os.path.join(d, "src", os.path.dirname(sub)), exist_ok=True)
            with open(os.path.join(d, "src", sub), "w") as fh:
                fh.write(text)
        got = violations(d)
        want = ["graph/bad.cpp", "image/bad.hpp", "runtime/bad.cpp"]
        if len(got) != len(want) or not all(any(w in g for g in got) for w in want):
            print("self-test failed:", got)
            return 1
    print("self-test passed: 3 planted violations found, the allowed includes accepted")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    found = violations(sys.argv[1] if len(sys.argv) > 1 else ".")
    for v in found:
        print(v)
    if not found:
        print("layers: every include points one way")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
