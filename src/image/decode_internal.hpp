// Internal: codec entry points behind vinfer::decode_memory.
#pragma once
#include <cstdint>
#include <string>

#include "vinfer/decode.hpp"

namespace vinfer::detail {

// Each decoder writes the file's pixels converted the way Pillow's
// `convert(format)` would, into `out`, and fills `info`.
void decode_jpeg(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
                 const std::string& name, ImageInfo& info, bool header_only);
void decode_png(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
                const std::string& name, ImageInfo& info, bool header_only);

// EXIF orientation (1..8) from a TIFF-structured EXIF payload ("Exif\0\0" stripped); 1 if absent or malformed.
int exif_orientation(const std::uint8_t* tiff, std::size_t size);

// Rotates/flips `img` so that orientation becomes 1 (what ImageOps.exif_transpose does).
void apply_orientation(ImageU8& img, int orientation);

void check_pixel_limit(std::uint64_t w, std::uint64_t h, const DecodeOptions& opt, const std::string& name);

}  // namespace vinfer::detail
