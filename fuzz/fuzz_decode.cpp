// libFuzzer: JPEG/PNG decoding into every pixel format, with the fast
// options; and the two-thread JPEG paths, which must agree with one thread:
// the same outcome always, the same bytes at full size (libjpeg does the
// transforms there). DCT-scaled, two threads use vinfer's own scan decoder,
// whose transforms equal libjpeg's on every valid file but may differ on
// damaged data whose coefficients overflow 16 bits (libjpeg's own C and
// SIMD transforms differ there too).
#include <cstdint>
#include <algorithm>
#include <cstdlib>

#include "vinfer/decode.hpp"
#include "vinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vinfer::ImageU8 img;
  for (int mode = 0; mode < 5; ++mode) {
    vinfer::DecodeOptions o;
    o.max_pixels = 1 << 22;  // keep the fuzzer fast; the limit itself is tested elsewhere
    o.format = mode == 0 ? vinfer::PixelFormat::RGB : mode == 1 ? vinfer::PixelFormat::Gray : vinfer::PixelFormat::RGBA;
    if (mode == 3) {
      o.format = vinfer::PixelFormat::Gray;
      o.luma_only = true;
      o.target_width = o.target_height = 17;
      o.apply_exif_orientation = true;
    }
    if (mode == 4) o.target_width = o.target_height = 9;  // RGB, DCT-scaled
    bool ok = true;
    try {
      vinfer::decode_memory(data, size, o, img, "fuzz");
    } catch (const vinfer::Error&) {
      ok = false;
    }
    if (mode == 2) continue;
    vinfer::ImageU8 two;
    o.threads = 2;
    bool ok2 = true;
    try {
      vinfer::decode_memory(data, size, o, two, "fuzz");
    } catch (const vinfer::Error&) {
      ok2 = false;
    }
    if (ok != ok2) std::abort();
    if (ok && two.size() != img.size()) std::abort();
    if (ok && mode < 2 && !std::equal(img.data(), img.data() + img.size(), two.data())) std::abort();
  }
  return 0;
}
