// Convolution, pools, normalizations, reductions and matrix products: each
// operator's ONNX form, shape rule and reference kernel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "graph/op_params.hpp"
#include "graph/op_registry.hpp"
#include "graph/ops/ref_loops.hpp"
#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

using I = std::int64_t;

// ---- Conv
void conv_shape(ShapeContext& c) {
  c.need_inputs(2, 3);
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  const WindowParams p = conv_params(c.n, x, w);
  if (c.has_input(2) && c.in_shape(2) != Shape{w[0]}) c.bad("bias must be [" + std::to_string(w[0]) + "]");
  Shape out{x[0], w[0]};
  out.insert(out.end(), p.out.begin(), p.out.end());
  c.set(0, out);
}

void conv_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &w = c.arg(1);
  const TensorData* b = c.opt(2);
  TensorData& y = c.y();
  const WindowParams p = conv_params(c.n, x.shape, w.shape);
  const I N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const I M = w.shape[0], KH = w.shape[2], KW = w.shape[3], OH = y.shape[2], OW = y.shape[3];
  const I cg = C / p.group, mg = M / p.group;
  for (I nn = 0; nn < N; ++nn)
    for (I m = 0; m < M; ++m) {
      const I g = m / mg;
      for (I oh = 0; oh < OH; ++oh)
        for (I ow = 0; ow < OW; ++ow) {
          double acc = b ? b->f[static_cast<std::size_t>(m)] : 0.0;
          for (I ci = 0; ci < cg; ++ci)
            for (I kh = 0; kh < KH; ++kh) {
              const I ih = oh * p.strides[0] - p.pads_begin[0] + kh * p.dilations[0];
              if (ih < 0 || ih >= H) continue;
              for (I kw = 0; kw < KW; ++kw) {
                const I iw = ow * p.strides[1] - p.pads_begin[1] + kw * p.dilations[1];
                if (iw < 0 || iw >= W) continue;
                acc += static_cast<double>(x.f[static_cast<std::size_t>(((nn * C + g * cg + ci) * H + ih) * W + iw)]) *
                       w.f[static_cast<std::size_t>(((m * cg + ci) * KH + kh) * KW + kw)];
              }
            }
          y.f[static_cast<std::size_t>(((nn * M + m) * OH + oh) * OW + ow)] = static_cast<float>(acc);
        }
    }
}

// ---- ConvTranspose
void conv_transpose_shape(ShapeContext& c) {
  c.need_inputs(2, 3);
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  const TransposedWindow p = conv_transpose_params(c.n, x, w);
  const I m = w[1] * p.group;
  if (c.has_input(2) && c.in_shape(2) != Shape{m}) c.bad("bias must be [" + std::to_string(m) + "]");
  Shape out{x[0], m};
  out.insert(out.end(), p.out.begin(), p.out.end());
  c.set(0, out);
}

// Each input pixel scatters its channels' products into the output window it
// maps to: out = in x stride + k x dilation - pads_begin, cut to the output.
void conv_transpose_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &w = c.arg(1);
  const TensorData* b = c.opt(2);
  TensorData& y = c.y();
  const TransposedWindow p = conv_transpose_params(c.n, x.shape, w.shape);
  const std::size_t s = p.kernel.size();
  // Spatial sizes padded to three dimensions (1 where absent).
  I in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
  for (std::size_t i = 0; i < s; ++i) {
    const std::size_t j = 3 - s + i;
    in[j] = x.shape[2 + i], out[j] = p.out[i], k[j] = p.kernel[i], st[j] = p.strides[i], dl[j] = p.dilations[i], pb[j] = p.pads_begin[i];
  }
  const I N = x.shape[0], C = x.shape[1], M = y.shape[1], cg = C / p.group, mg = M / p.group;
  const I in_px = in[0] * in[1] * in[2], out_px = out[0] * out[1] * out[2], k_px = k[0] * k[1] * k[2];
  std::vector<double> acc(static_cast<std::size_t>(out_px));
  for (I nn = 0; nn < N; ++nn)
    for (I m = 0; m < M; ++m) {
      const I g = m / mg, mo = m % mg;
      std::fill(acc.begin(), acc.end(), b ? static_cast<double>(b->f[static_cast<std::size_t>(m)]) : 0.0);
      for (I ci = g * cg; ci < (g + 1) * cg; ++ci) {
        const float* xc = x.f.data() + (nn * C + ci) * in_px;
        const float* wc = w.f.data() + (ci * mg + mo) * k_px;
        for (I i0 = 0; i0 < in[0]; ++i0)
          for (I i1 = 0; i1 < in[1]; ++i1)
            for (I i2 = 0; i2 < in[2]; ++i2) {
              const double v = xc[(i0 * in[1] + i1) * in[2] + i2];
              for (I k0 = 0; k0 < k[0]; ++k0) {
                const I o0 = i0 * st[0] + k0 * dl[0] - pb[0];
                if (o0 < 0 || o0 >= out[0]) continue;
                for (I k1 = 0; k1 < k[1]; ++k1) {
                  const I o1 = i1 * st[1] + k1 * dl[1] - pb[1];
                  if (o1 < 0 || o1 >= out[1]) continue;
                  for (I k2 = 0; k2 < k[2]; ++k2) {
                    const I o2 = i2 * st[2] + k2 * dl[2] - pb[2];
                    if (o2 < 0 || o2 >= out[2]) continue;
                    acc[static_cast<std::size_t>((o0 * out[1] + o1) * out[2] + o2)] += v * wc[(k0 * k[1] + k1) * k[2] + k2];
                  }
                }
              }
            }
      }
      float* ym = y.f.data() + (nn * M + m) * out_px;
      for (I o = 0; o < out_px; ++o) ym[o] = static_cast<float>(acc[static_cast<std::size_t>(o)]);
    }
}

// ---- BatchNormalization (inference form) and vinfer.ScaleShift (its folded form: y = x * scale[c] + shift[c])
void batchnorm_shape(ShapeContext& c) {
  c.need_inputs(5, 5);
  const Shape& x = c.in_shape(0);
  if (x.size() < 2) c.bad("input must have a channel dimension");
  for (std::size_t i = 1; i < 5; ++i) {
    const TensorData& t = c.need_const(i, "scale, bias, mean and variance");
    if (t.shape != Shape{x[1]}) c.bad("parameter " + std::to_string(i) + " must be [" + std::to_string(x[1]) + "], got " + shape_str(t.shape));
  }
  for (std::size_t o = 1; o < c.n.outputs.size(); ++o)
    if (c.n.outputs[o] >= 0 && !c.g.consumers()[static_cast<std::size_t>(c.n.outputs[o])].empty())
      c.unsupported("training-mode outputs are not supported");
  c.set(0, x);
}

void scale_shift_shape(ShapeContext& c) {
  c.need_inputs(3, 3);
  c.set(0, c.in_shape(0));
}

void channel_affine(RefContext& c, const std::vector<float>& scale, const std::vector<float>& shift) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const I C = x.shape[1], inner = numel(x.shape) / (x.shape[0] * C);
  for (std::size_t i = 0; i < y.f.size(); ++i) {
    const auto ch = static_cast<std::size_t>((static_cast<I>(i) / inner) % C);
    y.f[i] = x.f[i] * scale[ch] + shift[ch];
  }
}

void batchnorm_reference(RefContext& c) {
  const auto C = static_cast<std::size_t>(c.arg(0).shape[1]);
  const float eps = c.n.get_float("epsilon", 1e-5f);
  std::vector<float> scale(C), shift(C);
  for (std::size_t k = 0; k < C; ++k) {
    scale[k] = c.arg(1).f[k] / std::sqrt(c.arg(4).f[k] + eps);
    shift[k] = c.arg(2).f[k] - c.arg(3).f[k] * scale[k];
  }
  channel_affine(c, scale, shift);
}

