// Shared helpers of the CPU backend: memory descriptors, weight packing, post-ops.
#include <algorithm>
#include <cfloat>
#include <cstring>

#include <omp.h>

#include "cpu/cpu_op.hpp"
#include "cpu/kernels.hpp"
#include "util/cpu_features.hpp"
#include "vinfer/error.hpp"

namespace vinfer::cpu {

void unsupported(const Node& n, const std::string& what) {
  throw Error(ErrorKind::Unsupported, n.label() + ": " + what + " is not supported by the CPU backend");
}

memory::dims to_dims(const Shape& s) { return memory::dims(s.begin(), s.end()); }

memory::desc plain_md(const Shape& s) {
  static const Tag tags[] = {Tag::a, Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  if (s.empty()) return memory::desc({1}, memory::data_type::f32, Tag::a);
  if (s.size() > 6) throw Error(ErrorKind::Unsupported, "tensors of rank " + std::to_string(s.size()) + " are not supported");
  return memory::desc(to_dims(s), memory::data_type::f32, tags[s.size()]);
}

int channel_block() {
  static const int block = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core ? 16 : 8;
  return block;
}

bool amx_bf16() {
  static const bool amx = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_amx;
  return amx;
}

memory::desc blocked_md(const Shape& s) {
  if (s.size() != 4) throw Error(ErrorKind::Internal, "blocked layout needs a 4-D tensor, got " + shape_str(s));
  return memory::desc(to_dims(s), memory::data_type::f32, channel_block() == 16 ? Tag::nChw16c : Tag::nChw8c);
}

memory::desc md_for(const Shape& s, Form form) {
  if (form == Form::Blocked || form == Form::BlockedPacked) return blocked_md(s);
  if (form == Form::BlockedBf16) {
    memory::desc f = blocked_md(s);
    return memory::desc(f.dims(), memory::data_type::bf16, channel_block() == 16 ? Tag::nChw16c : Tag::nChw8c);
  }
  if (form == Form::Plain) return plain_md(s);
  if (form == Form::PlainBf16) {
    static const Tag tags[] = {Tag::a, Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
    const memory::desc f = plain_md(s);
    return memory::desc(f.dims(), memory::data_type::bf16, tags[f.dims().size()]);
  }
  if (s.size() != 4) throw Error(ErrorKind::Internal, "channels-last layout needs a 4-D tensor, got " + shape_str(s));
  const memory::data_type dt = form == Form::ChannelsLastU8     ? memory::data_type::u8
                               : form == Form::ChannelsLastS8   ? memory::data_type::s8
                               : form == Form::ChannelsLastBf16 ? memory::data_type::bf16
                                                                : memory::data_type::f32;
  return memory::desc(to_dims(s), dt, Tag::nhwc);
}

const char* form_name(Form form) {
  switch (form) {
    case Form::Plain: return "plain";
    case Form::Blocked: return "blocked";
    case Form::ChannelsLast: return "channels-last";
    case Form::BlockedBf16: return "blocked bf16";
    case Form::PlainBf16: return "plain bf16";
    case Form::ChannelsLastBf16: return "channels-last bf16";
    case Form::ChannelsLastU8: return "channels-last u8";
    case Form::ChannelsLastS8: return "channels-last s8";
    case Form::BlockedPacked: return "blocked";
  }
  return "?";
}

bool is_int8(Form form) { return form == Form::ChannelsLastU8 || form == Form::ChannelsLastS8; }
bool is_bf16(Form form) { return form == Form::BlockedBf16 || form == Form::PlainBf16 || form == Form::ChannelsLastBf16; }

memory pack_weights(const dnnl::engine& eng, const TensorData& w, const memory::desc& user, const memory::desc& want,
                    std::vector<Block>& keep, const dnnl::primitive_attr& attr) {
  memory src(user, eng, const_cast<float*>(w.f.data()));
  memory dst;  // allocated once at load
  if (want.get_size() >= kHugeBlockBytes) {
    keep.push_back(aligned_block(want.get_size()));
    dst = memory(want, eng, keep.back().get());
  } else {
    dst = memory(want, eng);
  }
  dnnl::stream s(eng);
  dnnl::reorder(dnnl::reorder::primitive_desc(src, dst, attr)).execute(s, src, dst);
  s.wait();
  return dst;
}

dnnl::primitive_attr default_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

std::vector<EltwiseStep> eltwise_steps(const PostOp& act) {
  using A = dnnl::algorithm;
  switch (act.kind) {
    case PostOp::Relu: return {{A::eltwise_relu}};
    case PostOp::Clip:  // (oneDNN's jit kernels refuse infinite bounds: the largest floats clip the same finite values)
      return {{A::eltwise_clip, std::max(act.alpha, -FLT_MAX), std::min(act.beta, FLT_MAX)}};
    case PostOp::Sigmoid: return {{A::eltwise_logistic}};
    case PostOp::Swish: return {{A::eltwise_swish, 1.f}};
    case PostOp::HardSigmoid: return {{A::eltwise_linear, act.alpha, act.beta}, {A::eltwise_clip, 0.f, 1.f}};
    case PostOp::HardSwish: return {{A::eltwise_hardswish}};  // x * relu6(x + 3) / 6, ONNX's
    case PostOp::LeakyRelu: return {{A::eltwise_relu, act.alpha}};
    case PostOp::Tanh: return {{A::eltwise_tanh}};
    case PostOp::Gelu: return {{A::eltwise_gelu_erf}};
    case PostOp::Sum: break;
  }
  throw Error(ErrorKind::Internal, std::string("no oneDNN form of ") + to_string(act.kind));
}

dnnl::post_ops make_post_ops(BuildContext& ctx, const Node& n, Form form, std::vector<std::pair<int, TensorRef>>& binary_args,
                             bool sum_in_place, float sum_scale) {
  dnnl::post_ops ops;
  for (const PostOp& p : n.post_ops) {
    switch (p.kind) {
      case PostOp::Sum: {
        // (an int8 output over the operand's 8-bit form: u8 over s8 reads it as s8)
        const Form operand = is_int8(form) ? ctx.int8_form(p.sum_input) : form;
        if (sum_in_place && ops.len() == 0 && ctx.write_over(n.outputs[0], form, p.sum_input, operand)) {
          const Shape& shape = ctx.graph().value(p.sum_input).shape;
          ops.append_sum(sum_scale, operand == form ? memory::data_type::undef : md_for(shape, operand).data_type());
          break;
        }
        if (is_int8(form))
          throw Error(ErrorKind::Internal, "the int8 residual sum of '" + n.label() + "' cannot accumulate in place");
        // Blocks (or channels-last pixels) in either precision are read as they are (oneDNN converts).
        Form f = form;
        auto alike = [&](Form a, Form b) {
          return (a == Form::Blocked || a == Form::BlockedBf16) ? (b == Form::Blocked || b == Form::BlockedBf16)
                 : (a == Form::ChannelsLast || a == Form::ChannelsLastBf16) && (b == Form::ChannelsLast || b == Form::ChannelsLastBf16);
        };
        for (const Form other : {Form::Blocked, Form::BlockedBf16, Form::ChannelsLast, Form::ChannelsLastBf16})
          if (alike(form, other) && !ctx.has_form(p.sum_input, f) && ctx.has_form(p.sum_input, other)) f = other;
        TensorRef t = ctx.input(p.sum_input, f);
        ops.append_binary(dnnl::algorithm::binary_add, t.md);
        binary_args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(ops.len() - 1) | DNNL_ARG_SRC_1, t);
        break;
      }
      default:
        for (const EltwiseStep& e : eltwise_steps(p)) ops.append_eltwise(1.f, e.alg, e.alpha, e.beta);
    }
  }
  return ops;
}

void finish(PrimitiveOp& op, const dnnl::primitive_desc_base& pd) {
  op.scratch_md = pd.scratchpad_desc();
  op.impl = pd.impl_info_str();
  op.pd = pd;
}

namespace {

bool regions_inactive() { return omp_get_active_level() >= omp_get_max_active_levels(); }

// Whether two descriptors of one operation are the same implementation with
// the same layouts, `b` needing no more scratchpad than `a`.
bool same_kernel(const dnnl::primitive_desc_base& a, const dnnl::primitive_desc_base& b) {
  if (std::strcmp(a.impl_info_str(), b.impl_info_str()) != 0) return false;
  if (b.scratchpad_desc().get_size() > a.scratchpad_desc().get_size()) return false;
  for (const int arg : {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_SRC_2, DNNL_ARG_DST, DNNL_ARG_WEIGHTS_0, DNNL_ARG_WEIGHTS_1,
                        DNNL_ARG_WORKSPACE, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE, DNNL_ARG_SCALE, DNNL_ARG_SHIFT})
    if (a.query_md(dnnl::query::exec_arg_md, arg) != b.query_md(dnnl::query::exec_arg_md, arg)) return false;
  return true;
}

// prim's operation made again with one thread: the first descriptor of the
// same kernel, or an empty primitive.
dnnl::primitive made_for_one_thread(const dnnl::primitive_desc_base& pd) {
  const_dnnl_op_desc_t op = nullptr;
  const_dnnl_primitive_attr_t attr = nullptr;
  dnnl_engine_t eng = nullptr;
  if (dnnl_primitive_desc_query(pd.get(), dnnl_query_op_d, 0, &op) != dnnl_success || !op ||
      dnnl_primitive_desc_get_attr(pd.get(), &attr) != dnnl_success ||
      dnnl_primitive_desc_query(pd.get(), dnnl_query_engine, 0, &eng) != dnnl_success)
    return {};
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);  // oneDNN sizes a kernel's split for the threads it finds at creation
  dnnl::primitive made;
  dnnl_primitive_desc_iterator_t it = nullptr;
  if (dnnl_primitive_desc_iterator_create(&it, op, attr, eng, nullptr) == dnnl_success) {
    do {
      const dnnl::primitive_desc_base candidate(dnnl_primitive_desc_iterator_fetch(it));
      if (candidate && same_kernel(pd, candidate)) {
        try {
          made = dnnl::primitive(candidate.get());
        } catch (const dnnl::error&) {
          // none, then: the program keeps every run on the team
        }
        break;
      }
    } while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
    dnnl_primitive_desc_iterator_destroy(it);
  }
  omp_set_num_threads(threads);
  return made;
}

}  // namespace

bool PrimitiveOp::can_run_alone() {
  if (alone_state_ != 0) return alone_state_ > 0;
  if (!pd) {
    alone_state_ = -1;
    return false;
  }
  // Reorders, concatenations and sums split their work as they run.
  const dnnl::primitive::kind k = pd.get_kind();
  if (k == dnnl::primitive::kind::reorder || k == dnnl::primitive::kind::concat || k == dnnl::primitive::kind::sum) {
    alone_state_ = 1;
    return true;
  }
  alone_ = made_for_one_thread(pd);
  alone_state_ = alone_ ? 1 : -1;
  return alone_state_ > 0;
}

void PrimitiveOp::execute(dnnl::stream& s) {
  if (!regions_inactive() || !can_run_alone()) return prim.execute(s, args);
  // Kernels that size their split as they run (oneDNN's GEMM) must find one thread too.
  struct OneThread {
    int threads = omp_get_max_threads();
    OneThread() { omp_set_num_threads(1); }
    ~OneThread() { omp_set_num_threads(threads); }
  } one;
  (alone_ ? alone_ : prim).execute(s, args);
}

std::vector<ByteSpan> CpuOp::weights() const {
  std::vector<ByteSpan> spans;
  for (const auto& [arg, m] : args)
    if (arg != DNNL_ARG_SCRATCHPAD && !acts.count(arg)) spans.push_back({m.get_data_handle(), m.get_desc().get_size()});
  return spans;
}

double CpuOp::weight_bytes_read() const {
  double bytes = 0;
  for (const ByteSpan& s : weights()) bytes += static_cast<double>(s.bytes);
  return bytes;
}

void CpuOp::bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) {
  for (const auto& [arg, t] : acts) args[arg] = memory(t.md, eng, address(t.buffer));
  if (scratch_md.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = memory(scratch_md, eng, scratch);
}

namespace {

class ToBf16Op : public CpuOp {
 public:
  const float* src = nullptr;
  std::uint16_t* dst = nullptr;
  std::int64_t count = 0;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    src = static_cast<const float*>(args.at(DNNL_ARG_FROM).get_data_handle());
    dst = static_cast<std::uint16_t*>(args.at(DNNL_ARG_TO).get_data_handle());
  }
  void execute(dnnl::stream&) override {
    constexpr std::int64_t kChunk = 16 * 1024;  // values per task
    const std::int64_t chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c)
      to_bf16_avx512(src + c * kChunk, dst + c * kChunk, std::min(kChunk, count - c * kChunk));
  }
};

