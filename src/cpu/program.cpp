// The CPU backend: turns the optimized graph into a list of ops over one
// arena. Layouts: 4-D activations are kept in oneDNN's nChw8c/16c from layer to
// layer (no reorder per layer); a conversion is inserted only where an op
// needs the other form (the network input, Flatten before a Gemm).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <typeinfo>
#include <utility>

#include <omp.h>

#include "cpu/aligned.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_op.hpp"
#include "cpu/tune.hpp"
#include "graph/activation.hpp"
#include "backend/concat_views.hpp"
#include "backend/memory_plan.hpp"
#include "backend/team_policy.hpp"
#include "vinfer/error.hpp"
#include "util/cpu_grant.hpp"
#include "util/debug_env.hpp"

namespace vinfer::cpu {
namespace {

// The CPU engine, with oneDNN held to the ISA level vinfer's own kernels use
// (lower than the CPU's only when VINFER_ISA asks: then oneDNN's layouts and
// kernels are an older CPU's too; VINFER_AMX=0 holds it below AMX). oneDNN
// takes the cap only before its first kernel, so it is set once, here.
dnnl::engine cpu_engine() {
  static const bool capped = [] {
    const detail::CpuFeatures& f = detail::cpu_features();
    const bool no_amx = detail::debug_env_is(detail::DebugVar::Amx, "0");
    if (f.level == f.detected && !no_amx) return false;
    const dnnl_cpu_isa_t isa = f.level == detail::IsaLevel::Plain ? dnnl_cpu_isa_sse41
                               : f.level == detail::IsaLevel::Avx2 ? dnnl_cpu_isa_avx2
                               : no_amx                            ? dnnl_cpu_isa_avx512_core_bf16
                                                                   : dnnl_cpu_isa_all;
    return dnnl_set_max_cpu_isa(isa) == dnnl_success;
  }();
  (void)capped;
  return dnnl::engine(dnnl::engine::kind::cpu, 0);
}

// The operators the CPU backend has kernels for (besides every activation
// and reshape), each to the factory that validates and builds it. A factory
// may still throw Unsupported for a configuration; the program then runs
// the node on the reference evaluator.
using Factory = void (*)(BuildContext&, const Node&);
const std::map<std::string, Factory>& kernel_table() {
  static const std::map<std::string, Factory> table = {
      {"Conv", build_conv},
      {"ConvTranspose", build_conv_transpose},
      {"Resize", build_resize},
      {"MaxPool", build_pool},
      {"AveragePool", build_pool},
      {"GlobalAveragePool", build_pool},
      {"ReduceMean", build_pool},
      {"ReduceSum", build_reduce},
      {"ReduceMax", build_reduce},
      {"ReduceL2", build_reduce},
      {"Add", build_binary},
      {"Sub", build_binary},
      {"Mul", [](BuildContext& ctx, const Node& n) {
         if (!channel_scale_absorbed(ctx, n) && !squeeze_excite_scale_absorbed(ctx, n)) build_binary(ctx, n);
       }},
      {"Div", build_binary},
      {"Concat", build_concat},
      {"Gemm", build_inner_product},
      {"MatMul", build_inner_product},
      {"Softmax", build_softmax},
      {"Sqrt", build_eltwise},
      {"Pow", build_eltwise},
      {"LayerNormalization", build_layer_norm},
      {"vinfer.ScaleShift", [](BuildContext& ctx, const Node& n) {
         if (!scale_shift_absorbed(ctx, n)) build_scale_shift(ctx, n);
       }},
      {"Transpose", build_transpose},
      {"Slice", build_slice},
      {"Gather", build_gather},
      {"Pad", build_pad},
      {"Split", build_split},
      {"vinfer.ChannelGather", build_channel_gather},
      {"Identity", build_reshape},
      {"Dropout", build_reshape},
  };
  return table;
}

// Copies each image of a batch between a packed tensor and a view into a
// concatenation (its slice of each image of the concatenation's buffer).
class ImageCopyOp : public CpuOp {
 public:
  ImageCopyOp(std::int64_t images, std::size_t bytes, std::size_t from_step, std::size_t to_step)
      : images_(images), bytes_(bytes), from_step_(from_step), to_step_(to_step) {
    impl = "vinfer:copy_images";
  }
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    from_ = static_cast<const char*>(args.at(DNNL_ARG_FROM).get_data_handle());
    to_ = static_cast<char*>(args.at(DNNL_ARG_TO).get_data_handle());
  }
  void execute(dnnl::stream&) override {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < images_; ++i)
      std::memcpy(to_ + static_cast<std::size_t>(i) * to_step_, from_ + static_cast<std::size_t>(i) * from_step_, bytes_);
  }

 private:
  std::int64_t images_;
  std::size_t bytes_, from_step_, to_step_;
  const char* from_ = nullptr;
  char* to_ = nullptr;
};