void scale_shift_reference(RefContext& c) { channel_affine(c, c.arg(1).f, c.arg(2).f); }

// ---- MaxPool, AveragePool
void pool_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  if (c.n.get_int("storage_order", 0) != 0) c.unsupported("storage_order=1 is not supported");
  const Shape& x = c.in_shape(0);
  const WindowParams p = pool_params(c.n, x);
  Shape out{x[0], x[1]};
  out.insert(out.end(), p.out.begin(), p.out.end());
  c.set(0, out);
}

void max_pool_shape(ShapeContext& c) {
  if (c.output_read(1)) c.unsupported("the Indices output is not supported");
  pool_shape(c);
}

template <bool kMax>
void pool_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const WindowParams p = pool_params(c.n, x.shape);
  const I NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  for (I ch = 0; ch < NC; ++ch)
    for (I oh = 0; oh < OH; ++oh)
      for (I ow = 0; ow < OW; ++ow) {
        double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        I count = 0;
        for (I kh = 0; kh < p.kernel[0]; ++kh) {
          const I ih = oh * p.strides[0] - p.pads_begin[0] + kh * p.dilations[0];
          if (ih < 0 || ih >= H) continue;
          for (I kw = 0; kw < p.kernel[1]; ++kw) {
            const I iw = ow * p.strides[1] - p.pads_begin[1] + kw * p.dilations[1];
            if (iw < 0 || iw >= W) continue;
            const double v = x.f[static_cast<std::size_t>((ch * H + ih) * W + iw)];
            acc = kMax ? std::max(acc, v) : acc + v;
            ++count;
          }
        }
        if (!kMax) {
          // PyTorch's divisor: with count_include_pad the window clipped to the padded
          // input (explicit pads count, ceil_mode overhang does not); else the valid pixels.
          if (p.count_include_pad) {
            const I h0 = oh * p.strides[0] - p.pads_begin[0], w0 = ow * p.strides[1] - p.pads_begin[1];
            const I h1 = std::min(h0 + p.kernel[0], H + p.pads_end[0]), w1 = std::min(w0 + p.kernel[1], W + p.pads_end[1]);
            count = (h1 - h0) * (w1 - w0);
          }
          acc = count ? acc / static_cast<double>(count) : 0.0;
        }
        y.f[static_cast<std::size_t>((ch * OH + oh) * OW + ow)] = static_cast<float>(acc);
      }
}

// ---- GlobalAveragePool and the reductions (ReduceMean/Sum/Max/L2: axes an attribute, or an input from opset 18)
void global_pool_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  Shape s = c.in_shape(0);
  if (s.size() < 3) c.bad("input must be N x C x spatial");
  std::fill(s.begin() + 2, s.end(), 1);
  c.set(0, s);
}

// Which dimensions a Reduce* node reduces.
std::vector<bool> reduced_axes(const Graph& g, const Node& n, const Shape& x) {
  std::vector<bool> red(x.size(), false);
  const std::vector<I> axes = axes_of(g, n, 1);
  if (axes.empty() && n.get_int("noop_with_empty_axes", 0) == 0) std::fill(red.begin(), red.end(), true);
  for (I a : axes) red[static_cast<std::size_t>(normalize_axis(n, a, x.size()))] = true;
  return red;
}

void reduce_shape(ShapeContext& c) {
  c.need_inputs(1, 2);
  const Shape& x = c.in_shape(0);
  const std::vector<bool> red = reduced_axes(c.g, c.n, x);
  const bool keep = c.n.get_int("keepdims", 1) != 0;
  Shape out;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!red[i]) out.push_back(x[i]);
    else if (keep) out.push_back(1);
  c.set(0, out);
}

enum class Reduce { Mean, Sum, Max, L2, Min, Prod, L1, SumSquare, LogSum, LogSumExp };

// Each reduction's start (its answer over an empty set) and step, in double.
constexpr double reduce_start(Reduce k) {
  return k == Reduce::Max ? -INFINITY : k == Reduce::Min ? INFINITY : k == Reduce::Prod ? 1.0 : 0.0;
}
inline double reduce_step(Reduce k, double a, double v) {
  switch (k) {
    case Reduce::Max: return std::isnan(v) ? v : std::max(a, v);
    case Reduce::Min: return std::isnan(v) ? v : std::min(a, v);
    case Reduce::Prod: return a * v;
    case Reduce::L1: return a + std::fabs(v);
    case Reduce::L2: case Reduce::SumSquare: return a + v * v;
    case Reduce::LogSumExp: return a + std::exp(v);
    default: return a + v;
  }
}
inline double reduce_finish(Reduce k, double a, std::int64_t count) {
  switch (k) {
    case Reduce::Mean: return a / static_cast<double>(count);
    case Reduce::L2: return std::sqrt(a);
    case Reduce::LogSum: case Reduce::LogSumExp: return std::log(a);
    default: return a;
  }
}

// kSpatial: every dimension after N and C (GlobalAveragePool), else the node's axes.
template <Reduce kHow, bool kSpatial = false>
void reduce_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  std::vector<bool> red(x.shape.size(), true);
  if (kSpatial) red[0] = red[1] = false;
  else red = reduced_axes(c.g, c.n, x.shape);
  std::vector<double> acc(y.f.size(), reduce_start(kHow));
  I count = 1;
  for (std::size_t d = 0; d < red.size(); ++d)
    if (red[d]) count *= x.shape[d];
  // Output index of each input element: drop the reduced coordinates.
  std::vector<I> idx(x.shape.size(), 0);
  for (std::size_t e = 0; e < x.f.size(); ++e) {
    I o = 0;
    for (std::size_t d = 0; d < idx.size(); ++d)
      if (!red[d]) o = o * x.shape[d] + idx[d];
    double& a = acc[static_cast<std::size_t>(o)];
    const double v = x.f[e];
    a = reduce_step(kHow, a, v);
    next_index(idx, x.shape);
  }
  for (std::size_t i = 0; i < y.f.size(); ++i)
    y.f[i] = static_cast<float>(reduce_finish(kHow, acc[i], count));
}

// ---- LayerNormalization
void layer_norm_shape(ShapeContext& c) {
  c.need_inputs(2, 3);
  const Shape& x = c.in_shape(0);
  const LayerNormExtent e = layer_norm_extent(c.n, x);
  for (std::size_t i = 1; i < c.n.inputs.size(); ++i)
    if (c.has_input(i) && (numel(c.in_shape(i)) != e.len || c.in_dtype(i) != DType::F32))
      c.bad("scale and bias must hold one float per normalized value (" + std::to_string(e.len) + ")");
  c.set(0, x);
  // Mean and InvStdDev: x's shape with the normalized dimensions 1.
  Shape stat = x;
  for (std::size_t d = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", -1), x.size())); d < x.size(); ++d) stat[d] = 1;
  for (std::size_t o = 1; o < c.n.outputs.size() && o < 3; ++o)
    if (c.n.outputs[o] >= 0) c.set(o, stat);
}

void layer_norm_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const TensorData* bias = c.opt(2);
  const LayerNormExtent e = layer_norm_extent(c.n, x.shape);
  const std::vector<float>& scale = c.arg(1).f;
  for (I o = 0; o < e.outer; ++o) {
    const float* xr = x.f.data() + o * e.len;
    float* yr = c.y().f.data() + o * e.len;
    double mean = 0, var = 0;
    for (I k = 0; k < e.len; ++k) mean += xr[k];
    mean /= static_cast<double>(e.len);
    for (I k = 0; k < e.len; ++k) var += (xr[k] - mean) * (xr[k] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(e.len) + e.epsilon);
    for (I k = 0; k < e.len; ++k)
      yr[k] = static_cast<float>((xr[k] - mean) * inv * scale[static_cast<std::size_t>(k)] + (bias ? bias->f[static_cast<std::size_t>(k)] : 0.f));
    for (std::size_t out = 1; out < c.n.outputs.size() && out < 3; ++out)
      if (c.n.outputs[out] >= 0) c.out(out).f[static_cast<std::size_t>(o)] = static_cast<float>(out == 1 ? mean : inv);
  }
}

