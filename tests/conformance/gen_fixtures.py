#!/usr/bin/env python3
"""Generate the conformance fixtures: what Pillow, OpenCV, PyTorch and
TensorFlow themselves compute, for vinfer's tests to compare against.

Run with the peers' virtual environment (scripts/peers sets it up):
    .venv-peers/bin/python tests/conformance/gen_fixtures.py
It rewrites tests/data/fixtures/ (inputs, expected outputs, manifest.json).
The outputs are committed so CI does not need to install the peers.
With VINFER_FIXTURE_DATA=DIR it writes DIR/fixtures instead (DIR/images must
hold the test images): bench/peers/peer_drift.py compares such a set, made
with other peer releases, with the committed one.
"""
import hashlib
import io
import json
import os
import shutil
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("VINFER_FIXTURE_DATA") or os.path.join(HERE, "..", "data")
OUT = os.path.join(DATA, "fixtures")
IMAGES = os.path.join(DATA, "images")

cases = []
versions = {}


def rel(path):
    return os.path.relpath(path, DATA)


def save_png(arr, name):
    path = os.path.join(OUT, name)
    Image.fromarray(arr).save(path, optimize=True)
    return rel(path)


def save_npy(arr, name):
    path = os.path.join(OUT, name)
    np.save(path, np.ascontiguousarray(arr))
    return rel(path)


