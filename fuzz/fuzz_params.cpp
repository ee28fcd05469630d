// libFuzzer: the parameter parsers a user types: preset names and sizes,
// resize specs (framework, filter, flags), and a resize run with them,
// checked byte for byte against the reference implementation.
#include <algorithm>
#include <cstdint>
#include <string>

#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/resize.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 6, size - 6);
  const int w = 1 + data[0], h = 1 + data[1] % 64, ow = 1 + data[2], oh = 1 + data[3] % 80, c = data[4] % 3;
  try {
    vinfer::Preset p = vinfer::preset(text, 1 + data[5]);
    (void)p;
  } catch (const vinfer::Error&) {
  }
  try {
    const auto cut = text.find(':');
    vinfer::ResizeSpec spec;
    spec.compat = vinfer::parse_compat(text.substr(0, cut));
    if (cut != std::string::npos) spec.filter = vinfer::parse_filter(text.substr(cut + 1));
    spec.antialias = data[5] & 1;
    spec.align_corners = data[5] & 2;
    vinfer::ImageU8 in(w, h, c == 0 ? 1 : c == 1 ? 3 : 4), out;
    for (std::size_t i = 0; i < in.size() && i < size; ++i) in.data()[i] = data[i];
    vinfer::Resizer r(spec);
    r.run(in.view(), ow, oh, out);
    // Differential: the fast path (SIMD kernels, shuffle gathers, banded
    // passes) must give the reference's bytes, and its float path the
    // reference's floats.
    vinfer::ImageU8 ref;
    vinfer::resize_reference(in.view(), ow, oh, spec, ref);
    if (ref.size() != out.size() || !std::equal(out.data(), out.data() + out.size(), ref.data())) __builtin_trap();
    vinfer::ImageF32 inf(w, h, in.channels()), outf, reff;
    for (std::size_t i = 0; i < in.size(); ++i) inf.data()[i] = in.data()[i];
    r.run(in.view(), ow, oh, outf);
    vinfer::resize_reference(inf.view(), ow, oh, spec, reff);
    if (reff.size() != outf.size() || !std::equal(outf.data(), outf.data() + outf.size(), reff.data())) __builtin_trap();
  } catch (const vinfer::Error&) {
  }
  return 0;
}