// ---- RMSNormalization: x / sqrt(mean(x^2) + epsilon) over the dimensions from axis on, times scale (broadcast)
void rms_norm_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const Shape& x = c.in_shape(0);
  layer_norm_extent(c.n, x);
  if (broadcast_shapes(c.n, x, c.in_shape(1)) != x) c.bad("scale " + shape_str(c.in_shape(1)) + " does not broadcast to " + shape_str(x));
  if (c.in_dtype(1) != DType::F32) c.unsupported("runs on float32 input only, not integers or booleans");
  c.set(0, x);
}

void rms_norm_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const LayerNormExtent e = layer_norm_extent(c.n, x.shape);
  std::vector<float> normed(x.f.size());
  for (I o = 0; o < e.outer; ++o) {
    const float* xr = x.f.data() + o * e.len;
    double sq = 0;
    for (I k = 0; k < e.len; ++k) sq += static_cast<double>(xr[k]) * xr[k];
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(e.len) + e.epsilon);
    for (I k = 0; k < e.len; ++k) normed[static_cast<std::size_t>(o * e.len + k)] = static_cast<float>(xr[k] * inv);
  }
  const TensorData& scale = c.arg(1);
  broadcast_apply(normed, x.shape, scale.f, scale.shape, c.y().f, x.shape, [](float u, float v) { return u * v; });
}

// Mean and 1/sqrt(variance + eps) of each of `groups` runs of `len` values.
template <typename F>
void each_group_stats(const float* x, I groups, I len, double eps, F&& f) {
  for (I g = 0; g < groups; ++g) {
    const float* r = x + g * len;
    double mean = 0, var = 0;
    for (I k = 0; k < len; ++k) mean += r[k];
    mean /= static_cast<double>(std::max<I>(len, 1));
    for (I k = 0; k < len; ++k) var += (r[k] - mean) * (r[k] - mean);
    f(g, mean, 1.0 / std::sqrt(var / static_cast<double>(std::max<I>(len, 1)) + eps));
  }
}

// ---- InstanceNormalization (per image and channel) and GroupNormalization (per image and group of
// channels; scale and bias per channel from opset 21, per group before)
void group_norm_from_onnx(Node& n, std::int64_t opset) { n.attrs["vinfer.opset"] = opset; }

template <bool kGroups>
void instance_norm_shape(ShapeContext& c) {
  c.need_inputs(3, 3);
  const Shape& x = c.in_shape(0);
  if (x.size() < 2) c.bad("input must be N x C x ...");
  I per = x[1];
  if (kGroups) {
    const I groups = c.n.get_int("num_groups", 0);
    if (groups < 1 || x[1] % groups != 0) c.bad("num_groups must divide the channels");
    if (c.n.get_int("vinfer.opset", 21) < 21) per = groups;
  }
  for (std::size_t i = 1; i < 3; ++i)
    if (numel(c.in_shape(i)) != per || c.in_dtype(i) != DType::F32) c.bad("scale and bias must hold " + std::to_string(per) + " floats");
  c.set(0, x);
}

template <bool kGroups>
void instance_norm_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const std::vector<float>&scale = c.arg(1).f, &bias = c.arg(2).f;
  const I N = x.shape[0], C = x.shape[1], spatial = numel(x.shape) / std::max<I>(N * C, 1);
  const I groups = kGroups ? c.n.get_int("num_groups", 1) : C;
  const I len = C / groups * spatial;
  const bool per_channel = !kGroups || c.n.get_int("vinfer.opset", 21) >= 21;
  each_group_stats(x.f.data(), N * groups, len, c.n.get_float("epsilon", 1e-5f), [&](I g, double mean, double inv) {
    for (I k = 0; k < len; ++k) {
      const I ch = g % groups * (C / groups) + k / spatial;
      const auto p = static_cast<std::size_t>(per_channel ? ch : g % groups);
      const auto at = static_cast<std::size_t>(g * len + k);
      c.y().f[at] = static_cast<float>((x.f[at] - mean) * inv * scale[p] + bias[p]);
    }
  });
}

// ---- MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (0, 2, 3 by default), ONNX's function
void mvn_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  std::vector<bool> red(x.shape.size(), false);
  for (I a : c.n.get_ints("axes", {0, 2, 3})) red[static_cast<std::size_t>(normalize_axis(c.n, a, x.shape.size()))] = true;
  Shape kept = x.shape;
  I count = 1;
  for (std::size_t d = 0; d < kept.size(); ++d)
    if (red[d]) count *= kept[d], kept[d] = 1;
  std::vector<double> sum(static_cast<std::size_t>(numel(kept)), 0.0), sq(sum.size(), 0.0);
  auto slot = [&](const std::vector<I>& idx) {
    I o = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) o = o * kept[d] + (red[d] ? 0 : idx[d]);
    return static_cast<std::size_t>(o);
  };
  std::vector<I> idx(x.shape.size(), 0);
  for (std::size_t e = 0; e < x.f.size(); ++e, next_index(idx, x.shape)) sum[slot(idx)] += x.f[e], sq[slot(idx)] += double(x.f[e]) * x.f[e];
  std::fill(idx.begin(), idx.end(), 0);
  for (std::size_t e = 0; e < x.f.size(); ++e, next_index(idx, x.shape)) {
    const std::size_t s = slot(idx);
    const double mean = sum[s] / static_cast<double>(count), var = sq[s] / static_cast<double>(count) - mean * mean;
    c.y().f[e] = static_cast<float>((x.f[e] - mean) / (std::sqrt(std::max(var, 0.0)) + 1e-9));
  }
}

void same_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  c.set(0, c.in_shape(0));
}

// ---- LpNormalization: x / ||x||_p along axis (p 1 or 2; a zero norm gives 0)
void lp_norm_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  normalize_axis(c.n, c.n.get_int("axis", -1), c.in_shape(0).size());
  const I p = c.n.get_int("p", 2);
  if (p != 1 && p != 2) c.bad("p must be 1 or 2");
  c.set(0, c.in_shape(0));
}

void lp_norm_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const SoftmaxExtent e = softmax_extent(c.n, x.shape);
  const bool l1 = c.n.get_int("p", 2) == 1;
  for (I o = 0; o < e.outer; ++o)
    for (I in = 0; in < e.inner; ++in) {
      auto at = [&](I k) { return static_cast<std::size_t>((o * e.len + k) * e.inner + in); };
      double norm = 0;
      for (I k = 0; k < e.len; ++k) norm += l1 ? std::fabs(x.f[at(k)]) : double(x.f[at(k)]) * x.f[at(k)];
      if (!l1) norm = std::sqrt(norm);
      for (I k = 0; k < e.len; ++k) c.y().f[at(k)] = norm == 0 ? 0.f : static_cast<float>(x.f[at(k)] / norm);
    }
}

// ---- LRN: x / (bias + alpha / size * sum of squares over `size` neighbouring channels)^beta
void lrn_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  if (c.in_shape(0).size() < 3) c.bad("input must be N x C x spatial");
  if (c.n.get_int("size", 0) < 1) c.bad("size must be at least 1");
  c.set(0, c.in_shape(0));
}