def sha256(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def expected(arr, name, big=False):
    """u8 -> PNG (or sha256 if big and not gray); f32 -> npy (or sha256 if big)."""
    if big and arr.dtype == np.float32:
        return {"sha256": sha256(arr), "shape": list(arr.shape)}
    if arr.dtype == np.uint8:
        if big and arr.ndim == 3:
            return {"sha256": sha256(arr), "shape": list(arr.shape)}
        return {"png": save_png(arr, name + ".png")}
    return {"npy": save_npy(arr.astype(np.float32), name + ".npy")}


# ----------------------------------------------------------------- inputs
def make_inputs():
    photo = np.array(Image.open(os.path.join(IMAGES, "squirrel_cls.jpg")).convert("RGB"))
    crop = photo[150:233, 200:297]  # 97 x 83, odd sizes on purpose
    rgb = crop.copy()
    gray = np.array(Image.fromarray(rgb).convert("L"))
    yy, xx = np.mgrid[0:83, 0:97]
    alpha = ((xx * 7 + yy * 3) % 256).astype(np.uint8)
    alpha[:10, :10] = 0
    alpha[-10:, -10:] = 255
    rgba = np.dstack([rgb, alpha])
    ins = {"gray": gray, "rgb": rgb, "rgba": rgba}
    paths = {k: save_png(v, f"in_{k}.png") for k, v in ins.items()}
    return ins, paths


# ----------------------------------------------------------------- resize
SIZES = [(41, 29), (150, 131), (200, 40), (32, 83)]  # down, up, mixed, one axis unchanged


def pil_cases(ins, paths):
    filters = {"nearest": Image.NEAREST, "box": Image.BOX, "bilinear": Image.BILINEAR,
               "hamming": Image.HAMMING, "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS}
    for kind in ("gray", "rgb", "rgba"):
        for fname, f in filters.items():
            for (w, h) in SIZES:
                out = np.array(Image.fromarray(ins[kind]).resize((w, h), f))
                cid = f"pil_{fname}_{kind}_{w}x{h}"
                cases.append({"id": cid, "op": "resize", "input": paths[kind], "compat": "pil", "filter": fname,
                              "width": w, "height": h, "dtype": "u8", "tol": 0, **expected(out, cid)})


def cv_cases(ins, paths):
    import cv2
    versions["opencv"] = cv2.__version__
    # OpenCV's own code. opencv-python on x86 hands u8 INTER_CUBIC on 1, 3 and 4
    # channels to Intel IPP, whose rounding differs (docs/compat.md); no other
    # mode here goes to IPP.
    cv2.ipp.setUseIPP(False)
    filters = {"nearest": cv2.INTER_NEAREST, "nearest-exact": cv2.INTER_NEAREST_EXACT, "bilinear": cv2.INTER_LINEAR,
               "bicubic": cv2.INTER_CUBIC, "area": cv2.INTER_AREA}
    sizes = SIZES + [(48, 41)]  # roughly 2x down; the exact 2x case below
    for kind in ("gray", "rgb", "rgba"):
        for fname, f in filters.items():
            for (w, h) in sizes:
                out = cv2.resize(ins[kind], (w, h), interpolation=f)
                cid = f"opencv_{fname}_{kind}_{w}x{h}"
                cases.append({"id": cid, "op": "resize", "input": paths[kind], "compat": "opencv", "filter": fname,
                              "width": w, "height": h, "dtype": "u8", "tol": 0, **expected(out, cid)})
    # 12 x 3 = 36 values a row: OpenCV's vertical bicubic takes the last 4 in
    # fixed point, not in float as the first 32 (one pixel here tells them apart).
    out = cv2.resize(ins["rgb"], (12, 29), interpolation=cv2.INTER_CUBIC)
    cases.append({"id": "opencv_bicubic_rgb_tail_12x29", "op": "resize", "input": paths["rgb"], "compat": "opencv",
                  "filter": "bicubic", "width": 12, "height": 29, "dtype": "u8", "tol": 0,
                  **expected(out, "opencv_bicubic_rgb_tail_12x29")})
    # Inputs under 4 pixels on a side: every tap clamps, rows and columns repeat.
    tiny = ins["rgb"][40:43, 50:55]  # 5 x 3
    p = save_png(tiny, "in_rgb_tiny.png")
    for fname in ("bilinear", "bicubic"):
        for (w, h) in ((7, 5), (2, 9)):
            out = cv2.resize(tiny, (w, h), interpolation=filters[fname])
            cid = f"opencv_{fname}_tiny_{w}x{h}"
            cases.append({"id": cid, "op": "resize", "input": p, "compat": "opencv", "filter": fname,
                          "width": w, "height": h, "dtype": "u8", "tol": 0, **expected(out, cid)})
    # Exact integer factors take OpenCV's fast area path (and LINEAR at 2x becomes AREA).
    even = ins["rgb"][:82, :96]
    p = save_png(even, "in_rgb_even.png")
    for fname, f in filters.items():
        for k in (2, 3):
            out = cv2.resize(even, (96 // k, 82 // k if 82 % k == 0 else 82 // k), interpolation=f)
            if 82 % k:
                continue
            cid = f"opencv_{fname}_even_div{k}"
            cases.append({"id": cid, "op": "resize", "input": p, "compat": "opencv", "filter": fname,
                          "width": 96 // k, "height": 82 // k, "dtype": "u8", "tol": 0,
                          **expected(out, cid)})


def torch_cases(ins, paths):
    import torch
    import torch.nn.functional as F
    versions["torch"] = torch.__version__
    modes = [("nearest", {}, "nearest", False, False), ("nearest-exact", {}, "nearest-exact", False, False),
             ("bilinear", {"align_corners": False}, "bilinear", False, False),
             ("bilinear", {"align_corners": True}, "bilinear", True, False),
             ("bilinear", {"align_corners": False, "antialias": True}, "bilinear", False, True),
             ("bicubic", {"align_corners": False}, "bicubic", False, False),
             ("bicubic", {"align_corners": True}, "bicubic", True, False),
             ("bicubic", {"align_corners": False, "antialias": True}, "bicubic", False, True),
             ("area", {}, "area", False, False)]
    def add(x, kind, dtype, prefix, tol, sizes, modes_used, scale_modes):
        def hwc(y):
            y = y[0].permute(1, 2, 0).numpy()
            return y[:, :, 0] if kind == "gray" else y
        for mode, kw, fname, ac, aa in modes_used:
            for (w, h) in sizes:
                y = hwc(F.interpolate(x, size=(h, w), mode=mode, **kw))
                cid = f"{prefix}_{fname}{'_ac' if ac else ''}{'_aa' if aa else ''}_{kind}_{w}x{h}"
                cases.append({"id": cid, "op": "resize", "input": paths[kind], "compat": "torch", "filter": fname,
                              "align_corners": ac, "antialias": aa, "width": w, "height": h, "dtype": dtype,
                              "tol": tol, **expected(y, cid)})
        # scale_factor instead of size: PyTorch maps with 1/scale, not in/out.
        for mode, aa in scale_modes:
            y = hwc(F.interpolate(x, scale_factor=1 / 3, mode=mode, **({"antialias": True} if aa else {})))
            cid = f"{prefix}_{mode}{'_aa' if aa else ''}_scale3_{kind}"
            cases.append({"id": cid, "op": "resize", "input": paths[kind], "compat": "torch", "filter": mode,
                          **({"antialias": True} if aa else {}), "scale": 1 / 3, "width": y.shape[1],
                          "height": y.shape[0], "dtype": dtype, "tol": tol, **expected(y, cid)})

    def tensor(kind, dtype):
        a = ins[kind].astype(dtype)
        return torch.from_numpy(a if a.ndim == 3 else a[:, :, None]).permute(2, 0, 1)[None].contiguous()

    for kind in ("gray", "rgb"):
        add(tensor(kind, np.float32), kind, "f32", "torch", 1e-4, SIZES if kind == "gray" else SIZES[:1], modes,
            (("nearest", False), ("bilinear", False)))
    # uint8 tensors: PyTorch's own integer kernel (int16 weights, u8 between passes).
    for kind in ("gray", "rgb", "rgba"):
        add(tensor(kind, np.uint8), kind, "u8", "torch_u8", 0, SIZES if kind == "gray" else SIZES[:2],
            [m for m in modes if m[2] in ("bilinear", "bicubic")], (("bilinear", True),))


def tf_cases(ins, paths):
    import tensorflow as tf
    versions["tensorflow"] = tf.__version__
    modes = [("nearest", "nearest", False), ("bilinear", "bilinear", False), ("bicubic", "bicubic", False),
             ("area", "area", False), ("lanczos3", "lanczos", False), ("bilinear", "bilinear", True),
             ("bicubic", "bicubic", True), ("lanczos3", "lanczos", True)]
    for kind in ("gray", "rgb"):
        a = ins[kind].astype(np.float32)
        x = a if a.ndim == 3 else a[:, :, None]
        for method, fname, aa in modes:
            for (w, h) in (SIZES if kind == "gray" else SIZES[:1]):
                y = tf.image.resize(x, [h, w], method=method, antialias=aa).numpy().astype(np.float32)
                if kind == "gray":
                    y = y[:, :, 0]
                cid = f"tf_{fname}{'_aa' if aa else ''}_{kind}_{w}x{h}"
                cases.append({"id": cid, "op": "resize", "input": paths[kind], "compat": "tf", "filter": fname,
                              "antialias": aa, "width": w, "height": h, "dtype": "f32", "tol": 1e-4,
                              **expected(y, cid)})


# ----------------------------------------------------------------- the resize benchmark on the real photo
def seed_cases():
    import cv2
    import torch
    import torch.nn.functional as F
    path = os.path.join(IMAGES, "retina.jpg")
    img = Image.open(path)
    g = np.array(img.convert("L"))
    h, w = g.shape
    k = 3
    oh, ow = int(h / k), int(w / k)
    x = torch.from_numpy(g).unsqueeze(0).unsqueeze(0).float()
    y = F.interpolate(x, size=(oh, ow))[0, 0].numpy()
    assert np.all(y == np.round(y))
    src = rel(path)
    common = {"op": "resize", "input": src, "gray": "pil", "width": ow, "height": oh}
    cases.append({"id": "seed002_torch_nearest", "compat": "torch", "filter": "nearest", "dtype": "f32", "tol": 0,
                  **common, **expected(y.astype(np.uint8), "seed002_torch_nearest")})
    for fname, f in (("nearest", cv2.INTER_NEAREST), ("bilinear", cv2.INTER_LINEAR), ("area", cv2.INTER_AREA)):
        out = cv2.resize(g, (ow, oh), interpolation=f)
        cid = f"seed002_opencv_{fname}"
        cases.append({"id": cid, "compat": "opencv", "filter": fname, "dtype": "u8", "tol": 0, **common,
                      **expected(out, cid)})
    out = np.array(Image.fromarray(g).resize((ow, oh), Image.BILINEAR))
    cases.append({"id": "seed002_pil_bilinear", "compat": "pil", "filter": "bilinear", "dtype": "u8", "tol": 0,
                  **common, **expected(out, "seed002_pil_bilinear")})
    rgb = np.array(img.convert("RGB"))
    out = np.array(Image.fromarray(rgb).resize((224, 224), Image.BILINEAR))
    cases.append({"id": "retina_pil_bilinear_rgb_224", "op": "resize", "input": src, "compat": "pil",
                  "filter": "bilinear", "width": 224, "height": 224, "dtype": "u8", "tol": 0,
                  **expected(out, "retina_pil_bilinear_rgb_224")})


# ----------------------------------------------------------------- decode
def decode_cases():
    photo = Image.open(os.path.join(IMAGES, "squirrel_cls.jpg")).convert("RGB").crop((100, 80, 260, 200))
    variants = {
        "jpeg_444.jpg": lambda b: photo.save(b, "JPEG", quality=90, subsampling=0),
        "jpeg_422.jpg": lambda b: photo.save(b, "JPEG", quality=90, subsampling=1),
        "jpeg_420.jpg": lambda b: photo.save(b, "JPEG", quality=90, subsampling=2),
        "jpeg_progressive.jpg": lambda b: photo.save(b, "JPEG", quality=85, progressive=True),
        "jpeg_gray.jpg": lambda b: photo.convert("L").save(b, "JPEG", quality=90),
        "jpeg_cmyk.jpg": lambda b: photo.convert("CMYK").save(b, "JPEG", quality=90),
        "png_rgb8.png": lambda b: photo.save(b, "PNG"),
        "png_rgba8.png": lambda b: photo.convert("RGBA").save(b, "PNG"),
        "png_gray8.png": lambda b: photo.convert("L").save(b, "PNG"),
        "png_la8.png": lambda b: photo.convert("LA").save(b, "PNG"),
        "png_palette.png": lambda b: photo.convert("P", palette=Image.ADAPTIVE, colors=200).save(b, "PNG"),
        "png_palette4.png": lambda b: photo.convert("P", palette=Image.ADAPTIVE, colors=16).save(b, "PNG", bits=4),
        "png_gray1.png": lambda b: photo.convert("1").save(b, "PNG"),
    }
    for name, fn in variants.items():
        with open(os.path.join(OUT, name), "wb") as f:
            fn(f)
    # 16-bit PNGs through OpenCV (Pillow cannot write 16-bit RGB).
    import cv2
    a16 = np.array(photo).astype(np.uint16) * 257 + np.arange(160, dtype=np.uint16)[None, :, None]
    cv2.imwrite(os.path.join(OUT, "png_rgb16.png"), a16[:, :, ::-1])
    g16 = (np.array(photo.convert("L")).astype(np.uint16) * 3)
    cv2.imwrite(os.path.join(OUT, "png_gray16.png"), g16)
    # A palette PNG with transparency, and an EXIF-rotated JPEG.
    pal = photo.convert("P", palette=Image.ADAPTIVE, colors=64)
    pal.info["transparency"] = bytes([i * 4 for i in range(64)])
    pal.save(os.path.join(OUT, "png_palette_trns.png"), transparency=bytes([i * 4 for i in range(64)]))
    exif = Image.Exif()
    exif[0x0112] = 6
    photo.save(os.path.join(OUT, "jpeg_exif6.jpg"), "JPEG", quality=90, exif=exif)

    for name in sorted(os.listdir(OUT)):
        if not (name.startswith("jpeg_") or name.startswith("png_")):
            continue
        path = os.path.join(OUT, name)
        for mode, fmt in (("RGB", "rgb"), ("RGBA", "rgba"), ("L", "gray")):
            out = np.array(Image.open(path).convert(mode))
            cid = f"decode_{name.split('.')[0]}_{fmt}"
            cases.append({"id": cid, "op": "decode", "input": rel(path), "format": fmt, "tol": 0,
                          **expected(out, cid)})
    # EXIF orientation applied, as ImageOps.exif_transpose does.
    from PIL import ImageOps
    path = os.path.join(OUT, "jpeg_exif6.jpg")
    out = np.array(ImageOps.exif_transpose(Image.open(path)).convert("RGB"))
    cases.append({"id": "decode_exif6_applied", "op": "decode", "input": rel(path), "format": "rgb",
                  "exif": True, "tol": 0, **expected(out, "decode_exif6_applied")})
    # Pillow's draft(): DCT-domain downscaling, what vinfer's fast decode reproduces.
    path = os.path.join(IMAGES, "retina.jpg")
    for target in (700, 352, 176):
        im = Image.open(path)
        im.draft("RGB", (target, target))
        out = np.array(im.convert("RGB"))
        cid = f"decode_retina_draft{target}"
        cases.append({"id": cid, "op": "decode", "input": rel(path), "format": "rgb", "target": target, "tol": 0,
                      **expected(out, cid, big=True)})
    out = np.array(Image.open(path).convert("RGB"))
    cases.append({"id": "decode_retina_rgb", "op": "decode", "input": rel(path), "format": "rgb", "tol": 0,
                  **expected(out, "decode_retina_rgb", big=True)})


# ----------------------------------------------------------------- gray rules
def gray_cases(tf=None):
    import cv2
    rgb = np.array(Image.open(os.path.join(IMAGES, "squirrel_cls.jpg")).convert("RGB"))
    path = rel(os.path.join(IMAGES, "squirrel_cls.jpg"))
    outs = {
        "pil": np.array(Image.fromarray(rgb).convert("L")),
        "opencv": cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY),
    }
    if tf is not None:
        outs = {"tf": tf.image.rgb_to_grayscale(rgb).numpy()[:, :, 0]}
    for rule, out in outs.items():
        cid = f"gray_{rule}"
        cases.append({"id": cid, "op": "gray", "input": path, "rule": rule, "tol": 0, **expected(out, cid)})


# ----------------------------------------------------------------- presets
PRESET_INPUTS = [("squirrel_cls.jpg", 224), ("squirrel_cls.jpg", 64), ("chelsea.png", 64)]


def torchvision_preset_cases():
    import torchvision
    import torchvision.transforms as T
    versions["torchvision"] = torchvision.__version__
    for img_name, size in PRESET_INPUTS:
        path = os.path.join(IMAGES, img_name)
        stem = img_name.split(".")[0]
        if True:
            tv = T.Compose([T.Resize([size, size]), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
            x = tv(Image.open(path).convert("RGB")).unsqueeze(0).numpy()
            cid = f"preset_torchvision_{stem}_{size}"
            cases.append({"id": cid, "op": "preset", "input": rel(path), "preset": "torchvision", "size": size,
                          "tol": 0, **expected(x, cid, big=size > 100)})
            crop = T.Compose([T.Resize(size * 256 // 224), T.CenterCrop(size), T.ToTensor(),
                              T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
            x = crop(Image.open(path).convert("RGB")).unsqueeze(0).numpy()
            cid = f"preset_torchvision-crop_{stem}_{size}"
            cases.append({"id": cid, "op": "preset", "input": rel(path), "preset": "torchvision-crop", "size": size,
                          "tol": 0, **expected(x, cid, big=size > 100)})


def keras_preset_cases():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras
    versions["keras"] = keras.__version__
    from keras.applications import imagenet_utils
    for img_name, size in PRESET_INPUTS:
        path = os.path.join(IMAGES, img_name)
        stem = img_name.split(".")[0]
        if True:
            for mode in ("caffe", "torch", "tf"):
                img = keras.utils.load_img(path, target_size=(size, size))
                arr = keras.utils.img_to_array(img)
                arr = np.expand_dims(arr, 0)
                arr = imagenet_utils.preprocess_input(arr, mode=mode)
                cid = f"preset_keras-{mode}_{stem}_{size}"
                cases.append({"id": cid, "op": "preset", "input": rel(path), "preset": f"keras-{mode}", "size": size,
                              "tol": 0, **expected(arr.astype(np.float32), cid, big=size > 100)})


# TensorFlow and PyTorch cannot share a process here (their bundled LLVMs
# clash), so the fixtures are made in two processes, one manifest each.
def part_torch():
    import PIL
    versions["pillow"] = PIL.__version__
    versions["numpy"] = np.__version__
    ins, paths = make_inputs()
    pil_cases(ins, paths)
    cv_cases(ins, paths)
    torch_cases(ins, paths)
    seed_cases()
    decode_cases()
    gray_cases()
    torchvision_preset_cases()


def part_tf():
    import tensorflow as tf
    ins = {"gray": np.array(Image.open(os.path.join(OUT, "in_gray.png"))),
           "rgb": np.array(Image.open(os.path.join(OUT, "in_rgb.png")))}
    paths = {k: rel(os.path.join(OUT, f"in_{k}.png")) for k in ins}
    tf_cases(ins, paths)
    gray_cases(tf)
    keras_preset_cases()


def main():
    if len(sys.argv) > 1:
        {"torch": part_torch, "tf": part_tf}[sys.argv[1]]()
        with open(os.path.join(OUT, f"manifest_{sys.argv[1]}.json"), "w") as f:
            json.dump({"generated_by": "tests/conformance/gen_fixtures.py", "versions": versions, "cases": cases},
                      f, indent=1)
        print(f"{sys.argv[1]}: {len(cases)} cases", file=sys.stderr)
        return
    import subprocess
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for part in ("torch", "tf"):
        subprocess.run([sys.executable, os.path.abspath(__file__), part], check=True)


if __name__ == "__main__":
    main()
