// Format sniffing and the public decode entry points.
#include <cstring>
#include <string>
#include <vector>

#include "image/decode_internal.hpp"
#include "util/file_io.hpp"
#include "vinfer/decode.hpp"
#include "util/scratch.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
namespace {

enum class Sniffed { Jpeg, Png, Other };

Sniffed sniff(const std::uint8_t* d, std::size_t n) {
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return Sniffed::Jpeg;
  static const std::uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (n >= 8 && std::memcmp(d, png, 8) == 0) return Sniffed::Png;
  return Sniffed::Other;
}

std::string describe_unknown(const std::uint8_t* d, std::size_t n) {
  if (n == 0) return "empty file";
  if (n >= 6 && (std::memcmp(d, "GIF87a", 6) == 0 || std::memcmp(d, "GIF89a", 6) == 0)) return "GIF is not supported (JPEG and PNG are)";
  if (n >= 12 && std::memcmp(d, "RIFF", 4) == 0 && std::memcmp(d + 8, "WEBP", 4) == 0) return "WebP is not supported (JPEG and PNG are)";
  if (n >= 2 && d[0] == 'B' && d[1] == 'M') return "BMP is not supported (JPEG and PNG are)";
  if (n >= 4 && (std::memcmp(d, "II*\0", 4) == 0 || std::memcmp(d, "MM\0*", 4) == 0)) return "TIFF is not supported (JPEG and PNG are)";
  return "not a JPEG or PNG image";
}

void run(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8* out, const std::string& name,
         ImageInfo& info) {
  ImageU8 dummy;
  switch (sniff(data, size)) {
    case Sniffed::Jpeg: detail::decode_jpeg(data, size, opt, out ? *out : dummy, name, info, out == nullptr); break;
    case Sniffed::Png: detail::decode_png(data, size, opt, out ? *out : dummy, name, info, out == nullptr); break;
    case Sniffed::Other:
      throw Error(size == 0 ? ErrorKind::BadInput : ErrorKind::Unsupported, name + ": " + describe_unknown(data, size));
  }
}

}  // namespace

namespace detail {
void check_pixel_limit(std::uint64_t w, std::uint64_t h, const DecodeOptions& opt, const std::string& name) {
  if (w == 0 || h == 0) throw Error(ErrorKind::BadInput, name + ": image has zero width or height");
  if (w * h > opt.max_pixels)
    throw Error(ErrorKind::LimitExceeded, name + ": " + std::to_string(w) + "x" + std::to_string(h) + " = " +
                                              std::to_string(w * h) + " pixels exceeds the limit of " +
                                              std::to_string(opt.max_pixels) + " (a decompression-bomb guard: the max_pixels option)");
}
}  // namespace detail

void decode_memory(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
                   const std::string& name, ImageInfo* info) {
  ImageInfo local;
  run(data, size, opt, &out, name, info ? *info : local);
  const int orientation = (info ? *info : local).orientation;
  if (opt.apply_exif_orientation && orientation != 1) detail::apply_orientation(out, orientation);
  else if (opt.on_rows) opt.on_rows(out, out.height());
}

void decode_file(const std::string& path, const DecodeOptions& opt, ImageU8& out, ImageInfo* info) {
  thread_local std::vector<std::uint8_t> bytes;
  const detail::ScratchTrim trim(bytes);
  detail::read_file(path, bytes, 1ULL << 31);
  decode_memory(bytes.data(), bytes.size(), opt, out, path, info);
}

ImageInfo probe_memory(const std::uint8_t* data, std::size_t size, const std::string& name) {
  ImageInfo info;
  DecodeOptions opt;
  opt.max_pixels = ~0ULL;
  run(data, size, opt, nullptr, name, info);
  return info;
}

int jpeg_draft_denominator(int w, int h, int tw, int th) {
  if (tw <= 0 || th <= 0) return 1;
  const int scale = std::min(w / tw, h / th);
  for (int s : {8, 4, 2}) if (scale >= s) return s;
  return 1;
}

}  // namespace vinfer