void lrn_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const I N = x.shape[0], C = x.shape[1], S = numel(x.shape) / std::max<I>(N * C, 1);
  const I size = c.n.get_int("size", 1);
  const double alpha = c.n.get_float("alpha", 1e-4f), beta = c.n.get_float("beta", 0.75f), bias = c.n.get_float("bias", 1.f);
  const I lo = (size - 1) / 2, hi = size - 1 - lo;
  for (I n = 0; n < N; ++n)
    for (I ch = 0; ch < C; ++ch)
      for (I s = 0; s < S; ++s) {
        double sq = 0;
        for (I k = std::max<I>(0, ch - lo); k <= std::min(C - 1, ch + hi); ++k) {
          const double v = x.f[static_cast<std::size_t>((n * C + k) * S + s)];
          sq += v * v;
        }
        const auto at = static_cast<std::size_t>((n * C + ch) * S + s);
        c.y().f[at] = static_cast<float>(x.f[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
}

// ---- Resize (opset 11 on): nearest, linear or cubic, separably along each resized axis, in double;
// every coordinate mode, nearest rounding, antialias, axes, keep_aspect_ratio_policy and
// exclude_outside as ONNX defines them. scales, sizes and roi must be constants.
void resize_from_onnx(Node& n, std::int64_t opset) {
  if (opset < 11) throw Error(ErrorKind::Unsupported, n.label() + ": Resize before opset 11 is not supported");
}

[[noreturn]] void bad(const Node& n, const std::string& msg) { throw Error(ErrorKind::BadInput, n.label() + ": " + msg); }

struct ResizePlan {
  std::vector<std::size_t> axes;  // resized, in order
  Shape out;
  std::vector<double> scales;     // per dimension
  std::vector<double> roi;        // per dimension: start, end (tf_crop_and_resize); empty: none
};

ResizePlan resize_plan(const Node& n, const Shape& x, const TensorData* roi, const TensorData* scales, const TensorData* sizes) {
  const std::size_t r = x.size();
  ResizePlan p;
  for (I a : n.get_ints("axes", {})) p.axes.push_back(static_cast<std::size_t>(normalize_axis(n, a, r)));
  if (p.axes.empty())
    for (std::size_t d = 0; d < r; ++d) p.axes.push_back(d);
  const std::size_t k = p.axes.size();
  p.out = x;
  p.scales.assign(r, 1.0);
  const bool by_size = sizes && sizes->numel() > 0;
  if (by_size) {
    if (sizes->dtype != DType::I64 || sizes->numel() != static_cast<I>(k)) bad(n, "sizes must hold one int64 per resized axis");
    const std::string policy = n.get_string("keep_aspect_ratio_policy", "stretch");
    double keep = policy == "not_larger" ? INFINITY : -INFINITY;
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t d = p.axes[i];
      if (sizes->i[i] < 0 || x[d] == 0) bad(n, "sizes must be non-negative, of non-empty dimensions");
      p.scales[d] = static_cast<double>(sizes->i[i]) / static_cast<double>(x[d]);
      p.out[d] = sizes->i[i];
      keep = policy == "not_larger" ? std::min(keep, p.scales[d]) : std::max(keep, p.scales[d]);
    }
    if (policy != "stretch") {
      if (policy != "not_larger" && policy != "not_smaller") bad(n, "keep_aspect_ratio_policy '" + policy + "'");
      for (const std::size_t d : p.axes) {
        if (!(keep * static_cast<double>(x[d]) < 1e12)) bad(n, "sizes too large");
        p.scales[d] = keep;
        p.out[d] = static_cast<I>(keep * static_cast<double>(x[d]) + 0.5);  // half up
      }
    }
  } else {
    if (!scales || scales->dtype != DType::F32 || scales->numel() != static_cast<I>(k))
      bad(n, "scales must hold one float per resized axis (or sizes one int64)");
    for (std::size_t i = 0; i < k; ++i) {
      const double sc = scales->f[i];
      if (!(sc > 0) || sc * static_cast<double>(x[p.axes[i]]) > 1e9) bad(n, "scales must be positive and keep the output in bounds");
      p.scales[p.axes[i]] = sc;
      p.out[p.axes[i]] = static_cast<I>(sc * static_cast<double>(x[p.axes[i]]));
    }
  }
  if (roi && roi->numel() > 0 && n.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
    if (roi->dtype != DType::F32 || roi->numel() != static_cast<I>(2 * k)) bad(n, "roi must hold a start and an end per resized axis");
    p.roi.assign(2 * r, 0.0);
    for (std::size_t d = 0; d < r; ++d) p.roi[2 * d + 1] = 1.0;
    for (std::size_t i = 0; i < k; ++i) p.roi[2 * p.axes[i]] = roi->f[i], p.roi[2 * p.axes[i] + 1] = roi->f[k + i];
  }
  return p;
}

void resize_shape(ShapeContext& c) {
  c.need_inputs(1, 4);
  const std::string mode = c.n.get_string("mode", "nearest"), ct = c.n.get_string("coordinate_transformation_mode", "half_pixel");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") c.bad("mode '" + mode + "'");
  if (ct != "half_pixel" && ct != "half_pixel_symmetric" && ct != "pytorch_half_pixel" && ct != "align_corners" && ct != "asymmetric" &&
      ct != "tf_crop_and_resize")
    c.bad("coordinate_transformation_mode '" + ct + "'");
  const std::string nm = c.n.get_string("nearest_mode", "round_prefer_floor");
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil") c.bad("nearest_mode '" + nm + "'");
  if (mode == "nearest" && c.n.get_int("antialias", 0) != 0) c.bad("antialias with mode nearest");
  const TensorData* roi = c.has_input(1) ? &c.need_const(1, "roi") : nullptr;
  const TensorData* scales = c.has_input(2) ? &c.need_const(2, "scales") : nullptr;
  const TensorData* sizes = c.has_input(3) ? &c.need_const(3, "sizes") : nullptr;
  if (ct == "tf_crop_and_resize" && (!roi || roi->numel() == 0)) c.bad("tf_crop_and_resize needs a roi");
  c.set(0, resize_plan(c.n, c.in_shape(0), roi, scales, sizes).out);
}

// One output position's taps: the coefficients at an input coordinate x_ori (ratio: its
// distance past floor(x_ori), 1 where it is whole), by the node's mode.
std::vector<double> resize_taps(const Node& n, double ratio, double scale) {
  const std::string mode = n.get_string("mode", "nearest");
  if (mode == "nearest") {
    const std::string nm = n.get_string("nearest_mode", "round_prefer_floor");
    if (ratio == 1.0 || nm == "ceil") return {0, 1};
    if (nm == "floor") return {1, 0};
    const bool up = nm == "round_prefer_ceil" ? ratio >= 0.5 : ratio > 0.5;
    return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
  }
  const bool aa = n.get_int("antialias", 0) != 0;
  const double A = n.get_float("cubic_coeff_a", -0.75f);
  auto cubic = [A](double v) {
    v = std::fabs(v);
    return v <= 1 ? ((A + 2) * v - (A + 3)) * v * v + 1 : v < 2 ? ((A * v - 5 * A) * v + 8 * A) * v - 4 * A : 0.0;
  };
  std::vector<double> t;
  if (!aa) {
    if (mode == "linear") return {1 - ratio, ratio};
    return {cubic(ratio + 1), cubic(ratio), cubic(1 - ratio), cubic(2 - ratio)};
  }
  const double s = std::min(scale, 1.0);
  const bool lin = mode == "linear";
  const I start = static_cast<I>(std::floor((lin ? -1.0 : -2.0) / s)) + 1;
  const I count = 2 - 2 * start;
  double sum = 0;
  for (I i = 0; i < count; ++i) {
    const double v = (static_cast<double>(start + i) - ratio) * s;
    t.push_back(lin ? std::clamp(1 - std::fabs(v), 0.0, 1.0) : cubic(v));
    sum += t.back();
  }
  for (double& v : t) v /= sum;
  return t;
}

// Where output position y of `axis` reads: the first input index of its
// taps, their weights, and whether it lies outside the roi (tf_crop_and_resize).
struct ResizeTaps {
  I first = 0;
  std::vector<double> taps;
  bool outside = false;
};

ResizeTaps resize_position(const Node& n, I y, I W, double scale, I out, const ResizePlan& p, std::size_t axis) {
  const std::string ct = n.get_string("coordinate_transformation_mode", "half_pixel");
  const double width = scale * static_cast<double>(W);
  const double yd = static_cast<double>(y);
  double x = (yd + 0.5) / scale - 0.5;  // half_pixel
  ResizeTaps r;
  if (ct == "align_corners") x = width == 1 ? 0.0 : yd * static_cast<double>(W - 1) / (width - 1);
  else if (ct == "asymmetric") x = yd / scale;
  else if (ct == "pytorch_half_pixel") x = width == 1 ? -0.5 : x;
  else if (ct == "half_pixel_symmetric") x += static_cast<double>(W) / 2 * (1 - static_cast<double>(out) / width);
  else if (ct == "tf_crop_and_resize") {
    const double a = p.roi[2 * axis], b = p.roi[2 * axis + 1];
    x = (width == 1 ? (b - a) * static_cast<double>(W - 1) / 2 : yd * (b - a) * static_cast<double>(W - 1) / (width - 1)) +
        a * static_cast<double>(W - 1);
    r.outside = x < 0 || x > static_cast<double>(W - 1);
  }
  const double fl = std::floor(x);
  r.taps = resize_taps(n, x == fl ? 1.0 : x - fl, scale);
  const auto count = static_cast<I>(r.taps.size());
  const I pad = (count + 1) / 2;
  const double xp = x + static_cast<double>(pad), pf = std::floor(xp), frac = xp - pf;
  r.first = static_cast<I>(pf) +
            (count % 2 == 0 ? (frac == 0 ? -(count / 2) : -(count / 2) + 1) : (frac <= 0.5 ? -((count - 1) / 2) : -((count - 1) / 2) + 1)) - pad;
  if (n.get_int("exclude_outside", 0) != 0) {
    double sum = 0;
    for (I k = 0; k < count; ++k) {
      if (r.first + k < 0 || r.first + k >= W) r.taps[static_cast<std::size_t>(k)] = 0;
      sum += r.taps[static_cast<std::size_t>(k)];
    }
    for (double& t : r.taps) t /= sum == 0 ? 1.0 : sum;
  }
  return r;
}

// data (shape s) resized along `axis` to `out` positions.
std::vector<double> resize_axis(const Node& n, const std::vector<double>& data, const Shape& s, std::size_t axis, double scale,
                                I out, const ResizePlan& p) {
  const I W = s[axis];
  I outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= s[d];
  for (std::size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  std::vector<double> res(static_cast<std::size_t>(outer * out * inner));
  const double extrapolation = n.get_float("extrapolation_value", 0.f);
  for (I y = 0; y < out; ++y) {
    const ResizeTaps t = resize_position(n, y, W, scale, out, p, axis);
    const auto count = static_cast<I>(t.taps.size());
    for (I o = 0; o < outer; ++o)
      for (I in = 0; in < inner; ++in) {
        double acc = 0;
        for (I k = 0; k < count; ++k) {
          const I at = std::clamp<I>(t.first + k, 0, W - 1);
          acc += t.taps[static_cast<std::size_t>(k)] * data[static_cast<std::size_t>((o * W + at) * inner + in)];
        }
        res[static_cast<std::size_t>((o * out + y) * inner + in)] = t.outside ? extrapolation : acc;
      }
  }
  return res;
}

bool resize_skips(const ResizePlan& p, const Shape& s, std::size_t d) {
  const bool trivial_roi = p.roi.empty() || (std::fabs(p.roi[2 * d]) < 1e-9 && std::fabs(p.roi[2 * d + 1] - 1) < 1e-9);
  return std::fabs(p.scales[d] - 1) <= 1e-9 && p.out[d] == s[d] && trivial_roi;
}

void resize_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const ResizePlan p = resize_plan(c.n, x.shape, c.opt(1), c.opt(2), c.opt(3));
  std::vector<double> cur(x.f.begin(), x.f.end());
  Shape s = x.shape;
  for (const std::size_t d : p.axes) {
    if (resize_skips(p, s, d)) continue;
    cur = resize_axis(c.n, cur, s, d, p.scales[d], p.out[d], p);
    s[d] = p.out[d];
  }
  for (std::size_t i = 0; i < cur.size(); ++i) c.y().f[i] = static_cast<float>(cur[i]);
}

// ---- TopK: the k largest (or smallest) values along an axis, in order, and
// their int64 indices; equal values keep the lower index first, NaN counts
// above every number (as PyTorch and numpy order it). K: the input (opset
// 10 on, a constant) or the attribute (opset 1).
void topk_shape(ShapeContext& c) {
  c.need_inputs(1, 2);
  Shape x = c.in_shape(0);
  const auto axis = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", -1), x.size()));
  I k = c.n.get_int("k", -1);
  if (c.has_input(1)) {
    const TensorData& kt = c.need_const(1, "K");
    if (kt.dtype != DType::I64 || kt.numel() != 1) c.bad("K must hold one int64");
    k = kt.i[0];
  }
  if (k < 0 || k > x[axis]) c.bad("K " + std::to_string(k) + " is not in [0, " + std::to_string(x[axis]) + "]");
  x[axis] = k;
  c.set(0, x, c.in_dtype(0));
  c.set(1, x, DType::I64);
}

void topk_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData &values = c.y(), &indices = c.out(1);
  const auto axis = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", -1), x.shape.size()));
  I outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (std::size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const I len = x.shape[axis], k = values.shape[axis];
  const bool largest = c.n.get_int("largest", 1) != 0, is_float = x.dtype == DType::F32;
  auto value = [&](std::size_t i) { return is_float ? static_cast<double>(x.f[i]) : static_cast<double>(x.i[i]); };
  // Strictly before: the better value, NaN best when largest (worst when smallest), then the lower index.
  auto before = [&](double a, I ia, double b, I ib) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na != nb) return largest ? na : nb;
    if (!na && a != b) return largest ? a > b : a < b;
    return ia < ib;
  };
  std::vector<I> order(static_cast<std::size_t>(len));
  for (I o = 0; o < outer; ++o)
    for (I in = 0; in < inner; ++in) {
      auto at = [&](I j) { return static_cast<std::size_t>((o * len + j) * inner + in); };
      for (I j = 0; j < len; ++j) order[static_cast<std::size_t>(j)] = j;
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](I a, I b) { return before(value(at(a)), a, value(at(b)), b); });
      for (I j = 0; j < k; ++j) {
        const auto to = static_cast<std::size_t>((o * k + j) * inner + in);
        const std::size_t from = at(order[static_cast<std::size_t>(j)]);
        if (is_float) values.f[to] = x.f[from];
        else values.i[to] = x.i[from];
        indices.i[to] = order[static_cast<std::size_t>(j)];
      }
    }
}