// Float32 -> int8 in the same layout, scaled (vinfer's kernel: oneDNN
// 2.6's reorder for it, jit:uni, ran ResNet50's at ~5 GB/s, 5 of its 13 ms).
class QuantizeOp : public CpuOp {
 public:
  const void* src = nullptr;
  void* dst = nullptr;
  std::int64_t count = 0;
  float inv_scale = 1.f;
  bool is_unsigned = true, from_bf16 = false;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    src = args.at(DNNL_ARG_FROM).get_data_handle();
    dst = args.at(DNNL_ARG_TO).get_data_handle();
  }
  void execute(dnnl::stream&) override {
    constexpr std::int64_t kChunk = 16 * 1024;  // values per task
    const std::int64_t chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      auto* to = static_cast<std::int8_t*>(dst) + c * kChunk;
      const std::int64_t n = std::min(kChunk, count - c * kChunk);
      if (from_bf16) quantize_bf16_avx512(static_cast<const std::uint16_t*>(src) + c * kChunk, to, n, inv_scale, is_unsigned);
      else quantize_avx512(static_cast<const float*>(src) + c * kChunk, to, n, inv_scale, is_unsigned);
    }
  }
};

// Whether `to` is `from` (float32, or `from_type`) in the data type `type`,
// element for element (same layout and padding).
bool same_layout_to(const memory::desc& from, const memory::desc& to, memory::data_type type,
                    memory::data_type from_type = memory::data_type::f32) {
  if (from.data_type() != from_type || to.data_type() != type) return false;
  const dnnl_memory_desc_t& a = from.data;
  const dnnl_memory_desc_t& b = to.data;
  if (a.ndims != b.ndims || a.format_kind != dnnl_blocked || b.format_kind != dnnl_blocked || a.offset0 != b.offset0) return false;
  for (int i = 0; i < a.ndims; ++i)
    if (a.dims[i] != b.dims[i] || a.padded_dims[i] != b.padded_dims[i] || a.format_desc.blocking.strides[i] != b.format_desc.blocking.strides[i])
      return false;
  const auto& ab = a.format_desc.blocking;
  const auto& bb = b.format_desc.blocking;
  if (ab.inner_nblks != bb.inner_nblks) return false;
  for (int i = 0; i < ab.inner_nblks; ++i)
    if (ab.inner_blks[i] != bb.inner_blks[i] || ab.inner_idxs[i] != bb.inner_idxs[i]) return false;
  return true;
}

}  // namespace

