// PNG through libspng, converted the way Pillow opens and converts each PNG
// type (including its quirks: 16-bit gray clips to 255, 16-bit colour keeps
// the high byte, 2/4-bit gray is scaled, 1-bit gray becomes 0/255).
// Non-interlaced 8-bit images take a faster road to the same bytes: their
// IDAT stream inflated in one call by libdeflate and the rows unfiltered
// here (libspng 0.7 inflates through zlib a row at a time and unfilters
// byte by byte: 5.8 of the 6.1 ms of a 451x300 RGB photo's preprocessing).
// Anything that road does not take cleanly (a bad CRC, a stream that is
// short, long or corrupt, an unknown filter, a critical chunk after the
// data) goes through libspng, whose answer, image or error, is the result.
#include <libdeflate.h>
#include <spng.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "image/decode_internal.hpp"
#include "vinfer/color.hpp"
#include "util/debug_env.hpp"
#include "util/scratch.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

struct Ctx {
  spng_ctx* p = spng_ctx_new(0);
  ~Ctx() { spng_ctx_free(p); }
};

[[noreturn]] void fail(const std::string& name, int rc) {
  const ErrorKind kind = rc == SPNG_EOF || rc == SPNG_EBUF_SET ? ErrorKind::BadInput : ErrorKind::BadInput;
  std::string why = spng_strerror(rc);
  if (rc == SPNG_EOF) why = "truncated PNG data (premature end of file)";
  throw Error(kind, name + ": corrupt PNG: " + why);
}

std::uint32_t be32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}

// The PNG filters (ISO 15948, 9.2) undone for one row of n bytes: f the
// filter type, bpp bytes per pixel (at least 1), prior the unfiltered row
// above (zeros for the first). Returns false for an unknown filter type.
// The first pixel has no left neighbour (a = c = 0); the loops after it none
// of the checks, so that the bytes of a pixel (independent) overlap.
bool unfilter_row(int f, const std::uint8_t* in, std::uint8_t* out, const std::uint8_t* prior, std::size_t n,
                  std::size_t bpp) {
  const std::size_t first = std::min(bpp, n);
  switch (f) {
    case 0: std::memcpy(out, in, n); return true;
    case 1:
      std::memcpy(out, in, first);
      for (std::size_t i = first; i < n; ++i) out[i] = static_cast<std::uint8_t>(in[i] + out[i - bpp]);
      return true;
    case 2:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(in[i] + prior[i]);
      return true;
    case 3:
      for (std::size_t i = 0; i < first; ++i) out[i] = static_cast<std::uint8_t>(in[i] + prior[i] / 2);
      for (std::size_t i = first; i < n; ++i) out[i] = static_cast<std::uint8_t>(in[i] + (out[i - bpp] + prior[i]) / 2);
      return true;
    case 4:
      for (std::size_t i = 0; i < first; ++i) out[i] = static_cast<std::uint8_t>(in[i] + prior[i]);  // Paeth(0, b, 0) = b
      for (std::size_t i = first; i < n; ++i) {
        // (without branches: which predictor wins is random in a photo)
        const int a = out[i - bpp], b = prior[i], c = prior[i - bpp];
        const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
        const int bc = pb <= pc ? b : c;
        const bool take_a = (pa <= pb) & (pa <= pc);
        out[i] = static_cast<std::uint8_t>(in[i] + (take_a ? a : bc));
      }
      return true;
    default: return false;
  }
}

// The fast road: raw (rows of row_bytes) from a well-formed, non-interlaced
// 8-bit PNG's IDAT chunks, or false where it does not apply or anything is
// off, leaving the decision to libspng.
bool inflate_8bit(const std::uint8_t* data, std::size_t size, const spng_ihdr& ihdr, std::size_t channels,
                  std::vector<std::uint8_t>& raw) {
  if (ihdr.bit_depth != 8 || ihdr.interlace_method != 0 || size < 8) return false;
  // IDAT chunks are consecutive (ISO 15948, 5.6): their data as one stream.
  thread_local std::vector<std::uint8_t> stream;
  const ScratchTrim trim_stream(stream);
  stream.clear();
  // Up to IEND, as libspng reads: chunk names of letters, the IDATs and
  // every critical chunk with a good CRC, no critical chunk after the
  // IDATs but IEND (libspng, not this, reads what comes before them).
  bool after = false;
  for (std::size_t at = 8;;) {
    if (size - at < 12) return false;
    const std::uint32_t len = be32(data + at);
    if (len > 0x7fffffffu || size - at - 12 < len) return false;
    const std::uint8_t* type = data + at + 4;
    for (int i = 0; i < 4; ++i)
      if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z'))) return false;
    const bool idat = std::memcmp(type, "IDAT", 4) == 0, critical = type[0] <= 'Z';
    if (critical && libdeflate_crc32(0, type, len + 4u) != be32(type + 4 + len)) return false;
    if (idat) {
      if (after) return false;
      stream.insert(stream.end(), type + 4, type + 4 + len);
    } else if (!stream.empty()) {
      after = true;
      if (std::memcmp(type, "IEND", 4) == 0) {
        if (len != 0) return false;
        break;
      }
      if (critical) return false;
    }
    at += 12u + len;
  }
  const std::size_t row_bytes = static_cast<std::size_t>(ihdr.width) * channels, rows = ihdr.height;
  if (row_bytes == 0 || rows == 0) return false;
  thread_local std::vector<std::uint8_t> filtered;
  const ScratchTrim trim_filtered(filtered);
  filtered.resize((row_bytes + 1) * rows);
  struct Decompressor {
    libdeflate_decompressor* p = libdeflate_alloc_decompressor();
    ~Decompressor() { libdeflate_free_decompressor(p); }
  };
  thread_local Decompressor d;
  if (!d.p) return false;
  std::size_t used = 0;
  if (libdeflate_zlib_decompress_ex(d.p, stream.data(), stream.size(), filtered.data(), filtered.size(), &used, nullptr) !=
          LIBDEFLATE_SUCCESS ||
      used != stream.size())
    return false;
  raw.resize(row_bytes * rows);
  thread_local std::vector<std::uint8_t> zeros;
  zeros.assign(row_bytes, 0);
  for (std::size_t y = 0; y < rows; ++y) {
    const std::uint8_t* in = filtered.data() + y * (row_bytes + 1);
    std::uint8_t* out = raw.data() + y * row_bytes;
    if (!unfilter_row(in[0], in + 1, out, y ? out - row_bytes : zeros.data(), row_bytes, channels)) return false;
  }
  return true;
}

}  // namespace

