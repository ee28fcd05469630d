// JPEG through libjpeg-turbo's libjpeg API, matching Pillow's defaults
// (accurate integer IDCT, fancy upsampling) so that pixels are identical.
#include <algorithm>
#include <atomic>
#include <climits>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <jpeglib.h>
#include <jerror.h>

#include "image/decode_internal.hpp"
#include "image/jpeg_color.hpp"
#include "image/jpeg_scan.hpp"
#include "util/cpu_features.hpp"
#include "util/cpu_relax.hpp"
#include "util/thread_pool.hpp"
#include "vinfer/color.hpp"
#include "util/scratch.hpp"
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

[[noreturn]] void fail(const Decompressor& d, const std::string& name) {
  if (d.err.truncated) throw Error(ErrorKind::BadInput, name + ": " + d.err.message);
  throw Error(ErrorKind::BadInput, name + ": corrupt JPEG: " + d.err.message);
}

enum class RowConv { None, CmykToRgb, RgbToGray };

// Returns false with err.message set if libjpeg failed. No C++ objects with
// destructors live between setjmp and any longjmp below.
// Rows per block of a component once DCT-scaled (8 at full size).
#if JPEG_LIB_VERSION >= 70
int block_rows(const jpeg_component_info& k) { return k.DCT_v_scaled_size; }
int min_block_rows(const jpeg_decompress_struct& c) { return c.min_DCT_v_scaled_size; }
#else
int block_rows(const jpeg_component_info& k) { return k.DCT_scaled_size; }
int min_block_rows(const jpeg_decompress_struct& c) { return c.min_DCT_scaled_size; }
#endif

// How many output pixels one chroma sample covers along each axis once
// libjpeg has chosen its IDCT sizes (jpeg_calc_output_dimensions): 2 for
// 4:2:0 at full size; 1 for 4:4:4, and for 4:2:0 DCT-scaled, where
// libjpeg-turbo inverse-transforms the chroma at twice the luma's scale
// instead of upsampling it.
int chroma_factor(const jpeg_decompress_struct& c) {
  const jpeg_component_info* k = c.comp_info;
  const int y = k[0].h_samp_factor * block_rows(k[0]), cb = k[1].h_samp_factor * block_rows(k[1]),
            cr = k[2].h_samp_factor * block_rows(k[2]);
  const int vy = k[0].v_samp_factor * block_rows(k[0]), vcb = k[1].v_samp_factor * block_rows(k[1]),
            vcr = k[2].v_samp_factor * block_rows(k[2]);
  if (cb != cr || vcb != vcr || y % cb != 0 || vy % vcb != 0 || y / cb != vy / vcb) return 0;
  return y / cb;
}

// Whether the two-thread raw path takes this file: YCbCr with 4:2:0 or 4:4:4
// sampling, whose chroma libjpeg would upsample 2x2 "fancy" or not at all, to
// RGB or (through RGB) gray. Calls jpeg_calc_output_dimensions.
bool raw_path_fits(jpeg_decompress_struct& c, const DecodeOptions& opt) {
  if (opt.threads < 2 || c.jpeg_color_space != JCS_YCbCr || c.num_components != 3 || c.image_width < 16 ||
      c.image_height < 2 || opt.format == PixelFormat::RGBA || opt.luma_only)
    return false;
  const jpeg_component_info* k = c.comp_info;
  const bool chroma_1x1 = k[1].h_samp_factor == 1 && k[1].v_samp_factor == 1 && k[2].h_samp_factor == 1 &&
                          k[2].v_samp_factor == 1;
  const bool luma_ok = k[0].h_samp_factor == k[0].v_samp_factor && k[0].h_samp_factor <= 2;
  if (!chroma_1x1 || !luma_ok) return false;
  jpeg_calc_output_dimensions(&c);
  const int f = chroma_factor(c);
  return (f == 1 || f == 2) && c.output_width >= 16;
}

