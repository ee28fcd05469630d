#include "graph/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/activation.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

using I = std::int64_t;

TensorData make(DType t, const Shape& s) {
  TensorData d;
  d.dtype = t;
  d.shape = s;
  if (t == DType::F32) d.f.assign(static_cast<std::size_t>(numel(s)), 0.f);
  else d.i.assign(static_cast<std::size_t>(numel(s)), 0);
  return d;
}

// Row-major strides of `s`, with broadcast dimensions (size 1 where out is larger) set to 0.
std::vector<I> bstrides(const Shape& s, const Shape& out) {
  std::vector<I> st(out.size(), 0);
  I acc = 1;
  for (std::size_t k = 0; k < s.size(); ++k) {
    const std::size_t i = s.size() - 1 - k, o = out.size() - 1 - k;
    st[o] = s[i] == 1 && out[o] != 1 ? 0 : acc;
    acc *= s[i];
  }
  return st;
}

template <typename T, typename F>
void broadcast_apply(const std::vector<T>& a, const Shape& sa, const std::vector<T>& b, const Shape& sb, std::vector<T>& out,
                     const Shape& so, F f) {
  const std::vector<I> ta = bstrides(sa, so), tb = bstrides(sb, so);
  std::vector<I> idx(so.size(), 0);
  const I total = numel(so);
  for (I e = 0; e < total; ++e) {
    I ia = 0, ib = 0;
    for (std::size_t d = 0; d < so.size(); ++d) ia += idx[d] * ta[d], ib += idx[d] * tb[d];
    out[static_cast<std::size_t>(e)] = f(a[static_cast<std::size_t>(ia)], b[static_cast<std::size_t>(ib)]);
    for (std::size_t d = so.size(); d-- > 0;) {
      if (++idx[d] < so[d]) break;
      idx[d] = 0;
    }
  }
}

void conv(const Node& n, const TensorData& x, const TensorData& w, const TensorData* b, TensorData& y) {
  const WindowParams p = conv_params(n, x.shape, w.shape);
  const I N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const I M = w.shape[0], KH = w.shape[2], KW = w.shape[3], OH = y.shape[2], OW = y.shape[3];
  const I cg = C / p.group, mg = M / p.group;
  for (I nn = 0; nn < N; ++nn)
    for (I m = 0; m < M; ++m) {
      const I g = m / mg;
      for (I oh = 0; oh < OH; ++oh)
        for (I ow = 0; ow < OW; ++ow) {
          double acc = b ? b->f[static_cast<std::size_t>(m)] : 0.0;
          for (I c = 0; c < cg; ++c)
            for (I kh = 0; kh < KH; ++kh) {
              const I ih = oh * p.strides[0] - p.pads_begin[0] + kh * p.dilations[0];
              if (ih < 0 || ih >= H) continue;
              for (I kw = 0; kw < KW; ++kw) {
                const I iw = ow * p.strides[1] - p.pads_begin[1] + kw * p.dilations[1];
                if (iw < 0 || iw >= W) continue;
                acc += static_cast<double>(x.f[static_cast<std::size_t>(((nn * C + g * cg + c) * H + ih) * W + iw)]) *
                       w.f[static_cast<std::size_t>(((m * cg + c) * KH + kh) * KW + kw)];
              }
            }
          y.f[static_cast<std::size_t>(((nn * M + m) * OH + oh) * OW + ow)] = static_cast<float>(acc);
        }
    }
}

