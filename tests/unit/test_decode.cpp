// Decoding: bad input gives one clear error naming the file; limits hold;
// options behave. (Pixel-exactness against Pillow is in the conformance suite.)
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <regex>

#include <jpeglib.h>
#include <spng.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "image/decode_internal.hpp"
#include "image/jpeg_color.hpp"
#include "image/jpeg_idct.hpp"
#include "image/jpeg_scan.hpp"
#include "util/cpu_features.hpp"
#include "test_support.hpp"
#include "vinfer/error.hpp"

namespace vinfer::test {
namespace {

void expect_error(const std::string& file, ErrorKind kind, const std::string& pattern) {
  ImageU8 img;
  try {
    decode_file(data_path("bad/" + file), DecodeOptions{}, img);
    ADD_FAILURE() << file << ": decoded without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << file << ": " << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file), std::string::npos) << "message must name the file: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
    EXPECT_TRUE(std::regex_search(msg, std::regex(pattern))) << msg;
  }
}

// A PNG decoded by vinfer's own road (8-bit, not interlaced: libdeflate and
// its unfiltering) and by libspng alone (VINFER_PNG=spng): the same pixels,
// or the same error. What it gave: the pixels, or "error: " and the message.
std::string decode_both(const std::vector<std::uint8_t>& png, DecodeOptions opt, ImageU8* pixels = nullptr) {
  auto once = [&](bool spng_only) {
    if (spng_only) ::setenv("VINFER_PNG", "spng", 1);
    std::string got;
    try {
      ImageU8 img;
      decode_memory(png.data(), png.size(), opt, img, "test.png");
      got.assign(reinterpret_cast<const char*>(img.data()), img.size());
      if (pixels) *pixels = img;
    } catch (const Error& e) {
      got = std::string("error: ") + e.what();
    }
    ::unsetenv("VINFER_PNG");
    return got;
  };
  const std::string fast = once(false), spng = once(true);
  EXPECT_EQ(fast, spng) << (fast.rfind("error", 0) == 0 ? fast : spng.rfind("error", 0) == 0 ? spng : "pixels differ");
  return fast;
}

// A PNG of `img` written by libspng with one filter choice.
std::vector<std::uint8_t> encode_png(const ImageU8& img, int color_type, int filters) {
  spng_ctx* ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
  spng_set_option(ctx, SPNG_FILTER_CHOICE, filters);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<std::uint32_t>(img.width()), ihdr.height = static_cast<std::uint32_t>(img.height());
  ihdr.bit_depth = 8, ihdr.color_type = static_cast<std::uint8_t>(color_type);
  spng_set_ihdr(ctx, &ihdr);
  if (color_type == SPNG_COLOR_TYPE_INDEXED) {
    spng_plte plte{};
    plte.n_entries = 256;
    for (int i = 0; i < 256; ++i)
      plte.entries[i] = {static_cast<std::uint8_t>(i), static_cast<std::uint8_t>(255 - i), static_cast<std::uint8_t>(i * 7), 255};
    spng_set_plte(ctx, &plte);
  }
  const int rc = spng_encode_image(ctx, img.data(), img.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
  EXPECT_EQ(rc, 0) << spng_strerror(rc);
  std::size_t n = 0;
  int err = 0;
  auto* buf = static_cast<std::uint8_t*>(spng_get_png_buffer(ctx, &n, &err));
  std::vector<std::uint8_t> out(buf, buf + n);
  std::free(buf);
  spng_ctx_free(ctx);
  return out;
}

// Every 8-bit colour type (1 to 4 bytes per pixel; palette), each PNG filter
// alone and chosen per row, rows of 1 and of many pixels, decoded to each
// output format: both roads give the same pixels, and they are the file's.
TEST(DecodePng, OwnUnfilteringMatchesLibspng) {
  const struct { int type, channels; } types[] = {{SPNG_COLOR_TYPE_GRAYSCALE, 1}, {SPNG_COLOR_TYPE_GRAYSCALE_ALPHA, 2},
                                                  {SPNG_COLOR_TYPE_TRUECOLOR, 3}, {SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, 4},
                                                  {SPNG_COLOR_TYPE_INDEXED, 1}};
  const int filters[] = {SPNG_FILTER_CHOICE_NONE, SPNG_FILTER_CHOICE_SUB, SPNG_FILTER_CHOICE_UP,
                         SPNG_FILTER_CHOICE_AVG,  SPNG_FILTER_CHOICE_PAETH, SPNG_FILTER_CHOICE_ALL};
  for (const auto& t : types)
    for (int f : filters)
      for (const auto& [w, h] : {std::pair{1, 5}, std::pair{37, 23}}) {
        ImageU8 img = random_image(w, h, t.channels, static_cast<unsigned>(w * 131 + f * 7 + t.type));
        for (int y = 0; y < h; ++y)  // smooth with noise, so that every filter predicts something
          for (int x = 0; x < w * t.channels; ++x) img.row(y)[x] = static_cast<std::uint8_t>(x * 3 + y * 5 + img.row(y)[x] % 9);
        const std::vector<std::uint8_t> png = encode_png(img, t.type, f);
        for (PixelFormat pf : {PixelFormat::Gray, PixelFormat::RGB, PixelFormat::RGBA}) {
          DecodeOptions opt;
          opt.format = pf;
          ImageU8 got;
          const std::string r = decode_both(png, opt, &got);
          ASSERT_EQ(r.rfind("error", 0), std::string::npos) << r;
          if (t.type != SPNG_COLOR_TYPE_INDEXED && static_cast<int>(pf) == t.channels)
            EXPECT_EQ(0, std::memcmp(got.data(), img.data(), img.size())) << "type " << t.type << " filter " << f;
        }
      }
}

// Damaged files take the same answer both ways: every PNG under the test
// data, and a photo's PNG cut short at many places and with single bytes
// changed all over (chunk lengths, names, CRCs, the zlib stream, IEND).
TEST(DecodePng, DamagedFilesGiveLibspngsAnswer) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(data_path("")))
    if (e.path().extension() == ".png") {
      std::ifstream f(e.path(), std::ios::binary);
      const std::vector<std::uint8_t> png((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      decode_both(png, DecodeOptions{});
      ++files;
    }
  EXPECT_GT(files, 20);
  ImageU8 img = random_image(64, 40, 3, 5);
  for (int y = 0; y < 40; ++y)
    for (int x = 0; x < 64 * 3; ++x) img.row(y)[x] = static_cast<std::uint8_t>(x + 2 * y + img.row(y)[x] % 5);
  const std::vector<std::uint8_t> good = encode_png(img, SPNG_COLOR_TYPE_TRUECOLOR, SPNG_FILTER_CHOICE_ALL);
  ImageU8 back;
  decode_both(good, DecodeOptions{}, &back);
  EXPECT_EQ(0, std::memcmp(back.data(), img.data(), img.size()));
  int errors = 0;
  for (std::size_t cut = 8; cut < good.size(); cut += 1 + cut / 16)
    errors += decode_both(std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)), {})
                  .rfind("error", 0) == 0;
  std::mt19937 rng(3);
  for (std::size_t at = 8; at < good.size(); at += 1 + at / 24) {
    std::vector<std::uint8_t> bad = good;
    bad[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    errors += decode_both(bad, {}).rfind("error", 0) == 0;
    bad.insert(bad.begin() + static_cast<std::ptrdiff_t>(at), 0x49);  // a byte more
    errors += decode_both(bad, {}).rfind("error", 0) == 0;
  }
  EXPECT_GT(errors, 50);
}

TEST(DecodeErrors, EachBadInputHasItsCause) {
  expect_error("empty.jpg", ErrorKind::BadInput, "empty file");
  expect_error("text.jpg", ErrorKind::Unsupported, "not a JPEG or PNG");
  expect_error("image.gif", ErrorKind::Unsupported, "GIF");
  expect_error("truncated.jpg", ErrorKind::BadInput, "truncated");
  expect_error("header_only.jpg", ErrorKind::BadInput, "JPEG");
  expect_error("huge_dims.jpg", ErrorKind::LimitExceeded, "exceeds the limit");
  expect_error("truncated.png", ErrorKind::BadInput, "PNG");
  expect_error("bad_crc.png", ErrorKind::BadInput, "PNG");
  expect_error("huge_dims.png", ErrorKind::LimitExceeded, "exceeds the limit");
  expect_error("zero_width.png", ErrorKind::BadInput, "PNG");
  ImageU8 img;
  EXPECT_THROW(decode_file(data_path("bad/does_not_exist.jpg"), DecodeOptions{}, img), Error);
}

TEST(DecodeErrors, CorruptJpegNeverCrashes) {
  // libjpeg recovers from some corruption with a warning (as Pillow does); either outcome is fine, a crash is not.
  ImageU8 img;
  try {
    decode_file(data_path("bad/corrupt.jpg"), DecodeOptions{}, img);
    EXPECT_EQ(img.width(), 535);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  }
}

TEST(Decode, ContentDecidesNotTheExtension) {
  ImageU8 img;
  decode_file(data_path("bad/png_as.jpg"), DecodeOptions{}, img);
  EXPECT_EQ(img.width(), 64);
  EXPECT_EQ(img.height(), 48);
  EXPECT_EQ(img.row(47)[63 * 3 + 1], 47 * 5);
}

TEST(Decode, PixelLimitIsConfigurable) {
  DecodeOptions o;
  o.max_pixels = 535 * 426 - 1;
  ImageU8 img;
  EXPECT_THROW(decode_file(data_path("images/squirrel_cls.jpg"), o, img), Error);
  o.max_pixels = 535 * 426;
  decode_file(data_path("images/squirrel_cls.jpg"), o, img);
  EXPECT_EQ(img.width(), 535);
}

TEST(Decode, DraftRuleMatchesPillow) {
  EXPECT_EQ(jpeg_draft_denominator(1411, 1411, 224, 224), 4);  // 1411 // 224 = 6 -> 4
  EXPECT_EQ(jpeg_draft_denominator(1411, 1411, 176, 176), 8);
  EXPECT_EQ(jpeg_draft_denominator(535, 426, 224, 224), 1);
  EXPECT_EQ(jpeg_draft_denominator(1000, 1000, 0, 0), 1);
  DecodeOptions o;
  o.target_width = o.target_height = 224;
  ImageU8 img;
  decode_file(data_path("images/retina.jpg"), o, img);
  EXPECT_EQ(img.width(), 353);  // ceil(1411 / 4)
}

// The luma plane against Pillow's `Image.open(p).convert("L")` (committed
// fixtures made by Pillow): close, not identical, as DecodeOptions says.
TEST(Decode, LumaOnlyIsCloseToPillowGray) {
  for (const char* name : {"jpeg_420", "jpeg_422", "jpeg_444", "jpeg_progressive"}) {
    SCOPED_TRACE(name);
    DecodeOptions luma;
    luma.format = PixelFormat::Gray;
    luma.luma_only = true;
    ImageU8 got;
    decode_file(data_path(std::string("fixtures/") + name + ".jpg"), luma, got);
    const ImageU8 pil = load_native(data_path(std::string("fixtures/decode_") + name + "_gray.png"));
    ASSERT_EQ(got.size(), pil.size());
    int worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got.data()[i] - pil.data()[i]));
    std::fprintf(stderr, "%s: luma vs Pillow's L: max |diff| %d\n", name, worst);
    EXPECT_LE(worst, 2);  // measured 1-2: chroma rounding through RGB and back
  }
}

