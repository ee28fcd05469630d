// Google Benchmark micro-benchmarks of the image kernels on real photo sizes.
#include <benchmark/benchmark.h>

#include <vector>

#include "image/jpeg_idct.hpp"
#include "vinfer/decode.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/resize.hpp"

namespace {

const vinfer::ImageU8& photo(vinfer::PixelFormat f) {
  static vinfer::ImageU8 rgb, gray;
  vinfer::ImageU8& img = f == vinfer::PixelFormat::Gray ? gray : rgb;
  if (img.empty()) {
    vinfer::DecodeOptions o;
    o.format = f;
    vinfer::decode_file(VINFER_BENCH_DATA "/images/retina.jpg", o, img);
  }
  return img;
}

void BM_Resize(benchmark::State& st, vinfer::Compat c, vinfer::Filter f, vinfer::PixelFormat fmt, bool f32,
               bool antialias = false) {
  vinfer::ResizeSpec s;
  s.compat = c;
  s.filter = f;
  s.antialias = antialias;
  vinfer::Resizer r(s);
  const auto& img = photo(fmt);
  vinfer::ImageU8 o8;
  vinfer::ImageF32 o32;
  for (auto _ : st) {
    if (f32) r.run(img.view(), img.width() / 3, img.height() / 3, o32);
    else r.run(img.view(), img.width() / 3, img.height() / 3, o8);
  }
}

using C = vinfer::Compat;
using F = vinfer::Filter;
using P = vinfer::PixelFormat;
BENCHMARK_CAPTURE(BM_Resize, torch_nearest_gray_f32, C::Torch, F::Nearest, P::Gray, true);
BENCHMARK_CAPTURE(BM_Resize, opencv_nearest_gray, C::OpenCv, F::Nearest, P::Gray, false);
BENCHMARK_CAPTURE(BM_Resize, pil_bilinear_gray, C::Pil, F::Bilinear, P::Gray, false);
BENCHMARK_CAPTURE(BM_Resize, pil_bilinear_rgb, C::Pil, F::Bilinear, P::RGB, false);
BENCHMARK_CAPTURE(BM_Resize, opencv_linear_gray, C::OpenCv, F::Bilinear, P::Gray, false);
BENCHMARK_CAPTURE(BM_Resize, opencv_area_gray, C::OpenCv, F::Area, P::Gray, false);
BENCHMARK_CAPTURE(BM_Resize, tf_bilinear_gray_f32, C::Tf, F::Bilinear, P::Gray, true);
BENCHMARK_CAPTURE(BM_Resize, torch_bilinear_aa_rgb, C::Torch, F::Bilinear, P::RGB, false, true);
BENCHMARK_CAPTURE(BM_Resize, opencv_cubic_rgb, C::OpenCv, F::Bicubic, P::RGB, false);

// threads 2: DCT-scaled or luma-only files go to vinfer's own scan decoder
// (two-thread Huffman decoding); threads 1: libjpeg-turbo. Side by side they
// show what the own decoder buys.
void BM_Decode(benchmark::State& st, vinfer::PixelFormat fmt, int target, bool luma, int threads) {
  vinfer::DecodeOptions o;
  o.format = fmt;
  o.luma_only = luma;
  o.target_width = o.target_height = target;
  o.threads = threads;
  vinfer::ImageU8 img;
  for (auto _ : st) vinfer::decode_file(VINFER_BENCH_DATA "/images/retina.jpg", o, img);
}
BENCHMARK_CAPTURE(BM_Decode, rgb_full, P::RGB, 0, false, 1);
BENCHMARK_CAPTURE(BM_Decode, rgb_full_2t, P::RGB, 0, false, 2);
BENCHMARK_CAPTURE(BM_Decode, gray_pil, P::Gray, 0, false, 1);
BENCHMARK_CAPTURE(BM_Decode, gray_luma, P::Gray, 0, true, 1);
BENCHMARK_CAPTURE(BM_Decode, rgb_draft_224, P::RGB, 224, false, 1);
BENCHMARK_CAPTURE(BM_Decode, rgb_draft_224_2t, P::RGB, 224, false, 2);
BENCHMARK_CAPTURE(BM_Decode, luma_draft_470, P::Gray, 470, true, 1);
BENCHMARK_CAPTURE(BM_Decode, luma_draft_470_2t, P::Gray, 470, true, 2);

// The own JPEG decoder's inverse transforms, plain and AVX2, over 47,000
// blocks (a 2 MP 4:2:0 photo's worth) of sparse, realistic coefficients.
void BM_Idct(benchmark::State& st, vinfer::detail::IdctFn fn, int size) {
  constexpr int kBlocks = 47000;
  std::vector<std::int16_t> coef(64 * static_cast<std::size_t>(kBlocks));
  std::uint32_t seed = 1;
  for (std::size_t i = 0; i < coef.size(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    const int r = static_cast<int>(i % 64 / 8), c = static_cast<int>(i % 8);
    coef[i] = r + c < 4 ? static_cast<std::int16_t>(static_cast<int>(seed >> 27) - 16) : 0;
  }
  std::uint16_t q[64];
  for (int k = 0; k < 64; ++k) q[k] = static_cast<std::uint16_t>(2 + k);
  std::vector<std::uint8_t> out(512 * 512);
  for (auto _ : st)
    for (int b = 0; b < kBlocks; ++b)
      fn(&coef[64 * static_cast<std::size_t>(b)], q, &out[static_cast<std::size_t>(b % 64) * size + (b / 64 % 64) * 512 * 8], 512);
  st.SetItemsProcessed(st.iterations() * kBlocks);
}
BENCHMARK_CAPTURE(BM_Idct, islow_8x8_plain, vinfer::detail::idct_islow_8x8, 8);
BENCHMARK_CAPTURE(BM_Idct, islow_8x8_avx2, vinfer::detail::idct_islow_8x8_avx2, 8);
BENCHMARK_CAPTURE(BM_Idct, reduced_4x4_plain, vinfer::detail::idct_reduced_4x4, 4);
BENCHMARK_CAPTURE(BM_Idct, reduced_4x4_avx2, vinfer::detail::idct_reduced_4x4_avx2, 4);
BENCHMARK_CAPTURE(BM_Idct, reduced_2x2_plain, vinfer::detail::idct_reduced_2x2, 2);
BENCHMARK_CAPTURE(BM_Idct, reduced_2x2_avx2, vinfer::detail::idct_reduced_2x2_avx2, 2);

void BM_Preset(benchmark::State& st, const char* name, bool fast) {
  vinfer::Preset p = vinfer::preset(name);
  p.fast_decode = fast;
  vinfer::Preprocessor pre(p);
  std::vector<float> t(pre.tensor_size());
  for (auto _ : st) pre.run_file(VINFER_BENCH_DATA "/images/retina.jpg", t.data());
}
BENCHMARK_CAPTURE(BM_Preset, torchvision_exact, "torchvision", false);
BENCHMARK_CAPTURE(BM_Preset, torchvision_fast, "torchvision", true);

}  // namespace

BENCHMARK_MAIN();