void pool(const Node& n, const TensorData& x, TensorData& y) {
  const WindowParams p = pool_params(n, x.shape);
  const bool is_max = n.op == "MaxPool";
  const I NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  for (I c = 0; c < NC; ++c)
    for (I oh = 0; oh < OH; ++oh)
      for (I ow = 0; ow < OW; ++ow) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        I count = 0;
        for (I kh = 0; kh < p.kernel[0]; ++kh) {
          const I ih = oh * p.strides[0] - p.pads_begin[0] + kh * p.dilations[0];
          if (ih < 0 || ih >= H) continue;
          for (I kw = 0; kw < p.kernel[1]; ++kw) {
            const I iw = ow * p.strides[1] - p.pads_begin[1] + kw * p.dilations[1];
            if (iw < 0 || iw >= W) continue;
            const double v = x.f[static_cast<std::size_t>((c * H + ih) * W + iw)];
            acc = is_max ? std::max(acc, v) : acc + v;
            ++count;
          }
        }
        if (!is_max) {
          // PyTorch's divisor: with count_include_pad the window clipped to the padded
          // input (explicit pads count, ceil_mode overhang does not); else the valid pixels.
          if (p.count_include_pad) {
            const I h0 = oh * p.strides[0] - p.pads_begin[0], w0 = ow * p.strides[1] - p.pads_begin[1];
            const I h1 = std::min(h0 + p.kernel[0], H + p.pads_end[0]), w1 = std::min(w0 + p.kernel[1], W + p.pads_end[1]);
            count = (h1 - h0) * (w1 - w0);
          }
          acc = count ? acc / static_cast<double>(count) : 0.0;
        }
        y.f[static_cast<std::size_t>((c * OH + oh) * OW + ow)] = static_cast<float>(acc);
      }
}

void apply_post_ops(const Node& n, TensorData& y, const std::vector<const TensorData*>& sums) {
  std::size_t k = 0;
  for (const PostOp& p : n.post_ops) {
    if (p.kind == PostOp::Sum) {
      const TensorData* s = sums.at(k++);
      if (!s || s->shape != y.shape) throw Error(ErrorKind::Internal, n.label() + ": Sum post-op operand mismatch");
      for (std::size_t i = 0; i < y.f.size(); ++i) y.f[i] += s->f[i];
      continue;
    }
    for (float& v : y.f) v = apply_activation(p, v);
  }
}

}  // namespace

