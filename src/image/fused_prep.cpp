// The fused form of a preset (fused_prep.hpp): the Pillow plan's windows and
// 22-bit weights per axis, NEAREST and a skipped pass as one tap of 2^22.
#include "image/fused_prep.hpp"

#include "image/resize_plan.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

struct Axis {
  std::vector<std::int32_t> start, weight;
  int taps = 1;
};

Axis one_tap(const std::vector<int>& index) {
  Axis a;
  a.start.assign(index.begin(), index.end());
  a.weight.assign(index.size(), 1 << 22);
  return a;
}

std::vector<int> identity(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

Axis from_taps(const AxisTaps& t) {
  Axis a;
  a.start.assign(t.start.begin(), t.start.end());
  a.weight = t.fixed;
  a.taps = t.max_taps;
  return a;
}

}  // namespace

bool same_preprocessing(const Preset& a, const Preset& b) {
  const ResizeSpec &x = a.resize, &y = b.resize;
  return a.name == b.name && a.size == b.size && a.resize_shorter == b.resize_shorter && x.compat == y.compat &&
         x.filter == y.filter && x.antialias == y.antialias && x.align_corners == y.align_corners &&
         a.normalize == b.normalize && a.mean == b.mean && a.std == b.std && a.layout == b.layout;
}

bool can_fuse(const Preset& p) { return p.resize.compat == Compat::Pil; }

FusedPrep make_fused_prep(const Preset& p, int src_w, int src_h) {
  if (!can_fuse(p)) throw Error(ErrorKind::Unsupported, "preset '" + p.name + "': only Pillow's resize rules run fused");
  if (src_w <= 0 || src_h <= 0) throw Error(ErrorKind::InvalidArgument, "preset: empty image");
  const auto [w, h] = preset_resize_target(p, src_w, src_h);
  const auto [cx, cy] = preset_crop(p, w, h);
  Axis x, y;
  bool vertical_first = false;
  if (w == src_w && h == src_h) {  // Pillow (and load_img) skip a resize to the same size
    x = one_tap(identity(w));
    y = one_tap(identity(h));
  } else {
    const ResizePlan plan = make_resize_plan(p.resize, src_w, src_h, w, h, 3, true);
    if (plan.arith == Arith::Nearest) {
      x = one_tap(plan.nearest_x);
      y = one_tap(plan.nearest_y);
    } else if (plan.arith == Arith::PilFixed) {
      x = plan.skip_x ? one_tap(identity(w)) : from_taps(plan.x);
      y = plan.skip_y ? one_tap(identity(h)) : from_taps(plan.y);
    } else {
      throw Error(ErrorKind::Unsupported, "preset '" + p.name + "': this resize does not run fused");
    }
    vertical_first = plan.pil_vertical_first;
  }
  FusedPrep f;
  f.src_w = src_w;
  f.src_h = src_h;
  f.shape.size = p.size;
  f.shape.crop_x = cx;
  f.shape.crop_y = cy;
  f.shape.taps_x = x.taps;
  f.shape.taps_y = y.taps;
  f.shape.vertical_first = vertical_first;
  f.shape.bgr = p.normalize == NormalizeMode::CaffeBgr;
  f.shape.nhwc = p.layout == Layout::NHWC;
  f.start_x = std::move(x.start);
  f.weight_x = std::move(x.weight);
  f.start_y = std::move(y.start);
  f.weight_y = std::move(y.weight);
  const auto table = normalize_table(p);
  for (const auto& channel : table) f.table.insert(f.table.end(), channel.begin(), channel.end());
  return f;
}

FusedPrepArgs FusedPrep::args(const ImageView<std::uint8_t>& rgb, float* out) const {
  FusedPrepArgs a = shape;
  a.src = rgb.data;
  a.src_stride = rgb.stride;
  a.start_x = start_x.data();
  a.weight_x = weight_x.data();
  a.start_y = start_y.data();
  a.weight_y = weight_y.data();
  a.table = table.data();
  a.out = out;
  return a;
}

void fused_prep_host(const FusedPrep& f, const ImageView<std::uint8_t>& rgb, float* out) {
  if (rgb.width != f.src_w || rgb.height != f.src_h || rgb.channels != 3)
    throw Error(ErrorKind::InvalidArgument, "fused preprocessing: the image is not the size it was planned for");
  const FusedPrepArgs a = f.args(rgb, out);
  for (int y = 0; y < a.size; ++y)
    for (int x = 0; x < a.size; ++x) fused_prep_pixel(a, x, y);
}

}  // namespace vinfer::detail