// Whether vinfer's own scan decoder (jpeg_scan.hpp) takes this file: two
// threads, DCT-scaled (at full size libjpeg's AVX2 transforms and the raw
// path are the faster pair), one interleaved baseline scan, gray or YCbCr
// whose chroma needs no upsampling or 4:2:2's horizontal one (or is not
// wanted: luma only), RGB or gray out, on a CPU with AVX2 + BMI2 (the
// decoder is compiled for them). Fills `desc` from libjpeg's parsed header. Calls
// jpeg_calc_output_dimensions.
bool own_path_fits(jpeg_decompress_struct& c, const DecodeOptions& opt, JpegScanDesc& desc, int& chroma_h) {
  if (!cpu_features().avx2 || opt.threads < 2 || c.scale_denom < 2 || c.progressive_mode || c.arith_code || c.data_precision != 8 ||
      opt.format == PixelFormat::RGBA || c.comps_in_scan != c.num_components)
    return false;
  const bool gray_src = c.num_components == 1 && c.jpeg_color_space == JCS_GRAYSCALE;
  const bool ycc = c.num_components == 3 && c.jpeg_color_space == JCS_YCbCr;
  if (!gray_src && !ycc) return false;
  const bool luma = opt.format == PixelFormat::Gray && (gray_src || opt.luma_only);
  jpeg_calc_output_dimensions(&c);
  chroma_h = 1;
  if (ycc && !luma) {
    // Chroma samples per output pixel once IDCT-scaled: 1x1 (nothing to
    // upsample) or 2x1 (4:2:2, libjpeg's h2v1 upsampling, redone in decode_own).
    const jpeg_component_info* k = c.comp_info;
    const int yh = k[0].h_samp_factor * block_rows(k[0]), yv = k[0].v_samp_factor * block_rows(k[0]);
    const int ch = k[1].h_samp_factor * block_rows(k[1]), cv = k[1].v_samp_factor * block_rows(k[1]);
    if (k[2].h_samp_factor * block_rows(k[2]) != ch || k[2].v_samp_factor * block_rows(k[2]) != cv || yv != cv ||
        (yh != ch && yh != 2 * ch))
      return false;
    chroma_h = yh / ch;
  }
  desc.width = static_cast<int>(c.image_width);
  desc.height = static_cast<int>(c.image_height);
  desc.components = c.num_components;
  desc.restart_interval = static_cast<int>(c.restart_interval);
  for (int i = 0; i < c.num_components; ++i) {
    const jpeg_component_info* k = c.cur_comp_info[i];
    // libjpeg checks the table numbers only once decoding starts.
    if (k->component_index != i || k->quant_tbl_no < 0 || k->quant_tbl_no >= NUM_QUANT_TBLS || k->dc_tbl_no < 0 ||
        k->dc_tbl_no >= NUM_HUFF_TBLS || k->ac_tbl_no < 0 || k->ac_tbl_no >= NUM_HUFF_TBLS ||
        !c.quant_tbl_ptrs[k->quant_tbl_no] || !c.dc_huff_tbl_ptrs[k->dc_tbl_no] || !c.ac_huff_tbl_ptrs[k->ac_tbl_no])
      return false;
    desc.h[i] = k->h_samp_factor;
    desc.v[i] = k->v_samp_factor;
    desc.block_size[i] = i > 0 && luma ? 0 : block_rows(*k);
    for (int q = 0; q < 64; ++q) desc.quant[i][q] = c.quant_tbl_ptrs[k->quant_tbl_no]->quantval[q];
    const JHUFF_TBL* dc = c.dc_huff_tbl_ptrs[k->dc_tbl_no];
    const JHUFF_TBL* ac = c.ac_huff_tbl_ptrs[k->ac_tbl_no];
    std::memcpy(desc.dc[i].counts, dc->bits, 17);
    std::memcpy(desc.dc[i].symbols, dc->huffval, 256);
    std::memcpy(desc.ac[i].counts, ac->bits, 17);
    std::memcpy(desc.ac[i].symbols, ac->huffval, 256);
  }
  desc.data = c.src->next_input_byte;
  desc.size = c.src->bytes_in_buffer;
  return true;
}

// The scan decoder's rows into `out`, converted as libjpeg would have:
// 4:2:2 chroma (chroma_h 2) upsampled first, "fancy" unless the blocks are
// 1x1 (libjpeg-turbo upsamples plainly at 1/8).
bool decode_own(const JpegScanDesc& desc, int chroma_h, const DecodeOptions& opt, ImageU8& out) {
  const int W = out.width();
  const bool to_gray = opt.format == PixelFormat::Gray;
  const bool one_plane = desc.components == 1 || desc.block_size[1] == 0;
  const bool fancy = desc.block_size[0] > 1;
  return decode_jpeg_scan(desc, out.height(), opt.threads, [&](const JpegPlanes& p, int y0, int y1) {
    thread_local std::vector<std::uint8_t> rgb, up;
    for (int y = y0; y < y1; ++y) {
      const std::uint8_t* luma = p.plane[0] + static_cast<std::size_t>(y) * p.stride[0];
      std::uint8_t* o = out.row(y);
      if (one_plane) {
        if (to_gray) {
          std::memcpy(o, luma, static_cast<std::size_t>(W));
        } else {
          for (int x = 0; x < W; ++x) o[3 * x] = o[3 * x + 1] = o[3 * x + 2] = luma[x];
        }
        continue;
      }
      const std::uint8_t* cb = p.plane[1] + static_cast<std::size_t>(y) * p.stride[1];
      const std::uint8_t* cr = p.plane[2] + static_cast<std::size_t>(y) * p.stride[2];
      if (chroma_h == 2) {
        const int cw = (W + 1) / 2;
        up.resize(2 * (2 * static_cast<std::size_t>(cw) + 32));
        std::uint8_t* ucb = up.data();
        std::uint8_t* ucr = up.data() + up.size() / 2;
        for (int k = 0; k < 2; ++k) {
          const std::uint8_t* in = k ? cr : cb;
          std::uint8_t* u = k ? ucr : ucb;
          if (fancy) {
            fancy_h2v1_row(in, cw, u);
          } else {
            for (int i = 0; i < cw; ++i) u[2 * i] = u[2 * i + 1] = in[i];
          }
        }
        cb = ucb;
        cr = ucr;
      }
      if (!to_gray) {
        ycc_rgb_row(luma, cb, cr, o, static_cast<std::size_t>(W));
        continue;
      }
      rgb.resize(static_cast<std::size_t>(W) * 3);
      ycc_rgb_row(luma, cb, cr, rgb.data(), static_cast<std::size_t>(W));
      thread_local ImageU8 g;
      rgb_to_gray(ImageView<std::uint8_t>{rgb.data(), W, 1, 3, static_cast<std::ptrdiff_t>(W) * 3}, opt.gray_rule, g);
      std::memcpy(o, g.data(), static_cast<std::size_t>(W));
    }
  });
}

