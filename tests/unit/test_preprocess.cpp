// Presets: names, shapes, the normalisation tables, fast mode's closeness.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "image/fused_prep.hpp"
#include "test_support.hpp"
#include "vinfer/color.hpp"
#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer::test {
namespace {

TEST(Preset, NamesAndShapes) {
  for (const auto& n : preset_names()) {
    const Preset p = preset(n);
    Preprocessor pre(p);
    EXPECT_EQ(pre.tensor_size(), 3u * 224 * 224);
    const bool keras = n.rfind("keras", 0) == 0;
    EXPECT_EQ(pre.tensor_shape(), keras ? (std::vector<std::size_t>{1, 224, 224, 3})
                                        : (std::vector<std::size_t>{1, 3, 224, 224}));
  }
  EXPECT_THROW(preset("imagenet"), Error);
  EXPECT_THROW(preset("torchvision", 0), Error);
  EXPECT_THROW(preset("torchvision", 100000), Error);
}

// The vector kernels (AVX2 prefix + Highway tail) against the integer rules
// written out, at every width around the vector block sizes.
TEST(Gray, IntegerRulesMatchTheFormula) {
  for (int c : {3, 4})
    for (int w = 1; w <= 70; ++w) {
      const ImageU8 img = random_image(w, 3, c, 100 + w);
      for (GrayRule rule : {GrayRule::Pil, GrayRule::OpenCv}) {
        ImageU8 g;
        rgb_to_gray(img.view(), rule, g);
        for (int y = 0; y < 3; ++y)
          for (int x = 0; x < w; ++x) {
            const std::uint8_t* p = img.view().row(y) + x * c;
            const unsigned want = rule == GrayRule::Pil ? (p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16
                                                        : (p[0] * 9798u + p[1] * 19235u + p[2] * 3735u + 16384u) >> 15;
            ASSERT_EQ(g.view().row(y)[x], want) << "c=" << c << " w=" << w << " x=" << x;
          }
      }
    }
}

// With two threads the resize and the normalization run beside the JPEG
// decode, row by row (Preprocessor::Stream): the tensor must be the
// one-thread tensor exactly (downscales and upscales, with and without the
// crop; photos that stream on the decoder's own helper thread, and a
// progressive and a 4:2:2 file that libjpeg decodes on the calling thread
// while the stream's worker follows), a decode that fails half-way must
// leave the preprocessor usable, and a moved preprocessor must keep working.
TEST(Preset, DecodeOverlapGivesTheSameTensor) {
  const std::pair<const char*, std::vector<std::uint8_t>> files[] = {
      {"retina.jpg", read_bytes("images/retina.jpg")},
      {"squirrel_cls.jpg", read_bytes("images/squirrel_cls.jpg")},
      {"progressive.jpg", encode_jpeg(1000, 700, 1, true)},
      {"422.jpg", encode_jpeg(900, 640, 2, false)}};
  for (const auto& [file, jpeg] : files) {
    ASSERT_FALSE(jpeg.empty()) << file;
    for (const char* name : {"torchvision", "torchvision-crop", "keras-torch"})
      for (int size : {224, 600})
        for (bool fast : {false, true}) {
          SCOPED_TRACE(std::string(file) + " " + name + " " + std::to_string(size) + (fast ? " fast" : ""));
          Preset p = preset(name, size);
          p.fast_decode = fast;
          Preprocessor one(p, 1), two(p, 2);
          std::vector<float> a(one.tensor_size()), b(two.tensor_size(), NAN), c(two.tensor_size(), NAN);
          one.run_memory(jpeg.data(), jpeg.size(), file, a.data());
          two.run_memory(jpeg.data(), jpeg.size(), file, b.data());
          EXPECT_EQ(a, b);
          EXPECT_THROW(two.run_memory(jpeg.data(), jpeg.size() / 2, "half.jpg", c.data()), Error);
          Preprocessor moved = std::move(two);
          moved.run_memory(jpeg.data(), jpeg.size(), file, c.data());
          EXPECT_EQ(a, c) << "after a failed decode and a move";
        }
  }
}

TEST(Normalize, LayoutsAndChannelOrder) {
  ImageU8 img(2, 1, 3);
  const std::uint8_t px[] = {10, 20, 30, 40, 50, 60};
  std::copy(px, px + 6, img.data());
  float out[6];
  Preset caffe = preset("keras-caffe", 8);
  normalize_to_tensor(img.view(), caffe, out);  // NHWC, BGR, minus means
  EXPECT_FLOAT_EQ(out[0], 30.f - 103.939f);
  EXPECT_FLOAT_EQ(out[1], 20.f - 116.779f);
  EXPECT_FLOAT_EQ(out[2], 10.f - 123.68f);
  EXPECT_FLOAT_EQ(out[3], 60.f - 103.939f);
  Preset tv = preset("torchvision", 8);
  normalize_to_tensor(img.view(), tv, out);  // NCHW planes
  EXPECT_NEAR(out[0], (10 / 255.f - 0.485f) / 0.229f, 1e-6);
  EXPECT_NEAR(out[1], (40 / 255.f - 0.485f) / 0.229f, 1e-6);
  EXPECT_NEAR(out[2], (20 / 255.f - 0.456f) / 0.224f, 1e-6);
  Preset tf = preset("keras-tf", 8);
  normalize_to_tensor(img.view(), tf, out);
  EXPECT_NEAR(out[0], 10 / 127.5f - 1, 1e-6);
}

TEST(Preprocessor, FastModeIsCloseToExact) {
  for (const char* name : {"torchvision", "keras-torch"}) {
    Preset p = preset(name);
    Preprocessor exact(p);
    p.fast_decode = true;
    Preprocessor fast(p);
    std::vector<float> a(exact.tensor_size()), b(fast.tensor_size());
    exact.run_file(data_path("images/retina.jpg"), a.data());
    fast.run_file(data_path("images/retina.jpg"), b.data());
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += std::fabs(a[i] - b[i]);
    const double mean_abs = sum / static_cast<double>(a.size());
    EXPECT_GT(mean_abs, 0.0) << "fast mode should take a different path";
    EXPECT_LT(mean_abs, 0.05) << name;  // ~3 levels of 255 after normalisation
  }
}

TEST(Preprocessor, BadFileGivesError) {
  Preprocessor pre(preset("torchvision"));
  std::vector<float> t(pre.tensor_size());
  EXPECT_THROW(pre.run_file(data_path("bad/truncated.jpg"), t.data()), Error);
  EXPECT_THROW(pre.run_file(data_path("bad/nothing_here.jpg"), t.data()), Error);
}

// The one-kernel form of each preset that the CUDA backend runs, evaluated
// on the host: the same floats as the Preprocessor, for downscales,
// upscales, the same size, the crop, and Pillow's vertical-first order.
TEST(FusedPrep, HostFormulaMatchesPreprocessor) {
  const std::pair<int, int> sizes[] = {{300, 200}, {224, 224}, {97, 61}, {50, 400}, {640, 480}, {300, 1200}, {1411, 1411}};
  int vertical_first = 0;
  for (const auto& name : preset_names()) {
    const Preset p = preset(name);
    ASSERT_TRUE(detail::can_fuse(p));
    for (auto [w, h] : sizes) {
      SCOPED_TRACE(name + " " + std::to_string(w) + "x" + std::to_string(h));
      const ImageU8 src = random_image(w, h, 3, w + h);
      Preprocessor pre(p);
      std::vector<float> want(pre.tensor_size()), got(pre.tensor_size(), -7.f);
      pre.run(src.view(), want.data());
      const detail::FusedPrep f = detail::make_fused_prep(p, w, h);
      vertical_first += f.shape.vertical_first;
      detail::fused_prep_host(f, src.view(), got.data());
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)));
    }
  }
  EXPECT_GT(vertical_first, 0);
  Preset opencv = preset("torchvision");
  opencv.resize.compat = Compat::OpenCv;
  EXPECT_FALSE(detail::can_fuse(opencv));
  EXPECT_THROW(detail::make_fused_prep(opencv, 300, 200), Error);
}

}  // namespace
}  // namespace vinfer::test
