#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (small, valid inputs of every kind the
parsers take; the fuzzers mutate them). Committed under fuzz/corpus/; rerun
with the peers' environment to regenerate:

    .venv-peers/bin/python fuzz/make_corpus.py
    python fuzz/make_corpus.py --only npy,keras,oip    # numpy and h5py only
    .venv-test/bin/python fuzz/make_corpus.py --only onnx_nodes   # onnx 1.23's node tests
"""
import io
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
C = os.path.join(HERE, "corpus")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))


def out(kind, name, data):
    os.makedirs(os.path.join(C, kind), exist_ok=True)
    with open(os.path.join(C, kind, name), "wb") as f:
        f.write(data)


def npy_seeds():
    for name, a in [("f32.npy", np.arange(24, dtype="<f4").reshape(1, 2, 3, 4)),
                    ("u8.npy", np.arange(12, dtype=np.uint8).reshape(3, 4)),
                    ("scalar.npy", np.array(1.5, dtype="<f4")), ("empty.npy", np.zeros((0, 3), dtype="<f4"))]:
        b = io.BytesIO()
        np.save(b, a)
        out("npy", name, b.getvalue())


def oip_seeds():
    """Infer requests (fuzz_oip: two bytes of header length, 0xffff for none, then the body)."""
    def seed(name, header, binary=b""):
        h = json.dumps(header).encode()
        out("oip", name, struct.pack("<H", len(h) if binary else 0xFFFF) + h + binary)
    seed("json_fp32.bin", {"id": "1", "parameters": {"top_k": 3}, "inputs": [
        {"name": "input", "datatype": "FP32", "shape": [1, 2, 2], "data": [[1, 2], [3, 4.5]]}],
        "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]})
    seed("json_bytes.bin", {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [2],
                                        "data": [{"b64": "/9j/4AAQ"}, "raw"]}]})
    images = b"".join(struct.pack("<I", len(b)) + b for b in (b"\xff\xd8\xff\xe0", b"\x89PNG\r\n\x1a\n"))
    floats = struct.pack("<2f", 0.5, -1.0)
    seed("binary.bin", {"parameters": {"binary_data_output": True}, "inputs": [
        {"name": "image", "datatype": "BYTES", "shape": [2], "parameters": {"binary_data_size": len(images)}},
        {"name": "input", "datatype": "FP32", "shape": [1, 2], "parameters": {"binary_data_size": len(floats)}}]},
        images + floats)


def keras_seeds():
    """Tiny weight files in both layouts read_keras_h5 takes: Keras 2
    (layer_names / weight_names attributes) and Keras 3 (/layers/*/vars)."""
    import h5py
    rng = np.random.default_rng(1)
    os.makedirs(os.path.join(C, "keras"), exist_ok=True)
    with h5py.File(os.path.join(C, "keras", "keras2.h5"), "w") as f:
        f.attrs["layer_names"] = [b"conv1/conv", b"fc"]
        for layer, ws in [("conv1/conv", {"kernel:0": (3, 3, 2, 4)}), ("fc", {"kernel:0": (4, 3), "bias:0": (3,)})]:
            g = f.create_group(layer)
            g.attrs["weight_names"] = [f"{layer}/{w}".encode() for w in ws]
            for w, shape in ws.items():
                g.create_dataset(f"{layer}/{w}", data=rng.standard_normal(shape).astype(np.float32))
    with h5py.File(os.path.join(C, "keras", "keras3.weights.h5"), "w") as f:
        for key, name, shapes in [("conv2d", "conv1_conv", [(3, 3, 2, 4)]), ("dense", "predictions", [(4, 3), (3,)])]:
            v = f.create_group(f"layers/{key}/vars")
            v.attrs["name"] = name
            for i, shape in enumerate(shapes):
                v.create_dataset(str(i), data=rng.standard_normal(shape).astype(np.float16 if i else np.float32))


def downsample_block_onnx(kw):
    """A ResNet downsampling block (stride-2 3x3 on a 28x28 map of 16 channels,
    stride-2 1x1 shortcut, residual add): reaches the stride-2 Winograd."""
    import torch
    class Down(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1)
            self.c2 = torch.nn.Conv2d(16, 32, 1)
            self.short = torch.nn.Conv2d(16, 32, 1, stride=2, bias=False)

        def forward(self, x):
            return torch.relu(self.c2(torch.relu(self.c1(x))) + self.short(x))
    torch.manual_seed(0)
    b = io.BytesIO()
    torch.onnx.export(Down().eval(), torch.randn(1, 16, 28, 28), b, opset_version=13, **kw)
    return b.getvalue()


def onnx_node_seeds():
    """ONNX's node tests of opsets 7-23, the first of each operator: graphs
    of every shape (several inputs and outputs, integer and boolean types)."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "onnx_node"))
    import node_cases
    for f in os.listdir(os.path.join(C, "onnx")):
        if f.startswith("node_"):
            os.remove(os.path.join(C, "onnx", f))
    seen = set()
    for c in node_cases.cases():
        ops = tuple(sorted({n.op_type for n in c.model.graph.node}))
        if ops not in seen:
            seen.add(ops)
            out("onnx", f"node_{c.name[5:]}.onnx", c.model.SerializeToString())


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--only":
        for kind in sys.argv[2].split(","):
            if kind != "onnx_nodes":
                shutil.rmtree(os.path.join(C, kind), ignore_errors=True)
            {"npy": npy_seeds, "keras": keras_seeds, "oip": oip_seeds, "onnx_nodes": onnx_node_seeds}[kind]()
        return
    import torch
    from PIL import Image
    from export_models import save_hostile, save_safetensors
    shutil.rmtree(C, ignore_errors=True)
    npy_seeds()
    keras_seeds()
    oip_seeds()
    rng = np.random.default_rng(0)
    rgb = Image.fromarray(rng.integers(0, 255, (13, 11, 3), dtype=np.uint8))
    for name, img, kw in [("baseline.jpg", rgb, {}), ("progressive.jpg", rgb, {"progressive": True}),
                          ("gray.jpg", rgb.convert("L"), {}), ("cmyk.jpg", rgb.convert("CMYK"), {}),
                          ("s444.jpg", rgb, {"subsampling": 0}), ("s422.jpg", rgb, {"subsampling": 1})]:
        b = io.BytesIO()
        img.save(b, "JPEG", quality=80, **kw)
        out("decode", name, b.getvalue())
    for name, img in [("rgb.png", rgb), ("gray.png", rgb.convert("L")), ("la.png", rgb.convert("LA")), ("rgba.png", rgb.convert("RGBA")),
                      ("palette.png", rgb.convert("P")), ("i16.png", Image.fromarray((rng.integers(0, 65535, (9, 7))).astype(np.uint16)))]:
        b = io.BytesIO()
        img.save(b, "PNG")
        out("decode", name, b.getvalue())

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.c2 = torch.nn.Conv2d(8, 8, 1)
            self.fc = torch.nn.Linear(16, 4)

        def forward(self, x):
            y = torch.relu(self.bn(self.c1(x)))
            y = torch.nn.functional.max_pool2d(y, 3, 2, ceil_mode=True)
            y = torch.cat([y, torch.clamp(self.c2(y), 0, 6)], 1)
            y = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)
            return torch.softmax(self.fc(y), 1)
    m = Tiny().eval()
    b = io.BytesIO()
    kw = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
    torch.onnx.export(m, torch.randn(1, 3, 8, 8), b, opset_version=13, **kw)
    out("onnx", "tiny.onnx", b.getvalue())
    out("onnx", "downsample.onnx", downsample_block_onnx(kw))
    # Linear layers whose weights (>= 16 KiB) are read after parsing, as [K, N].
    lin = torch.nn.Sequential(torch.nn.Linear(300, 37), torch.nn.ReLU(), torch.nn.Linear(37, 130)).eval()
    b = io.BytesIO()
    torch.onnx.export(lin, torch.randn(1, 300), b, opset_version=13, **kw)
    out("onnx", "linear.onnx", b.getvalue())
    onnx_node_seeds()

    sd = {"w": torch.randn(3, 2), "b": torch.arange(4), "h": torch.randn(2).half()}
    b = io.BytesIO()
    torch.save(sd, b)
    out("checkpoint", "zip.pth", b.getvalue())
    b = io.BytesIO()
    torch.save(sd, b, _use_new_zipfile_serialization=False)
    out("checkpoint", "legacy.pth", b.getvalue())
    save_safetensors({"w": sd["w"], "b": sd["b"]}, os.path.join(C, "checkpoint", "t.safetensors"))
    save_hostile(os.path.join(C, "checkpoint", "hostile.pth"))

    for i, t in enumerate(["torch:nearest", "pil:bicubic", "opencv:area", "tf:bilinear", "torchvision", "keras-caffe", "pil:lanczos"]):
        out("params", f"p{i}", bytes([20 + i, 17, 9 + i, 33, i, i]) + t.encode())


if __name__ == "__main__":
    main()