bool run(Decompressor& d, const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
         ImageInfo& info, bool header_only, std::vector<std::uint8_t>& rowbuf, const std::string& name, bool& raw,
         JpegScanDesc& own, int& chroma_h, bool& use_own) {
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
  use_own = own_path_fits(c, opt, own, chroma_h);
  if (use_own) {  // decode_own takes it from here; libjpeg has only read the header
    out.reshape(static_cast<int>(c.output_width), static_cast<int>(c.output_height), C);
    return true;
  }
  raw = raw_path_fits(c, opt);
  if (raw) {  // decode_raw_parallel takes it from here
    c.raw_data_out = TRUE;
    jpeg_start_decompress(&c);
    out.reshape(static_cast<int>(c.output_width), static_cast<int>(c.output_height), C);
    return true;
  }
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


// The two-thread path. libjpeg (this thread) decodes into whole planes (no
// upsampling, no colour conversion: raw_data_out) and publishes how many
// luma rows are final; a pool thread upsamples the chroma and converts
// colour row by row behind it, exactly as libjpeg would have. The producer
// never waits for the consumer, so a consumer that starts late only
// catches up.
struct RawPlanes {
  std::vector<std::uint8_t> plane[3];
  std::size_t stride[3] = {};
  std::atomic<int> rows{0};  // luma rows decoded (INT_MAX: stop, see failed)
  std::atomic<bool> failed{false};
};

// libjpeg's part. Plain data only between setjmp and longjmp.
bool produce_raw(Decompressor& d, RawPlanes& st) {
  jpeg_decompress_struct& c = d.cinfo;
  JSAMPROW rows[3][2 * DCTSIZE];
  JSAMPARRAY arr[3] = {rows[0], rows[1], rows[2]};
  if (setjmp(d.err.jump)) return false;
  const int lines = c.max_v_samp_factor * min_block_rows(c);
  const int H = static_cast<int>(c.output_height);
  for (int imcu = 0; c.output_scanline < c.output_height; ++imcu) {
    for (int k = 0; k < 3; ++k) {
      const int vs = c.comp_info[k].v_samp_factor * block_rows(c.comp_info[k]);
      for (int r = 0; r < vs; ++r) rows[k][r] = st.plane[k].data() + (static_cast<std::size_t>(imcu) * vs + r) * st.stride[k];
    }
    jpeg_read_raw_data(&c, arr, static_cast<JDIMENSION>(lines));
    st.rows.store(std::min(H, (imcu + 1) * lines), std::memory_order_release);
  }
  jpeg_finish_decompress(&c);
  return true;
}

// The pool thread's part: rows [0, H) of the output.
void consume_raw(RawPlanes& st, bool h2v2, const DecodeOptions& opt, ImageU8& out) {
  const int W = out.width(), H = out.height();
  const int cw = h2v2 ? (W + 1) / 2 : W, ch = h2v2 ? (H + 1) / 2 : H;
  thread_local std::vector<std::uint8_t> up, rgb;
  thread_local std::vector<std::uint16_t> colsum;
  up.resize(2 * (2 * static_cast<std::size_t>(cw) + 32));
  colsum.resize(static_cast<std::size_t>(cw) + 2);
  const bool gray = opt.format == PixelFormat::Gray;
  if (gray) rgb.resize(static_cast<std::size_t>(W) * 3);
  std::uint8_t* ucb = up.data();
  std::uint8_t* ucr = up.data() + up.size() / 2;
  for (int y = 0; y < H; ++y) {
    // Row y needs its chroma row and the one below (h2v2): luma rows up to 2 * (y / 2) + 4.
    const int need = std::min(H, h2v2 ? 2 * (y / 2) + 4 : y + 1);
    for (int spins = 0; st.rows.load(std::memory_order_acquire) < need; ++spins) {
      if (spins > 4096) std::this_thread::yield();
      else cpu_relax();
    }
    if (st.failed.load()) return;
    const std::uint8_t* luma = st.plane[0].data() + static_cast<std::size_t>(y) * st.stride[0];
    const std::uint8_t *cb, *cr;
    if (h2v2) {
      const int cy = y / 2, ny = (y % 2 == 0) ? std::max(cy - 1, 0) : std::min(cy + 1, ch - 1);
      for (int k = 1; k < 3; ++k)
        fancy_h2v2_row(st.plane[k].data() + static_cast<std::size_t>(cy) * st.stride[k],
                       st.plane[k].data() + static_cast<std::size_t>(ny) * st.stride[k], cw, k == 1 ? ucb : ucr,
                       colsum.data());
      cb = ucb;
      cr = ucr;
    } else {
      cb = st.plane[1].data() + static_cast<std::size_t>(y) * st.stride[1];
      cr = st.plane[2].data() + static_cast<std::size_t>(y) * st.stride[2];
    }
    if (gray) {
      ycc_rgb_row(luma, cb, cr, rgb.data(), static_cast<std::size_t>(W));
      thread_local ImageU8 g;
      rgb_to_gray(ImageView<std::uint8_t>{rgb.data(), W, 1, 3, static_cast<std::ptrdiff_t>(W) * 3}, opt.gray_rule, g);
      std::memcpy(out.row(y), g.data(), static_cast<std::size_t>(W));
    } else {
      ycc_rgb_row(luma, cb, cr, out.row(y), static_cast<std::size_t>(W));
    }
    if (opt.on_rows && !opt.apply_exif_orientation && (y + 1) % 16 == 0) opt.on_rows(out, y + 1);  // the last call: decode_memory
  }
}

// After run() chose the raw path and started the decompressor.
void decode_raw_parallel(Decompressor& d, const DecodeOptions& opt, ImageU8& out, const std::string& name) {
  jpeg_decompress_struct& c = d.cinfo;
  thread_local RawPlanes planes;
  RawPlanes& st = planes;  // by reference into the lambda: a thread_local named there is the pool thread's own
  const ScratchTrim trim(st.plane[0], st.plane[1], st.plane[2]);
  st.rows.store(0);
  st.failed.store(false);
  const int imcu_rows = static_cast<int>(c.total_iMCU_rows);
  for (int k = 0; k < 3; ++k) {
    const jpeg_component_info& comp = c.comp_info[k];
    // Square scaled blocks (scale_num / scale_denom applies to both axes).
    st.stride[k] = static_cast<std::size_t>(c.MCUs_per_row) * comp.h_samp_factor * block_rows(comp);
    st.plane[k].resize(st.stride[k] * static_cast<std::size_t>(imcu_rows) * comp.v_samp_factor * block_rows(comp));
  }
  const bool h2v2 = chroma_factor(c) == 2;
  bool ok = true;
  parallel_for(2, 2, [&](int b, int) {
    if (b == 0) {
      ok = produce_raw(d, st);
      if (!ok) st.failed.store(true);
      st.rows.store(INT_MAX, std::memory_order_release);  // release the consumer either way
    } else {
      consume_raw(st, h2v2, opt, out);
    }
  });
  // The planes stay for the next image unless they are large (a 89 MP photo
  // would otherwise keep 134 MB per decoding thread).
  if (st.plane[0].size() + st.plane[1].size() + st.plane[2].size() > (std::size_t{64} << 20))
    for (auto& p : st.plane) std::vector<std::uint8_t>().swap(p);
  if (!ok) fail(d, name);
}

}  // namespace

void decode_jpeg(const std::uint8_t* data, std::size_t size, const DecodeOptions& opt, ImageU8& out,
                 const std::string& name, ImageInfo& info, bool header_only) {
  thread_local std::vector<std::uint8_t> rowbuf;
  thread_local JpegScanDesc own;
  // False: the own scan decoder declined the file after all (bad data, or a
  // layout seen only once decoding started).
  auto attempt = [&](const DecodeOptions& o) {
    Decompressor d;
    bool raw = false, use_own = false;
    int chroma_h = 1;
    if (!run(d, data, size, o, out, info, header_only, rowbuf, name, raw, own, chroma_h, use_own)) fail(d, name);
    if (raw) decode_raw_parallel(d, o, out, name);
    return !use_own || decode_own(own, chroma_h, o, out);
  };
  if (attempt(opt)) return;
  // libjpeg then, which reports or tolerates what it finds as it always does.
  DecodeOptions serial = opt;
  serial.threads = 1;
  attempt(serial);
}

}  // namespace vinfer::detail
