// vinfer/io.hpp: writing results. Every writer is atomic: it writes to a
// temporary file beside the target and renames it into place, so a failure
// never leaves a half-written file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vinfer/image.hpp"

namespace vinfer {

// 8-bit PNG (gray, RGB or RGBA by channel count).
void write_png(const std::string& path, const ImageView<std::uint8_t>& image);

// NumPy .npy (format 1.0, little-endian, C order) for float32 or uint8 data.
void write_npy(const std::string& path, const float* data, const std::vector<std::size_t>& shape);
void write_npy(const std::string& path, const std::uint8_t* data, const std::vector<std::size_t>& shape);

// A text file (JSON, CSV, reports), written atomically like the others.
void write_text(const std::string& path, const std::string& text);

// Reads a .npy written by numpy (float32 '<f4' or uint8 '|u1', C order) into
// `data` as float32; returns the shape. For tests and tools.
std::vector<std::size_t> read_npy(const std::string& path, std::vector<float>& data);
// The same from a file's bytes in memory; `name` is used in error messages.
std::vector<std::size_t> read_npy_memory(const std::uint8_t* bytes, std::size_t size, const std::string& name,
                                         std::vector<float>& data);

}  // namespace vinfer
