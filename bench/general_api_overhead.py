"""The general API's cost per call: vinfer.Session.run (named inputs, a list
of outputs) against vinfer.Model.run (the image API) on the same one-node
model, in interleaved rounds; prints the medians and their difference.

    PYTHONPATH=build/python .venv-test/bin/python bench/general_api_overhead.py
"""
import os
import statistics
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import vinfer


def main(shape=(1, 1000), rounds=21, calls=2000):
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x_info], [y_info])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(tempfile.mkdtemp(), "relu.onnx")
    onnx.save(m, path)
    model = vinfer.Model(path, threads=1, tune_cache="")
    sess = vinfer.Session(path, threads=1)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert np.array_equal(model.run(x), sess.run(None, {"x": x})[0])
    per = {"Model.run": [], "Session.run": []}
    for _ in range(rounds):
        for name, f in (("Model.run", lambda: model.run(x)), ("Session.run", lambda: sess.run(None, {"x": x}))):
            t0 = time.perf_counter()
            for _ in range(calls):
                f()
            per[name].append((time.perf_counter() - t0) / calls * 1e6)
    med = {k: statistics.median(v) for k, v in per.items()}
    for k, v in med.items():
        print(f"{k:12s} {v:7.1f} us per call (median of {rounds} rounds of {calls})")
    print(f"difference   {med['Session.run'] - med['Model.run']:7.1f} us")


if __name__ == "__main__":
    main()