TEST(Exif, OrientationParsing) {
  // Little-endian TIFF with one IFD entry: Orientation = 6.
  const std::uint8_t le[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0};
  EXPECT_EQ(detail::exif_orientation(le, sizeof le), 6);
  const std::uint8_t be[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 3, 0, 0};
  EXPECT_EQ(detail::exif_orientation(be, sizeof be), 3);
  EXPECT_EQ(detail::exif_orientation(le, 10), 1);  // truncated: ignored, never read past the end
  const std::uint8_t bogus[] = {'I', 'I', 42, 0, 0xff, 0xff, 0xff, 0x7f};
  EXPECT_EQ(detail::exif_orientation(bogus, sizeof bogus), 1);
}

TEST(Exif, NotAppliedByDefault) {
  ImageU8 img;
  decode_file(data_path("fixtures/jpeg_exif6.jpg"), DecodeOptions{}, img);
  EXPECT_EQ(img.width(), 160);
  DecodeOptions o;
  o.apply_exif_orientation = true;
  decode_file(data_path("fixtures/jpeg_exif6.jpg"), o, img);
  EXPECT_EQ(img.width(), 120);
}

// libjpeg's chroma upsampling and colour conversion as vinfer repeats them
// (two-thread decode): the AVX2 bodies against the plain versions, every
// YCbCr triple and every chroma width up to 100.
TEST(JpegColor, KernelsMatchThePlainVersions) {
  std::vector<std::uint8_t> y(256 * 256), cb(256 * 256), cr(256 * 256);
  std::vector<std::uint8_t> a(3 * y.size()), b(3 * y.size());
  for (int v = 0; v < 256; ++v) {
    for (int i = 0; i < 256 * 256; ++i) {
      y[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v);
      cb[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i & 255);
      cr[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i >> 8);
    }
    detail::ycc_rgb_row(y.data(), cb.data(), cr.data(), a.data(), y.size());
    detail::ycc_rgb_row_ref(y.data(), cb.data(), cr.data(), b.data(), y.size());
    ASSERT_EQ(a, b) << "Y = " << v;
  }
  // Spot values of jdcolor.c's tables: Cr = 255 adds 178 to red, Cb = 0 takes 227 from blue.
  const std::uint8_t Y[1] = {50}, CB[1] = {0}, CR[1] = {255};
  std::uint8_t px[3];
  detail::ycc_rgb_row_ref(Y, CB, CR, px, 1);
  EXPECT_EQ(px[0], 228);
  EXPECT_EQ(px[2], 0);
  std::mt19937 rng(3);
  for (int cw = 1; cw <= 100; ++cw) {
    std::vector<std::uint8_t> cur(static_cast<std::size_t>(cw)), nbr(static_cast<std::size_t>(cw));
    for (auto& v : cur) v = static_cast<std::uint8_t>(rng());
    for (auto& v : nbr) v = static_cast<std::uint8_t>(rng());
    std::vector<std::uint8_t> fast(2 * static_cast<std::size_t>(cw) + 32), ref(2 * static_cast<std::size_t>(cw));
    std::vector<std::uint16_t> colsum(static_cast<std::size_t>(cw) + 2);
    detail::fancy_h2v2_row(cur.data(), nbr.data(), cw, fast.data(), colsum.data());
    detail::fancy_h2v2_row_ref(cur.data(), nbr.data(), cw, ref.data());
    ASSERT_TRUE(std::equal(ref.begin(), ref.end(), fast.begin())) << "cw = " << cw;
    cur.push_back(static_cast<std::uint8_t>(rng()));  // h2v1 with one sample reads the padding column
    detail::fancy_h2v1_row(cur.data(), cw, fast.data());
    detail::fancy_h2v1_row_ref(cur.data(), cw, ref.data());
    ASSERT_TRUE(std::equal(ref.begin(), ref.end(), fast.begin())) << "h2v1, cw = " << cw;
  }
  // jdsample.c's h2v1 by hand: edges copied, 3/4 nearer + 1/4 further, rounding 1 then 2.
  const std::uint8_t in[3] = {10, 20, 40};
  std::uint8_t o[6 + 32];
  detail::fancy_h2v1_row_ref(in, 3, o);
  EXPECT_EQ(std::vector<int>(o, o + 6), (std::vector<int>{10, 13, 17, 25, 35, 40}));
}

