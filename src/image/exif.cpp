// Minimal EXIF reader (the Orientation tag only) and the matching transposes.
#include <utility>

#include "image/decode_internal.hpp"

namespace vinfer::detail {

int exif_orientation(const std::uint8_t* t, std::size_t n) {
  if (!t || n < 8) return 1;
  const bool le = t[0] == 'I' && t[1] == 'I';
  if (!le && !(t[0] == 'M' && t[1] == 'M')) return 1;
  auto u16 = [&](std::size_t o) -> unsigned { return le ? t[o] | (t[o + 1] << 8) : (t[o] << 8) | t[o + 1]; };
  auto u32 = [&](std::size_t o) -> std::uint32_t {
    return le ? t[o] | (t[o + 1] << 8) | (t[o + 2] << 16) | (static_cast<std::uint32_t>(t[o + 3]) << 24)
              : (static_cast<std::uint32_t>(t[o]) << 24) | (t[o + 1] << 16) | (t[o + 2] << 8) | t[o + 3];
  };
  const std::uint32_t ifd = u32(4);
  if (ifd > n - 2) return 1;
  const unsigned entries = u16(ifd);
  for (unsigned i = 0; i < entries; ++i) {
    const std::size_t e = ifd + 2 + 12ull * i;
    if (e + 12 > n) return 1;
    if (u16(e) == 0x0112 && u16(e + 2) == 3) {
      const unsigned v = u16(e + 8);
      return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
    }
  }
  return 1;
}

void apply_orientation(ImageU8& img, int o) {
  if (o <= 1 || o > 8) return;
  const int W = img.width(), H = img.height(), C = img.channels();
  const bool swap = o >= 5;
  ImageU8 out(swap ? H : W, swap ? W : H, C);
  const int OW = out.width(), OH = out.height();
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int ox = x, oy = y;
      switch (o) {
        case 2: ox = W - 1 - x; break;                 // mirror horizontal
        case 3: ox = W - 1 - x; oy = H - 1 - y; break;  // rotate 180
        case 4: oy = H - 1 - y; break;                 // mirror vertical
        case 5: ox = y; oy = x; break;                 // transpose
        case 6: ox = OW - 1 - y; oy = x; break;        // rotate 90 CW
        case 7: ox = OW - 1 - y; oy = OH - 1 - x; break;  // transverse
        case 8: ox = y; oy = OH - 1 - x; break;        // rotate 90 CCW
      }
      for (int c = 0; c < C; ++c) out.row(oy)[ox * C + c] = img.row(y)[x * C + c];
    }
  img = std::move(out);
}

}  // namespace vinfer::detail
