"""The image functions against what the frameworks themselves computed: every
case of the committed conformance fixtures (Pillow 13, OpenCV 5, PyTorch 2.15,
TensorFlow 2.21; tests/conformance/gen_fixtures.py), replayed through the
Python API, plus live comparisons with the Pillow and torchvision installed."""
import hashlib
import json
import os

import numpy as np
import pytest
from PIL import Image

import vinfer
from conftest import DATA, data


def cases():
    out = []
    for name in sorted(os.listdir(os.path.join(DATA, "fixtures"))):
        if name.startswith("manifest_"):
            out += json.load(open(os.path.join(DATA, "fixtures", name)))["cases"]
    return out


CASES = cases()
MODES = {"rgb": "RGB", "gray": "L", "rgba": "RGBA"}


def native(path):
    """An image as its file has it (gray stays HxW), as Pillow reads PNGs."""
    return vinfer.decode(path)


def run(c):
    src = data(c["input"])
    if c["op"] == "decode":
        return vinfer.decode(src, MODES[c["format"]], exif=c.get("exif", False),
                             draft=(c["target"], c["target"]) if "target" in c else None)
    if c["op"] == "gray":
        return vinfer.decode(src, "L", gray=c["rule"])
    if c["op"] == "preset":
        return vinfer.preprocess(src, c["preset"], size=c["size"])
    img = vinfer.decode(src, "L", gray=c["gray"]) if "gray" in c else native(src)
    return vinfer.resize(img, (c["width"], c["height"]), c["compat"], c["filter"], antialias=c.get("antialias", False),
                         align_corners=c.get("align_corners", False), dtype="float32" if c["dtype"] == "f32" else None,
                         scale=c.get("scale"))


def test_fixtures_present():
    assert len(CASES) > 350


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_matches_framework(case):
    got = run(case)
    if "sha256" in case:
        assert list(got.shape)[-len(case["shape"]):] == case["shape"][-got.ndim:]
        assert hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest() == case["sha256"]
        return
    want = np.array(Image.open(data(case["png"]))) if "png" in case else np.load(data(case["npy"]))
    assert got.shape == want.shape
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert diff.max(initial=0) <= case.get("tol", 0), f"{np.count_nonzero(diff > case.get('tol', 0))} values differ"


def test_decode_keeps_the_files_kind_and_takes_bytes():
    rgb = vinfer.decode(data("images/squirrel_cls.jpg"))
    assert rgb.shape == (426, 535, 3) and rgb.dtype == np.uint8 and rgb.flags["C_CONTIGUOUS"]
    assert vinfer.decode(data("fixtures/in_gray.png")).shape == (83, 97)
    assert vinfer.decode(data("fixtures/in_rgba.png")).shape == (83, 97, 4)
    blob = open(data("images/squirrel_cls.jpg"), "rb").read()
    for src in (blob, bytearray(blob), memoryview(blob)):
        np.testing.assert_array_equal(vinfer.decode(src), rgb)


def test_decode_equals_installed_pillow():
    """Decoding needs no fixture: the installed Pillow's convert() pixels, bit for bit."""
    for f in ("images/squirrel_cls.jpg", "images/retina.jpg", "images/chelsea.png"):
        for mode in ("RGB", "L"):
            np.testing.assert_array_equal(vinfer.decode(data(f), mode), np.array(Image.open(data(f)).convert(mode)))


def test_preprocess_equals_installed_torchvision():
    """The torchvision preset against the torchvision installed here, on the
    bundled photos (the fixtures pin torchvision 0.29; this is whatever
    version is installed)."""
    torch = pytest.importorskip("torch")
    T = pytest.importorskip("torchvision.transforms")
    tf = T.Compose([T.Resize([224, 224]), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    for f in ("images/squirrel_cls.jpg", "images/chelsea.png", "images/retina.jpg"):
        want = tf(Image.open(data(f)).convert("RGB")).unsqueeze(0).numpy()
        got = vinfer.preprocess(data(f))
        assert got.shape == want.shape == (1, 3, 224, 224)
        assert np.abs(got - want).max() <= 1e-5, f
    # An array in: the same tensor as the file.
    np.testing.assert_array_equal(vinfer.preprocess(vinfer.decode(data("images/chelsea.png"), "RGB")),
                                  vinfer.preprocess(data("images/chelsea.png")))
    del torch


def test_keras_presets_are_nhwc():
    x = vinfer.preprocess(data("images/squirrel_cls.jpg"), "keras-caffe")
    assert x.shape == (1, 224, 224, 3) and x.dtype == np.float32


def test_resize_float_and_default_filters():
    img = vinfer.decode(data("fixtures/in_rgb.png"))
    out = vinfer.resize(img, (40, 30), "torch", "bilinear", dtype="float32")
    assert out.dtype == np.float32 and out.shape == (30, 40, 3)
    np.testing.assert_array_equal(vinfer.resize(img, (40, 30), "pil"), vinfer.resize(img, (40, 30), "pil", "bicubic"))
    f = vinfer.resize(img.astype(np.float32), (40, 30), "tf", "bilinear")
    assert f.dtype == np.float32


@pytest.mark.parametrize("call, exc, words", [
    (lambda: vinfer.decode(data("bad/missing.jpg")), vinfer.FileError, "cannot open"),
    (lambda: vinfer.decode(data("bad/truncated.jpg")), vinfer.BadInputError, "truncated.jpg"),
    (lambda: vinfer.decode(data("bad/text.jpg")), vinfer.Error, "text.jpg"),
    (lambda: vinfer.decode(b"\x89PNG\r\n\x1a\n broken"), vinfer.BadInputError, "<bytes>"),
    (lambda: vinfer.decode(data("bad/huge_dims.png")), vinfer.Error, "huge_dims.png"),
    (lambda: vinfer.decode(data("images/retina.jpg"), max_pixels=1000), vinfer.LimitExceededError, "exceeds the limit"),
    (lambda: vinfer.decode(data("images/retina.jpg"), "CMYK"), ValueError, "mode 'CMYK'"),
    (lambda: vinfer.decode(12), TypeError, "file name"),
    (lambda: vinfer.resize(np.zeros((4, 4, 3), np.uint8), (0, 4)), ValueError, "size"),
    (lambda: vinfer.resize(np.zeros((4, 4, 3), np.float64), (2, 2)), TypeError, "float64"),
    (lambda: vinfer.resize(np.zeros((4, 4, 2), np.uint8), (2, 2)), ValueError, "channels"),
    (lambda: vinfer.resize(np.zeros((4, 4), np.uint8), (2, 2), "pil", "area"), ValueError, "area"),
    (lambda: vinfer.resize(np.zeros((4, 4), np.uint8), (2, 2), "nope"), ValueError, "nope"),
    (lambda: vinfer.preprocess(data("images/chelsea.png"), "nope"), ValueError, "nope"),
    (lambda: vinfer.preprocess(np.zeros((8, 8), np.uint8)), ValueError, "HxWx3"),
])
def test_bad_input_raises_one_line(call, exc, words):
    with pytest.raises(exc) as e:
        call()
    assert words in str(e.value) and "\n" not in str(e.value)