// The two-thread raw path gives libjpeg's own bytes: real photos (odd and
// even sizes), the fixtures, and encoded odd sizes; RGB and gray by each
// rule; other layouts (4:2:2, CMYK, gray files) fall back and agree too.
TEST(Decode, TwoThreadDecodeGivesTheSameBytes) {
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files;
  for (const char* f : {"images/retina.jpg", "images/squirrel_cls.jpg", "fixtures/jpeg_420.jpg", "fixtures/jpeg_422.jpg",
                        "fixtures/jpeg_444.jpg", "fixtures/jpeg_progressive.jpg", "fixtures/jpeg_cmyk.jpg",
                        "fixtures/jpeg_gray.jpg"}) {
    files.emplace_back(f, read_bytes(f));
    ASSERT_FALSE(files.back().second.empty()) << f;
  }
  for (auto [w, h] : {std::pair{17, 9}, std::pair{33, 18}, std::pair{16, 2}, std::pair{1001, 67}, std::pair{40, 3}})
    for (bool sub : {true, false})
      files.emplace_back(std::to_string(w) + "x" + std::to_string(h) + (sub ? " 4:2:0" : " 4:4:4"),
                         encode_jpeg(w, h, sub, w == 33));
  for (const auto& [name, bytes] : files) {
    const ImageInfo info = probe_memory(bytes.data(), bytes.size(), name);
    for (int fmt = 0; fmt < 4; ++fmt) {
      for (int scale : {1, 2, 4, 8}) {  // DCT scaling (1/8: one thread, libjpeg's plain upsampling)
        SCOPED_TRACE(name + " format " + std::to_string(fmt) + " 1/" + std::to_string(scale));
        DecodeOptions one;
        one.format = fmt == 0 ? PixelFormat::RGB : PixelFormat::Gray;
        one.gray_rule = fmt == 1 ? GrayRule::Pil : fmt == 2 ? GrayRule::Tf : GrayRule::OpenCv;
        if (scale > 1) {
          one.target_width = std::max(1, info.width / scale);
          one.target_height = std::max(1, info.height / scale);
        }
        DecodeOptions two = one;
        two.threads = 2;
        int calls = 0, last = 0;
        two.on_rows = [&](const ImageU8&, int rows) {
          EXPECT_GT(rows, last);
          last = rows;
          ++calls;
        };
        ImageU8 a, b;
        decode_memory(bytes.data(), bytes.size(), one, a, name);
        decode_memory(bytes.data(), bytes.size(), two, b, name);
        ASSERT_EQ(a.width(), b.width());
        ASSERT_EQ(a.height(), b.height());
        ASSERT_TRUE(std::equal(a.data(), a.data() + a.size(), b.data()));
        EXPECT_EQ(last, b.height());
        EXPECT_GT(calls, 0);
      }
    }
  }
  // A truncated file is the same clear error on the two-thread path.
  DecodeOptions two;
  two.threads = 2;
  ImageU8 img;
  const auto& retina = files.front().second;
  EXPECT_THROW(decode_memory(retina.data(), retina.size() / 2, two, img, "half.jpg"), Error);
}

