#!/usr/bin/env python3
"""Writes tests/data/attention23/: ONNX Attention (opset 23) in the forms
vinfer reads, each a small model of input Q with K and V (and a mask),
with its input and ONNX Runtime's output. Committed, so CI (whose
Debian packages have no ONNX Runtime) tests vinfer's Attention against it:

    .venv-peers/bin/python tests/models/export_attention_fixture.py

grouped_bool_softcap: 4 query heads over 2 key heads, a bool mask with a row
that leaves out every key (zeros, as the operator's definition says), a
scale and a softcap. three_d_float_causal: 3-D inputs with head counts, a
float mask, causal. plain: as torch writes scaled_dot_product_attention,
K and V computed from Q (x scaled per head and channel).
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "attention23")
rng = np.random.default_rng(3)


def model(name, xshape, attrs, consts, mask=None):
    """K and V: constants, or (runtime_kv) x scaled per head and channel."""
    nodes = []
    if "runtime_kv" in consts:
        nodes = [h.make_node("Mul", ["x", "ck"], ["k"]), h.make_node("Mul", ["x", "cv"], ["v"])]
        consts = {"ck": consts["runtime_kv"][0], "cv": consts["runtime_kv"][1]}
    inits = [nh.from_array(v, k) for k, v in consts.items()]
    ins = ["x", "k", "v"]
    if mask is not None:
        inits.append(nh.from_array(mask, "mask"))
        ins.append("mask")
    nodes.append(h.make_node("Attention", ins, ["y"], **attrs))
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, xshape)],
                     [h.make_tensor_value_info("y", T.FLOAT, [])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    del m.graph.output[0].type.tensor_type.shape.dim[:]
    path = os.path.join(OUT, name)
    onnx.save(m, path + ".onnx")
    x = rng.standard_normal(xshape).astype(np.float32)
    y = ort.InferenceSession(path + ".onnx", providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.save(path + ".input.npy", x)
    np.save(path + ".ort.npy", y)
    print(name, y.shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    bool_mask = rng.random((3, 5)) > 0.3
    bool_mask[1, :] = False
    model("grouped_bool_softcap", [2, 4, 3, 8], dict(scale=0.3, softcap=2.5),
          {"k": rng.standard_normal((2, 2, 5, 8)).astype(np.float32),
           "v": rng.standard_normal((2, 2, 5, 6)).astype(np.float32)}, bool_mask)
    model("three_d_float_causal", [2, 3, 12], dict(q_num_heads=3, kv_num_heads=3, is_causal=1),
          {"k": rng.standard_normal((2, 5, 12)).astype(np.float32),
           "v": rng.standard_normal((2, 5, 9)).astype(np.float32)},
          rng.standard_normal((2, 1, 3, 5)).astype(np.float32))
    model("plain", [2, 4, 6, 8], {}, {"runtime_kv": (rng.standard_normal((1, 4, 1, 8)).astype(np.float32),
                                                     rng.standard_normal((1, 4, 1, 8)).astype(np.float32))})


if __name__ == "__main__":
    main()
