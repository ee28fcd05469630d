// The fast resize path against the reference, across modes, channel counts,
// sizes and thread counts; plus argument validation.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "vinfer/error.hpp"
#include "vinfer/resize.hpp"

namespace vinfer::test {
namespace {

struct Mode {
  Compat compat;
  Filter filter;
  bool antialias = false, align = false;
};

std::vector<Mode> all_modes() {
  std::vector<Mode> m;
  for (Filter f : {Filter::Nearest, Filter::Box, Filter::Bilinear, Filter::Hamming, Filter::Bicubic, Filter::Lanczos})
    m.push_back({Compat::Pil, f});
  for (Filter f : {Filter::Nearest, Filter::NearestExact, Filter::Bilinear, Filter::Bicubic, Filter::Area})
    m.push_back({Compat::OpenCv, f});
  for (Filter f : {Filter::Nearest, Filter::NearestExact, Filter::Area}) m.push_back({Compat::Torch, f});
  for (Filter f : {Filter::Bilinear, Filter::Bicubic}) {
    m.push_back({Compat::Torch, f});
    m.push_back({Compat::Torch, f, true});
    m.push_back({Compat::Torch, f, false, true});
    m.push_back({Compat::Tf, f});
    m.push_back({Compat::Tf, f, true});
  }
  for (Filter f : {Filter::Nearest, Filter::Area, Filter::Lanczos}) m.push_back({Compat::Tf, f});
  return m;
}

ResizeSpec spec_of(const Mode& m, int threads) {
  ResizeSpec s;
  s.compat = m.compat;
  s.filter = m.filter;
  s.antialias = m.antialias;
  s.align_corners = m.align;
  s.threads = threads;
  return s;
}

std::string describe(const Mode& m) {
  return std::string(to_string(m.compat)) + " " + std::string(to_string(m.filter)) + (m.antialias ? " aa" : "") +
         (m.align ? " ac" : "");
}

TEST(Resize, FastMatchesReferenceEverywhere) {
  const std::pair<int, int> sizes[] = {{1, 1}, {7, 5}, {33, 17}, {64, 64}, {150, 41}, {301, 299}, {1000, 3}};
  for (int c : {1, 3, 4}) {
    const ImageU8 src = random_image(97, 61, c, 42 + c);
    ImageF32 srcf(97, 61, c);
    for (std::size_t i = 0; i < src.size(); ++i) srcf.data()[i] = src.data()[i];
    for (const Mode& m : all_modes()) {
      for (int threads : {1, 2}) {
        const ResizeSpec s = spec_of(m, threads);
        Resizer r(s);
        for (auto [w, h] : sizes) {
          SCOPED_TRACE(describe(m) + " c=" + std::to_string(c) + " " + std::to_string(w) + "x" + std::to_string(h) +
                       " t=" + std::to_string(threads));
          ImageU8 fast, ref;
          r.run(src.view(), w, h, fast);
          resize_reference(src.view(), w, h, s, ref);
          ASSERT_EQ(fast.size(), ref.size());
          ASSERT_TRUE(std::equal(fast.data(), fast.data() + fast.size(), ref.data()));
          ImageF32 ff, rf;
          r.run(srcf.view(), w, h, ff);
          resize_reference(srcf.view(), w, h, s, rf);
          ASSERT_TRUE(std::equal(ff.data(), ff.data() + ff.size(), rf.data()));
          ImageF32 fu;  // u8 in, f32 out equals f32 in, f32 out
          r.run(src.view(), w, h, fu);
          ASSERT_TRUE(std::equal(fu.data(), fu.data() + fu.size(), rf.data()));
        }
      }
    }
  }
}

// The resize benchmark's geometry (gray 1411x1411 -> 470x470), where the shuffle-gather kernels and the banded
// passes cover whole rows (the small images above mostly hit row tails).
TEST(Resize, SeedGeometryMatchesReference) {
  const ImageU8 src = random_image(1411, 1411, 1, 11);
  for (const Mode& m : all_modes()) {
    const ResizeSpec s = spec_of(m, 2);
    for (auto [w, h] : {std::pair{470, 470}, std::pair{353, 300}, std::pair{705, 1000}}) {
      SCOPED_TRACE(describe(m) + " " + std::to_string(w) + "x" + std::to_string(h));
      Resizer r(s);
      ImageU8 fast, ref;
      r.run(src.view(), w, h, fast);
      resize_reference(src.view(), w, h, s, ref);
      ASSERT_TRUE(std::equal(fast.data(), fast.data() + fast.size(), ref.data()));
      ImageF32 fu, rf;
      r.run(src.view(), w, h, fu);
      ImageF32 srcf(1411, 1411, 1);
      for (std::size_t i = 0; i < src.size(); ++i) srcf.data()[i] = src.data()[i];
      resize_reference(srcf.view(), w, h, s, rf);
      ASSERT_TRUE(std::equal(fu.data(), fu.data() + fu.size(), rf.data()));
    }
  }
}

// Pillow's RGB horizontal kernels on whole rows: one and two registers of
// taps, negative weights (bicubic, lanczos), weights too large for the
// byte-digit kernel (upscaling), one and two rows at a time (1 and 2 threads).
TEST(Resize, PillowRgbRowsMatchReference) {
  const ImageU8 src = random_image(700, 90, 3, 5);
  for (Filter f : {Filter::Box, Filter::Bilinear, Filter::Hamming, Filter::Bicubic, Filter::Lanczos}) {
    for (int threads : {1, 2}) {
      ResizeSpec s;
      s.compat = Compat::Pil;
      s.filter = f;
      s.threads = threads;
      Resizer r(s);
      for (auto [w, h] : {std::pair{224, 40}, std::pair{111, 30}, std::pair{47, 45}, std::pair{1500, 60}}) {
        SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(w) + "x" + std::to_string(h) + " t=" +
                     std::to_string(threads));
        ImageU8 fast, ref;
        r.run(src.view(), w, h, fast);
        resize_reference(src.view(), w, h, s, ref);
        ASSERT_TRUE(std::equal(fast.data(), fast.data() + fast.size(), ref.data()));
      }
    }
  }
}

TEST(Resize, LargeImageIsSplitAcrossThreadsWithoutChangingResults) {
  const ImageU8 src = random_image(1411, 1411, 1, 7);
  for (Filter f : {Filter::Bilinear, Filter::Lanczos, Filter::Nearest}) {
    ResizeSpec s;
    s.compat = Compat::Pil;
    s.filter = f;
    ImageU8 one, two;
    s.threads = 1;
    Resizer(s).run(src.view(), 470, 470, one);
    s.threads = 2;
    Resizer(s).run(src.view(), 470, 470, two);
    EXPECT_TRUE(std::equal(one.data(), one.data() + one.size(), two.data()));
  }
}

TEST(Resize, SameSizeIsIdentityForPillowAndNearest) {
  const ImageU8 src = random_image(40, 30, 3, 1);
  for (Filter f : {Filter::Bilinear, Filter::Bicubic, Filter::Lanczos, Filter::Nearest}) {
    ResizeSpec s;
    s.compat = Compat::Pil;
    s.filter = f;
    ImageU8 out;
    Resizer(s).run(src.view(), 40, 30, out);
    EXPECT_TRUE(std::equal(out.data(), out.data() + out.size(), src.data()));
  }
}

TEST(Resize, ReusesOutputBufferOnceWarm) {
  ResizeSpec s;
  s.compat = Compat::Pil;
  s.filter = Filter::Bilinear;
  Resizer r(s);
  const ImageU8 src = random_image(200, 150, 3, 3);
  ImageU8 out;
  r.run(src.view(), 64, 48, out);
  const std::uint8_t* p = out.data();
  for (int i = 0; i < 3; ++i) r.run(src.view(), 64, 48, out);
  EXPECT_EQ(out.data(), p);
}

TEST(Resize, RejectsCombinationsTheFrameworkDoesNotHave) {
  auto bad = [](Compat c, Filter f, bool aa = false, bool ac = false) {
    ResizeSpec s;
    s.compat = c;
    s.filter = f;
    s.antialias = aa;
    s.align_corners = ac;
    EXPECT_THROW(validate(s), Error) << to_string(c) << " " << to_string(f);
  };
  bad(Compat::Pil, Filter::Area);
  bad(Compat::Pil, Filter::Bilinear, true);  // Pillow always antialiases; the flag would mislead
  bad(Compat::OpenCv, Filter::Lanczos);
  bad(Compat::Torch, Filter::Lanczos);
  bad(Compat::Tf, Filter::NearestExact);
  bad(Compat::Tf, Filter::Bilinear, false, true);
  bad(Compat::Torch, Filter::Nearest, true);
  EXPECT_THROW(parse_filter("bogus"), Error);
  EXPECT_THROW(parse_compat("caffe"), Error);
}

TEST(Resize, RejectsBadSizesAndChannels) {
  ResizeSpec s;
  Resizer r(s);
  const ImageU8 src = random_image(10, 10, 3, 1);
  ImageU8 out;
  EXPECT_THROW(r.run(src.view(), 0, 10, out), Error);
  EXPECT_THROW(r.run(src.view(), 10, -1, out), Error);
  EXPECT_THROW(r.run(src.view(), 1 << 20, 1 << 20, out), Error);
  const ImageU8 two = random_image(10, 10, 2, 1);
  EXPECT_THROW(r.run(two.view(), 5, 5, out), Error);
}

}  // namespace
}  // namespace vinfer::test

// Found by fuzz_params: OpenCV bicubic on images under 4 pixels in a dimension
// (the clamped taps merge into fewer than 4 rows) read past the row buffer.
namespace vinfer {
TEST(Resize, OpenCvCubicOnTinyImages) {
  ResizeSpec spec;
  spec.compat = Compat::OpenCv;
  spec.filter = Filter::Bicubic;
  for (int c : {1, 3, 4})
    for (auto [w, h] : {std::pair{1, 3}, {3, 1}, {1, 1}, {2, 2}, {3, 3}, {5, 2}}) {
      ImageU8 in = test::random_image(w, h, c, static_cast<unsigned>(w * 10 + h));
      ImageU8 fast, ref;
      Resizer r(spec);
      r.run(in.view(), 12, 12, fast);
      resize_reference(in.view(), 12, 12, spec, ref);
      ASSERT_EQ(fast.size(), ref.size());
      EXPECT_TRUE(std::equal(fast.data(), fast.data() + fast.size(), ref.data())) << w << "x" << h << "x" << c;
    }
}
}  // namespace vinfer
