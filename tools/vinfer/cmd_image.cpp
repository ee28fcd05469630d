// `vinfer resize` and `vinfer preprocess`.
#include <cmath>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "vinfer/decode.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer::cli {
namespace {

struct ResizeCmd {
  std::string in, out, size, dtype = "u8", gray;
  double scale = 0;
  bool fast_decode = false, luma = false, rgb = false;
  std::uint64_t max_pixels = DecodeOptions{}.max_pixels;
  ResizeArgs r;

  int run(const CLI::App& app) {
    const bool has_size = !size.empty(), has_scale = app.count("--scale") > 0;
    if (has_size == has_scale) throw Error(ErrorKind::InvalidArgument, "give exactly one of --size WxH or --scale S");
    const bool npy = ends_with(out, ".npy");
    if (!npy && !ends_with(out, ".png")) throw Error(ErrorKind::InvalidArgument, out + ": output must be .png or .npy");
    if (dtype != "u8" && dtype != "f32") throw Error(ErrorKind::InvalidArgument, "--dtype must be u8 or f32");
    if (dtype == "f32" && !npy) throw Error(ErrorKind::InvalidArgument, out + ": --dtype f32 needs a .npy output");
    ResizeSpec spec = r.spec();

    DecodeOptions opt;
    opt.max_pixels = max_pixels;
    const bool want_gray = app.count("--gray") > 0;
    if (want_gray && rgb) throw Error(ErrorKind::InvalidArgument, "give at most one of --gray and --rgb");
    if (want_gray) {
      opt.format = PixelFormat::Gray;
      opt.gray_rule = parse_gray_rule(gray.empty() ? "pil" : gray);
      opt.luma_only = luma;
    } else if (luma) {
      throw Error(ErrorKind::InvalidArgument, "--luma needs --gray");
    }
    ImageInfo info;
    probe_file(opt, info);
    // Without --gray or --rgb the image keeps its kind, as Image.open(f).resize()
    // does: gray stays gray, alpha stays (gray + alpha becomes RGBA).
    if (!want_gray && !rgb) opt.format = keep_format(info);
    int ow, oh;
    if (has_size) {
      std::tie(ow, oh) = parse_size(size);
    } else {
      if (!(scale > 0) || scale > 64) throw Error(ErrorKind::InvalidArgument, "--scale must be in (0, 64]");
      // PyTorch's rule for scale_factor: floor(in * s); the factor itself maps coordinates.
      ow = static_cast<int>(std::floor(info.width * scale));
      oh = static_cast<int>(std::floor(info.height * scale));
      if (spec.compat == Compat::Torch) spec.torch_scale_x = spec.torch_scale_y = scale;
      if (ow <= 0 || oh <= 0) throw Error(ErrorKind::InvalidArgument, "--scale " + std::to_string(scale) + " gives an empty image");
    }
    if (fast_decode) opt.target_width = ow, opt.target_height = oh;
    ImageU8 img;
    decode_file(in, opt, img);
    Resizer resizer(spec);
    const auto shape = [&](int w, int h, int c) {
      return c == 1 ? std::vector<std::size_t>{std::size_t(h), std::size_t(w)}
                    : std::vector<std::size_t>{std::size_t(h), std::size_t(w), std::size_t(c)};
    };
    if (dtype == "f32") {
      ImageF32 res;
      resizer.run(img.view(), ow, oh, res);
      write_npy(out, res.data(), shape(ow, oh, res.channels()));
    } else {
      ImageU8 res;
      resizer.run(img.view(), ow, oh, res);
      if (npy) write_npy(out, res.data(), shape(ow, oh, res.channels()));
      else write_png(out, res.view());
    }
    return kExitOk;
  }

  static PixelFormat keep_format(const ImageInfo& info) {
    if (info.channels == 1) return PixelFormat::Gray;
    if (info.codec == ImageCodec::Png && (info.channels == 2 || info.channels == 4)) return PixelFormat::RGBA;
    return PixelFormat::RGB;  // colour, palette, and CMYK JPEGs (converted as Pillow's convert("RGB"))
  }

  void probe_file(const DecodeOptions& opt, ImageInfo& info) {
    std::FILE* f = std::fopen(in.c_str(), "rb");
    if (!f) throw Error(ErrorKind::Io, in + ": cannot open");
    std::vector<std::uint8_t> head(1 << 16);
    head.resize(std::fread(head.data(), 1, head.size(), f));
    std::fclose(f);
    try {
      info = probe_memory(head.data(), head.size(), in);
    } catch (const Error&) {
      // The header did not fit in 64 KiB (or the file is bad): decode it whole to find out.
      ImageU8 tmp;
      DecodeOptions o = opt;
      decode_file(in, o, tmp, &info);
    }
  }
};

struct PreprocessCmd {
  std::string in, out, preset_name;
  int size = 224;
  bool fast = false;
  int run() {
    if (!ends_with(out, ".npy")) throw Error(ErrorKind::InvalidArgument, out + ": output must be .npy");
    Preset p = preset(preset_name, size);
    p.fast_decode = fast;
    Preprocessor pre(p);
    std::vector<float> tensor(pre.tensor_size());
    pre.run_file(in, tensor.data());
    write_npy(out, tensor.data(), pre.tensor_shape());
    return kExitOk;
  }
};

}  // namespace

void add_resize(CLI::App& app, Handler& run) {
  auto cmd = std::make_shared<ResizeCmd>();
  app.add_option("IN", cmd->in, "Input image (.jpg, .jpeg, .png)")->required();
  app.add_option("OUT", cmd->out, "Output: .png (u8) or .npy (HxW or HxWxC)")->required();
  app.add_option("--size", cmd->size, "Output size WxH");
  app.add_option("--scale", cmd->scale, "Scale factor (output = floor(input * S))");
  app.add_option("--gray", cmd->gray, "Convert to gray first, with a rule: pil (default), tf, opencv")->expected(0, 1);
  app.add_flag("--rgb", cmd->rgb, "Convert to RGB first (default: keep gray, RGB or RGBA as the file has it)");
  app.add_option("--dtype", cmd->dtype, "u8 or f32 (the frameworks' float path)")->capture_default_str();
  app.add_flag("--fast-decode", cmd->fast_decode, "Let the JPEG decoder shrink by 1/2..1/8 first (inexact)");
  app.add_flag("--luma", cmd->luma, "With --gray: decode only the JPEG luma plane (inexact, fast)");
  app.add_option("--max-pixels", cmd->max_pixels, "Refuse larger images")->capture_default_str();
  cmd->r.add_to(app, "pil");
  run = [cmd, &app] { return cmd->run(app); };
}

void add_preprocess(CLI::App& app, Handler& run) {
  auto cmd = std::make_shared<PreprocessCmd>();
  app.add_option("IN", cmd->in, "Input image")->required();
  app.add_option("OUT", cmd->out, "Output tensor (.npy, float32)")->required();
  app.add_option("--preset", cmd->preset_name, "torchvision, torchvision-crop, keras-caffe, keras-torch, keras-tf")->required();
  app.add_option("--size", cmd->size, "Output size (square)")->capture_default_str();
  app.add_flag("--fast", cmd->fast, "DCT-domain JPEG downscaling before the resize (inexact)");
  run = [cmd] { return cmd->run(); };
}

}  // namespace vinfer::cli