using namespace detail;  // the JPEG internals below

// The own decoder's transforms: AVX2 against the plain versions, and the
// deferred form (sums without the DC, DC added later) against both.
TEST(JpegIdct, FastAndDeferredFormsMatchThePlainTransforms) {
  std::mt19937 rng(7);
  alignas(32) std::int16_t coef[64];
  std::uint16_t quant[64];
  for (int trial = 0; trial < 4000; ++trial) {
    const int extent = 1 + static_cast<int>(rng() % 64);  // nonzero coefficients up to this zigzag-ish index
    const int mag = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 60 : 400;
    for (int i = 0; i < 64; ++i) {
      quant[i] = static_cast<std::uint16_t>(1 + rng() % (trial % 2 ? 16 : 99));
      coef[i] = (i % 8 + i / 8 < extent / 4 + 1 && rng() % 3) ? static_cast<std::int16_t>(static_cast<int>(rng() % (2 * mag + 1)) - mag) : 0;
    }
    coef[0] = static_cast<std::int16_t>(static_cast<int>(rng() % 2001) - 1000);
    // Keep to what 8-bit samples can produce: 11-bit DCT coefficients, give
    // or take half a quantization step (the 16-bit SIMD forms rely on it).
    for (int i = 0; i < 64; ++i) {
      const int lim = (1024 + quant[i] / 2) / quant[i];
      coef[i] = static_cast<std::int16_t>(std::clamp<int>(coef[i], -lim, lim));
    }
    for (int n : {8, 4, 2, 1}) {
      SCOPED_TRACE("size " + std::to_string(n) + " trial " + std::to_string(trial));
      std::uint8_t plain[64], fast[64], deferred[64];
      const std::ptrdiff_t stride = 8;
      IdctFn ref = n == 8 ? idct_islow_8x8 : n == 4 ? idct_reduced_4x4 : n == 2 ? idct_reduced_2x2 : idct_reduced_1x1;
      ref(coef, quant, plain, stride);
      idct_for_size(n)(coef, quant, fast, stride);
      std::int16_t no_dc[64];
      std::copy(coef, coef + 64, no_dc);
      no_dc[0] = 0;
      std::int32_t sums[64], sums_fast[64];
      IdctSumsFn sref = n == 8 ? idct_sums_8x8 : n == 4 ? idct_sums_4x4 : n == 2 ? idct_sums_2x2 : idct_sums_1x1;
      sref(no_dc, quant, sums);
      idct_sums_for_size(n)(no_dc, quant, sums_fast);
      const std::int64_t add = (std::int64_t{coef[0]} * quant[0]) << idct_dc_scale_log2(n);
      std::uint8_t finished[64];
      idct_finish_block_fn()(sums, n, add, finished, stride);
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          ASSERT_EQ(plain[y * stride + x], fast[y * stride + x]) << y << "," << x;
          ASSERT_EQ(sums[y * n + x], sums_fast[y * n + x]) << y << "," << x;
          deferred[y * stride + x] = idct_finish(sums[y * n + x] + add, n);
          ASSERT_EQ(plain[y * stride + x], deferred[y * stride + x]) << y << "," << x;
          ASSERT_EQ(plain[y * stride + x], finished[y * stride + x]) << y << "," << x;
        }
    }
  }
  if (!detail::cpu_features().avx2) GTEST_SKIP() << "no AVX2: only the plain transforms were compared with themselves";
}