// ---- ArgMax, ArgMin (int64 indices; the first extremum, or the last with select_last_index)
void arg_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  Shape x = c.in_shape(0);
  const auto axis = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", 0), x.size()));
  if (x[axis] == 0) c.bad("an empty axis has no extremum");
  if (c.n.get_int("keepdims", 1) != 0) x[axis] = 1;
  else x.erase(x.begin() + static_cast<std::ptrdiff_t>(axis));
  c.set(0, x, DType::I64);
}

template <bool kMax>
void arg_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  Node n = c.n;
  if (!n.has("axis")) n.attrs["axis"] = I{0};
  const SoftmaxExtent e = softmax_extent(n, x.shape);
  const bool last = c.n.get_int("select_last_index", 0) != 0;
  auto value = [&](std::size_t i) { return x.dtype == DType::F32 ? static_cast<double>(x.f[i]) : static_cast<double>(x.i[i]); };
  for (I o = 0; o < e.outer; ++o)
    for (I in = 0; in < e.inner; ++in) {
      auto at = [&](I k) { return static_cast<std::size_t>((o * e.len + k) * e.inner + in); };
      I best = 0;
      for (I k = 1; k < e.len; ++k) {
        const double v = value(at(k)), b = value(at(best));
        if (kMax ? (v > b || (last && v == b)) : (v < b || (last && v == b))) best = k;
      }
      c.y().i[static_cast<std::size_t>(o * e.inner + in)] = best;
    }
}

