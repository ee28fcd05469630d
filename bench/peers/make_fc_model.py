"""A one-layer fully connected network for A/Bs of the batch-1 kernel.

    .venv-peers/bin/python bench/peers/make_fc_model.py OUT.onnx [--k 25088] [--n 4096] [--nonzero 0.59]
    ./build/bench/bench_ab OUT.onnx --rounds 20 -- "" "VINFER_FC=onednn"

y = Gemm(Relu(x - c), W, b), x: 1 x K. bench_ab feeds x = 0.5 everywhere; c
is chosen so that the fraction --nonzero of Relu's outputs is not zero (1: a
fully dense input; VGG19's fc6 sees 0.59 with this repository's random
weights). Random weights, 411 MB for fc6's shape.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--k", type=int, default=25088)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--nonzero", type=float, default=0.59, help="fraction of the Gemm's inputs that are not zero")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((a.n, a.k)) * 0.01).astype(np.float32)
    b = rng.standard_normal(a.n).astype(np.float32)
    # 0.5 - c > 0 for exactly round(nonzero * K) inputs, in random places.
    c = np.full(a.k, 1.0, np.float32)
    c[rng.permutation(a.k)[: round(a.nonzero * a.k)]] = 0.0
    nodes = [helper.make_node("Sub", ["x", "c"], ["s"]), helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("Gemm", ["r", "w", "b"], ["y"], transB=1)]
    g = helper.make_graph(nodes, "fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, a.k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, a.n])],
                          initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
                                       numpy_helper.from_array(c.reshape(1, a.k), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8  # what vinfer's ONNX checker (Debian's libonnx) reads
    onnx.save(m, a.out)
    print(f"{a.out}: Gemm {a.k} -> {a.n}, {round(a.nonzero * a.k)} of {a.k} inputs non-zero")


if __name__ == "__main__":
    main()