// vinfer's own scan decoder (two threads, DCT-scaled or luma only) gives
// libjpeg's bytes: photos, fixtures, and files encoded here at odd sizes,
// 4:2:0 and 4:4:4, with and without restart markers; and it really ran,
// including the speculative split and the split at a restart marker.
TEST(Decode, OwnScanDecoderGivesLibjpegsBytes) {
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files;
  for (const char* f : {"images/retina.jpg", "images/squirrel_cls.jpg", "fixtures/jpeg_420.jpg", "fixtures/jpeg_422.jpg",
                        "fixtures/jpeg_444.jpg", "fixtures/jpeg_gray.jpg", "fixtures/jpeg_progressive.jpg"}) {
    files.emplace_back(f, read_bytes(f));
    ASSERT_FALSE(files.back().second.empty()) << f;
  }
  for (auto [w, h] : {std::pair{1001, 67}, std::pair{640, 480}, std::pair{97, 203}, std::pair{24, 16}})
    for (int sampling : {0, 1, 2})
      for (int rst : {0, 1, 7, 40})
        files.emplace_back(std::to_string(w) + "x" + std::to_string(h) + (sampling == 1 ? " 4:2:0" : sampling ? " 4:2:2" : " 4:4:4") +
                               " restart " + std::to_string(rst),
                           encode_jpeg(w, h, sampling, false, rst, rst == 7 ? 60 : 95));
  const JpegScanCounts before = detail::cpu_features().avx2 ? jpeg_scan_counts() : JpegScanCounts{};
  for (const auto& [name, bytes] : files) {
    const ImageInfo info = probe_memory(bytes.data(), bytes.size(), name);
    for (int fmt = 0; fmt < 3; ++fmt) {
      for (int scale : {2, 4, 8}) {
        SCOPED_TRACE(name + " format " + std::to_string(fmt) + " 1/" + std::to_string(scale));
        DecodeOptions one;
        one.format = fmt == 0 ? PixelFormat::RGB : PixelFormat::Gray;
        one.luma_only = fmt == 2;
        one.target_width = std::max(1, info.width / scale);
        one.target_height = std::max(1, info.height / scale);
        DecodeOptions two = one;
        two.threads = 2;
        ImageU8 a, b;
        decode_memory(bytes.data(), bytes.size(), one, a, name);
        decode_memory(bytes.data(), bytes.size(), two, b, name);
        ASSERT_EQ(a.width(), b.width());
        ASSERT_EQ(a.height(), b.height());
        ASSERT_EQ(a.channels(), b.channels());
        ASSERT_TRUE(std::equal(a.data(), a.data() + a.size(), b.data()));
      }
    }
  }
  if (!detail::cpu_features().avx2) GTEST_SKIP() << "no AVX2 + BMI2: libjpeg decoded every file; the own decoder never ran";
  const JpegScanCounts after = jpeg_scan_counts();
  // Every baseline file here in every mode (the progressive fixture goes to libjpeg).
  EXPECT_EQ(after.decoded - before.decoded, static_cast<long>((files.size() - 1) * 9));
  EXPECT_GT(after.speculative, before.speculative);
  EXPECT_GT(after.restart_split, before.restart_split);
}

