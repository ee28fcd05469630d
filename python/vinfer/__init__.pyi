import os
from typing import Any, Literal, Optional, Sequence, TypedDict, Union

import numpy as np
import numpy.typing as npt

from ._errors import (BadInputError as BadInputError, Error as Error, FileError as FileError,
                      InternalError as InternalError, InvalidArgumentError as InvalidArgumentError,
                      LimitExceededError as LimitExceededError, UnsupportedError as UnsupportedError)
from .session import NodeArg as NodeArg, Session as Session

__version__: str

Source = Union[str, os.PathLike[str], bytes, bytearray, memoryview]
ImageArray = npt.NDArray[np.uint8]
Compat = Literal["pil", "opencv", "torch", "tf"]

class TopK(TypedDict):
    index: int
    label: str
    prob: float

class Classification(TypedDict, total=False):
    image: str
    topk: list[TopK]
    error: str

class LayerTime(TypedDict):
    name: str
    impl: str
    ms: float
    gflop: float
    weight_bytes: float

def decode(src: Source, mode: Optional[Literal["L", "RGB", "RGBA"]] = ..., *, exif: bool = ...,
           max_pixels: int = ..., gray: Literal["pil", "tf", "opencv"] = ...,
           draft: Optional[tuple[int, int]] = ...) -> ImageArray: ...
def resize(image: npt.NDArray[Any], size: tuple[int, int], compat: Compat = ..., filter: Optional[str] = ..., *,
           antialias: bool = ..., align_corners: bool = ..., dtype: Optional[Literal["uint8", "float32"]] = ...,
           threads: int = ..., scale: Optional[float] = ...) -> npt.NDArray[Any]: ...
def preprocess(src: Union[Source, ImageArray], preset: str = ..., *, size: int = ..., fast: bool = ...,
               threads: int = ...) -> npt.NDArray[np.float32]: ...
def presets() -> list[str]: ...
def models() -> list[str]: ...
def labels() -> list[str]: ...
def cpu_has_bf16() -> bool: ...
def cpu_has_int8() -> bool: ...

class Model:
    def __init__(self, model: Union[str, os.PathLike[str]], weights: Optional[Union[str, os.PathLike[str]]] = ..., *,
                 threads: int = ..., device: str = ..., preset: Optional[str] = ..., instances: int = ...,
                 tune: bool = ..., tune_cache: Optional[str] = ..., batch: int = ...,
                 precision: Literal["f32", "bf16", "int8"] = ...,
                 calibration: Optional[Union[str, os.PathLike[str]]] = ..., calibrating: bool = ...,
                 compact_weights: bool = ...) -> None: ...
    def save_calibration(self, path: Union[str, os.PathLike[str]]) -> None: ...
    @property
    def input_shape(self) -> tuple[int, ...]: ...
    @property
    def output_shape(self) -> tuple[int, ...]: ...
    @property
    def preset(self) -> str: ...
    @property
    def info(self) -> dict[str, Any]: ...
    def run(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
    def classify(self, images: Union[Source, ImageArray, Sequence[Union[Source, ImageArray]]], topk: int = ..., *,
                 raise_errors: bool = ..., workers: int = ...) -> Union[Classification, list[Classification]]: ...
    def profile(self, x: Optional[npt.NDArray[np.float32]] = ..., runs: int = ...) -> list[LayerTime]: ...
