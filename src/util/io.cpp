// vinfer/io.hpp: .npy, PNG and text files, each written atomically.
#include <spng.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "util/file_io.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"

namespace vinfer {
namespace {

std::string npy_header(const char* descr, const std::vector<std::size_t>& shape) {
  std::string s = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) s += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  s += "), }";
  const std::size_t total = 10 + s.size() + 1;
  s.append((64 - total % 64) % 64, ' ');
  s += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  const std::uint16_t len = static_cast<std::uint16_t>(s.size());
  h += static_cast<char>(len & 0xff);
  h += static_cast<char>(len >> 8);
  return h + s;
}

void write_raw(const std::string& path, const char* descr, const void* data, std::size_t bytes,
               const std::vector<std::size_t>& shape) {
  const std::string header = npy_header(descr, shape);
  detail::write_file_atomic(path, [&](std::FILE* f) {
    std::fwrite(header.data(), 1, header.size(), f);
    if (bytes) std::fwrite(data, 1, bytes, f);
  });
}

std::size_t count(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

}  // namespace

void write_npy(const std::string& path, const float* data, const std::vector<std::size_t>& shape) {
  write_raw(path, "<f4", data, count(shape) * sizeof(float), shape);
}

void write_npy(const std::string& path, const std::uint8_t* data, const std::vector<std::size_t>& shape) {
  write_raw(path, "|u1", data, count(shape), shape);
}

void write_text(const std::string& path, const std::string& text) {
  detail::write_file_atomic(path, [&](std::FILE* f) { std::fwrite(text.data(), 1, text.size(), f); });
}

std::vector<std::size_t> read_npy(const std::string& path, std::vector<float>& data) {
  std::vector<std::uint8_t> bytes;
  detail::read_file(path, bytes);
  return read_npy_memory(bytes.data(), bytes.size(), path, data);
}

std::vector<std::size_t> read_npy_memory(const std::uint8_t* bytes, std::size_t size, const std::string& name,
                                         std::vector<float>& data) {
  const std::span<const std::uint8_t> buf(bytes, size);
  auto bad = [&](const char* why) { return Error(ErrorKind::BadInput, name + ": not a supported .npy file: " + why); };
  if (buf.size() < 10 || std::memcmp(buf.data(), "\x93NUMPY", 6) != 0) throw bad("missing magic");
  std::size_t hlen, off;
  if (buf[6] == 1) {
    hlen = buf[8] | (buf[9] << 8);
    off = 10;
  } else {
    if (buf.size() < 12) throw bad("short header");
    hlen = buf[8] | (buf[9] << 8) | (buf[10] << 16) | (static_cast<std::size_t>(buf[11]) << 24);
    off = 12;
  }
  if (off + hlen > buf.size()) throw bad("short header");
  const std::string h(reinterpret_cast<const char*>(buf.data() + off), hlen);
  if (h.find("'fortran_order': False") == std::string::npos) throw bad("fortran order");
  const bool f32 = h.find("'<f4'") != std::string::npos;
  const bool u8 = h.find("'|u1'") != std::string::npos;
  if (!f32 && !u8) throw bad("dtype must be <f4 or |u1");
  const std::size_t p = h.find("'shape': (");
  if (p == std::string::npos) throw bad("no shape");
  std::vector<std::size_t> shape;
  std::size_t i = p + 10;
  while (i < h.size() && h[i] != ')') {
    if (std::isdigit(static_cast<unsigned char>(h[i]))) {
      std::size_t v = 0;
      while (i < h.size() && std::isdigit(static_cast<unsigned char>(h[i]))) {
        v = v * 10 + static_cast<std::size_t>(h[i++] - '0');
        if (v > buf.size()) throw bad("shape larger than the file");  // also keeps the product below from overflowing
      }
      shape.push_back(v);
    } else {
      ++i;
    }
  }
  std::size_t n = 1;
  for (const std::size_t d : shape) {
    if (d != 0 && n > buf.size() / d) throw bad("shape larger than the file");
    n *= d;
  }
  const std::size_t body = off + hlen;
  if ((buf.size() - body) / (f32 ? 4 : 1) < n) throw bad("truncated data");
  data.resize(n);
  if (f32 && n > 0) std::memcpy(data.data(), buf.data() + body, n * 4);
  else for (std::size_t k = 0; k < n; ++k) data[k] = buf[body + k];
  return shape;
}

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
