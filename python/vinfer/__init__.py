"""vinfer: image to classification, fast, with each framework's preprocessing exactly.

    import vinfer
    x = vinfer.preprocess("photo.jpg")                 # = torchvision's Resize([224,224]) -> ToTensor -> Normalize
    model = vinfer.Model("densenet121")                 # a built-in network, or an ONNX file
    print(model.classify("photo.jpg", topk=3))

Images are NumPy arrays, height x width x channels, uint8 (or float32 where
said). Errors are `vinfer.Error` subclasses with one-line messages; wrong
argument types raise TypeError, bad values `InvalidArgumentError` (a
ValueError). The GIL is released while vinfer decodes, resizes and infers.
"""
import os as _os

from ._errors import (BadInputError, Error, FileError, InternalError, InvalidArgumentError,  # noqa: F401
                      LimitExceededError, UnsupportedError)
from . import _vinfer
from .session import NodeArg, Session  # noqa: F401

__version__ = _vinfer.version()

__all__ = ["Model", "Session", "NodeArg", "decode", "resize", "preprocess", "presets", "models", "labels", "cpu_has_bf16", "Error",
           "InvalidArgumentError", "BadInputError", "UnsupportedError", "LimitExceededError", "FileError", "InternalError"]


def decode(src, mode=None, *, exif=False, max_pixels=89_478_485, gray="pil", draft=None):
    """Decode a JPEG or PNG file (a path or its bytes) to a uint8 array.

    mode=None keeps the file's kind: HxW for gray, HxWx3 for RGB, HxWx4 for
    images with alpha; "L", "RGB" or "RGBA" convert as Pillow's
    `Image.open(p).convert(mode)` does (the same pixels, bit for bit).
    exif=True applies the EXIF orientation (Pillow and torchvision do not).
    Images with more than max_pixels pixels are refused before decoding
    (Pillow's decompression-bomb limit by default). gray: how colour becomes
    gray for mode "L": "pil" (convert("L")), "tf" (tf.image.rgb_to_grayscale)
    or "opencv" (cv2.cvtColor). draft=(width, height) lets a JPEG shrink by
    1/2..1/8 in the DCT domain as Pillow's Image.draft() does (fast, inexact).
    """
    return _vinfer.decode(src, mode or "", exif, max_pixels, gray, draft)


def resize(image, size, compat="pil", filter=None, *, antialias=False, align_corners=False, dtype=None, threads=1,
           scale=None):
    """Resize an HxW or HxWxC image (uint8 or float32) to size=(width, height)
    with a framework's exact rule: compat "pil" (Image.resize), "opencv"
    (cv2.resize), "torch" (F.interpolate) or "tf" (tf.image.resize).

    filter: nearest, nearest-exact, bilinear, bicubic, area, box, hamming,
    lanczos; None takes the framework's default (pil bicubic, opencv
    bilinear, torch nearest, tf bilinear). antialias and align_corners as in
    torch/tf. dtype="float32" on a uint8 image returns the framework's float
    result (PyTorch and TensorFlow resize in float). scale: torch only,
    F.interpolate's scale_factor (it changes the coordinate mapping). The
    same as `vinfer resize` on the command line.
    """
    return _vinfer.resize(image, size, compat, filter, antialias, align_corners, dtype or "", threads, scale)


def preprocess(src, preset="torchvision", *, size=224, fast=False, threads=0):
    """The float32 tensor a framework's preprocessing makes of an image: a
    path, the file's bytes, or an HxWx3 uint8 RGB array.

    preset "torchvision": PIL open -> Resize([S,S]) -> ToTensor -> Normalize,
    1x3xSxS; "torchvision-crop": Resize(S*256/224) -> CenterCrop(S); Keras's
    "keras-caffe", "keras-torch", "keras-tf": 1xSxSx3. Identical to the
    framework's own result (docs/compat.md). fast=True lets the JPEG decoder
    shrink in the DCT domain first (faster, not identical). threads: for the
    decode and resize of one image (0: one per CPU this process may use; the same result).
    """
    return _vinfer.preprocess(src, preset, size, fast, threads)


def presets():
    """The preprocessing presets' names."""
    return _vinfer.presets()


def models():
    """The built-in networks' names (torchvision's, and Keras's as keras:NAME)."""
    return _vinfer.models()


def labels():
    """The 1000 ImageNet class names, by index (the labels classify() prints)."""
    return _vinfer.labels()


def cpu_has_bf16():
    """Whether this CPU runs Model(..., precision="bf16") (bfloat16 dot products: AVX512_BF16 or AMX)."""
    return _vinfer.cpu_has_bf16()


def cpu_has_int8():
    """Whether this CPU runs Model(..., precision="int8") (int8 dot products: AVX512_VNNI)."""
    return _vinfer.cpu_has_int8()