std::unique_ptr<CpuOp> make_reorder(const dnnl::engine& eng, const TensorRef& from, const TensorRef& to, const std::string& name,
                                    float scale) {
  const memory::data_type from_type = from.md.data_type() == memory::data_type::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const bool u8 = same_layout_to(from.md, to.md, memory::data_type::u8, from_type);
  if (detail::cpu_features().avx512 && (u8 || same_layout_to(from.md, to.md, memory::data_type::s8, from_type))) {
    auto op = std::make_unique<QuantizeOp>();
    op->from_bf16 = from_type == memory::data_type::bf16;
    op->count = static_cast<std::int64_t>(to.md.get_size());
    op->inv_scale = 1.f / scale;
    op->is_unsigned = u8;
    op->name = name;
    op->impl = op->from_bf16 ? "vinfer:quantize_bf16_avx512" : "vinfer:quantize_avx512";
    op->acts[DNNL_ARG_FROM] = from;
    op->acts[DNNL_ARG_TO] = to;
    return op;
  }
  if (scale == 1.f && detail::cpu_features().avx512_bf16 && same_layout_to(from.md, to.md, memory::data_type::bf16)) {
    auto op = std::make_unique<ToBf16Op>();
    op->count = static_cast<std::int64_t>(from.md.get_size() / sizeof(float));
    op->name = name;
    op->impl = "vinfer:to_bf16_avx512";
    op->acts[DNNL_ARG_FROM] = from;
    op->acts[DNNL_ARG_TO] = to;
    return op;
  }
  auto op = std::make_unique<PrimitiveOp>();
  dnnl::primitive_attr attr = default_attr();
  if (scale != 1.f) attr.set_output_scales(0, {1.f / scale});
  dnnl::reorder::primitive_desc pd(eng, from.md, eng, to.md, attr);
  op->prim = dnnl::reorder(pd);
  op->name = name;
  finish(*op, pd);
  op->acts[DNNL_ARG_FROM] = from;
  op->acts[DNNL_ARG_TO] = to;
  return op;
}

