// libFuzzer: JPEG/PNG decoding into every pixel format, with the fast
// options; and the two-thread JPEG path, which must give the one-thread bytes.
#include <cstdint>
#include <algorithm>
#include <cstdlib>

#include "vinfer/decode.hpp"
#include "vinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vinfer::ImageU8 img;
  for (int mode = 0; mode < 4; ++mode) {
    vinfer::DecodeOptions o;
    o.max_pixels = 1 << 22;  // keep the fuzzer fast; the limit itself is tested elsewhere
    o.format = mode == 0 ? vinfer::PixelFormat::RGB : mode == 1 ? vinfer::PixelFormat::Gray : vinfer::PixelFormat::RGBA;
    if (mode == 3) {
      o.format = vinfer::PixelFormat::Gray;
      o.luma_only = true;
      o.target_width = o.target_height = 17;
      o.apply_exif_orientation = true;
    }
    bool ok = true;
    try {
      vinfer::decode_memory(data, size, o, img, "fuzz");
    } catch (const vinfer::Error&) {
      ok = false;
    }
    if (mode > 1) continue;
    vinfer::ImageU8 two;
    o.threads = 2;
    bool ok2 = true;
    try {
      vinfer::decode_memory(data, size, o, two, "fuzz");
    } catch (const vinfer::Error&) {
      ok2 = false;
    }
    if (ok != ok2) std::abort();
    if (ok && (two.size() != img.size() || !std::equal(img.data(), img.data() + img.size(), two.data()))) std::abort();
  }
  return 0;
}