class Program final : public BuildContext, public detail::Executor {
 public:
  Program(const Graph& g, const EngineOptions& o, int threads, std::function<void(int)> done_with)
      : g_(g), eng_(cpu_engine()), stream_(eng_), threads_(threads), adapt_(o.adapt_threads && threads > 1), winograd_(o.winograd), compact_(o.compact_weights), tune_(o.tune),
        bf16_(o.precision == Precision::BF16), int8_(o.precision == Precision::INT8), recording_(o.record_ranges),
        calibration_(o.calibration), tune_cache_(o.tune_cache), done_with_(std::move(done_with)) {}

  void build(ModelInfo& info) {
    omp_set_num_threads(threads_);  // primitives size their work for the thread count they are created with
    if (g_.inputs.size() != 1 || g_.outputs.empty())
      throw Error(ErrorKind::Unsupported, "the CPU backend runs graphs with one input and outputs (this one has " +
                                              std::to_string(g_.inputs.size()) + " and " + std::to_string(g_.outputs.size()) + ")");
    const std::vector<bool> reshaped = detail::reshape_products(g_);
    views_ = detail::plan_concat_views(
        g_,
        [&](int v) {
          const Value& val = g_.value(v);
          return val.dtype == DType::F32 && val.shape.size() == 4 && val.shape[0] >= 1 && val.shape[1] % channel_block() == 0 &&
                 !reshaped[static_cast<std::size_t>(v)];
        },
        [&](int v) { return image_bytes(v); });
    info.concats_in_place = views_.count;

    consumers_ = g_.consumers();
    producers_.assign(g_.values.size(), -1);
    for (std::size_t k = 0; k < g_.nodes.size(); ++k)
      for (int v : g_.nodes[k].outputs)
        if (v >= 0) producers_[static_cast<std::size_t>(v)] = static_cast<int>(k);

    const int cached = tune_ && !tune_cache_.empty() ? load_tune_cache(tune_cache_) : 0;
    in_value_ = g_.inputs[0];
    const Value& in = g_.value(in_value_);
    if (in.dtype != DType::F32) throw Error(ErrorKind::Unsupported, "the network input must be float32");
    in_ref_ = output(in_value_, Form::Plain);
    observed_.assign(g_.values.size(), false);
    ranges_.assign(g_.values.size(), ActivationRange{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()});
    for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
      const Node& n = g_.nodes[k];
      if (views_.node_is_view[k]) {
        // The view itself: its inputs were written in place (or are now).
        for (int v : n.inputs) in_place(v);
        view_ref(n.outputs[0]);
        continue;
      }
      if (recording_ && ((n.op == "Conv" && conv_int8_candidate(*this, n)) || fc_int8_candidate(*this, n))) {
        observe(n.inputs[0]);
        // (and a residual operand: int8 sums it in place, in its 8-bit form)
        for (const PostOp& p : n.post_ops)
          if (p.kind == PostOp::Sum) observe(p.sum_input);
      }
      current_ = static_cast<int>(k);
      build_node(n);
      for (int v : copies_out_) add_image_copy(output(v, Form::BlockedPacked), view_ref(v), v, "into");
      copies_out_.clear();
      if (done_with_) report_done_weights(k);
    }
    for (const int v : g_.outputs) {
      if (g_.value(v).is_constant()) throw Error(ErrorKind::Unsupported, "the network output '" + g_.value(v).name + "' is a constant");
      out_refs_.push_back(input(v, Form::Plain));
    }
    info.load_ms.emplace_back("tune", tune_ms_);
    if (tuned_layers_ > 0) {
      const int saved = tune_shapes_ > 0 && !tune_cache_.empty() ? save_tune_cache(tune_cache_) : 0;
      char line[160];
      std::snprintf(line, sizeof line, "tune_conv: %d layers, %d shapes timed in %.0f ms, %d not the rule's choice",
                    tuned_layers_, tune_shapes_, tune_ms_, overruled_);
      info.passes.push_back(line);
      if (!tune_cache_.empty())
        info.passes.push_back("tune_cache: " + tune_cache_ + " (" + std::to_string(cached) + " choices read, " +
                              (tune_shapes_ > 0 ? std::to_string(saved) + " written)" : "nothing new)"));
    }
    if (bf16_) {
      int convs = 0, low = 0;
      for (const Node& n : g_.nodes)
        if (n.op == "Conv") ++convs, low += is_bf16(conv_input_form(*this, n));
      info.passes.push_back("precision bf16: " + std::to_string(low) + " of " + std::to_string(convs) +
                            (amx_bf16() ? " convolutions in bfloat16, channels-last on AMX (the rest float32: grouped ones)"
                                        : " convolutions in bfloat16 (the rest float32: Winograd on large maps, channels-last ones)"));
    }
    if (int8_) {
      int layers = 0, low = 0;
      std::string kept[3];  // float32, bfloat16, bfloat16 weights
      for (const Node& n : g_.nodes) {
        const bool dense = n.op == "Gemm" || (n.op == "MatMul" && g_.constant(n.inputs[1]));
        if (n.op != "Conv" && !dense) continue;
        ++layers;
        if (n.op == "Conv" ? conv_int8(*this, n) : fc_int8(*this, n)) {
          ++low;
          continue;
        }
        std::string& list = kept[n.op == "Conv" ? (is_bf16(conv_input_form(*this, n)) ? 1 : 0) : fc_bf16_weights(*this, n) ? 2 : 0];
        if (list.size() < 200) list += (list.empty() ? "" : ", ") + n.name;
      }
      std::string rest;
      if (!kept[1].empty()) rest += "bfloat16: " + kept[1];
      if (!kept[2].empty()) rest += (rest.empty() ? "" : "; ") + std::string("weights in bfloat16, float32 sums: ") + kept[2];
      if (!kept[0].empty()) rest += (rest.empty() ? "" : "; ") + std::string("float32: ") + kept[0];
      info.passes.push_back("precision int8: " + std::to_string(low) + " of " + std::to_string(layers) +
                            " convolutions and fully connected layers in int8" + (rest.empty() ? std::string() : " (" + rest + ")"));
    }
    if (!fallback_.empty()) {
      std::string line = "reference_fallback: " + std::to_string(fallback_.size()) + " node(s) on the reference evaluator (slow):";
      for (std::size_t i = 0; i < fallback_.size() && i < 8; ++i) line += (i ? "; " : " ") + fallback_[i];
      if (fallback_.size() > 8) line += "; and " + std::to_string(fallback_.size() - 8) + " more";
      info.passes.push_back(line);
    }
    plan(info);
    if (forced_team_ == 1 && threads_ > 1 && !can_run_alone()) {
      info.passes.push_back("VINFER_TEAM=one: every run stays on the team: " + alone_blocker_ +
                            " has no single-thread form with the same layouts");
      forced_team_ = threads_;
    }
  }

  // BuildContext
  const Graph& graph() const override { return g_; }
  const dnnl::engine& engine() const override { return eng_; }
  bool winograd() const override { return winograd_; }
  bool compact_weights() const override { return compact_; }
  bool bf16() const override { return bf16_; }
  Form bf16_form(int value) const override {
    const auto v = static_cast<std::size_t>(value);
    if (!bf16_ || g_.value(value).shape.size() != 4 || g_.is_output(value) || views_.root[v] >= 0) return Form::Plain;
    const auto& readers = consumers_[v];
    if (readers.empty()) return Form::Plain;
    const Form want = amx_bf16() ? Form::ChannelsLastBf16 : Form::BlockedBf16;
    const bool all = std::all_of(readers.begin(), readers.end(), [&](int r) {
      const Node& n = g_.nodes[static_cast<std::size_t>(r)];
      // (a max pool of bfloat16 values is the bfloat16 of their float32 max:
      // on AMX one between such convolutions pools them as they are)
      if (n.op == "MaxPool" && want == Form::ChannelsLastBf16 && n.inputs[0] == value) return bf16_form(n.outputs[0]) == want;
      // (also as a residual operand: oneDNN adds one in bfloat16 as well)
      return n.op == "Conv" && conv_input_form(*this, n) == want;
    });
    return all ? want : Form::Plain;
  }
  bool int8() const override { return int8_; }
  bool recording() const override { return recording_; }
  const ActivationRange* int8_range(int value) const override {
    if (!int8_ || !calibration_) return nullptr;
    auto it = calibration_->activations.find(g_.value(value).name);
    if (it != calibration_->activations.end()) return &it->second;
    const int pool = int8_max_pool_reader(value);
    return pool >= 0 ? int8_range(g_.nodes[static_cast<std::size_t>(pool)].outputs[0]) : nullptr;
  }
  // The MaxPool that alone reads `value` (not the output nor a view) and
  // whose output has a range, or -1: the value is then quantized by that
  // range (the largest of a max pool's inputs is its largest output), so
  // that the pool runs on the integers.
  int int8_max_pool_reader(int value) const {
    const auto v = static_cast<std::size_t>(value);
    const auto& readers = consumers_[v];
    if (readers.size() != 1 || g_.is_output(value) || views_.root[v] >= 0) return -1;
    const Node& n = g_.nodes[static_cast<std::size_t>(readers[0])];
    return n.op == "MaxPool" && n.inputs[0] == value && calibration_->activations.count(g_.value(n.outputs[0]).name)
               ? readers[0]
               : -1;
  }
  const std::vector<float>* int8_weight_scales(const Node& conv) const override {
    if (!int8_ || !calibration_ || conv.inputs.size() < 2) return nullptr;
    auto it = calibration_->weight_scales.find(conv.name);
    if (it == calibration_->weight_scales.end()) return nullptr;
    const std::int64_t outputs = conv.op == "Conv" ? g_.value(conv.inputs[1]).shape.at(0) : g_.value(conv.outputs[0]).shape.back();
    return static_cast<std::int64_t>(it->second.size()) == outputs ? &it->second : nullptr;
  }
  Form int8_form(int value) const override {
    const ActivationRange* r = int8_range(value);
    return r && r->min >= 0 ? Form::ChannelsLastU8 : Form::ChannelsLastS8;
  }
  float int8_scale(int value) const override {
    const ActivationRange* r = int8_range(value);
    if (!r) return 1.f;
    const float m = std::max(std::fabs(r->min), std::fabs(r->max));
    return m > 0 ? m / (r->min >= 0 ? 255.f : 127.f) : 1.f;
  }
  bool int8_value(int value) const override {
    const auto v = static_cast<std::size_t>(value);
    if (!int8_ || g_.value(value).shape.size() != 4 || g_.is_output(value) || views_.root[v] >= 0) return false;
    const auto& readers = consumers_[v];
    const int pool = int8_max_pool_reader(value);
    if (pool >= 0) return int8_value(g_.nodes[static_cast<std::size_t>(pool)].outputs[0]);
    return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int r) {
      const Node& n = g_.nodes[static_cast<std::size_t>(r)];
      return n.op == "Conv" && n.inputs[0] == value && conv_int8(*this, n) &&
             std::none_of(n.post_ops.begin(), n.post_ops.end(), [&](const PostOp& p) { return p.kind == PostOp::Sum && p.sum_input == value; });
    });
  }
  bool tune() const override { return tune_; }
  void note_tuning(double ms) override { tune_ms_ += ms, ++tune_shapes_; }
  void note_choice(bool overruled) override { ++tuned_layers_, overruled_ += overruled ? 1 : 0; }

  bool is_view(int value) const override { return views_.root[static_cast<std::size_t>(value)] >= 0; }
  bool has_form(int value, Form form) const override { return forms_.count({value, form}) != 0; }
  TensorRef input_images(int value) override {
    if (!strided_view(value)) return input(value, Form::Blocked);
    in_place(value);
    return view_ref(value);
  }
  TensorRef output_images(int value) override {
    return strided_view(value) ? view_ref(value) : output(value, Form::Blocked);
  }

  // Bytes of one image of a 4-D value in the Blocked form.
  std::int64_t image_bytes(int value) const {
    const Shape& s = g_.value(value).shape;
    return static_cast<std::int64_t>(blocked_md(s).get_size()) / std::max<std::int64_t>(1, s[0]);
  }
  // A view into a concatenation whose images are not packed (batch > 1):
  // its Blocked form is a slice of each image of the root's buffer.
  bool strided_view(int value) const {
    return views_.root[static_cast<std::size_t>(value)] >= 0 && g_.value(value).shape[0] > 1;
  }
  // The Blocked form of a view: where it lies in its root's buffer.
  TensorRef view_ref(int value) {
    if (!strided_view(value)) return output(value, Form::Blocked);
    auto it = forms_.find({value, Form::Blocked});
    if (it != forms_.end()) return it->second;
    const auto v = static_cast<std::size_t>(value);
    TensorRef t;
    t.md = blocked_md(g_.value(value).shape);
    t.image_bytes = static_cast<std::size_t>(image_bytes(views_.root[v]));
    t.buffer = new_buffer(static_cast<std::int64_t>(t.md.get_size()), output(views_.root[v], Form::Blocked).buffer,
                          views_.offset[v]);
    forms_[{value, Form::Blocked}] = t;
    journal_.push_back({value, Form::Blocked});
    return t;
  }
  // Makes sure a view's values are in place (they may exist in another form only).
  void in_place(int value) {
    if (!strided_view(value) || has_form(value, Form::Blocked)) return;
    const TensorRef packed = input(value, Form::BlockedPacked);
    add_image_copy(packed, view_ref(value), value, "into");
  }
  void add_image_copy(const TensorRef& from, const TensorRef& to, int value, const char* how) {
    const std::int64_t images = g_.value(value).shape[0];
    const auto bytes = static_cast<std::size_t>(image_bytes(value));
    auto op = std::make_unique<ImageCopyOp>(images, bytes, from.image_bytes ? from.image_bytes : bytes,
                                            to.image_bytes ? to.image_bytes : bytes);
    op->acts[DNNL_ARG_FROM] = from;
    op->acts[DNNL_ARG_TO] = to;
    op->name = std::string("copy ") + how + " concatenation '" + g_.value(value).name + "'";
    add(std::move(op));
  }

  TensorRef input(int value, Form form) override {
    if (form == Form::Blocked && strided_view(value)) form = Form::BlockedPacked;
    auto it = forms_.find({value, form});
    if (it != forms_.end()) return it->second;
    if (form == Form::BlockedPacked && has_form(value, Form::Blocked)) {
      TensorRef to = output(value, Form::BlockedPacked);
      add_image_copy(view_ref(value), to, value, "out of");
      return to;
    }
    auto src = forms_.end();
    // (not from an int8 form: only int8 convolutions read those; a view at
    // batch > 1 from its packed copy)
    for (const Form other : {Form::Blocked, Form::Plain, Form::ChannelsLast, Form::BlockedBf16, Form::PlainBf16, Form::ChannelsLastBf16})
      if (src == forms_.end() && other != form) {
        src = forms_.find({value, other});
        if (src != forms_.end() && other == Form::Blocked && strided_view(value)) {
          input(value, Form::BlockedPacked);
          src = forms_.find({value, Form::BlockedPacked});
        }
      }
    if (src == forms_.end()) {
      if (g_.value(value).is_constant())
        throw Error(ErrorKind::Unsupported, "constant '" + g_.value(value).name + "' used where the CPU backend expects an activation");
      throw Error(ErrorKind::Internal, "value '" + g_.value(value).name + "' read before it is produced");
    }
    TensorRef to = output(value, form);
    add(make_reorder(eng_, src->second, to, std::string("to ") + form_name(form) + " '" + g_.value(value).name + "'",
                     is_int8(form) ? int8_scale(value) : 1.f));
    return to;
  }

  TensorRef output(int value, Form form) override {
    if (form == Form::Blocked && strided_view(value)) {
      // Written packed by an op that needs that, then copied into place.
      view_ref(value);
      if (std::find(copies_out_.begin(), copies_out_.end(), value) == copies_out_.end()) copies_out_.push_back(value);
      form = Form::BlockedPacked;
    }
    auto it = forms_.find({value, form});
    if (it != forms_.end()) return it->second;
    const Value& v = g_.value(value);
    TensorRef t;
    t.md = md_for(v.shape, form);
    const int root = views_.root[static_cast<std::size_t>(value)];
    if (form == Form::Blocked && root >= 0) {
      t.buffer = new_buffer(static_cast<std::int64_t>(t.md.get_size()), output(root, Form::Blocked).buffer,
                            views_.offset[static_cast<std::size_t>(value)]);
    } else {
      t.buffer = new_buffer(static_cast<std::int64_t>(t.md.get_size()));
    }
    forms_[{value, form}] = t;
    journal_.push_back({value, form});
    return t;
  }

  void alias_plain(int value, int source) override { alias_form(value, Form::Plain, source, Form::Plain); }

  void alias_form(int value, Form form, int source, Form source_form) override {
    TensorRef src = input(source, source_form);
    TensorRef t;
    t.md = md_for(g_.value(value).shape, form);
    t.buffer = new_buffer(static_cast<std::int64_t>(t.md.get_size()), src.buffer, 0);
    forms_[{value, form}] = t;
    journal_.push_back({value, form});
  }

  bool write_over(int value, Form form, int source, Form source_form) override {
    const auto it = forms_.find({source, source_form});
    if (it == forms_.end() || has_form(value, form) || g_.value(value).shape != g_.value(source).shape ||
        source == in_value_ || g_.is_output(source) || is_view(source) || is_view(value))
      return false;
    const Node& n = g_.nodes[static_cast<std::size_t>(current_)];
    const auto& readers = consumers_[static_cast<std::size_t>(source)];
    if (std::count(n.inputs.begin(), n.inputs.end(), source) > 0 ||
        std::any_of(readers.begin(), readers.end(), [&](int r) { return r > current_; }))
      return false;
    const int buffer = it->second.buffer;
    // (storage written over in place before is free of other values: a chain of them is fine)
    if ((bufs_[static_cast<std::size_t>(buffer)].alias_of >= 0 && !written_over_.count(buffer)) ||
        std::any_of(bufs_.begin(), bufs_.end(), [&](const detail::PlanBuffer& b) { return b.alias_of == buffer; }))
      return false;
    TensorRef t = it->second;
    if (form != source_form) t.md = md_for(g_.value(value).shape, form);
    if (t.md.get_size() != it->second.md.get_size()) return false;
    t.buffer = new_buffer(static_cast<std::int64_t>(t.md.get_size()), buffer, 0);
    written_over_.insert(t.buffer);
    forms_[{value, form}] = t;
    journal_.push_back({value, form});
    return true;
  }

  void add(std::unique_ptr<CpuOp> op) override { ops_.push_back(std::move(op)); }

  const Node* producer(int value) const override {
    const int k = producers_.at(static_cast<std::size_t>(value));
    return k < 0 ? nullptr : &g_.nodes[static_cast<std::size_t>(k)];
  }
  const std::vector<int>& consumers(int value) const override { return consumers_.at(static_cast<std::size_t>(value)); }

  // Executor
  void run(const float* input, float* output) override {
    if (out_refs_.size() != 1) throw Error(ErrorKind::Internal, "run: the graph has several outputs");
    forward(input, &output);
  }
  void run_outputs(const float* input, const std::vector<float*>& outputs) override {
    if (outputs.size() != out_refs_.size()) throw Error(ErrorKind::Internal, "run_outputs: not one buffer per output");
    forward(input, outputs.data());
  }

  void forward(const float* input, float* const* outputs) {
    omp_set_num_threads(threads_);
    int team = forced_team_ > 0 ? forced_team_ : adapt_ ? team_.next() : threads_;
    if (team == 1 && threads_ > 1 && !can_run_alone()) {
      adapt_ = false;  // never on one thread, then
      team = threads_;
    }
    // One thread: every parallel region of this run inactive (oneDNN's
    // primitives then run their twins made for one thread: PrimitiveOp).
    // The setting is the process's, so a model running beside this one on
    // another thread of the caller may also run a few layers alone meanwhile
    // (slower, not wrong).
    struct Alone {  // restores the setting however the run ends
      int levels = -1;
      ~Alone() {
        if (levels >= 0) omp_set_max_active_levels(levels);
      }
    } alone;
    if (team == 1) alone.levels = omp_get_max_active_levels(), omp_set_max_active_levels(0);
    const auto t0 = std::chrono::steady_clock::now();
    copy_in(input);
    for (auto& op : ops_) op->execute(stream_);
    stream_.wait();
    copy_out(outputs, out_refs_.size());
    if (adapt_ && forced_team_ == 0) {
      team_.observe(team, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      // A try of the team is skipped where no other granted CPU sat idle
      // since the runs on one thread began, or since the last try.
      if (team == 1 && last_team_ != 1) idle_.idle_cpus();
      if (team_.trying_team()) {
        const double idle = idle_.idle_cpus();
        if (idle >= 0 && idle < 0.5) team_.skip_try();
      }
      last_team_ = team;
    }
    ++runs_;
  }

  std::array<std::int64_t, 2> team_runs() const override { return team_.runs(); }

  // Whether every op runs alone, preparing what they need (once; the first
  // that cannot is kept in alone_blocker_).
  bool can_run_alone() {
    if (alone_ == 0) {
      const auto it = std::find_if(ops_.begin(), ops_.end(), [](const std::unique_ptr<CpuOp>& op) { return !op->can_run_alone(); });
      alone_ = it == ops_.end() ? 1 : -1;
      if (it != ops_.end()) alone_blocker_ = (*it)->name + " (" + (*it)->impl + ")";
    }
    return alone_ > 0;
  }

  std::vector<std::pair<int, ActivationRange>> ranges() const override {
    std::vector<std::pair<int, ActivationRange>> r;
    for (std::size_t v = 0; v < observed_.size(); ++v)
      if (observed_[v] && runs_ > 0) r.emplace_back(static_cast<int>(v), ranges_[v]);
    return r;
  }
  std::int64_t runs() const override { return runs_; }

  std::vector<detail::OpProfile> profile(const float* input, float* output) override {
    omp_set_num_threads(threads_);
    std::vector<detail::OpProfile> prof;
    copy_in(input);
    // VINFER_PROFILE_HOT_WEIGHTS=1: every thread reads each op's weights
    // (untimed) before it runs, so the profile shows the layers as if their
    // weights were already in cache: the difference to a normal profile is what
    // fetching them costs (prefetch.hpp).
    const bool hot = detail::debug_env_is(detail::DebugVar::ProfileHotWeights, "1");
    for (auto& op : ops_) {
      if (hot) {
        const auto spans = op->weights();
        float sum = 0;
#pragma omp parallel reduction(+ : sum)
        for (const ByteSpan& s : spans)
          for (std::size_t i = 0; i < s.bytes / sizeof(float); i += 16) sum += static_cast<const float*>(s.data)[i];
        volatile float sink = sum;
        (void)sink;
      }
      const auto t0 = std::chrono::steady_clock::now();
      op->execute(stream_);
      stream_.wait();
      const auto t1 = std::chrono::steady_clock::now();
      prof.push_back({op->name, op->impl, std::chrono::duration<double, std::milli>(t1 - t0).count(), op->flops, op->weight_bytes_read()});
    }
    copy_out(&output, 1);  // (the image API: one output)
    return prof;
  }

  int kernels() const override { return static_cast<int>(ops_.size()); }

 private:
  int new_buffer(std::int64_t bytes, int alias_of = -1, std::int64_t offset = 0) {
    detail::PlanBuffer b;
    b.bytes = bytes;
    b.alias_of = alias_of;
    b.offset = offset;
    bufs_.push_back(b);
    return static_cast<int>(bufs_.size()) - 1;
  }

  // The network's input is read where the caller holds it, not copied into
  // the arena, where only oneDNN primitives read it, and none writes it (a
  // 224x224 network's 19 MB at batch 32: a one-thread copy took 1.2-1.6 ms
  // on a Zen 4, ~0.5 % of ResNet50's int8 pass): each run points their
  // arguments at it. Else run() copies it.
  void plan_input(ModelInfo& info) {
    in_place_.clear();
    bool in_place = std::none_of(bufs_.begin(), bufs_.end(), [&](const detail::PlanBuffer& b) { return b.alias_of == in_ref_.buffer; });
    for (std::size_t k = 0; k < ops_.size() && in_place; ++k)
      for (const auto& [arg, t] : ops_[k]->acts) {
        if (t.buffer != in_ref_.buffer) continue;
        in_place = in_place && typeid(*ops_[k]) == typeid(PrimitiveOp) && arg != DNNL_ARG_DST;
        in_place_.emplace_back(k, arg);
      }
    if (!in_place) in_place_.clear();
    info.passes.push_back(in_place_.empty() ? "input: copied into the arena each run"
                                            : "input: read where the caller holds it (" + std::to_string(in_place_.size()) +
                                                  " kernel argument(s))");
  }
  // (An empty tensor's pointer may be null, which memcpy must not get even for 0 bytes.)
  void copy_in(const float* input) {
    if (in_ref_.md.get_size() == 0) return;
    if (in_place_.empty()) {
      std::memcpy(address(in_ref_.buffer), input, in_ref_.md.get_size());
      return;
    }
    for (const auto& [k, arg] : in_place_) ops_[k]->args.at(arg).set_data_handle(const_cast<float*>(input));
  }
  void copy_out(float* const* outputs, std::size_t count) {
    for (std::size_t o = 0; o < count && o < out_refs_.size(); ++o)
      if (out_refs_[o].md.get_size() > 0) std::memcpy(outputs[o], address(out_refs_[o].buffer), out_refs_[o].md.get_size());
  }

  void* address(int buffer) { return static_cast<char*>(arena_.get()) + plan_.address[static_cast<std::size_t>(buffer)]; }

  // Watches a value (a convolution's input) in the float32 form it exists in.
  void observe(int value) {
    const auto v = static_cast<std::size_t>(value);
    if (observed_[v]) return;
    for (const Form f : {Form::Blocked, Form::ChannelsLast, Form::Plain}) {
      if (!has_form(value, f)) continue;
      add(make_range_op(input(value, f), &ranges_[v], "range of '" + g_.value(value).name + "'"));
      observed_[v] = true;
      return;
    }
  }

  // A node by its kernel, or where none takes it (an operator or a
  // configuration the CPU kernels do not run) by the reference evaluator:
  // what the failed attempt declared is undone first.
  void build_node(const Node& n) {
    const std::size_t n_ops = ops_.size(), n_bufs = bufs_.size();
    journal_.clear();
    std::string why;
    try {
      dispatch(n);
      return;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Unsupported) throw;
      why = e.what();
    } catch (const dnnl::error& e) {
      why = std::string("oneDNN: ") + e.what();
    }
    ops_.resize(n_ops);
    bufs_.resize(n_bufs);
    written_over_.erase(written_over_.lower_bound(static_cast<int>(n_bufs)), written_over_.end());
    for (const auto& key : journal_) forms_.erase(key);
    copies_out_.clear();
    build_reference(*this, n);
    fallback_.push_back(n.label() + " (" + why + ")");
  }

  void dispatch(const Node& n) {
    if (detail::is_activation(n.op)) return build_eltwise(*this, n);
    if (detail::is_reshape_op(n.op)) return build_reshape(*this, n);
    const auto& table = kernel_table();
    auto it = table.find(n.op);
    if (it == table.end()) throw Error(ErrorKind::Unsupported, "no CPU kernel for " + n.op);
    it->second(*this, n);
  }

  void plan(ModelInfo& info) {
    auto touch = [&](int buffer, int step) {
      detail::PlanBuffer& b = bufs_[static_cast<std::size_t>(buffer)];
      b.first = b.first < 0 ? step : std::min(b.first, step);
      b.last = std::max(b.last, step);
    };
    touch(in_ref_.buffer, 0);
    std::size_t scratch = 0;
    for (std::size_t s = 0; s < ops_.size(); ++s) {
      for (const auto& [arg, t] : ops_[s]->acts) touch(t.buffer, static_cast<int>(s));
      scratch = std::max(scratch, ops_[s]->scratch_md.get_size());
    }
    for (const TensorRef& o : out_refs_) touch(o.buffer, static_cast<int>(ops_.size()));
    plan_ = detail::plan_memory(bufs_);
    arena_ = aligned_block(static_cast<std::size_t>(plan_.arena_bytes));  // padded channel lanes start (and stay) zero
    scratch_ = aligned_block(scratch);
    for (auto& op : ops_) op->bind(eng_, [&](int b) { return address(b); }, scratch_.get());
    plan_input(info);
    plan_prefetch(info);
    info.passes.push_back("huge_pages: " + huge_page_state());
    info.arena_bytes = plan_.arena_bytes;
    info.naive_bytes = plan_.naive_bytes;
    info.nodes_executed = static_cast<int>(ops_.size());
    info.kernels.clear();
    for (const auto& op : ops_) info.kernels.emplace_back(op->name, op->impl);
  }

  // Each op that prefetches gets the weights of the ops after it, in the
  // order they are read, as much as it has time to fetch: its work x 0.05
  // bytes per flop (~22 GB/s at the two-thread peak here), at most 8 MiB (so
  // that what it fetches is still in L2/L3 when it is read). It goes past the
  // next op that prefetches, so that a large layer's weights are fetched by
  // more than one op before it (ResNet50's 7x7 3x3s: 9-17 MiB); what an
  // earlier op fetched is fetched again (cheap where it is still cached;
  // skipping it was slower: ResNet50 1.03x). Before, each op stopped at the
  // next one that prefetches, at most 1 MiB: the DenseNets the same within
  // the noise, ResNet50 1.05x slower. VINFER_PREFETCH_WEIGHTS=0: none.
  // `vinfer info` shows the sum of the windows as "prefetch_weights: N ops
  // fetch X MiB ahead" (more than the weights: windows overlap).
  void plan_prefetch(ModelInfo& info) {
    if (detail::debug_env_is(detail::DebugVar::PrefetchWeights, "0")) return;
    constexpr double kBytesPerFlop = 0.05;
    constexpr std::size_t kMaxBytes = std::size_t{8} << 20;
    int fetching = 0;
    std::size_t total = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (!ops_[i]->prefetches()) continue;
      const std::size_t cap = std::min(kMaxBytes, static_cast<std::size_t>(ops_[i]->flops * kBytesPerFlop));
      std::size_t bytes = 0;
      for (std::size_t j = i + 1; j < ops_.size() && bytes < cap; ++j)
        for (const ByteSpan& s : ops_[j]->weights()) {
          const std::size_t take = std::min(s.bytes, cap - bytes);
          if (take > 0) ops_[i]->prefetch.push_back({s.data, take}), bytes += take;
        }
      fetching += bytes > 0 ? 1 : 0, total += bytes;
    }
    if (fetching == 0) return;
    char line[120];
    std::snprintf(line, sizeof line, "prefetch_weights: %d ops fetch %.2f MiB ahead", fetching,
                  static_cast<double>(total) / (1 << 20));
    info.passes.push_back(line);
  }

  // Calls done_with_ for the large constant inputs of node k (a Conv, Gemm
  // or MatMul) that no later node reads: its kernels hold their own copies
  // (or share the tensor) by now.
  void report_done_weights(std::size_t k) {
    const Node& n = g_.nodes[k];
    if (n.op != "Conv" && n.op != "Gemm" && n.op != "MatMul") return;
    for (std::size_t i = 1; i < n.inputs.size(); ++i) {
      const int v = n.inputs[i];
      const TensorData* c = g_.constant(v);
      if (!c || c->dtype != DType::F32 || c->f.size() < 1024 || g_.is_output(v)) continue;
      const auto& readers = consumers_[static_cast<std::size_t>(v)];
      if (std::all_of(readers.begin(), readers.end(), [&](int r) { return r <= static_cast<int>(k); })) done_with_(v);
    }
  }

  const Graph& g_;
  dnnl::engine eng_;
  dnnl::stream stream_;
  int threads_;
  bool adapt_;
  int forced_team_ = detail::debug_env_is(detail::DebugVar::Team, "one") ? 1 : detail::debug_env_is(detail::DebugVar::Team, "all") ? threads_ : 0;
  detail::TeamPolicy team_{threads_};
  int alone_ = 0;  // can_run_alone(): 0 not asked yet
  std::string alone_blocker_;
  detail::IdleMeter idle_;
  int last_team_ = 0;
  std::vector<std::vector<int>> consumers_;  // per value: the nodes that read it
  std::vector<int> producers_;               // per value: the node that writes it, or -1
  bool winograd_, compact_, tune_, bf16_, int8_, recording_;
  std::shared_ptr<const Calibration> calibration_;
  std::vector<bool> observed_;             // record_ranges: the values watched
  std::vector<ActivationRange> ranges_;    // and their ranges so far
  std::int64_t runs_ = 0;
  std::string tune_cache_;
  std::function<void(int)> done_with_;
  int tuned_layers_ = 0, tune_shapes_ = 0, overruled_ = 0;
  double tune_ms_ = 0;
  detail::ConcatViews views_;
  std::map<std::pair<int, Form>, TensorRef> forms_;
  std::vector<std::pair<int, Form>> journal_;  // forms declared while building the current node
  std::vector<int> copies_out_;  // views the current node wrote packed, to be copied into place after it
  std::vector<std::string> fallback_;         // nodes on the reference evaluator, and why
  std::vector<detail::PlanBuffer> bufs_;
  std::vector<std::unique_ptr<CpuOp>> ops_;
  detail::MemoryPlan plan_;
  Block arena_, scratch_;
  int in_value_ = -1;
  int current_ = -1;  // the node being built
  std::set<int> written_over_;  // buffers declared by write_over
  TensorRef in_ref_;
  std::vector<TensorRef> out_refs_;  // the graph's outputs, in order
  std::vector<std::pair<std::size_t, int>> in_place_;  // (op, argument) that read the input where the caller holds it
};

}  // namespace

std::unique_ptr<detail::Executor> compile(const Graph& g, const EngineOptions& options, int threads, ModelInfo& info,
                                          const std::function<void(int)>& done_with) {
  auto p = std::make_unique<Program>(g, options, threads, done_with);
  try {
    p->build(info);
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::Unsupported, std::string("oneDNN could not build a primitive: ") + e.what());
  }
  return p;
}

}  // namespace vinfer::cpu