namespace {

class ChannelsLastIntoBlocksOp : public CpuOp {
 public:
  std::int64_t images = 0, channels = 0, pixels = 0, image_floats = 0;  // (image_floats: `to`'s step)
  const float* src = nullptr;
  float* dst = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    src = static_cast<const float*>(args.at(DNNL_ARG_FROM).get_data_handle());
    dst = static_cast<float*>(args.at(DNNL_ARG_TO).get_data_handle());
  }
  void execute(dnnl::stream&) override {
    // A few pixels at a time: their rows read whole, each block's 16 values
    // one cache line written whole.
    constexpr std::int64_t kPixels = 16;
    const std::int64_t tiles = (pixels + kPixels - 1) / kPixels, blocks = channels / 16;
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < images * tiles; ++t) {
      const std::int64_t i = t / tiles, p0 = (t % tiles) * kPixels, p1 = std::min(pixels, p0 + kPixels);
      for (std::int64_t b = 0; b < blocks; ++b)
        for (std::int64_t p = p0; p < p1; ++p)
          std::memcpy(dst + i * image_floats + (b * pixels + p) * 16, src + (i * pixels + p) * channels + b * 16, 16 * sizeof(float));
    }
  }
};

// Calibration's watch on a convolution's input.
class RangeOp : public CpuOp {
 public:
  ActivationRange* range = nullptr;
  void execute(dnnl::stream&) override {
    const memory& m = args.at(DNNL_ARG_SRC);
    const auto* x = static_cast<const float*>(m.get_data_handle());
    const auto n = static_cast<std::int64_t>(m.get_desc().get_size() / sizeof(float));
    float lo = range->min, hi = range->max;
#pragma omp parallel for reduction(min : lo) reduction(max : hi)
    for (std::int64_t i = 0; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
    range->min = lo, range->max = hi;
  }
};

}  // namespace

