#!/usr/bin/env python3
"""Exports torchvision networks with random weights to ONNX, with PyTorch's own
output on a fixed input, for vinfer's parity tests.

    python3 tests/models/export_models.py OUT_DIR densenet121 resnet18 ...
    python3 tests/models/export_models.py OUT_DIR zoo     # every torchvision classifier

For each NAME it writes OUT_DIR/NAME.onnx, NAME.input.npy (1x3x224x224; 299 for inception_v3) and
NAME.torch.npy (PyTorch's logits); for vinfer's built-in names also the
state_dict as torch.save writes it (NAME.pth), and for densenet121 and resnet18
the legacy (pre-1.6) format with DenseNet's legacy key names
(NAME.legacy.pth) and a .safetensors file. OUT_DIR/hostile.pth is a
torch.save-style archive whose pickle calls os.system: vinfer must refuse it. The weights are torchvision's random
initialisation (weights it initializes to zero, as ViT's head, random instead), and every BatchNorm gets random running statistics and affine
parameters, so that folding them is really tested. Labels from these models are
meaningless; they exist to compare numbers. Works with Debian's python3-torch
1.13 (CI) and PyPI's torch 2.x (scripts/peers). VINFER_OPSET sets the opset
(13 by default); VINFER_EXPORTER=dynamo uses torch 2.x's default exporter
(it needs onnxscript, pinned in bench/peers/requirements.txt).
"""
import os
import sys
import time

import numpy as np
import torch
import torchvision

ALL = ["densenet121", "densenet161", "densenet169", "densenet201", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn",
       "vgg16_bn", "vgg19_bn", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "mobilenet_v2", "squeezenet1_1",
       "efficientnet_b0"]
# "zoo": every classifier torchvision lists (list_models, torchvision >= 0.14).
CI = ["densenet121", "resnet18", "mobilenet_v2", "squeezenet1_1", "regnet_y_400mf", "mobilenet_v3_small", "shufflenet_v2_x1_0",
      "convnext_tiny", "vit_b_32"]
# Built into vinfer (src/zoo/torchvision.cpp): these get .pth files.
ZOO = {"densenet121", "densenet161", "densenet169", "densenet201", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn",
       "vgg16_bn", "vgg19_bn", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152"}


def save_safetensors(state, path):
    """The safetensors format by hand (JSON header + raw little-endian data), no extra package."""
    import json
    import struct
    header, blobs, off = {}, [], 0
    for k, v in state.items():
        a = v.detach().cpu().contiguous().numpy()
        dt = {"float32": "F32", "int64": "I64"}[str(a.dtype)]
        b = a.tobytes()
        header[k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def legacy_densenet_names(state):
    import re
    pat = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))((?:[12])\.(?:weight|bias|running_mean|running_var))$")
    return {pat.sub(lambda m: m.group(1) + "." + m.group(2), k): v for k, v in state.items()}


def save_hostile(path):
    import pickle
    import zipfile

    class Hostile:
        def __reduce__(self):
            return (os.system, ("echo vinfer-ran-checkpoint-code > /tmp/vinfer_pwned",))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle.dumps({"x": Hostile()}, protocol=2))
        z.writestr("archive/version", "3\n")


def randomize_batchnorm(model, gen):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def export(name, out_dir, opset):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = getattr(torchvision.models, name)()
    with torch.no_grad():
        randomize_batchnorm(model, gen)
        # Weights torchvision initializes to zero (ViT's head): random, or every logit is 0.
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
    model.eval()
    size = 299 if name == "inception_v3" else 224
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, name + ".onnx")
    # A dynamic batch, as exported for serving: the tests run it at batch 1 and N.
    kwargs = dict(opset_version=opset, input_names=["input"], output_names=["logits"], do_constant_folding=True,
                  dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    example = x
    if os.environ.get("VINFER_EXPORTER") == "dynamo":
        # torch 2.x's default exporter (opset 18+, IR 10); its own opset unless VINFER_OPSET says.
        # Traced at batch 2: torch.export fixes a dimension whose example size is 1.
        kwargs = dict(input_names=["input"], output_names=["logits"], dynamo=True,
                      dynamic_shapes=({0: torch.export.Dim("batch", max=4096)},))
        example = torch.cat([x, x])
        if "VINFER_OPSET" in os.environ:
            kwargs["opset_version"] = opset
    elif int(torch.__version__.split(".")[0]) >= 2:
        kwargs["dynamo"] = False  # the TorchScript exporter: opsets 11-17
    torch.onnx.export(model, example, path, **kwargs)
    np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out_dir, name + ".torch.npy"), y.numpy().astype(np.float32))
    if name in ZOO:
        state = model.state_dict()
        torch.save(state, os.path.join(out_dir, name + ".pth"))
        if name in ("densenet121", "resnet18"):
            torch.save(legacy_densenet_names(state), os.path.join(out_dir, name + ".legacy.pth"), _use_new_zipfile_serialization=False)
            save_safetensors(state, os.path.join(out_dir, name + ".safetensors"))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:] or CI
    if names == ["all"]:
        names = ALL
    known = ALL
    if hasattr(torchvision.models, "list_models"):
        zoo = sorted(torchvision.models.list_models(module=torchvision.models))
        known = ALL + [n for n in zoo if n not in ALL]
        if names == ["zoo"]:
            names = zoo
    opset = int(os.environ.get("VINFER_OPSET", "13"))
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    save_hostile(os.path.join(out_dir, "hostile.pth"))
    for name in names:
        if name not in known:
            sys.exit(f"unknown model {name}; known: {' '.join(known)}")
        want = [name + ".torch.npy", name + ".onnx"] + ([name + ".pth"] if name in ZOO else [])
        if all(os.path.exists(os.path.join(out_dir, w)) for w in want):
            continue
        t = time.time()
        export(name, out_dir, opset)
        print(f"{name}: exported in {time.time() - t:.1f} s (torch {torch.__version__}, opset {opset})")


if __name__ == "__main__":
    main()
