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

// ShuffleNet v2's unit tail as exporters write it: x [N, C, H, W] through
// two 1x1 convolutions (C -> C / 2 each: the unit's branches), their
// Concat, the channel shuffle (Reshape to [N, groups, C / groups, H, W],
// Transpose(0, 2, 1, 3, 4), Reshape back) and the split after it (two
// Slices of the channels); the output is the first half through a 1x1
// convolution, concatenated with the second half, plus the whole shuffled
// tensor through a ReLU (a reader of the unsplit shuffle). split: one Split
// node instead of the Slices (the dynamo exporter's chunk).
inline Graph channel_shuffle_graph(const Shape& x_shape, std::int64_t groups, bool split = false) {
  Graph g;
  const std::int64_t c = x_shape[1], n = x_shape[0], h = x_shape[2], w = x_shape[3];
  const int x = g.add_input("x", x_shape);
  auto ints = [&](const char* name, const std::vector<std::int64_t>& v) {
    return g.add_constant(name, TensorData::i64({static_cast<std::int64_t>(v.size())}, v));
  };
  auto conv = [&](int in, std::int64_t ic, std::int64_t oc, unsigned seed) {
    return g.add_node("Conv", {in, g.add_constant("w", random_tensor({oc, ic, 1, 1}, seed))})[0];
  };
  const int cat = g.add_node("Concat", {conv(x, c, c / 2, 1), conv(x, c, c - c / 2, 2)}, {{"axis", std::int64_t{1}}})[0];
  const int r5 = g.add_node("Reshape", {cat, ints("s5", {n, groups, c / groups, h, w})})[0];
  const int t = g.add_node("Transpose", {r5}, {{"perm", std::vector<std::int64_t>{0, 2, 1, 3, 4}}})[0];
  const int shuffled = g.add_node("Reshape", {t, ints("s4", {n, c, h, w})})[0];
  int a, b;
  if (split) {
    const std::vector<int> parts =
        g.add_node("Split", {shuffled, ints("parts", {c / 2, c - c / 2})}, {{"axis", std::int64_t{1}}}, 2);
    a = parts[0], b = parts[1];
  } else {
    a = g.add_node("Slice", {shuffled, ints("a0", {0}), ints("a1", {c / 2}), ints("ax", {1})})[0];
    b = g.add_node("Slice", {shuffled, ints("b0", {c / 2}), ints("b1", {c}), ints("bx", {1})})[0];
  }
  const int halves = g.add_node("Concat", {conv(a, c / 2, c / 2, 3), b}, {{"axis", std::int64_t{1}}})[0];
  g.mark_output(g.add_node("Add", {halves, g.add_node("Relu", {shuffled})[0]})[0]);
  return g;
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
