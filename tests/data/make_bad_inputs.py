#!/usr/bin/env python3
"""Writes tests/data/bad/: inputs that must give a clear error, never a crash.
Only the standard library is used; run it from anywhere.

Kept beside them, from the fuzzers (fuzz/findings, minimised; not regenerated here):
onnx_zero_stride.onnx (zero Conv strides: libonnx's shape inference divided by it)
and pickle_cycle.pth (a legacy-format pickle with a self-containing list: leaked)."""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")
os.makedirs(BAD, exist_ok=True)
jpeg = open(os.path.join(HERE, "images", "squirrel_cls.jpg"), "rb").read()


def w(name, data):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(data)


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


# A small valid PNG (64 x 48 RGB gradient) to damage.
raw = b"".join(b"\x00" + bytes(v for x in range(64) for v in (x * 4, y * 5, (x + y) * 2))
               for y in range(48))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 48, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
w("small_ok.png", png)
w("empty.jpg", b"")
w("text.jpg", b"this is not an image\n" * 10)
w("truncated.jpg", jpeg[: len(jpeg) // 2])
w("header_only.jpg", jpeg[:200])
corrupt = bytearray(jpeg)
for i in range(600, len(corrupt) - 2, 97):
    corrupt[i] = 0xFF if corrupt[i] != 0xFF else 0x00
w("corrupt.jpg", bytes(corrupt))
# SOF0 claiming 60000 x 60000 pixels (3.6 gigapixels): must be refused before allocating.
sof = jpeg.find(b"\xff\xc0")
huge = bytearray(jpeg)
huge[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
w("huge_dims.jpg", bytes(huge))
w("truncated.png", png[: len(png) // 2])
bad_crc = bytearray(png)
bad_crc[29] ^= 0xFF  # inside IHDR's CRC
w("bad_crc.png", bytes(bad_crc))
sig = b"\x89PNG\r\n\x1a\n"
ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
w("huge_dims.png", sig + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 100)) + chunk(b"IEND", b""))
w("zero_width.png", sig + chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 10, 8, 2, 0, 0, 0)) + chunk(b"IEND", b""))
w("image.gif", b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;")
w("png_as.jpg", png)  # wrong extension: content decides, so this one decodes fine
print("written to", BAD)