def _default_tune_cache():
    if "VINFER_TUNE_CACHE" in _os.environ:
        return _os.environ["VINFER_TUNE_CACHE"]
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    return _os.path.join(base, "vinfer", "tune.txt")


class Model:
    """A network loaded once and run many times.

    model: a built-in name (vinfer.models()) or an ONNX file. weights: for a
    built-in, torchvision's .pth / .safetensors or Keras's .h5 (without them
    the network has seeded random weights: real timings, meaningless
    labels). threads: per inference (0: the CPUs this process may use, its
    affinity mask and cgroup CPU quota, divided among the instances); while
    other work holds the CPUs and one thread is measured faster, a call
    takes one (info()'s passes say so).
    preset: the preprocessing of classify() (default: the network's own).

    instances: how many compiled copies serve calls at once. A Model may be
    shared by Python threads: each call takes a free copy and waits while
    all are busy, so calls never interfere; with instances=N, N run in
    parallel (each copy holds its own packed weights). tune / tune_cache:
    the load-time timing of 3x3 kernels and where its choices are kept
    (default as the command line: $VINFER_TUNE_CACHE, else
    ~/.cache/vinfer/tune.txt; "" for none).

    batch: images per forward pass, for networks whose batch dimension is
    dynamic (the built-in ones; ONNX files exported with one). run() and
    classify() take any number of images either way; a larger batch lets
    the engine's matrix products share their weights between images.

    precision: "f32" (default) or "bf16": convolutions in bfloat16 on CPUs
    with bfloat16 dot products (AVX512_BF16 or AMX; elsewhere vinfer.Error),
    faster and less exact (logits move by ~1e-3..1e-2 of their range;
    `vinfer check MODEL IMAGES --precision bf16` measures it on your images);
    or "int8": convolutions in 8-bit integers on CPUs with AVX512_VNNI, with
    `calibration`, the file of activation ranges measured on representative
    images by a model made with calibrating=True:

        m = vinfer.Model("resnet50.onnx", calibrating=True)
        m.classify(some_images)                  # or m.run(x): the ranges are recorded
        m.save_calibration("resnet50.calib")     # as `vinfer calibrate` writes it
        q = vinfer.Model("resnet50.onnx", precision="int8", calibration="resnet50.calib")

    compact_weights: hold the Winograd weights of wide 3x3 layers on small
    maps half transformed (as `vinfer classify` does: VGG19 ~60 MiB less
    resident, those layers ~10 % slower at batch 1).
    """

    def __init__(self, model, weights=None, *, threads=0, device="cpu", preset=None, instances=1, tune=True,
                 tune_cache=None, batch=1, precision="f32", calibration=None, calibrating=False,
                 compact_weights=False):
        self._m = _vinfer.Model(_os.fspath(model), _os.fspath(weights) if weights else "", threads, device, preset,
                                instances, tune, _default_tune_cache() if tune_cache is None else tune_cache, batch,
                                precision, _os.fspath(calibration) if calibration else "", calibrating,
                                compact_weights)

    def save_calibration(self, path):
        """Writes the ranges recorded so far (calibrating=True) as a calibration file, whole or not at all."""
        self._m.save_calibration(_os.fspath(path))

    @property
    def input_shape(self):
        """The input tensor's shape, e.g. (1, 3, 224, 224)."""
        return self._m.input_shape

    @property
    def output_shape(self):
        """The output's shape, e.g. (1, 1000)."""
        return self._m.output_shape

    @property
    def preset(self):
        """The preprocessing preset classify() uses."""
        return self._m.preset

    @property
    def info(self):
        """What loading did: nodes, passes, memory, threads, whether the weights are random."""
        return self._m.info

    def run(self, x):
        """The network on N inputs, a float32 array of shape (N, *input_shape[1:])
        for any N >= 1 (run in batches of input_shape[0], the last one
        padded); returns the outputs, N first (N x classes for classifiers)."""
        return self._m.run(x)

    def classify(self, images, topk=5, *, raise_errors=False, workers=1):
        """Top-k classes of one image or a list of them (paths, bytes or HxWx3
        uint8 RGB arrays), preprocessed with the model's preset.

        Returns {"image", "topk": [{"index", "label", "prob"}, ...]} per image
        (a list for a list, in its order). An image that cannot be read gives
        {"image", "error"} and the rest are classified, unless
        raise_errors=True. workers: threads that decode and preprocess while
        the network runs. Labels are ImageNet's; with random weights they
        are meaningless.
        """
        return self._m.classify(images, topk, raise_errors, workers)

    def profile(self, x=None, runs=1):
        """Per-layer timing of one forward pass (the fastest of `runs`): a list
        of {"name", "impl", "ms", "gflop", "weight_bytes"}."""
        return self._m.profile(x, runs)

    def __repr__(self):
        i = self.info
        return f"vinfer.Model({i['source']!r}, preset={self.preset!r}, threads={i['threads']}, instances={i['instances']})"
