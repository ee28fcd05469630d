"""Writes ONNX's node tests of opsets 7-23 as files, for the C++ runner
(node_runner.cpp, which the sanitizer build runs: the Python extension is
not built there):

    OUT/<case>/model.onnx
    OUT/<case>/tolerance.txt                     rtol atol
    OUT/<case>/test_data_set_<k>/input_<i>.pb    TensorProto
    OUT/<case>/test_data_set_<k>/output_<i>.pb

A data set holding anything but tensors (sequences, optionals) is left out:
vinfer refuses those models when it loads them.

    .venv-test/bin/python tests/onnx_node/write_cases.py OUT
"""
import os
import sys

import numpy as np
from onnx import numpy_helper

import node_cases


def main(out):
    os.makedirs(out, exist_ok=True)
    for c in node_cases.cases():
        d = os.path.join(out, c.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(c.model.SerializeToString())
        with open(os.path.join(d, "tolerance.txt"), "w") as f:
            f.write(f"{c.rtol!r} {c.atol!r}\n")
        for k, (ins, outs) in enumerate(c.data_sets):
            if not all(isinstance(a, (np.ndarray, np.generic)) and np.asarray(a).dtype != object for a in list(ins) + list(outs)):
                continue
            ins, outs = [np.asarray(a) for a in ins], [np.asarray(a) for a in outs]
            s = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(s, exist_ok=True)
            for kind, arrays in (("input", ins), ("output", outs)):
                for i, a in enumerate(arrays):
                    with open(os.path.join(s, f"{kind}_{i}.pb"), "wb") as f:
                        f.write(numpy_helper.from_array(a).SerializeToString())
    with open(os.path.join(out, "done"), "w") as f:
        f.write("written\n")


if __name__ == "__main__":
    main(sys.argv[1])
