#include <string>

#include "image/color_kernels.hpp"
#include "vinfer/color.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
GrayRule parse_gray_rule(std::string_view n) {
  if (n == "pil" || n == "pillow") return GrayRule::Pil;
  if (n == "tf" || n == "tensorflow") return GrayRule::Tf;
  if (n == "opencv" || n == "cv2") return GrayRule::OpenCv;
  throw Error(ErrorKind::InvalidArgument, "unknown gray rule '" + std::string(n) + "' (pil, tf, opencv)");
}

std::string_view to_string(GrayRule r) {
  switch (r) {
    case GrayRule::Pil: return "pil";
    case GrayRule::Tf: return "tf";
    case GrayRule::OpenCv: return "opencv";
  }
  return "?";
}

namespace {
inline std::uint8_t gray_tf(unsigned r, unsigned g, unsigned b) {
  // convert_image_dtype to float (x * (1/255)), dot with the weights, back by truncating x * 255.5.
  const float s = 1.0f / 255.0f;
  const float v = static_cast<float>(r) * s * 0.2989f + static_cast<float>(g) * s * 0.587f +
                  static_cast<float>(b) * s * 0.114f;
  const float scaled = v * 255.5f;
  return static_cast<std::uint8_t>(scaled >= 255.f ? 255 : scaled <= 0.f ? 0 : static_cast<int>(scaled));
}

template <std::uint8_t (*F)(unsigned, unsigned, unsigned)>
void convert(const ImageView<std::uint8_t>& in, ImageU8& out) {
  const int C = in.channels;
  for (int y = 0; y < in.height; ++y) {
    const std::uint8_t* s = in.row(y);
    std::uint8_t* d = out.row(y);
    for (int x = 0; x < in.width; ++x, s += C) d[x] = F(s[0], s[1], s[2]);
  }
}
}  // namespace

void rgb_to_gray(const ImageView<std::uint8_t>& in, GrayRule rule, ImageU8& out) {
  if (in.channels != 3 && in.channels != 4)
    throw Error(ErrorKind::InvalidArgument, "rgb_to_gray: needs 3 or 4 channels, got " + std::to_string(in.channels));
  out.reshape(in.width, in.height, 1);
  if (rule == GrayRule::Tf) return convert<gray_tf>(in, out);
  // Pillow: (R*19595 + G*38470 + B*7471 + 0x8000) >> 16; OpenCV 5: (R*9798 + G*19235 + B*3735 + 2^14) >> 15.
  const bool pil = rule == GrayRule::Pil;
  for (int y = 0; y < in.height; ++y)
    detail::gray_int_row(in.row(y), in.channels, out.row(y), static_cast<std::size_t>(in.width),
                         pil ? 19595 : 9798, pil ? 38470 : 19235, pil ? 7471 : 3735, pil ? 0x8000 : 1 << 14,
                         pil ? 16 : 15);
}

}  // namespace vinfer