void decode_png(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
                const std::string& name, ImageInfo& info, bool header_only) {
  Ctx ctx;
  if (!ctx.p) throw std::bad_alloc();
  spng_set_crc_action(ctx.p, SPNG_CRC_ERROR, SPNG_CRC_DISCARD);
  spng_set_chunk_limits(ctx.p, 64u << 20, 64u << 20);
  spng_set_image_limits(ctx.p, 0x7fffffff, 0x7fffffff);
  int rc = spng_set_png_buffer(ctx.p, data, size);
  if (rc) fail(name, rc);
  spng_ihdr ihdr{};
  if ((rc = spng_get_ihdr(ctx.p, &ihdr))) fail(name, rc);
  info.codec = ImageCodec::Png;
  info.width = static_cast<int>(ihdr.width);
  info.height = static_cast<int>(ihdr.height);
  info.bit_depth = ihdr.bit_depth;
  const int ct = ihdr.color_type;
  info.channels = ct == SPNG_COLOR_TYPE_TRUECOLOR ? 3 : ct == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA ? 4
                  : ct == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ? 2 : ct == SPNG_COLOR_TYPE_INDEXED ? 3 : 1;
  // A palette with transparency expands to RGBA (Pillow's convert("RGBA") keeps it).
  spng_trns palette_alpha{};
  if (ct == SPNG_COLOR_TYPE_INDEXED && spng_get_trns(ctx.p, &palette_alpha) == 0) info.channels = 4;
  spng_exif exif{};
  info.orientation = spng_get_exif(ctx.p, &exif) == 0
                         ? exif_orientation(reinterpret_cast<const std::uint8_t*>(exif.data), exif.length)
                         : 1;
  if (header_only) return;
  check_pixel_limit(ihdr.width, ihdr.height, opt, name);

  std::size_t len = 0;
  if ((rc = spng_decoded_image_size(ctx.p, SPNG_FMT_PNG, &len))) fail(name, rc);
  thread_local std::vector<std::uint8_t> raw;
  const ScratchTrim trim(raw);
  const int src_c = ct == SPNG_COLOR_TYPE_TRUECOLOR ? 3 : ct == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA ? 4
                    : ct == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ? 2 : 1;  // samples per pixel (a palette index: 1)
  spng_plte plte{};
  const int plte_rc = spng_get_plte(ctx.p, &plte);  // reads (and checks) every chunk before the image data
  if (debug_env_is(DebugVar::Png, "spng") || (plte_rc != 0 && plte_rc != SPNG_ECHUNKAVAIL) ||
      !inflate_8bit(data, size, ihdr, static_cast<std::size_t>(src_c), raw) || raw.size() != len) {
    raw.resize(len);
    if ((rc = spng_decode_image(ctx.p, raw.data(), len, SPNG_FMT_PNG, 0))) fail(name, rc);
  }

  const bool has_plte = spng_get_plte(ctx.p, &plte) == 0;
  spng_trns trns{};
  const bool has_trns = spng_get_trns(ctx.p, &trns) == 0;
  if (ct == SPNG_COLOR_TYPE_INDEXED && !has_plte) throw Error(ErrorKind::BadInput, name + ": corrupt PNG: palette image without PLTE");

  const int W = info.width, H = info.height, depth = ihdr.bit_depth;
  const std::size_t row_bytes = len / static_cast<std::size_t>(H);
  // Step 1: Pillow's 8-bit mode of the file, as RGBA or gray+alpha samples per pixel.
  thread_local std::vector<std::uint8_t> px;  // 4 bytes per pixel: R G B A (gray: v v v a)
  px.resize(static_cast<std::size_t>(W) * 4);
  const int C = static_cast<int>(opt.format);
  out.reshape(W, H, C);
  const bool gray_src = ct == SPNG_COLOR_TYPE_GRAYSCALE || ct == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA;
  // 8-bit samples that are the output's as they are: rows copied.
  if (depth == 8 && !has_trns && ((ct == SPNG_COLOR_TYPE_TRUECOLOR && C == 3) || (ct == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA && C == 4) ||
                                  (ct == SPNG_COLOR_TYPE_GRAYSCALE && C == 1))) {
    for (int y = 0; y < H; ++y) std::memcpy(out.row(y), raw.data() + static_cast<std::size_t>(y) * row_bytes, row_bytes);
    return;
  }
  for (int y = 0; y < H; ++y) {
    const std::uint8_t* r = raw.data() + static_cast<std::size_t>(y) * row_bytes;
    for (int x = 0; x < W; ++x) {
      std::uint8_t* p = &px[static_cast<std::size_t>(x) * 4];
      if (depth < 8) {  // gray or palette, packed MSB first
        const int per = 8 / depth, shift = 8 - depth * (x % per + 1);
        const unsigned v = (r[x / per] >> shift) & ((1u << depth) - 1);
        if (ct == SPNG_COLOR_TYPE_INDEXED) {
          const bool ok = v < plte.n_entries;
          p[0] = ok ? plte.entries[v].red : 0;
          p[1] = ok ? plte.entries[v].green : 0;
          p[2] = ok ? plte.entries[v].blue : 0;
          p[3] = has_trns && v < trns.n_type3_entries ? trns.type3_alpha[v] : 255;
        } else {
          const unsigned g = depth == 1 ? v * 255 : depth == 2 ? v * 85 : v * 17;
          p[0] = p[1] = p[2] = static_cast<std::uint8_t>(g);
          p[3] = has_trns && v == trns.gray ? 0 : 255;
        }
        continue;
      }
      if (ct == SPNG_COLOR_TYPE_INDEXED) {
        const unsigned v = r[x];
        const bool ok = v < plte.n_entries;
        p[0] = ok ? plte.entries[v].red : 0;
        p[1] = ok ? plte.entries[v].green : 0;
        p[2] = ok ? plte.entries[v].blue : 0;
        p[3] = has_trns && v < trns.n_type3_entries ? trns.type3_alpha[v] : 255;
        continue;
      }
      if (depth == 8) {
        const std::uint8_t* s = r + static_cast<std::size_t>(x) * src_c;
        if (gray_src) {
          p[0] = p[1] = p[2] = s[0];
          p[3] = src_c == 2 ? s[1] : (has_trns && s[0] == trns.gray ? 0 : 255);
        } else {
          p[0] = s[0], p[1] = s[1], p[2] = s[2];
          p[3] = src_c == 4 ? s[3]
                            : (has_trns && s[0] == trns.red && s[1] == trns.green && s[2] == trns.blue ? 0 : 255);
        }
        continue;
      }
      // 16-bit, host endian.
      const std::uint16_t* s = reinterpret_cast<const std::uint16_t*>(r) + static_cast<std::size_t>(x) * src_c;
      if (ct == SPNG_COLOR_TYPE_GRAYSCALE) {  // Pillow "I;16": conversion to 8 bits clips
        const std::uint8_t g = s[0] > 255 ? 255 : static_cast<std::uint8_t>(s[0]);
        p[0] = p[1] = p[2] = g;
        p[3] = 255;
      } else if (gray_src) {  // "LA;16B": high bytes
        p[0] = p[1] = p[2] = static_cast<std::uint8_t>(s[0] >> 8);
        p[3] = static_cast<std::uint8_t>(s[1] >> 8);
      } else {
        p[0] = static_cast<std::uint8_t>(s[0] >> 8);
        p[1] = static_cast<std::uint8_t>(s[1] >> 8);
        p[2] = static_cast<std::uint8_t>(s[2] >> 8);
        p[3] = src_c == 4 ? static_cast<std::uint8_t>(s[3] >> 8) : 255;
      }
    }
    std::uint8_t* d = out.row(y);
    if (C == 4) {
      std::memcpy(d, px.data(), static_cast<std::size_t>(W) * 4);
    } else if (C == 3) {
      for (int x = 0; x < W; ++x) std::memcpy(d + 3 * x, &px[4 * x], 3);
    } else if (gray_src) {
      for (int x = 0; x < W; ++x) d[x] = px[4 * x];
    } else {
      ImageView<std::uint8_t> v{px.data(), W, 1, 4, static_cast<std::ptrdiff_t>(W) * 4};
      thread_local ImageU8 g;
      rgb_to_gray(v, opt.gray_rule, g);
      std::memcpy(d, g.data(), static_cast<std::size_t>(W));
    }
  }
}

}  // namespace vinfer::detail
