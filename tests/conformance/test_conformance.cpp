// Conformance: vinfer against what Pillow, OpenCV, PyTorch and TensorFlow
// themselves produced (tests/conformance/gen_fixtures.py made the fixtures;
// versions are in the manifests). u8 results must be identical, f32 within
// the case's tolerance on a 0-255 scale.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../unit/test_support.hpp"
#include "vinfer/color.hpp"
#include "vinfer/io.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/resize.hpp"

namespace vinfer::test {
namespace {

using nlohmann::json;

std::vector<json> load_cases() {
  std::vector<json> out;
  const std::string dir = data_path("fixtures");
  if (!std::filesystem::exists(dir)) return out;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("manifest_", 0) == 0) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    const json m = json::parse(in);
    for (const auto& c : m["cases"]) out.push_back(c);
  }
  return out;
}

struct Actual {
  std::vector<float> values;  // every result compared as float
  std::vector<std::uint8_t> bytes;  // raw bytes for sha256 cases
  std::vector<std::size_t> shape;
};

template <typename T>
Actual from_image(const Image<T>& img) {
  Actual a;
  a.values.assign(img.data(), img.data() + img.size());
  a.bytes.assign(reinterpret_cast<const std::uint8_t*>(img.data()),
                 reinterpret_cast<const std::uint8_t*>(img.data() + img.size()));
  a.shape = {std::size_t(img.height()), std::size_t(img.width())};
  if (img.channels() != 1) a.shape.push_back(std::size_t(img.channels()));
  return a;
}

PixelFormat parse_format(const std::string& f) {
  return f == "gray" ? PixelFormat::Gray : f == "rgba" ? PixelFormat::RGBA : PixelFormat::RGB;
}

Actual run_case(const json& c, bool reference) {
  const std::string op = c["op"];
  const std::string input = data_path(c["input"]);
  if (op == "decode") {
    DecodeOptions o;
    o.format = parse_format(c["format"]);
    o.apply_exif_orientation = c.value("exif", false);
    if (c.contains("target")) o.target_width = o.target_height = c["target"];
    ImageU8 img;
    decode_file(input, o, img);
    return from_image(img);
  }
  if (op == "gray") {
    ImageU8 rgb, g;
    decode_file(input, DecodeOptions{}, rgb);
    rgb_to_gray(rgb.view(), parse_gray_rule(c["rule"].get<std::string>()), g);
    return from_image(g);
  }
  if (op == "preset") {
    Preprocessor pre(preset(c["preset"].get<std::string>(), c["size"]));
    Actual a;
    a.values.resize(pre.tensor_size());
    pre.run_file(input, a.values.data());
    a.bytes.assign(reinterpret_cast<const std::uint8_t*>(a.values.data()),
                   reinterpret_cast<const std::uint8_t*>(a.values.data() + a.values.size()));
    a.shape = pre.tensor_shape();
    return a;
  }
  // resize
  ImageU8 src;
  if (c.contains("gray")) {
    DecodeOptions o;
    o.format = PixelFormat::Gray;
    o.gray_rule = parse_gray_rule(c["gray"].get<std::string>());
    decode_file(input, o, src);
  } else {
    src = load_native(input);
  }
  ResizeSpec s;
  s.compat = parse_compat(c["compat"].get<std::string>());
  s.filter = parse_filter(c["filter"].get<std::string>());
  s.antialias = c.value("antialias", false);
  s.align_corners = c.value("align_corners", false);
  if (c.contains("scale")) s.torch_scale_x = s.torch_scale_y = c["scale"].get<double>();
  const int w = c["width"], h = c["height"];
  if (c["dtype"] == "f32") {
    ImageF32 out;
    if (reference) {
      ImageF32 f(src.width(), src.height(), src.channels());
      for (std::size_t i = 0; i < src.size(); ++i) f.data()[i] = src.data()[i];
      resize_reference(f.view(), w, h, s, out);
    } else {
      Resizer(s).run(src.view(), w, h, out);
    }
    return from_image(out);
  }
  ImageU8 out;
  if (reference) resize_reference(src.view(), w, h, s, out);
  else Resizer(s).run(src.view(), w, h, out);
  return from_image(out);
}

void compare(const json& c, const Actual& a) {
  const double tol = c.value("tol", 0.0);
  if (c.contains("sha256")) {
    std::vector<std::size_t> shape = c["shape"];
    if (shape.size() == 4 || (shape.size() == 3 && a.shape.size() == 3)) EXPECT_EQ(a.shape, shape);
    EXPECT_EQ(sha256_hex(a.bytes.data(), a.bytes.size()), c["sha256"].get<std::string>())
        << "output differs from the framework's (digest mismatch)";
    return;
  }
  std::vector<float> want;
  std::vector<std::size_t> shape;
  if (c.contains("png")) {
    const ImageU8 e = load_native(data_path(c["png"]));
    want.assign(e.data(), e.data() + e.size());
    shape = {std::size_t(e.height()), std::size_t(e.width())};
    if (e.channels() != 1) shape.push_back(std::size_t(e.channels()));
  } else {
    shape = read_npy(data_path(c["npy"]), want);
  }
  ASSERT_EQ(a.shape, shape);
  ASSERT_EQ(a.values.size(), want.size());
  std::size_t bad = 0, first = 0;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a.values[i]) - want[i]);
    if (!(d <= tol)) {  // NaN counts as bad
      if (bad++ == 0) first = i;
    }
    worst = std::max(worst, d);
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << want.size() << " values differ by more than " << tol << "; worst "
                     << worst << "; first at index " << first << ": got " << a.values[first] << ", want "
                     << want[first];
}

class Conformance : public ::testing::TestWithParam<json> {};

TEST_P(Conformance, MatchesFramework) { compare(GetParam(), run_case(GetParam(), false)); }

// The reference implementation must agree with the frameworks too (it is the oracle for the fast path).
class ReferenceConformance : public ::testing::TestWithParam<json> {};
TEST_P(ReferenceConformance, MatchesFramework) { compare(GetParam(), run_case(GetParam(), true)); }

std::vector<json> resize_cases() {
  std::vector<json> out;
  for (const json& c : load_cases())
    if (c["op"] == "resize") out.push_back(c);
  return out;
}

std::string case_name(const ::testing::TestParamInfo<json>& info) {
  std::string n = info.param["id"];
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Conformance, ::testing::ValuesIn(load_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, ReferenceConformance, ::testing::ValuesIn(resize_cases()), case_name);

TEST(ConformanceFixtures, Present) { EXPECT_GT(load_cases().size(), 250u); }

}  // namespace
}  // namespace vinfer::test
