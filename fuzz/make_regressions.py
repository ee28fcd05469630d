#!/usr/bin/env python3
"""Writes the regression inputs under fuzz/regressions/<target>/: hostile
files that once escaped a parser as something other than vinfer::Error (an
uncaught std:: exception, a signed overflow). Every build replays them
(fuzz/CMakeLists.txt); each must end in a one-line vinfer error. Needs h5py
and onnx:

    python fuzz/make_regressions.py
"""
import io
import json
import os
import pickle
import struct
import sys
import types
import zipfile


HERE = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(HERE, "regressions")


def out(kind, name, data):
    os.makedirs(os.path.join(R, kind), exist_ok=True)
    with open(os.path.join(R, kind, name), "wb") as f:
        f.write(data)


_replaced = []


def fake_global(module, name):
    """An object that pickles as GLOBAL module.name without importing torch
    (restore_globals() puts back what it replaced, e.g. collections.OrderedDict)."""
    mod = sys.modules.setdefault(module, types.ModuleType(module))
    fn = types.FunctionType((lambda: None).__code__, {}, name)
    fn.__module__, fn.__qualname__ = module, name
    _replaced.append((mod, name, getattr(mod, name, None)))
    setattr(mod, name, fn)
    return fn


def restore_globals():
    while _replaced:
        mod, name, old = _replaced.pop()
        if old is None:
            delattr(mod, name)
        else:
            setattr(mod, name, old)


class Call:
    """Pickles as REDUCE of fn(*args)."""
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class Storage:
    def __init__(self, pid):
        self.pid = pid


def dumps(obj):
    b = io.BytesIO()
    p = pickle.Pickler(b, protocol=2)
    p.persistent_id = lambda o: o.pid if isinstance(o, Storage) else None
    p.dump(obj)
    return b.getvalue()


def torch_zip(root, storages):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", dumps(root))
        z.writestr("archive/byteorder", "little")
        for key, data in storages.items():
            z.writestr(f"archive/data/{key}", data)
    return b.getvalue()


def safetensors(header, data=b""):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def checkpoint_cases():
    rebuild = fake_global("torch._utils", "_rebuild_tensor_v2")
    float_storage = fake_global("torch", "FloatStorage")
    od = fake_global("collections", "OrderedDict")

    def tensor(storage_type, offset, size, stride, key="0", numel=4):
        return Call(rebuild, Storage(("storage", storage_type, key, "cpu", numel)), offset, size, stride, False, Call(od))

    # A persistent id whose type is an allowlisted global that is not a storage.
    out("checkpoint", "storage_type_not_storage.pth",
        torch_zip({"w": tensor(rebuild, 0, (2, 2), (2, 1))}, {"0": bytes(16)}))
    # Strides whose reach overflows int64.
    out("checkpoint", "stride_overflow.pth",
        torch_zip({"w": tensor(float_storage, 0, (3, 2), (2 ** 62, 1))}, {"0": bytes(16)}))
    out("checkpoint", "offset_overflow.pth",
        torch_zip({"w": tensor(float_storage, 2 ** 63 - 2, (2,), (2 ** 62,))}, {"0": bytes(16)}))
    # safetensors: an element count that overflows int64; negative dimensions.
    out("checkpoint", "count_overflow.safetensors",
        safetensors({"w": {"dtype": "F32", "shape": [2 ** 32, 2 ** 32, 2 ** 32], "data_offsets": [0, 0]}}))
    out("checkpoint", "negative_dims.safetensors",
        safetensors({"w": {"dtype": "F32", "shape": [-1, -4], "data_offsets": [0, 16]}}, bytes(16)))
    # A dimension too large for any integer type: JSON parsers read it as a
    # float, and converting that to an integer is undefined (a fuzz finding).
    out("checkpoint", "shape_not_an_integer.safetensors",
        safetensors({"w": {"dtype": "F32", "shape": [2 ** 32, 2 ** 32, 42949672964294967296, 429496729, 0]}}))


def onnx_cases():
    from onnx import TensorProto, helper

    def model(nodes, inits, inputs, outputs):
        g = helper.make_graph(nodes, "g", inputs, outputs, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7  # what Debian's libonnx checker reads
        return m.SerializeToString()

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    for name, offset in [("external_offset_not_a_number.onnx", "abc"),
                         ("external_offset_out_of_range.onnx", "99999999999999999999")]:
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1, 4])
        w.data_location = TensorProto.EXTERNAL
        for k, v in [("location", "w.bin"), ("offset", offset), ("length", "16")]:
            e = w.external_data.add()
            e.key, e.value = k, v
        out("onnx", name, model([helper.make_node("Add", ["x", "w"], ["y"])], [w], [x], [y]))
    # Slice with fewer ends than starts.
    starts = helper.make_tensor("starts", TensorProto.INT64, [2], [0, 0])
    ends = helper.make_tensor("ends", TensorProto.INT64, [1], [1])
    out("onnx", "slice_ends_shorter.onnx",
        model([helper.make_node("Slice", ["x", "starts", "ends"], ["y"])], [starts, ends], [x], [y]))


def npy_cases():
    # A shape whose product overflows 64 bits, each dimension under the file size check.
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999, 99999, 99999, 99999, 99999), }"
    h = h + " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    out("npy", "shape_overflow.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + bytes(64))


def keras_cases():
    import h5py
    b = io.BytesIO()
    with h5py.File(b, "w") as f:
        f.attrs["layer_names"] = [b"fc"]
        g = f.create_group("fc")
        g.attrs["weight_names"] = [b"fc/kernel:0"]
        g.create_dataset("fc/kernel:0", shape=(2 ** 40, 2 ** 40), dtype="f4", chunks=(1, 1))
    out("keras", "huge_dataset.h5", b.getvalue())


if __name__ == "__main__":
    try:
        checkpoint_cases()
    finally:
        restore_globals()
    onnx_cases()
    npy_cases()
    keras_cases()
