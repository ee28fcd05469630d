// Shared helpers for the tests: fixture paths, image loading, SHA-256.
#pragma once
#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "vinfer/decode.hpp"
#include "vinfer/graph.hpp"
#include "vinfer/image.hpp"

namespace vinfer::test {

// A float tensor of uniform random values (seeded), for engine tests.
inline TensorData random_tensor(Shape s, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(numel(s)));
  for (float& x : v) x = d(rng);
  return TensorData::f32(std::move(s), std::move(v));
}

inline std::string data_path(const std::string& rel) { return std::string(VINFER_TEST_DATA) + "/" + rel; }

// Loads an 8-bit PNG/JPEG with its own channel count (gray stays gray).
inline ImageU8 load_native(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::vector<std::uint8_t> bytes;
  if (f) {
    std::uint8_t buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
  }
  const ImageInfo info = probe_memory(bytes.data(), bytes.size(), path);
  DecodeOptions o;
  o.format = info.channels == 1 ? PixelFormat::Gray : info.channels == 4 ? PixelFormat::RGBA : PixelFormat::RGB;
  ImageU8 img;
  decode_memory(bytes.data(), bytes.size(), o, img, path);
  return img;
}

inline ImageU8 random_image(int w, int h, int c, unsigned seed) {
  ImageU8 img(w, h, c);
  std::mt19937 rng(seed);
  // Smooth gradients plus noise: exercises rounding without being pure noise.
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k) {
        const int v = (x * 255 / std::max(1, w - 1) + y * 97 / std::max(1, h - 1) + k * 40) % 256;
        img.row(y)[x * c + k] = static_cast<std::uint8_t>((v + static_cast<int>(rng() % 64)) % 256);
      }
  return img;
}

std::string sha256_hex(const void* data, std::size_t size);

// A test data file's bytes (empty if it cannot be read).
std::vector<std::uint8_t> read_bytes(const std::string& name);
// A JPEG of colour ramps and texture from libjpeg itself; sampling: 0 4:4:4,
// 1 4:2:0, 2 4:2:2.
std::vector<std::uint8_t> encode_jpeg(int w, int h, int sampling, bool progressive, int restart_mcus = 0,
                                      int quality = 90);

}  // namespace vinfer::test
