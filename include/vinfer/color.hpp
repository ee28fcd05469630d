// vinfer/color.hpp: colour conversions with each framework's exact rounding.
#pragma once
#include <string_view>

#include "vinfer/image.hpp"

namespace vinfer {

// RGB -> gray rules. The differences are small but real (up to 1-2 levels).
enum class GrayRule {
  Pil,     // Pillow convert("L"): (R*19595 + G*38470 + B*7471 + 0x8000) >> 16
  Tf,      // tf.image.rgb_to_grayscale on uint8: float weights, truncation
  OpenCv,  // cv::cvtColor RGB2GRAY (OpenCV 5): 15-bit fixed point, rounded
};

GrayRule parse_gray_rule(std::string_view name);  // "pil" | "tf" | "opencv"
std::string_view to_string(GrayRule rule);

// Converts interleaved RGB (3 channels) or RGBA (4, alpha ignored) to gray.
void rgb_to_gray(const ImageView<std::uint8_t>& in, GrayRule rule, ImageU8& out);

}  // namespace vinfer