// ---- NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (its log_prob the second output):
// input [N, C, d...], target [N, d...] (int64), weight [C]; reduction none, sum or mean
void loss_shape_for(ShapeContext& c, bool softmax) {
  c.need_inputs(2, 3);
  const Shape& x = c.in_shape(0);
  const Shape& t = c.in_shape(1);
  if (x.size() < 2 || t.size() != x.size() - 1 || t[0] != x[0] || !std::equal(t.begin() + 1, t.end(), x.begin() + 2))
    c.bad("target must be input's shape without its class dimension");
  if (c.in_dtype(1) != DType::I64) c.bad("target must hold integers");
  if (c.has_input(2) && (c.in_shape(2) != Shape{x[1]} || c.in_dtype(2) != DType::F32)) c.bad("weight must hold one float per class");
  const std::string r = c.n.get_string("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean") c.bad("reduction '" + r + "'");
  c.set(0, r == "none" ? t : Shape{});
  if (softmax && c.n.outputs.size() > 1 && c.n.outputs[1] >= 0) c.set(1, x);
}

template <bool kSoftmax>
void loss_shape(ShapeContext& c) {
  loss_shape_for(c, kSoftmax);
}

template <bool kSoftmax>
void loss_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const TensorData& t = c.arg(1);
  const TensorData* w = c.opt(2);
  const I N = x.shape[0], C = x.shape[1], D = numel(x.shape) / std::max<I>(N * C, 1);
  std::vector<double> logp(x.f.begin(), x.f.end());
  if (kSoftmax)
    for (I n = 0; n < N; ++n)
      for (I d = 0; d < D; ++d) {
        auto at = [&](I k) { return static_cast<std::size_t>((n * C + k) * D + d); };
        double mx = -INFINITY, sum = 0;
        for (I k = 0; k < C; ++k) mx = std::max(mx, logp[at(k)]);
        for (I k = 0; k < C; ++k) sum += std::exp(logp[at(k)] - mx);
        for (I k = 0; k < C; ++k) logp[at(k)] = logp[at(k)] - mx - std::log(sum);
      }
  const bool has_ignore = c.n.has("ignore_index");
  const I ignore = c.n.get_int("ignore_index", 0);
  const std::string r = c.n.get_string("reduction", "mean");
  double total = 0, weights = 0;
  for (I n = 0; n < N; ++n)
    for (I d = 0; d < D; ++d) {
      const I cls = t.i[static_cast<std::size_t>(n * D + d)];
      double loss = 0, wt = 0;
      if (!has_ignore || cls != ignore) {
        if (cls < 0 || cls >= C) throw Error(ErrorKind::BadInput, c.n.label() + ": class " + std::to_string(cls) + " out of range");
        wt = w ? w->f[static_cast<std::size_t>(cls)] : 1.0;
        loss = -logp[static_cast<std::size_t>((n * C + cls) * D + d)] * wt;
      }
      if (r == "none") c.y().f[static_cast<std::size_t>(n * D + d)] = static_cast<float>(loss);
      total += loss, weights += wt;
    }
  if (r != "none") c.y().f[0] = static_cast<float>(r == "sum" ? total : total / weights);
  if (kSoftmax && c.n.outputs.size() > 1 && c.n.outputs[1] >= 0)
    for (std::size_t i = 0; i < logp.size(); ++i) c.out(1).f[i] = static_cast<float>(logp[i]);
}

// ---- Softmax (before opset 13: over every dimension from axis on, axis 1 by default)
void softmax_from_onnx(Node& n, std::int64_t opset) {
  if (opset < 13) n.attrs["vinfer.opset"] = opset;
  if (!n.has("axis")) n.attrs["axis"] = static_cast<std::int64_t>(opset < 13 ? 1 : -1);
}

void softmax_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  normalize_axis(c.n, c.n.get_int("axis", -1), c.in_shape(0).size());
  c.set(0, c.in_shape(0));
}

// Softmax ('s'), LogSoftmax ('l') and Hardmax ('h': 1 at the first maximum), along the same extent.
template <char kHow>
void softmax_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const SoftmaxExtent e = softmax_extent(c.n, x.shape);
  for (I o = 0; o < e.outer; ++o)
    for (I in_i = 0; in_i < e.inner; ++in_i) {
      auto at = [&](I k) { return static_cast<std::size_t>((o * e.len + k) * e.inner + in_i); };
      float mx = -std::numeric_limits<float>::infinity();
      I first = 0;
      for (I k = 0; k < e.len; ++k)
        if (x.f[at(k)] > mx || k == 0) mx = x.f[at(k)], first = k;
      if (kHow == 'h') {
        for (I k = 0; k < e.len; ++k) y.f[at(k)] = k == first ? 1.f : 0.f;
        continue;
      }
      double sum = 0;
      for (I k = 0; k < e.len; ++k) sum += std::exp(static_cast<double>(x.f[at(k)]) - mx);
      for (I k = 0; k < e.len; ++k) {
        const double d = static_cast<double>(x.f[at(k)]) - mx;
        y.f[at(k)] = static_cast<float>(kHow == 'l' ? d - std::log(sum) : std::exp(d) / sum);
      }
    }
}

