#include <spng.h>

#include <memory>
#include <string>

#include "util/file_io.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"

namespace vinfer {

void write_png(const std::string& path, const ImageView<std::uint8_t>& img) {
  std::uint8_t color;
  switch (img.channels) {
    case 1: color = SPNG_COLOR_TYPE_GRAYSCALE; break;
    case 3: color = SPNG_COLOR_TYPE_TRUECOLOR; break;
    case 4: color = SPNG_COLOR_TYPE_TRUECOLOR_ALPHA; break;
    default: throw Error(ErrorKind::InvalidArgument, path + ": PNG needs 1, 3 or 4 channels");
  }
  std::unique_ptr<spng_ctx, decltype(&spng_ctx_free)> ctx(spng_ctx_new(SPNG_CTX_ENCODER), spng_ctx_free);
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_LEVEL, 6);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<std::uint32_t>(img.width);
  ihdr.height = static_cast<std::uint32_t>(img.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = color;
  spng_set_ihdr(ctx.get(), &ihdr);
  const std::size_t row = static_cast<std::size_t>(img.width) * img.channels;
  int rc = spng_encode_image(ctx.get(), nullptr, 0, SPNG_FMT_PNG, SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE);
  for (int y = 0; rc == 0 && y < img.height; ++y) {
    rc = spng_encode_row(ctx.get(), img.row(y), row);
    if (rc == SPNG_EOI) rc = 0;
  }
  if (rc != 0 && rc != SPNG_EOI) throw Error(ErrorKind::Internal, path + ": PNG encoding failed: " + spng_strerror(rc));
  std::size_t len = 0;
  int err = 0;
  void* buf = spng_get_png_buffer(ctx.get(), &len, &err);
  if (!buf) throw Error(ErrorKind::Internal, path + ": PNG encoding failed: " + spng_strerror(err));
  std::unique_ptr<void, decltype(&std::free)> owner(buf, std::free);
  detail::write_file_atomic(path, [&](std::FILE* f) { std::fwrite(buf, 1, len, f); });
}

}  // namespace vinfer