// Damaged entropy-coded data: the own decoder either decodes it as libjpeg
// does or hands the file to libjpeg; the outcome (error or image, and its
// size) is the same with one thread and two.
TEST(Decode, OwnScanDecoderOnDamagedDataAgreesWithLibjpeg) {
  const std::vector<std::uint8_t> good = read_bytes("images/retina.jpg");
  ASSERT_FALSE(good.empty());
  std::size_t sos = 0;
  for (std::size_t i = 0; i + 1 < good.size(); ++i)
    if (good[i] == 0xFF && good[i + 1] == 0xDA) sos = i;
  ASSERT_GT(sos, 0u);
  std::size_t dht = 0;
  for (std::size_t i = 0; i + 1 < good.size() && !dht; ++i)
    if (good[i] == 0xFF && good[i + 1] == 0xC4) dht = i;
  ASSERT_GT(dht, 0u);
  std::mt19937 rng(3);
  int decoded = 0;
  for (int trial = 0; trial < 28; ++trial) {
    std::vector<std::uint8_t> bad = good;
    if (trial < 4) {
      bad.resize(sos + 40 + (good.size() - sos) * static_cast<std::size_t>(trial + 1) / 6);  // truncated
    } else if (trial == 24) {
      bad[sos + 6] = 0x88;  // the first component's Huffman tables: numbers 8 (there are 4)
    } else if (trial == 25) {
      bad[dht + 5] = 3;  // three codes of length 1: not a prefix code
    } else if (trial == 26) {
      bad.resize(sos + (good.size() - sos) / 2);  // the data ends early, at an EOI
      bad.push_back(0xFF);
      bad.push_back(0xD9);
    } else if (trial == 27) {
      bad[good.size() - 1] = 0xD8;  // ends at a marker that is not EOI
    } else {
      for (int k = 0; k < 1 + trial % 3; ++k) bad[sos + 20 + rng() % (good.size() - sos - 22)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    }
    for (int scale : {4, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " 1/" + std::to_string(scale));
      DecodeOptions one;
      one.target_width = one.target_height = 1411 / scale;
      DecodeOptions two = one;
      two.threads = 2;
      ImageU8 a, b;
      bool ok1 = true, ok2 = true;
      try {
        decode_memory(bad.data(), bad.size(), one, a, "bad.jpg");
      } catch (const Error&) {
        ok1 = false;
      }
      try {
        decode_memory(bad.data(), bad.size(), two, b, "bad.jpg");
      } catch (const Error&) {
        ok2 = false;
      }
      ASSERT_EQ(ok1, ok2);
      if (trial < 4 || trial == 24 || trial == 25) EXPECT_FALSE(ok1) << "libjpeg reports these";
      if (!ok1) continue;
      ASSERT_EQ(a.size(), b.size());
      EXPECT_TRUE(std::equal(a.data(), a.data() + a.size(), b.data())) << "two threads decoded other pixels";
      ++decoded;
    }
  }
  // Most damage inside the entropy-coded data still decodes (libjpeg
  // resynchronizes or fills in), so the pixel comparison above really ran.
  EXPECT_GE(decoded, 20);
}

}  // namespace
}  // namespace vinfer::test