// ---- Gemm (2-D, optionally transposed) and MatMul ([..., M, K] x [..., K, N], batches broadcast)
void gemm_shape(ShapeContext& c) {
  c.need_inputs(2, 3);
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  if (a.size() != 2 || b.size() != 2) c.bad("inputs must be 2-D, got " + shape_str(a) + " and " + shape_str(b));
  const bool ta = c.n.get_int("transA", 0) != 0, tb = c.n.get_int("transB", 0) != 0;
  const I m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  const I kb = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
  if (k != kb) c.bad("inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
  // C broadcasts to [M, N], one way: it may not widen the result.
  if (c.has_input(2) && broadcast_shapes(c.n, {m, nn}, c.in_shape(2)) != Shape{m, nn})
    c.bad("C " + shape_str(c.in_shape(2)) + " does not broadcast to [" + std::to_string(m) + "," + std::to_string(nn) + "]");
  c.set(0, {m, nn});
}

void matmul_shape(ShapeContext& c) {
  c.need_inputs(2, 3);  // a third: the bias fuse_matmul_bias gives it (vinfer's, not ONNX's)
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  if (c.has_input(2) && (c.in_shape(2) != Shape{b.back()} || !c.g.constant(c.n.inputs[2])))
    c.bad("a bias must be a constant of " + std::to_string(b.back()) + " values");
  if (a.size() < 2 || b.size() < 2) c.unsupported("a 1-D operand is not supported");
  if (a.back() != b[b.size() - 2]) c.bad("inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
  Shape out = broadcast_shapes(c.n, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  c.set(0, out);
}

template <bool kGemm>
void matmul_reference(RefContext& c) {
  const TensorData &a = c.arg(0), &b = c.arg(1);
  TensorData& y = c.y();
  const bool ta = kGemm && c.n.get_int("transA", 0) != 0, tb = kGemm && c.n.get_int("transB", 0) != 0;
  const float alpha = kGemm ? c.n.get_float("alpha", 1.f) : 1.f, beta = c.n.get_float("beta", 1.f);
  const std::size_t ra = a.shape.size(), ry = y.shape.size();
  const I M = y.shape[ry - 2], N = y.shape[ry - 1], K = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  const Shape batch(y.shape.begin(), y.shape.end() - 2);
  const std::vector<I> sa = bstrides(Shape(a.shape.begin(), a.shape.end() - 2), batch),
                       sb = bstrides(Shape(b.shape.begin(), b.shape.end() - 2), batch);
  const TensorData* bias = c.opt(2);  // Gemm's C, or the bias fuse_matmul_bias gives a MatMul
  const std::vector<I> cs = bias ? bstrides(bias->shape, {M, N}) : std::vector<I>{};
  std::vector<I> idx(batch.size(), 0);
  for (I bi = 0; bi < numel(batch); ++bi) {
    I ao = 0, bo = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) ao += idx[d] * sa[d], bo += idx[d] * sb[d];
    const float* ap = a.f.data() + ao * M * K;
    const float* bp = b.f.data() + bo * K * N;
    float* yp = y.f.data() + bi * M * N;
    for (I i = 0; i < M; ++i)
      for (I j = 0; j < N; ++j) {
        double acc = 0;
        for (I k = 0; k < K; ++k) acc += static_cast<double>(ta ? ap[k * M + i] : ap[i * K + k]) * (tb ? bp[j * K + k] : bp[k * N + j]);
        acc *= alpha;
        if (bias) acc += static_cast<double>(beta) * bias->f[static_cast<std::size_t>(i * cs[0] + j * cs[1])];
        yp[i * N + j] = static_cast<float>(acc);
      }
    next_index(idx, batch);
  }
}

// ---- Attention (opset 23; op_params.hpp has the forms): no key/value cache,
// only Y. The mask: float32 added to the scores, or bool (int64 0/1 here) where
// 0 leaves a key out; is_causal leaves out the keys after each query; softcap
// c > 0 maps the scaled scores s to c tanh(s / c) before the mask; a query
// that every key is left out for gets zeros.
void attention_shape(ShapeContext& c) {
  c.need_inputs(3, 6);
  if (c.has_input(4) || c.has_input(5)) c.unsupported("past_key and past_value (a key/value cache) are not supported");
  for (std::size_t o = 1; o < 4; ++o)
    if (c.output_read(o)) c.unsupported("the present_key, present_value and qk_matmul_output outputs are not supported");
  for (std::size_t i = 0; i < 3; ++i)
    if (c.in_dtype(i) != DType::F32) c.bad("Q, K and V must be float32");
  const AttentionDims d = attention_dims(c.n, c.in_shape(0), c.in_shape(1), c.in_shape(2));
  const Shape scores{d.batch, d.q_heads, d.q_seq, d.kv_seq};
  if (c.has_input(3) && broadcast_shapes(c.n, c.in_shape(3), scores) != scores)
    c.bad("the mask " + shape_str(c.in_shape(3)) + " does not broadcast to the scores " + shape_str(scores));
  if (c.n.get_float("softcap", 0.f) < 0.f) c.bad("softcap must not be negative");
  c.set(0, d.three_d ? Shape{d.batch, d.q_seq, d.q_heads * d.v_size} : Shape{d.batch, d.q_heads, d.q_seq, d.v_size});
}

void attention_reference(RefContext& c) {
  const TensorData &q = c.arg(0), &k = c.arg(1), &v = c.arg(2);
  const TensorData* mask = c.opt(3);
  const AttentionDims d = attention_dims(c.n, q.shape, k.shape, v.shape);
  const bool causal = c.n.get_int("is_causal", 0) != 0;
  const double cap = c.n.get_float("softcap", 0.f);
  // Element (b, h, s, e) of a tensor in either form; its heads of `size`.
  auto at = [&](I b, I heads, I h, I seq, I s, I size, I e) {
    return static_cast<std::size_t>(d.three_d ? ((b * seq + s) * heads + h) * size + e : ((b * heads + h) * seq + s) * size + e);
  };
  // The mask's element for (b, h, i, j), its dimensions right-aligned to the scores'.
  Shape ms(4, 1);
  if (mask) std::copy(mask->shape.begin(), mask->shape.end(), ms.end() - static_cast<std::ptrdiff_t>(mask->shape.size()));
  auto mask_at = [&](I b, I h, I i, I j) {
    const I idx[4] = {b, h, i, j};
    std::size_t o = 0;
    for (int x = 0; x < 4; ++x) o = o * static_cast<std::size_t>(ms[x]) + static_cast<std::size_t>(ms[x] == 1 ? 0 : idx[x]);
    return o;
  };
  std::vector<double> s(static_cast<std::size_t>(d.kv_seq));
  for (I b = 0; b < d.batch; ++b)
    for (I h = 0; h < d.q_heads; ++h) {
      const I kh = h / (d.q_heads / d.kv_heads);
      for (I i = 0; i < d.q_seq; ++i) {
        double top = -INFINITY;
        for (I j = 0; j < d.kv_seq; ++j) {
          double dot = 0;
          for (I e = 0; e < d.size; ++e)
            dot += static_cast<double>(q.f[at(b, d.q_heads, h, d.q_seq, i, d.size, e)]) * k.f[at(b, d.kv_heads, kh, d.kv_seq, j, d.size, e)];
          double x = dot * d.scale;
          if (cap > 0) x = cap * std::tanh(x / cap);
          if (mask && mask->dtype == DType::F32) x += mask->f[mask_at(b, h, i, j)];
          if ((mask && mask->dtype == DType::I64 && mask->i[mask_at(b, h, i, j)] == 0) || (causal && j > i)) x = -INFINITY;
          s[static_cast<std::size_t>(j)] = x;
          top = std::max(top, x);
        }
        double sum = 0;
        for (double& x : s) sum += x = top == -INFINITY ? 0.0 : std::exp(x - top);
        for (I e = 0; e < d.v_size; ++e) {
          double y = 0;
          for (I j = 0; j < d.kv_seq; ++j) y += s[static_cast<std::size_t>(j)] * v.f[at(b, d.kv_heads, kh, d.kv_seq, j, d.v_size, e)];
          c.y().f[at(b, d.q_heads, h, d.q_seq, i, d.v_size, e)] = static_cast<float>(sum > 0 ? y / sum : 0.0);
        }
      }
    }
}

// ---- Einsum (explicit equations, no ellipsis)
void einsum_shape(ShapeContext& c) {
  const EinsumTerms t = einsum_terms(c.n);
  c.need_inputs(t.inputs.size(), t.inputs.size());
  std::map<char, I> dim;
  for (std::size_t i = 0; i < t.inputs.size(); ++i) {
    const Shape& s = c.in_shape(i);
    if (s.size() != t.inputs[i].size() || c.in_dtype(i) != DType::F32) c.bad("input " + std::to_string(i) + " does not match the equation");
    for (std::size_t d = 0; d < s.size(); ++d) {
      auto [it, fresh] = dim.emplace(t.inputs[i][d], s[d]);
      if (!fresh && it->second != s[d]) c.bad(std::string("dimension '") + t.inputs[i][d] + "' differs between inputs");
    }
  }
  Shape out;
  for (char ch : t.output) {
    if (!dim.count(ch)) c.bad(std::string("output dimension '") + ch + "' is in no input");
    out.push_back(dim[ch]);
  }
  c.set(0, out);
}

void einsum_reference(RefContext& c) {
  // Every letter's index in turn; each output element sums the inputs' product.
  const EinsumTerms t = einsum_terms(c.n);
  TensorData& y = c.y();
  std::string letters;
  Shape size;
  for (std::size_t i = 0; i < t.inputs.size(); ++i)
    for (std::size_t d = 0; d < t.inputs[i].size(); ++d)
      if (letters.find(t.inputs[i][d]) == std::string::npos) letters += t.inputs[i][d], size.push_back(c.arg(i).shape[d]);
  auto strides_for = [&](const std::string& term, const Shape& s) {
    std::vector<I> st(letters.size(), 0);
    I acc = 1;
    for (std::size_t d = term.size(); d-- > 0;) st[letters.find(term[d])] += acc, acc *= s[d];
    return st;
  };
  std::vector<std::vector<I>> in_st;
  for (std::size_t i = 0; i < t.inputs.size(); ++i) in_st.push_back(strides_for(t.inputs[i], c.arg(i).shape));
  const std::vector<I> out_st = strides_for(t.output, y.shape);
  std::vector<double> acc(y.f.size(), 0.0);
  std::vector<I> idx(letters.size(), 0);
  I total = 1;
  for (I s : size) {
    total *= s;
    if (total > (I{1} << 32)) throw Error(ErrorKind::Unsupported, c.n.label() + ": an Einsum of more than 2^32 products");
  }
  for (I e = 0; e < total; ++e) {
    double prod = 1;
    for (std::size_t i = 0; i < t.inputs.size(); ++i) {
      I at = 0;
      for (std::size_t l = 0; l < idx.size(); ++l) at += idx[l] * in_st[i][l];
      prod *= c.arg(i).f[static_cast<std::size_t>(at)];
    }
    I o = 0;
    for (std::size_t l = 0; l < idx.size(); ++l) o += idx[l] * out_st[l];
    acc[static_cast<std::size_t>(o)] += prod;
    next_index(idx, size);
  }
  for (std::size_t i = 0; i < acc.size(); ++i) y.f[i] = static_cast<float>(acc[i]);
}

}  // namespace

std::optional<NearestResize> nearest_resize(const Node& n, const Shape& x, const TensorData* roi, const TensorData* scales,
                                            const TensorData* sizes) {
  if (n.get_string("mode", "nearest") != "nearest" || n.get_int("exclude_outside", 0) != 0 ||
      n.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return std::nullopt;
  const ResizePlan p = resize_plan(n, x, roi, scales, sizes);
  NearestResize r;
  r.out = p.out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    std::vector<I>& src = r.source.emplace_back(static_cast<std::size_t>(p.out[d]));
    const bool resized = std::find(p.axes.begin(), p.axes.end(), d) != p.axes.end() && !resize_skips(p, x, d);
    for (I y = 0; y < p.out[d]; ++y) {
      if (!resized) {
        src[static_cast<std::size_t>(y)] = y;
        continue;
      }
      const ResizeTaps t = resize_position(n, y, x[d], p.scales[d], p.out[d], p, d);
      const auto k = std::find(t.taps.begin(), t.taps.end(), 1.0) - t.taps.begin();
      src[static_cast<std::size_t>(y)] = std::clamp<I>(t.first + k, 0, x[d] - 1);
    }
  }
  return r;
}

SeparableResize separable_resize(const Node& n, const Shape& x, const TensorData* roi, const TensorData* scales, const TensorData* sizes) {
  const ResizePlan p = resize_plan(n, x, roi, scales, sizes);
  SeparableResize r;
  r.out = p.out;
  r.extrapolation = n.get_float("extrapolation_value", 0.f);
  Shape s = x;
  for (const std::size_t d : p.axes) {
    if (resize_skips(p, s, d)) continue;
    ResizeAxis& a = r.axes.emplace_back();
    a.axis = d, a.in = s[d], a.out = p.out[d];
    for (I y = 0; y < a.out; ++y) {
      ResizeTaps t = resize_position(n, y, a.in, p.scales[d], a.out, p, d);
      a.first.push_back(t.first);
      a.taps.push_back(std::move(t.taps));
      a.outside.push_back(t.outside ? 1 : 0);
    }
    s[d] = p.out[d];
  }
  return r;
}

void add_nn_ops(std::vector<OpDef>& ops) {
  ops.insert(ops.end(), {
      {.name = "Conv", .shape = conv_shape, .reference = conv_reference, .types = OpDef::AllFloat},
      {.name = "ConvTranspose", .shape = conv_transpose_shape, .reference = conv_transpose_reference, .types = OpDef::AllFloat},
      {.name = "BatchNormalization", .shape = batchnorm_shape, .reference = batchnorm_reference, .types = OpDef::AllFloat,
       .from_onnx = refuse_training_mode},
      {.name = "vinfer.ScaleShift", .shape = scale_shift_shape, .reference = scale_shift_reference},
      {.name = "MaxPool", .shape = max_pool_shape, .reference = pool_reference<true>},
      {.name = "AveragePool", .shape = pool_shape, .reference = pool_reference<false>},
      {.name = "GlobalAveragePool", .shape = global_pool_shape, .reference = reduce_reference<Reduce::Mean, true>},
      {.name = "ReduceMean", .shape = reduce_shape, .reference = reduce_reference<Reduce::Mean>},
      {.name = "ReduceSum", .shape = reduce_shape, .reference = reduce_reference<Reduce::Sum>},
      {.name = "ReduceMax", .shape = reduce_shape, .reference = reduce_reference<Reduce::Max>},
      {.name = "ReduceL2", .shape = reduce_shape, .reference = reduce_reference<Reduce::L2>},
      {.name = "ReduceMin", .shape = reduce_shape, .reference = reduce_reference<Reduce::Min>},
      {.name = "ReduceProd", .shape = reduce_shape, .reference = reduce_reference<Reduce::Prod>},
      {.name = "ReduceL1", .shape = reduce_shape, .reference = reduce_reference<Reduce::L1>},
      {.name = "ReduceSumSquare", .shape = reduce_shape, .reference = reduce_reference<Reduce::SumSquare>},
      {.name = "ReduceLogSum", .shape = reduce_shape, .reference = reduce_reference<Reduce::LogSum>},
      {.name = "ReduceLogSumExp", .shape = reduce_shape, .reference = reduce_reference<Reduce::LogSumExp>},
      {.name = "GlobalMaxPool", .shape = global_pool_shape, .reference = reduce_reference<Reduce::Max, true>},
      {.name = "RMSNormalization", .shape = rms_norm_shape, .reference = rms_norm_reference},
      {.name = "InstanceNormalization", .shape = instance_norm_shape<false>, .reference = instance_norm_reference<false>,
       .types = OpDef::AllFloat},
      {.name = "GroupNormalization", .shape = instance_norm_shape<true>, .reference = instance_norm_reference<true>,
       .types = OpDef::AllFloat, .from_onnx = group_norm_from_onnx},
      {.name = "MeanVarianceNormalization", .shape = same_shape, .reference = mvn_reference},
      {.name = "LpNormalization", .shape = lp_norm_shape, .reference = lp_norm_reference},
      {.name = "LRN", .shape = lrn_shape, .reference = lrn_reference},
      {.name = "Resize", .shape = resize_shape, .reference = resize_reference, .from_onnx = resize_from_onnx},
      {.name = "TopK", .shape = topk_shape, .reference = topk_reference, .types = OpDef::Any},
      {.name = "ArgMax", .shape = arg_shape, .reference = arg_reference<true>, .types = OpDef::Any},
      {.name = "ArgMin", .shape = arg_shape, .reference = arg_reference<false>, .types = OpDef::Any},
      {.name = "NegativeLogLikelihoodLoss", .shape = loss_shape<false>, .reference = loss_reference<false>},
      {.name = "SoftmaxCrossEntropyLoss", .shape = loss_shape<true>, .reference = loss_reference<true>},
      {.name = "LayerNormalization", .shape = layer_norm_shape, .reference = layer_norm_reference},
      {.name = "Softmax", .shape = softmax_shape, .reference = softmax_reference<'s'>, .from_onnx = softmax_from_onnx},
      {.name = "LogSoftmax", .shape = softmax_shape, .reference = softmax_reference<'l'>, .from_onnx = softmax_from_onnx},
      {.name = "Hardmax", .shape = softmax_shape, .reference = softmax_reference<'h'>, .from_onnx = softmax_from_onnx},
      {.name = "Gemm", .shape = gemm_shape, .reference = matmul_reference<true>, .types = OpDef::AllFloat},
      {.name = "MatMul", .shape = matmul_shape, .reference = matmul_reference<false>, .types = OpDef::AllFloat},
      {.name = "Einsum", .shape = einsum_shape, .reference = einsum_reference},
      {.name = "Attention", .shape = attention_shape, .reference = attention_reference},
  });
}

}  // namespace vinfer::detail
