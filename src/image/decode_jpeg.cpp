// JPEG through libjpeg-turbo's libjpeg API, matching Pillow's defaults
// (accurate integer IDCT, fancy upsampling) so that pixels are identical.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <jerror.h>

#include "image/decode_internal.hpp"
#include "vinfer/color.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

struct ErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
};

void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorMgr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void on_message(j_common_ptr cinfo, int level) {
  auto* err = reinterpret_cast<ErrorMgr*>(cinfo->err);
  // A premature end of data is an error for us, as for Pillow (unless LOAD_TRUNCATED_IMAGES).
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    err->truncated = true;
    std::snprintf(err->message, sizeof err->message, "truncated JPEG data (premature end of file)");
    std::longjmp(err->jump, 1);
  }
}

struct Decompressor {
  jpeg_decompress_struct cinfo{};
  ErrorMgr err{};
  Decompressor() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    jpeg_create_decompress(&cinfo);
  }
  ~Decompressor() { jpeg_destroy_decompress(&cinfo); }
};

// Pillow's CMYK -> RGB: nk = 255 - K; channel = nk - (C * nk) / 255 rounded (MULDIV255).
inline std::uint8_t cmyk_channel(unsigned c, unsigned nk) {
  const unsigned t = c * nk + 128;
  const int v = static_cast<int>(nk) - static_cast<int>(((t >> 8) + t) >> 8);
  return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

int find_orientation(jpeg_decompress_struct& cinfo) {
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0)
      return exif_orientation(m->data + 6, m->data_length - 6);
  }
  return 1;
}

enum class RowConv { None, CmykToRgb, RgbToGray };

// Returns false with err.message set if libjpeg failed. No C++ objects with
// destructors live between setjmp and any longjmp below.
bool run(Decompressor& d, const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
         ImageInfo& info, bool header_only, std::vector<std::uint8_t>& rowbuf, const std::string& name) {
  jpeg_decompress_struct& c = d.cinfo;
  if (setjmp(d.err.jump)) return false;
  jpeg_mem_src(&c, data, static_cast<unsigned long>(size));
  jpeg_save_markers(&c, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&c, TRUE);
  info.codec = ImageCodec::Jpeg;
  info.width = static_cast<int>(c.image_width);
  info.height = static_cast<int>(c.image_height);
  info.channels = c.num_components;
  info.bit_depth = 8;
  info.orientation = find_orientation(c);
  if (header_only) return true;
  check_pixel_limit(c.image_width, c.image_height, opt, name);

  const bool cmyk = c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK;
  const bool gray_src = c.jpeg_color_space == JCS_GRAYSCALE;
  const int C = static_cast<int>(opt.format);
  RowConv conv = RowConv::None;
  if (cmyk) {
    c.out_color_space = JCS_CMYK;
    conv = RowConv::CmykToRgb;
  } else if (opt.format == PixelFormat::Gray) {
    if (gray_src || opt.luma_only) {
      c.out_color_space = JCS_GRAYSCALE;
    } else {
      c.out_color_space = JCS_EXT_RGB;
      conv = RowConv::RgbToGray;
    }
  } else {
    c.out_color_space = opt.format == PixelFormat::RGBA ? JCS_EXT_RGBA : JCS_EXT_RGB;
  }
  c.dct_method = JDCT_ISLOW;
  c.do_fancy_upsampling = TRUE;
  c.scale_num = 1;
  c.scale_denom = static_cast<unsigned>(
      jpeg_draft_denominator(info.width, info.height, opt.target_width, opt.target_height));
  jpeg_start_decompress(&c);
  const int W = static_cast<int>(c.output_width), H = static_cast<int>(c.output_height);
  out.reshape(W, H, C);
  const int in_c = c.output_components;
  // libjpeg-turbo's SIMD colour conversion writes 32-byte-aligned rows with
  // non-temporal stores, which send the row to memory just before we read it
  // back (3.4 ms of an 8 ms decode for a 2 MP gray conversion). An odd
  // address keeps its ordinary stores, so the row stays in L1.
  std::uint8_t* tmp = nullptr;
  if (conv != RowConv::None) {
    rowbuf.resize(static_cast<std::size_t>(W) * in_c + 64);
    tmp = rowbuf.data() + (32 - reinterpret_cast<std::uintptr_t>(rowbuf.data()) % 32) % 32 + 1;
  }
  const bool adobe_inverted = cmyk && c.saw_Adobe_marker;
  const GrayRule rule = opt.gray_rule;
  const bool progress = opt.on_rows && !opt.apply_exif_orientation;
  while (c.output_scanline < c.output_height) {
    const int y = static_cast<int>(c.output_scanline);
    JSAMPROW row = conv == RowConv::None ? out.row(y) : tmp;
    jpeg_read_scanlines(&c, &row, 1);
    if (conv == RowConv::None) {
      if (progress && (y + 1) % 16 == 0) opt.on_rows(out, y + 1);
      continue;
    }
    std::uint8_t* px = tmp;
    if (conv == RowConv::CmykToRgb) {
      // Pillow reads Adobe CMYK as inverted ("CMYK;I"), then converts to RGB.
      for (int x = 0; x < W; ++x, px += 4) {
        unsigned v[4];
        for (int k = 0; k < 4; ++k) v[k] = adobe_inverted ? 255u - px[k] : px[k];
        const unsigned nk = 255 - v[3];
        px[0] = cmyk_channel(v[0], nk);
        px[1] = cmyk_channel(v[1], nk);
        px[2] = cmyk_channel(v[2], nk);
        px[3] = 255;
      }
      ImageView<std::uint8_t> rgba{tmp, W, 1, 4, static_cast<std::ptrdiff_t>(W) * 4};
      if (opt.format == PixelFormat::Gray) {
        thread_local ImageU8 g;
        rgb_to_gray(rgba, rule, g);
        std::memcpy(out.row(y), g.data(), static_cast<std::size_t>(W));
      } else {
        std::uint8_t* d = out.row(y);
        for (int x = 0; x < W; ++x)
          for (int k = 0; k < C; ++k) d[x * C + k] = tmp[x * 4 + k];
      }
    } else {
      ImageView<std::uint8_t> rgb{tmp, W, 1, 3, static_cast<std::ptrdiff_t>(W) * 3};
      thread_local ImageU8 g;
      rgb_to_gray(rgb, rule, g);
      std::memcpy(out.row(y), g.data(), static_cast<std::size_t>(W));
    }
    if (progress && (y + 1) % 16 == 0) opt.on_rows(out, y + 1);
  }
  jpeg_finish_decompress(&c);
  return true;
}

}  // namespace

void decode_jpeg(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
                 const std::string& name, ImageInfo& info, bool header_only) {
  Decompressor d;
  thread_local std::vector<std::uint8_t> rowbuf;
  if (!run(d, data, size, opt, out, info, header_only, rowbuf, name)) {
    if (d.err.truncated) throw Error(ErrorKind::BadInput, name + ": " + d.err.message);
    throw Error(ErrorKind::BadInput, name + ": corrupt JPEG: " + d.err.message);
  }
}

}  // namespace vinfer::detail