std::vector<TensorData> eval_reference(const Graph& g, const Node& n, const std::vector<const TensorData*>& in) {
  auto out_shape = [&](std::size_t o) { return g.value(n.outputs.at(o)).shape; };
  auto out_type = [&](std::size_t o) { return g.value(n.outputs.at(o)).dtype; };
  auto arg = [&](std::size_t i) -> const TensorData& {
    if (i >= in.size() || !in[i]) throw Error(ErrorKind::Internal, n.label() + ": missing input " + std::to_string(i));
    return *in[i];
  };
  // Optional inputs only: Sum post-op operands follow the node's own inputs in `in`.
  auto opt = [&](std::size_t i) -> const TensorData* { return i < in.size() && i < n.inputs.size() ? in[i] : nullptr; };
  std::vector<TensorData> res;
  res.reserve(n.outputs.size());  // (y below stays valid while Split adds its outputs)
  res.push_back(make(out_type(0), out_shape(0)));
  TensorData& y = res[0];
  const std::string& op = n.op;

  if (op == "Conv") {
    conv(n, arg(0), arg(1), opt(2), y);
  } else if (op == "BatchNormalization" || op == "vinfer.ScaleShift") {
    const TensorData& x = arg(0);
    const I C = x.shape[1], inner = numel(x.shape) / (x.shape[0] * C);
    std::vector<float> scale(static_cast<std::size_t>(C)), shift(static_cast<std::size_t>(C));
    for (I c = 0; c < C; ++c) {
      const auto k = static_cast<std::size_t>(c);
      if (op == "vinfer.ScaleShift") {
        scale[k] = arg(1).f[k];
        shift[k] = arg(2).f[k];
      } else {
        const float eps = n.get_float("epsilon", 1e-5f);
        scale[k] = arg(1).f[k] / std::sqrt(arg(4).f[k] + eps);
        shift[k] = arg(2).f[k] - arg(3).f[k] * scale[k];
      }
    }
    for (std::size_t i = 0; i < y.f.size(); ++i) {
      const auto c = static_cast<std::size_t>((static_cast<I>(i) / inner) % C);
      y.f[i] = x.f[i] * scale[c] + shift[c];
    }
  } else if (is_activation(op)) {
    const TensorData& x = arg(0);
    const PostOp act = activation_of(g, n);
    for (std::size_t i = 0; i < y.f.size(); ++i) y.f[i] = apply_activation(act, x.f[i]);
  } else if (op == "Add" || op == "Mul" || op == "Sub" || op == "Div") {
    const TensorData &a = arg(0), &b = arg(1);
    const char c = op[0];
    if (y.dtype == DType::F32) {
      broadcast_apply(a.f, a.shape, b.f, b.shape, y.f, y.shape, [c](float u, float v) {
        return c == 'A' ? u + v : c == 'M' ? u * v : c == 'S' ? u - v : u / v;
      });
    } else {
      broadcast_apply(a.i, a.shape, b.i, b.shape, y.i, y.shape, [&n, c](I u, I v) {
        if (c == 'D' && v == 0) throw Error(ErrorKind::BadInput, n.label() + ": integer division by zero");
        return c == 'A' ? u + v : c == 'M' ? u * v : c == 'S' ? u - v : u / v;
      });
    }
  } else if (op == "MaxPool" || op == "AveragePool") {
    pool(n, arg(0), y);
  } else if (op == "GlobalAveragePool" || op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceL2") {
    const TensorData& x = arg(0);
    std::vector<bool> red(x.shape.size(), false);
    if (op == "GlobalAveragePool") {
      std::fill(red.begin() + 2, red.end(), true);
    } else {
      std::vector<I> axes = axes_of(g, n, 1);
      if (axes.empty() && n.get_int("noop_with_empty_axes", 0) == 0) std::fill(red.begin(), red.end(), true);
      for (I a : axes) red[static_cast<std::size_t>(normalize_axis(n, a, x.shape.size()))] = true;
    }
    // Output index of each input element: drop the reduced coordinates.
    const bool max = op == "ReduceMax", l2 = op == "ReduceL2";
    std::vector<double> acc(y.f.size(), max ? -INFINITY : 0.0);
    I count = 1;
    for (std::size_t d = 0; d < red.size(); ++d)
      if (red[d]) count *= x.shape[d];
    std::vector<I> idx(x.shape.size(), 0);
    for (std::size_t e = 0; e < x.f.size(); ++e) {
      I o = 0;
      for (std::size_t d = 0; d < idx.size(); ++d)
        if (!red[d]) o = o * x.shape[d] + idx[d];
      double& a = acc[static_cast<std::size_t>(o)];
      a = max ? std::max(a, static_cast<double>(x.f[e])) : l2 ? a + static_cast<double>(x.f[e]) * x.f[e] : a + x.f[e];
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < x.shape[d]) break;
        idx[d] = 0;
      }
    }
    const bool mean = op == "GlobalAveragePool" || op == "ReduceMean";
    for (std::size_t i = 0; i < y.f.size(); ++i)
      y.f[i] = static_cast<float>(mean ? acc[i] / static_cast<double>(count) : l2 ? std::sqrt(acc[i]) : acc[i]);
  } else if (op == "Concat") {
    const int axis = normalize_axis(n, n.get_int("axis", 1), y.shape.size());
    I outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= y.shape[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < y.shape.size(); ++d) inner *= y.shape[d];
    const I ytotal = y.shape[static_cast<std::size_t>(axis)] * inner;
    I off = 0;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const TensorData& x = arg(k);
      const I xs = x.shape[static_cast<std::size_t>(axis)] * inner;
      for (I o = 0; o < outer; ++o)
        for (I j = 0; j < xs; ++j) {
          const auto src = static_cast<std::size_t>(o * xs + j), dst = static_cast<std::size_t>(o * ytotal + off + j);
          if (y.dtype == DType::F32) y.f[dst] = x.f[src];
          else y.i[dst] = x.i[src];
        }
      off += xs;
    }
  } else if (op == "Flatten" || op == "Reshape" || op == "Identity" || op == "Dropout" || op == "Squeeze" || op == "Unsqueeze") {
    const TensorData& x = arg(0);
    y.f = x.f;
    y.i = x.i;
    if (n.outputs.size() > 1 && n.outputs[1] >= 0) res.push_back(make(out_type(1), out_shape(1)));  // Dropout mask: unused
  } else if (op == "Gemm" || op == "MatMul") {
    // Gemm: 2-D, optionally transposed; MatMul: [..., M, K] x [..., K, N], batches broadcast.
    const TensorData &a = arg(0), &b = arg(1);
    const bool gemm = op == "Gemm";
    const bool ta = gemm && n.get_int("transA", 0) != 0, tb = gemm && n.get_int("transB", 0) != 0;
    const float alpha = gemm ? n.get_float("alpha", 1.f) : 1.f, beta = n.get_float("beta", 1.f);
    const std::size_t ra = a.shape.size(), ry = y.shape.size();
    const I M = y.shape[ry - 2], N = y.shape[ry - 1], K = ta ? a.shape[ra - 2] : a.shape[ra - 1];
    const Shape batch(y.shape.begin(), y.shape.end() - 2);
    const std::vector<I> sa = bstrides(Shape(a.shape.begin(), a.shape.end() - 2), batch),
                         sb = bstrides(Shape(b.shape.begin(), b.shape.end() - 2), batch);
    const TensorData* c = opt(2);  // Gemm's C, or the bias fuse_matmul_bias gives a MatMul
    const std::vector<I> cs = c ? bstrides(c->shape, {M, N}) : std::vector<I>{};
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
          for (I k = 0; k < K; ++k)
            acc += static_cast<double>(ta ? ap[k * M + i] : ap[i * K + k]) * (tb ? bp[j * K + k] : bp[k * N + j]);
          acc *= alpha;
          if (c) acc += static_cast<double>(beta) * c->f[static_cast<std::size_t>(i * cs[0] + j * cs[1])];
          yp[i * N + j] = static_cast<float>(acc);
        }
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  } else if (op == "Erf" || op == "Sqrt" || op == "Exp" || op == "Neg" || op == "Abs" || op == "Reciprocal" || op == "Not") {
    const TensorData& x = arg(0);
    if (y.dtype == DType::F32) {
      for (std::size_t i = 0; i < y.f.size(); ++i) {
        const double v = x.f[i];
        y.f[i] = static_cast<float>(op == "Erf"    ? std::erf(v)
                                    : op == "Sqrt" ? std::sqrt(v)
                                    : op == "Exp"  ? std::exp(v)
                                    : op == "Neg"  ? -v
                                    : op == "Abs"  ? std::fabs(v)
                                                   : 1.0 / v);
      }
    } else {
      for (std::size_t i = 0; i < y.i.size(); ++i)
        y.i[i] = op == "Not" ? (x.i[i] == 0 ? 1 : 0) : op == "Neg" ? -x.i[i] : (x.i[i] < 0 ? -x.i[i] : x.i[i]);
    }
  } else if (op == "Equal" || op == "Less" || op == "Greater" || op == "Mod" || op == "Pow") {
    const TensorData &a = arg(0), &b = arg(1);
    const char c = op == "Mod" ? '%' : op[0];
    const bool fmod = n.get_int("fmod", 0) != 0;
    auto apply = [&](double u, double v) -> double {
      switch (c) {
        case 'E': return u == v;
        case 'L': return u < v;
        case 'G': return u > v;
        case 'P': return std::pow(u, v);
        default:  // Mod: the sign of the divisor (Python's %), or of the dividend with fmod
          if (v == 0) throw Error(ErrorKind::BadInput, n.label() + ": modulo by zero");
          const double r = std::fmod(u, v);
          return !fmod && r != 0 && ((r < 0) != (v < 0)) ? r + v : r;
      }
    };
    // Operands as doubles (int64 shape values stay exact below 2^53).
    auto as_double = [](const TensorData& t) {
      std::vector<double> d(t.dtype == DType::F32 ? t.f.size() : t.i.size());
      for (std::size_t k = 0; k < d.size(); ++k) d[k] = t.dtype == DType::F32 ? t.f[k] : static_cast<double>(t.i[k]);
      return d;
    };
    std::vector<double> r(static_cast<std::size_t>(numel(y.shape)));
    broadcast_apply(as_double(a), a.shape, as_double(b), b.shape, r, y.shape, apply);
    for (std::size_t k = 0; k < r.size(); ++k) {
      if (y.dtype == DType::F32) y.f[k] = static_cast<float>(r[k]);
      else y.i[k] = static_cast<I>(r[k]);
    }
  } else if (op == "Where" || op == "Expand") {
    // Where(cond, a, b); Expand(x, shape): x broadcast (cond all true).
    const bool where = op == "Where";
    const TensorData& a = arg(where ? 1 : 0);
    const TensorData* b = where ? &arg(2) : nullptr;
    const TensorData* cond = where ? &arg(0) : nullptr;
    const std::vector<I> sa = bstrides(a.shape, y.shape), sb = b ? bstrides(b->shape, y.shape) : std::vector<I>{},
                         sc = cond ? bstrides(cond->shape, y.shape) : std::vector<I>{};
    std::vector<I> idx(y.shape.size(), 0);
    for (I e = 0; e < numel(y.shape); ++e) {
      I ia = 0, ib = 0, ic = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) {
        ia += idx[d] * sa[d];
        if (b) ib += idx[d] * sb[d], ic += idx[d] * sc[d];
      }
      const bool take_a = !cond || (cond->dtype == DType::F32 ? cond->f[static_cast<std::size_t>(ic)] != 0.f
                                                               : cond->i[static_cast<std::size_t>(ic)] != 0);
      const TensorData& from = take_a ? a : *b;
      const I at = take_a ? ia : ib;
      if (y.dtype == DType::F32) y.f[static_cast<std::size_t>(e)] = from.f[static_cast<std::size_t>(at)];
      else y.i[static_cast<std::size_t>(e)] = from.i[static_cast<std::size_t>(at)];
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < y.shape[d]) break;
        idx[d] = 0;
      }
    }
  } else if (op == "Einsum") {
    // Every letter's index in turn; each output element sums the inputs' product.
    const EinsumTerms t = einsum_terms(n);
    std::string letters;
    std::vector<I> size;
    for (std::size_t i = 0; i < t.inputs.size(); ++i)
      for (std::size_t d = 0; d < t.inputs[i].size(); ++d)
        if (letters.find(t.inputs[i][d]) == std::string::npos) letters += t.inputs[i][d], size.push_back(arg(i).shape[d]);
    auto strides_for = [&](const std::string& term, const Shape& s) {
      std::vector<I> st(letters.size(), 0);
      I acc = 1;
      for (std::size_t d = term.size(); d-- > 0;) st[letters.find(term[d])] += acc, acc *= s[d];
      return st;
    };
    std::vector<std::vector<I>> in_st;
    for (std::size_t i = 0; i < t.inputs.size(); ++i) in_st.push_back(strides_for(t.inputs[i], arg(i).shape));
    const std::vector<I> out_st = strides_for(t.output, y.shape);
    std::vector<double> acc(y.f.size(), 0.0);
    std::vector<I> idx(letters.size(), 0);
    I total = 1;
    for (I s : size) {
      total *= s;
      if (total > (I{1} << 32)) throw Error(ErrorKind::Unsupported, n.label() + ": an Einsum of more than 2^32 products");
    }
    for (I e = 0; e < total; ++e) {
      double prod = 1;
      for (std::size_t i = 0; i < t.inputs.size(); ++i) {
        I at = 0;
        for (std::size_t l = 0; l < idx.size(); ++l) at += idx[l] * in_st[i][l];
        prod *= arg(i).f[static_cast<std::size_t>(at)];
      }
      I o = 0;
      for (std::size_t l = 0; l < idx.size(); ++l) o += idx[l] * out_st[l];
      acc[static_cast<std::size_t>(o)] += prod;
      for (std::size_t l = idx.size(); l-- > 0;) {
        if (++idx[l] < size[l]) break;
        idx[l] = 0;
      }
    }
    for (std::size_t i = 0; i < acc.size(); ++i) y.f[i] = static_cast<float>(acc[i]);
  } else if (op == "Split") {
    const TensorData& x = arg(0);
    const SplitParams p = split_params(g, n, x.shape);
    I outer = 1, inner = 1;
    for (int d = 0; d < p.axis; ++d) outer *= x.shape[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(p.axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    const I len = x.shape[static_cast<std::size_t>(p.axis)];
    res.resize(n.outputs.size());
    I start = 0;
    for (std::size_t o = 0; o < n.outputs.size(); ++o) {
      if (o > 0) res[o] = make(out_type(o), out_shape(o));
      TensorData& part = res[o];
      const I l = p.lengths[o];
      for (I a = 0; a < outer; ++a)
        for (I k = 0; k < l * inner; ++k) {
          const auto from = static_cast<std::size_t>((a * len + start) * inner + k), to = static_cast<std::size_t>(a * l * inner + k);
          if (part.dtype == DType::F32) part.f[to] = x.f[from];
          else part.i[to] = x.i[from];
        }
      start += l;
    }
  } else if (op == "GatherND" || op == "ScatterND") {
    // Each index tuple (the last axis of the indices) picks a slice of x:
    // GatherND copies it out, ScatterND writes the update's slice into it.
    const TensorData &x = arg(0), &idx = arg(1);
    const bool scatter = op == "ScatterND";
    if (scatter) y = x;
    const TensorData& from = scatter ? arg(2) : x;
    const I depth = idx.shape.back(), count = numel(idx.shape) / depth;
    I inner = 1;
    for (std::size_t d = static_cast<std::size_t>(depth); d < x.shape.size(); ++d) inner *= x.shape[d];
    const std::vector<I> xs = bstrides(x.shape, x.shape);
    for (I u = 0; u < count; ++u) {
      I at = 0;
      for (I d = 0; d < depth; ++d) {
        const I dim = x.shape[static_cast<std::size_t>(d)];
        I v = idx.i[static_cast<std::size_t>(u * depth + d)];
        v = v < 0 ? v + dim : v;
        if (v < 0 || v >= dim) throw Error(ErrorKind::BadInput, n.label() + ": index out of range");
        at += v * xs[static_cast<std::size_t>(d)];
      }
      for (I e = 0; e < inner; ++e) {
        const auto slice = static_cast<std::size_t>(at + e), packed = static_cast<std::size_t>(u * inner + e);
        const std::size_t dst = scatter ? slice : packed, src = scatter ? packed : slice;
        if (y.dtype == DType::F32) y.f[dst] = from.f[src];
        else y.i[dst] = from.i[src];
      }
    }
  } else if (op == "Range") {
    const TensorData &s0 = arg(0), &s2 = arg(2);
    for (I k = 0; k < numel(y.shape); ++k) {
      if (y.dtype == DType::F32) y.f[static_cast<std::size_t>(k)] = s0.f[0] + static_cast<float>(k) * s2.f[0];
      else y.i[static_cast<std::size_t>(k)] = s0.i[0] + k * s2.i[0];
    }
  } else if (op == "LayerNormalization") {
    const TensorData& x = arg(0);
    const TensorData* bias = opt(2);
    const LayerNormExtent e = layer_norm_extent(n, x.shape);
    const std::vector<float>& scale = arg(1).f;
    for (I o = 0; o < e.outer; ++o) {
      const float* xr = x.f.data() + o * e.len;
      float* yr = y.f.data() + o * e.len;
      double mean = 0, var = 0;
      for (I k = 0; k < e.len; ++k) mean += xr[k];
      mean /= static_cast<double>(e.len);
      for (I k = 0; k < e.len; ++k) var += (xr[k] - mean) * (xr[k] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(e.len) + e.epsilon);
      for (I k = 0; k < e.len; ++k)
        yr[k] = static_cast<float>((xr[k] - mean) * inv * scale[static_cast<std::size_t>(k)] + (bias ? bias->f[static_cast<std::size_t>(k)] : 0.f));
    }
  } else if (op == "Softmax") {
    const TensorData& x = arg(0);
    const SoftmaxExtent e = softmax_extent(n, x.shape);
    const I outer = e.outer, len = e.len, inner = e.inner;
    for (I o = 0; o < outer; ++o)
      for (I in_i = 0; in_i < inner; ++in_i) {
        auto at = [&](I k) { return static_cast<std::size_t>((o * len + k) * inner + in_i); };
        float mx = -std::numeric_limits<float>::infinity();
        for (I k = 0; k < len; ++k) mx = std::max(mx, x.f[at(k)]);
        double sum = 0;
        for (I k = 0; k < len; ++k) sum += std::exp(static_cast<double>(x.f[at(k)]) - mx);
        for (I k = 0; k < len; ++k) y.f[at(k)] = static_cast<float>(std::exp(static_cast<double>(x.f[at(k)]) - mx) / sum);
      }
  } else if (op == "Constant") {
    y = std::get<TensorData>(n.attrs.at("value"));
  } else if (op == "Shape") {
    const Shape& s = g.value(n.inputs.at(0)).shape;
    const auto r = static_cast<I>(s.size());
    I start = n.get_int("start", 0);
    start = std::clamp(start < 0 ? start + r : start, I{0}, r);
    for (std::size_t k = 0; k < y.i.size(); ++k) y.i[k] = s[static_cast<std::size_t>(start) + k];
  } else if (op == "Gather") {
    const TensorData &x = arg(0), &idx = arg(1);
    const int axis = normalize_axis(n, n.get_int("axis", 0), x.shape.size());
    I outer = 1, inner = 1;
    const I d = x.shape[static_cast<std::size_t>(axis)];
    for (int k = 0; k < axis; ++k) outer *= x.shape[static_cast<std::size_t>(k)];
    for (std::size_t k = static_cast<std::size_t>(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
    const I ni = static_cast<I>(idx.i.size());
    for (I o = 0; o < outer; ++o)
      for (I j = 0; j < ni; ++j) {
        I t = idx.i[static_cast<std::size_t>(j)];
        if (t < 0) t += d;
        if (t < 0 || t >= d) throw Error(ErrorKind::BadInput, n.label() + ": index " + std::to_string(idx.i[static_cast<std::size_t>(j)]) + " out of range");
        for (I e = 0; e < inner; ++e) {
          const auto dst = static_cast<std::size_t>((o * ni + j) * inner + e), src = static_cast<std::size_t>((o * d + t) * inner + e);
          if (y.dtype == DType::F32) y.f[dst] = x.f[src];
          else y.i[dst] = x.i[src];
        }
      }
  } else if (op == "Cast") {
    const TensorData& x = arg(0);
    for (std::size_t k = 0; k < (y.dtype == DType::F32 ? y.f.size() : y.i.size()); ++k) {
      if (y.dtype == DType::F32) y.f[k] = x.dtype == DType::F32 ? x.f[k] : static_cast<float>(x.i[k]);
      else y.i[k] = x.dtype == DType::I64 ? x.i[k] : static_cast<I>(x.f[k]);
      if (n.get_int("to", 0) == 9 && y.dtype == DType::I64) y.i[k] = y.i[k] != 0 || (x.dtype == DType::F32 && x.f[k] != 0.f);
    }
  } else if (op == "Slice") {
    const TensorData& x = arg(0);
    const SliceWindow w = slice_window(n, x.shape, arg(1).i, arg(2).i, opt(3) ? opt(3)->i : std::vector<I>{},
                                       opt(4) ? opt(4)->i : std::vector<I>{});
    std::vector<I> idx(y.shape.size(), 0);
    const std::vector<I> xs = bstrides(x.shape, x.shape);
    for (I e = 0; e < numel(y.shape); ++e) {
      I src = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) src += (w.begin[d] + idx[d] * w.step[d]) * xs[d];
      if (y.dtype == DType::F32) y.f[static_cast<std::size_t>(e)] = x.f[static_cast<std::size_t>(src)];
      else y.i[static_cast<std::size_t>(e)] = x.i[static_cast<std::size_t>(src)];
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < y.shape[d]) break;
        idx[d] = 0;
      }
    }
  } else if (op == "Transpose") {
    const TensorData& x = arg(0);
    const std::vector<I> perm = transpose_perm(n, x.shape.size());
    const std::vector<I> xs = bstrides(x.shape, x.shape);
    std::vector<I> idx(y.shape.size(), 0);
    for (I e = 0; e < numel(y.shape); ++e) {
      I src = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) src += idx[d] * xs[static_cast<std::size_t>(perm[d])];
      if (y.dtype == DType::F32) y.f[static_cast<std::size_t>(e)] = x.f[static_cast<std::size_t>(src)];
      else y.i[static_cast<std::size_t>(e)] = x.i[static_cast<std::size_t>(src)];
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < y.shape[d]) break;
        idx[d] = 0;
      }
    }
  } else if (op == "Pad") {
    const TensorData& x = arg(0);
    const std::vector<I> pads = pad_amounts(g, n);
    const float fill = pad_value(g, n);
    if (y.dtype == DType::F32) std::fill(y.f.begin(), y.f.end(), fill);
    const std::vector<I> ys = bstrides(y.shape, y.shape);
    std::vector<I> idx(x.shape.size(), 0);
    for (I e = 0; e < numel(x.shape); ++e) {
      I dst = 0;
      bool inside = true;
      for (std::size_t d = 0; d < idx.size(); ++d) {
        const I o = idx[d] + pads[d];  // negative pads crop
        inside &= o >= 0 && o < y.shape[d];
        dst += o * ys[d];
      }
      if (inside) {
        if (y.dtype == DType::F32) y.f[static_cast<std::size_t>(dst)] = x.f[static_cast<std::size_t>(e)];
        else y.i[static_cast<std::size_t>(dst)] = x.i[static_cast<std::size_t>(e)];
      }
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < x.shape[d]) break;
        idx[d] = 0;
      }
    }
  } else if (op == "ConstantOfShape") {
    auto it = n.attrs.find("value");
    if (it != n.attrs.end()) {
      const TensorData& v = std::get<TensorData>(it->second);
      if (y.dtype == DType::F32) std::fill(y.f.begin(), y.f.end(), v.f.at(0));
      else std::fill(y.i.begin(), y.i.end(), v.i.at(0));
    }
  } else {
    throw Error(ErrorKind::Unsupported, "no reference kernel for " + n.label());
  }
  std::vector<const TensorData*> sums(in.begin() + static_cast<std::ptrdiff_t>(std::min(in.size(), n.inputs.size())), in.end());
  apply_post_ops(n, y, sums);
  return res;
}

}  // namespace vinfer::detail
