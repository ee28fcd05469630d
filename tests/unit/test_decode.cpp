// Decoding: bad input gives one clear error naming the file; limits hold;
// options behave. (Pixel-exactness against Pillow is in the conformance suite.)
#include <gtest/gtest.h>

#include <regex>

#include "image/decode_internal.hpp"
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

TEST(Decode, LumaOnlyIsCloseToPillowGray) {
  DecodeOptions exact, luma;
  exact.format = luma.format = PixelFormat::Gray;
  luma.luma_only = true;
  ImageU8 a, b;
  decode_file(data_path("images/squirrel_cls.jpg"), exact, a);
  decode_file(data_path("images/squirrel_cls.jpg"), luma, b);
  ASSERT_EQ(a.size(), b.size());
  int worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a.data()[i] - b.data()[i]));
  EXPECT_LE(worst, 6);  // luma differs from RGB->L by chroma rounding only
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

}  // namespace
}  // namespace vinfer::test