bool channels_last_into_blocks_fits(const memory::desc& from) {
  const memory::dims d = from.dims();
  return d.size() == 4 && channel_block() == 16 && d[1] % 16 == 0 && from == memory::desc(d, memory::data_type::f32, Tag::nhwc);
}

std::unique_ptr<CpuOp> make_channels_last_into_blocks(const TensorRef& from, const TensorRef& to, const std::string& name) {
  const memory::dims d = from.md.dims();
  if (!channels_last_into_blocks_fits(from.md) || to.md != blocked_md(Shape(d.begin(), d.end())))
    throw Error(ErrorKind::Internal, "channels-last into blocks: " + name + " does not fit");
  auto op = std::make_unique<ChannelsLastIntoBlocksOp>();
  op->images = d[0], op->channels = d[1], op->pixels = d[2] * d[3];
  op->image_floats = to.image_bytes ? static_cast<std::int64_t>(to.image_bytes / sizeof(float)) : op->channels * op->pixels;
  op->name = name;
  op->impl = "vinfer:channels_last_into_blocks";
  op->acts[DNNL_ARG_FROM] = from;
  op->acts[DNNL_ARG_TO] = to;
  return op;
}

std::unique_ptr<CpuOp> make_range_op(const TensorRef& t, ActivationRange* range, const std::string& name) {
  auto op = std::make_unique<RangeOp>();
  op->range = range;
  op->name = name;
  op->impl = "vinfer:range";
  op->acts[DNNL_ARG_SRC] = t;
  return op;
}

}  // namespace vinfer::cpu
