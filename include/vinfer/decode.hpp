// vinfer/decode.hpp: JPEG and PNG decoding to 8-bit interleaved pixels.
//
// The default output is what Pillow gives for `Image.open(p).convert(mode)`:
// the same pixels, bit for bit, for baseline/progressive JPEG (any chroma
// subsampling, grayscale, CMYK/YCCK) and PNG (1-16 bit, palette, gray, alpha).
// Faster, inexact options are off unless asked for.
//
//   vinfer::DecodeOptions opt;            // RGB, exact
//   vinfer::ImageU8 img;
//   vinfer::decode_file("photo.jpg", opt, img);
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vinfer/color.hpp"
#include "vinfer/image.hpp"

namespace vinfer {

enum class PixelFormat { Gray = 1, RGB = 3, RGBA = 4 };

enum class ImageCodec { Jpeg, Png };

struct DecodeOptions {
  PixelFormat format = PixelFormat::RGB;
  // How colour becomes gray when format is Gray (ignored otherwise).
  GrayRule gray_rule = GrayRule::Pil;
  // Fast: for a colour JPEG and format Gray, take the luma plane (Y) and skip
  // chroma entirely. Close to, not identical with, any GrayRule.
  bool luma_only = false;
  // Fast: when > 0, let the JPEG decoder downscale by 1/2, 1/4 or 1/8 in the
  // DCT domain, choosing the largest factor s with s <= min(W / target_width,
  // H / target_height): Pillow's `Image.draft()` rule. Output is then
  // ceil(W / s) x ceil(H / s). PNG ignores this.
  int target_width = 0;
  int target_height = 0;
  // Apply the EXIF Orientation tag (Pillow and torchvision do not by default).
  bool apply_exif_orientation = false;
  // Refuse images with more pixels than this before decoding them (Pillow's
  // MAX_IMAGE_PIXELS default: a decompression-bomb guard).
  std::uint64_t max_pixels = 89'478'485;
  // 2 or more: a colour JPEG (YCbCr 4:2:0 or 4:4:4, decoded at full size)
  // is entropy-decoded and inverse-transformed by libjpeg on the calling
  // thread while a second thread upsamples its chroma and converts colour
  // behind it, as libjpeg would have (the same bytes). DCT-scaled or luma
  // only, a baseline JPEG (gray, or YCbCr whose chroma needs no upsampling
  // at that scale) is decoded by vinfer's own scan decoder, which splits the
  // Huffman decoding itself across two threads (libjpeg's bytes on every
  // valid file; see docs/compat.md). Other files: 1 thread.
  int threads = 1;
  // Called as rows of the output become final (on the decoding thread, or
  // on its helper with threads >= 2; one call at a time): with the image
  // (already of its final size) and how many leading rows are done. JPEG:
  // every 16 rows; PNG: at the end; the last call has rows == height. For
  // overlapping work with decoding (Preprocessor uses it). Not called when
  // the EXIF orientation is applied. Must not throw.
  std::function<void(const ImageU8& image, int rows)> on_rows;
};

struct ImageInfo {
  ImageCodec codec = ImageCodec::Jpeg;
  int width = 0;
  int height = 0;
  int channels = 0;    // channels stored in the file (1, 2, 3 or 4)
  int bit_depth = 8;
  int orientation = 1;  // EXIF orientation, 1 when absent
};

// Decodes an encoded image held in memory. `name` is used in error messages.
// Throws vinfer::Error (BadInput, Unsupported, LimitExceeded).
void decode_memory(const std::uint8_t* data, std::size_t size, const DecodeOptions& options,
                   ImageU8& out, const std::string& name = "<memory>", ImageInfo* info = nullptr);

// Reads and decodes a file. Throws like decode_memory, and Error(Io) when the file cannot be read.
void decode_file(const std::string& path, const DecodeOptions& options, ImageU8& out,
                 ImageInfo* info = nullptr);

// Header only: size, channels, orientation. Throws like decode_memory.
ImageInfo probe_memory(const std::uint8_t* data, std::size_t size, const std::string& name = "<memory>");

// The DCT scale denominator (1, 2, 4 or 8) that DecodeOptions::target_* selects.
int jpeg_draft_denominator(int width, int height, int target_width, int target_height);

}  // namespace vinfer
