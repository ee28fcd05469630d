// vinfer::Model: import -> passes -> backend compile, then run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "cpu/cpu_backend.hpp"
#ifdef VINFER_HAS_CUDA
#include "cuda/cuda_backend.hpp"
#endif
#include "backend/executor.hpp"
#include "graph/op_params.hpp"
#include "graph/passes.hpp"
#include "graph/reference.hpp"
#include "image/fused_prep.hpp"
#include "util/cpu_features.hpp"
#include "util/cpu_grant.hpp"
#include "util/debug_env.hpp"
#include "util/load_stats.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
namespace {

// Runs the graph node by node with the reference kernels: the oracle, and
// the general path (any inputs and outputs, of any type).
class ReferenceExecutor final : public detail::Executor {
 public:
  explicit ReferenceExecutor(const Graph& g) : g_(g) {}
  void run(const float* input, float* output) override { (void)profile(input, output); }
  std::vector<detail::OpProfile> profile(const float* input, float* output) override {
    const Value& in = g_.value(g_.inputs.at(0));
    std::vector<TensorData> ins{TensorData::f32(in.shape, std::vector<float>(input, input + numel(in.shape)))};
    std::vector<detail::OpProfile> prof;
    const std::vector<TensorData> out = run_all(std::move(ins), &prof);
    if (!out.at(0).f.empty()) std::memcpy(output, out[0].f.data(), out[0].f.size() * sizeof(float));
    return prof;
  }
  int kernels() const override { return static_cast<int>(g_.nodes.size()); }

  // The graph's inputs, in order, to its outputs.
  std::vector<TensorData> run_all(std::vector<TensorData> inputs, std::vector<detail::OpProfile>* prof = nullptr) const {
    std::vector<std::shared_ptr<const TensorData>> vals(g_.values.size());
    for (std::size_t i = 0; i < g_.values.size(); ++i) vals[i] = g_.values[i].constant;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      vals[static_cast<std::size_t>(g_.inputs.at(i))] = std::make_shared<const TensorData>(std::move(inputs[i]));
    for (const Node& n : g_.nodes) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<const TensorData*> args;
      for (int v : n.inputs) args.push_back(v >= 0 ? vals[static_cast<std::size_t>(v)].get() : nullptr);
      for (const PostOp& p : n.post_ops)
        if (p.kind == PostOp::Sum) args.push_back(vals[static_cast<std::size_t>(p.sum_input)].get());
      std::vector<TensorData> out = detail::eval_reference(g_, n, args);
      for (std::size_t o = 0; o < out.size() && o < n.outputs.size(); ++o)
        if (n.outputs[o] >= 0) vals[static_cast<std::size_t>(n.outputs[o])] = std::make_shared<const TensorData>(std::move(out[o]));
      if (prof)
        prof->push_back({n.label(), "reference", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), 0});
    }
    std::vector<TensorData> res;
    for (const int v : g_.outputs) {
      const TensorData* y = vals[static_cast<std::size_t>(v)].get();
      if (!y || y->shape != g_.value(v).shape)
        throw Error(ErrorKind::Internal, "output '" + g_.value(v).name + "' was not computed in its inferred shape");
      res.push_back(*y);
    }
    return res;
  }

 private:
  const Graph& g_;
};

// Whether the graph is what the CPU backend compiles: one float32 input to
// float32 outputs that kernels compute, every value computed at run time
// float32 (its arena holds floats). The CUDA backend takes one output only.
bool one_float_in_out(const Graph& g) {
  if (g.inputs.size() != 1 || g.outputs.empty() || g.input_type(0) != ElementType::Float32) return false;
  for (std::size_t o = 0; o < g.outputs.size(); ++o)
    if (g.output_type(o) != ElementType::Float32 || g.value(g.outputs[o]).is_constant() || g.outputs[o] == g.inputs[0]) return false;
  for (const Node& n : g.nodes)
    for (const int v : n.outputs)
      if (v >= 0 && !g.value(v).is_constant() && g.value(v).dtype != DType::F32) return false;
  return true;
}

// Fixes the symbolic dimensions of the inputs EngineOptions::input_shapes names.
void set_input_shapes(Graph& g, const std::map<std::string, Shape>& shapes) {
  std::size_t used = 0;
  for (const int id : g.inputs) {
    Value& v = g.value(id);
    const auto it = shapes.find(v.name);
    if (it == shapes.end()) continue;
    ++used;
    const Shape& want = it->second;
    bool fits = want.size() == v.shape.size();
    for (std::size_t d = 0; fits && d < want.size(); ++d) fits = want[d] >= 0 && (v.shape[d] == -1 || v.shape[d] == want[d]);
    if (!fits)
      throw Error(ErrorKind::InvalidArgument, "input '" + v.name + "' is " + shape_str(v.shape) + " (-1: any), not " + shape_str(want));
    v.shape = want;
  }
  if (used != shapes.size())
    for (const auto& [name, shape] : shapes) {
      bool found = false;
      for (const int id : g.inputs) found = found || g.value(id).name == name;
      if (!found) throw Error(ErrorKind::InvalidArgument, "input_shapes names '" + name + "', which is not an input of the network");
    }
}

// Refuses a precision the backend or the CPU does not run, and an INT8
// calibration made for another network.
void check_precision(const EngineOptions& o, const Graph& g) {
  if (o.record_ranges && (o.backend != Backend::Cpu || o.precision != Precision::F32))
    throw Error(ErrorKind::InvalidArgument, "record_ranges needs the CPU backend in precision f32");
  if (o.precision == Precision::F32) return;
  if (o.backend != Backend::Cpu)
    throw Error(ErrorKind::Unsupported, std::string("precision ") + to_string(o.precision) + " runs on the CPU backend only (the " +
                                            (o.backend == Backend::Cuda ? "CUDA" : "reference") + " backend runs float32)");
  const detail::CpuFeatures& f = detail::cpu_features();
  const std::string cpu = std::string("; this one (") + detail::to_string(f.level);
  if (o.precision == Precision::BF16 && !cpu_has_bf16())
    throw Error(ErrorKind::Unsupported, "precision bf16 needs a CPU with bfloat16 dot products (AVX512_BF16 or AMX)" + cpu +
                                            (f.avx512 ? ", no AVX512_BF16" : "") + ") would only emulate them, slower than f32");
  if (o.precision != Precision::INT8) return;
  if (!cpu_has_int8())
    throw Error(ErrorKind::Unsupported, "precision int8 needs a CPU with int8 dot products (AVX512_VNNI)" + cpu +
                                            (f.avx512 ? ", no AVX512_VNNI" : "") + ") runs them slower than f32");
  if (!o.calibration)
    throw Error(ErrorKind::InvalidArgument, "precision int8 needs a calibration (make one with `vinfer calibrate`)");
  const std::string fp = calibration_fingerprint(g);
  if (o.calibration->fingerprint != fp)
    throw Error(ErrorKind::InvalidArgument, "the calibration was made for another network ('" + o.calibration->model +
                                                "', fingerprint " + o.calibration->fingerprint + "; this one is '" + g.name +
                                                "', " + fp + ")");
}

int resolve_threads(int t) { return t > 0 ? t : detail::cpu_grant().cpus; }

}  // namespace

const char* to_string(Precision p) { return p == Precision::BF16 ? "bf16" : p == Precision::INT8 ? "int8" : "f32"; }

Precision parse_precision(const std::string& name) {
  if (name == "f32" || name == "fp32" || name == "float32") return Precision::F32;
  if (name == "bf16" || name == "bfloat16") return Precision::BF16;
  if (name == "int8") return Precision::INT8;
  throw Error(ErrorKind::InvalidArgument, "unknown precision '" + name + "' (f32, bf16 or int8)");
}

bool cpu_has_bf16() { return detail::cpu_features().avx512_bf16; }
bool cpu_has_int8() { return detail::cpu_features().avx512_vnni; }

// EngineOptions::micro_batch for a graph set to options.batch (> 1, its
// batch symbolic): the images per backend run, said in `passes`. Automatic:
// 4 where that divides the batch and the weights weigh no more than one
// image's activations (every value the network computes, as if none were
// reused). Batch 32 on a 2-core Zen 4, 4 at a time against whole, per
// image, median of six alternating rounds: DenseNet201 (weights 0.3x) int8
// 0.84, bf16 0.95, f32 0.95; DenseNet121 (0.3x) 0.98-0.99 (int8 0.84 in
// another eight); ResNet50 (2.3x) f32 1.05, bf16 1.01, int8 0.97: whole;
// VGG19 (8.7x) f32 1.08: its 411 MB first fully connected layer read 8
// times instead of once.
std::int64_t micro_batch(const Graph& g, const EngineOptions& options, std::vector<std::string>& passes) {
  const std::int64_t n = options.batch;
  std::int64_t k = options.micro_batch;
  std::string why = "asked";
  if (k <= 0) {
    double weights = 0, activations = 0;
    for (const Node& nd : g.nodes) {
      for (const int v : nd.inputs)
        if (v >= 0 && g.value(v).constant) weights += 4.0 * static_cast<double>(numel(g.value(v).shape));
      for (const int v : nd.outputs)
        if (v >= 0) activations += 4.0 * static_cast<double>(numel(g.value(v).shape));
    }
    const double per_image = activations / static_cast<double>(n);
    k = n > 4 && n % 4 == 0 && weights <= per_image ? 4 : n;
    char line[160];
    std::snprintf(line, sizeof line, "weights %.0f MB, activations %.0f MB per image", weights / 1e6, per_image / 1e6);
    why = line;
  }
  k = std::min(k, n);
  passes.push_back("micro_batch: " + (k < n ? "batch " + std::to_string(n) + " in runs of " + std::to_string(k) + " images"
                                            : "whole batches of " + std::to_string(n)) +
                   " (" + why + ")");
  return k;
}

// `count` items (in_item floats each, out_item out) through `run` in runs
// of per_run items; a last partial run is padded with zeros (in pad_in,
// pad_out) and only its items' outputs are written.
template <class F>
void in_runs(const float* input, std::int64_t count, std::int64_t per_run, std::size_t in_item, std::size_t out_item,
             float* output, std::vector<float>& pad_in, std::vector<float>& pad_out, F&& run) {
  for (std::int64_t done = 0; done < count; done += per_run) {
    const std::int64_t k = std::min(per_run, count - done);
    const float* x = input + static_cast<std::size_t>(done) * in_item;
    float* y = output + static_cast<std::size_t>(done) * out_item;
    if (k == per_run) {
      run(x, y);
      continue;
    }
    pad_in.assign(static_cast<std::size_t>(per_run) * in_item, 0.f);
    pad_out.resize(static_cast<std::size_t>(per_run) * out_item);
    std::copy(x, x + static_cast<std::size_t>(k) * in_item, pad_in.begin());
    run(pad_in.data(), pad_out.data());
    std::copy(pad_out.begin(), pad_out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(k) * out_item), y);
  }
}

struct Model::Impl {
  Graph graph;
  EngineOptions options;
  ModelInfo info;
  std::unique_ptr<detail::Executor> exec;
  std::unique_ptr<Preprocessor> pre;  // run_image on the CPU
  std::vector<float> pre_tensor;
  std::vector<float> pad_in, pad_out;  // run_items' last partial batch
  Shape in_shape, out_shape;           // at the batch asked for
  std::int64_t run_batch = 1;          // images per backend run (EngineOptions::micro_batch)
  std::vector<float> chunk_in, chunk_out;  // a last partial run of micro-batches

  std::vector<TensorInfo> inputs, outputs;  // the general API's view
  const ReferenceExecutor* reference = nullptr;  // exec, where it is the reference evaluator

  void compile() {
    check_precision(options, graph);
    reference = nullptr;
    if (options.backend == Backend::Reference || !one_float_in_out(graph)) {
      if (options.backend == Backend::Cuda)
        throw Error(ErrorKind::Unsupported, "the CUDA backend runs networks with one float32 input and one float32 output");
      if (options.precision != Precision::F32)
        throw Error(ErrorKind::Unsupported, std::string("precision ") + to_string(options.precision) +
                                                " runs networks with one float32 input and one float32 output");
      auto ref = std::make_unique<ReferenceExecutor>(graph);
      reference = ref.get();
      exec = std::move(ref);
      info.nodes_executed = exec->kernels();
      info.kernels.clear();
      for (const Node& n : graph.nodes) info.kernels.emplace_back(n.label(), "vinfer:reference");
      if (options.backend != Backend::Reference)
        info.passes.push_back("general graph (" + std::to_string(inputs.size()) + " input(s), " + std::to_string(outputs.size()) +
                              " output(s); not one float32 input to float32 outputs through float32 values alone): "
                              "every node on the reference evaluator (slow)");
    } else if (options.backend == Backend::Cuda) {
      if (graph.outputs.size() != 1) throw Error(ErrorKind::Unsupported, "the CUDA backend runs networks with one output");
#ifdef VINFER_HAS_CUDA
      if (const Shape& in = graph.value(graph.inputs.at(0)).shape; !in.empty() && in[0] > 1)
        throw Error(ErrorKind::Unsupported, "the CUDA backend runs batch 1 (this input is " + shape_str(in) + ")");
      exec = cuda::compile(graph, options, info);
#else
      throw Error(ErrorKind::Unsupported,
                  "this build of vinfer has no CUDA backend (configure with -DVINFER_CUDA=ON where CUDA and cuDNN 9 are installed)");
#endif
    } else {
      // Without keep_constants each weight is freed as soon as its kernels
      // hold their packed copy, not after the whole network: the graph's
      // weights and the packed ones are never all held at once.
      std::function<void(int)> done_with;
      if (!options.keep_constants) done_with = [this](int v) { release_constant(graph.value(v)); };
      exec = cpu::compile(graph, options, resolve_threads(options.threads), info, done_with);
    }
  }

  // The image API's calls need one float32 input and one float32 output.
  void need_image_api(const char* call) const {
    if (inputs.size() == 1 && outputs.size() == 1 && inputs[0].type == ElementType::Float32 && outputs[0].type == ElementType::Float32)
      return;
    throw Error(ErrorKind::InvalidArgument, std::string(call) + ": the network has " + std::to_string(inputs.size()) + " input(s) and " +
                                                std::to_string(outputs.size()) +
                                                " output(s), not one float32 each: run it by name (the general API)");
  }

  // The batch's images through the backend in runs of run_batch.
  template <class F>
  void each_run(const float* input, float* output, F&& run) {
    const std::int64_t n = in_shape[0];
    in_runs(input, n, run_batch, static_cast<std::size_t>(numel(in_shape) / n), static_cast<std::size_t>(numel(out_shape) / n),
            output, chunk_in, chunk_out, run);
  }

  // The time the backend spent tuning kernels, which it appends to load_ms as "tune".
  double take_tune_ms() {
    double ms = 0;
    auto& stages = info.load_ms;
    for (auto it = stages.begin(); it != stages.end();)
      if (it->first == "tune") ms += it->second, it = stages.erase(it);
      else ++it;
    return ms;
  }

  // Frees the float data of the graph's large constants (shape and dtype stay):
  // the CPU and CUDA backends copy what they need while compiling and never
  // read the graph's weights afterwards. The reference backend runs on them.
  bool released = false;
  void release_constants() {
    if (options.keep_constants || options.backend == Backend::Reference) return;
    for (Value& v : graph.values)
      if (v.constant && v.constant->dtype == DType::F32 && v.constant->f.size() >= 1024) release_constant(v);
  }
  void release_constant(Value& v) {
    TensorData shell;
    shell.dtype = v.constant->dtype;
    shell.shape = v.constant->shape;
    v.constant = std::make_shared<const TensorData>(std::move(shell));
    released = true;
  }
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::from_graph(Graph graph, const std::string& source, const EngineOptions& options) {
  return from_graph(std::move(graph), source, options, {});
}

Model Model::from_graph(Graph graph, const std::string& source, const EngineOptions& options,
                        std::vector<std::pair<std::string, double>> load_ms) {
  auto impl = std::make_unique<Impl>();
  impl->info.load_ms = std::move(load_ms);
  detail::StageClock clock(&impl->info.load_ms);
  impl->options = options;
  impl->info.source = source;
  impl->info.name = graph.name;
  impl->info.nodes_imported = static_cast<int>(graph.nodes.size());
  impl->info.opset = graph.opset;
  std::map<std::string, int> ops;
  for (const Node& n : graph.nodes) ++ops[n.op];
  impl->info.operators.assign(ops.begin(), ops.end());
  if (graph.outputs.empty()) throw Error(ErrorKind::Unsupported, source + ": the network has no output");
  const bool symbolic_batch = graph.inputs.size() == 1 && !graph.value(graph.inputs[0]).shape.empty() &&
                              graph.value(graph.inputs[0]).shape[0] == -1 && options.input_shapes.empty();
  Graph whole_batch_graph;  // the imported graph, for a micro-batch's compile
  if (symbolic_batch && options.batch > 1 && options.backend == Backend::Cpu && graph.outputs.size() == 1) whole_batch_graph = graph;
  std::vector<Shape> file_shapes;  // (and the outputs' names: passes may replace their values)
  std::vector<std::string> out_names;
  for (const int v : graph.inputs) file_shapes.push_back(graph.value(v).shape);
  for (const int v : graph.outputs) out_names.push_back(graph.value(v).name);
  try {
    set_input_shapes(graph, options.input_shapes);
    set_batch(graph, options.batch, options.limits);
    detail::optimize(graph, options.limits, options.optimize, &impl->info.passes);
    for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
      const Value& v = graph.value(graph.inputs[i]);
      impl->inputs.push_back({v.name, graph.input_type(i), v.shape, file_shapes.at(i)});
    }
    for (std::size_t i = 0; i < graph.outputs.size(); ++i) {
      const Value& v = graph.value(graph.outputs[i]);
      const ElementType t = graph.output_type(i);
      if (dtype_of(t) != v.dtype)
        throw Error(ErrorKind::BadInput, "output '" + out_names.at(i) + "' is declared " + to_string(t) + " but computes " + to_string(v.dtype));
      impl->outputs.push_back({out_names.at(i), t, v.shape, v.shape});
    }
    impl->in_shape = graph.inputs.empty() ? Shape{} : graph.value(graph.inputs[0]).shape;
    impl->out_shape = graph.value(graph.outputs[0]).shape;
    impl->run_batch = impl->in_shape.empty() ? 1 : std::max<std::int64_t>(impl->in_shape[0], 1);
    if (!whole_batch_graph.nodes.empty()) {
      const std::int64_t k = micro_batch(graph, options, impl->info.passes);
      // (Gone before compiling either way, in this scope: it shares the
      // weights, which compiling without keep_constants frees one by one.)
      Graph g = std::move(whole_batch_graph);
      if (k < options.batch) {
        set_batch(g, k, options.limits);
        detail::optimize(g, options.limits, options.optimize, nullptr);
        const Shape& out = g.value(g.outputs[0]).shape;
        if (!out.empty() && out[0] == k && !impl->out_shape.empty() && impl->out_shape[0] == options.batch) {
          graph = std::move(g);
          impl->run_batch = k;
        }
      }
    }
  } catch (const Error& e) {
    throw Error(e.kind(), source + ": " + e.what());
  }
  clock.lap("passes");
  std::vector<bool> read(graph.values.size(), false);  // (what passes replaced is not counted)
  for (const Node& n : graph.nodes)
    for (const int v : n.inputs)
      if (v >= 0) read[static_cast<std::size_t>(v)] = true;
  for (std::size_t v = 0; v < graph.values.size(); ++v)
    if (read[v] && graph.values[v].constant && graph.values[v].dtype == DType::F32)
      impl->info.weight_bytes += graph.values[v].constant->numel() * 4;
  impl->graph = std::move(graph);
  impl->compile();
  impl->release_constants();
  clock.lap("compile");
  // The backend's tuning is part of that time: said apart.
  const double tune_ms = impl->take_tune_ms();
  impl->info.load_ms.back().second -= tune_ms;
  impl->info.load_ms.emplace_back("tune", tune_ms);
  impl->info.peak_rss_bytes = detail::peak_rss_bytes();
  if (options.backend == Backend::Cpu) {
    const int t = resolve_threads(options.threads);
    impl->info.passes.push_back("threads: " + (options.threads > 0 ? std::to_string(t) + " (asked)" : detail::cpu_grant().why()) +
                                (t > 1 && options.adapt_threads ? "; a run takes one instead while that is measured faster (the CPUs busy)"
                                                                : ""));
  }
  // Said where timings are read, so that none is taken with one set unknowingly.
  for (const std::string& v : detail::debug_env_in_effect()) impl->info.passes.push_back("debug environment: " + v);
  return Model(std::move(impl));
}

const Shape& Model::input_shape() const { return impl_->in_shape; }
const Shape& Model::output_shape() const { return impl_->out_shape; }
std::size_t Model::input_size() const { return static_cast<std::size_t>(numel(input_shape())); }
std::size_t Model::output_size() const { return static_cast<std::size_t>(numel(output_shape())); }
const ModelInfo& Model::info() const { return impl_->info; }
const Graph& Model::graph() const { return impl_->graph; }

const std::vector<TensorInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_->outputs; }

namespace {

// A caller's tensor as the graph holds it, checked against what the input takes.
TensorData to_graph(const TensorInfo& want, const Tensor& t) {
  if (t.type != want.type)
    throw Error(ErrorKind::InvalidArgument, "input '" + want.name + "' is " + to_string(want.type) + ", not " + to_string(t.type));
  if (t.shape != want.shape)
    throw Error(ErrorKind::InvalidArgument, "input '" + want.name + "' takes shape " + shape_str(want.shape) + ", not " + shape_str(t.shape));
  const auto n = static_cast<std::size_t>(numel(t.shape));
  const bool flt = t.type == ElementType::Float32;
  if ((flt ? t.f.size() : t.i.size()) != n)
    throw Error(ErrorKind::InvalidArgument, "input '" + want.name + "' holds " + std::to_string(flt ? t.f.size() : t.i.size()) +
                                                " values for shape " + shape_str(t.shape));
  if (flt) return TensorData::f32(t.shape, t.f);
  TensorData d = TensorData::i64(t.shape, t.i);
  if (t.type == ElementType::Bool)
    for (std::int64_t& v : d.i) v = v != 0;
  return d;
}

// An output as its declared type holds it (int32 and narrower wrap as those types do).
Tensor from_graph_value(const TensorInfo& info, TensorData&& d) {
  Tensor t;
  t.type = info.type;
  t.shape = std::move(d.shape);
  t.f = std::move(d.f);
  t.i = std::move(d.i);
  for (std::int64_t& v : t.i) switch (info.type) {
      case ElementType::Int32: v = static_cast<std::int32_t>(static_cast<std::uint64_t>(v)); break;
      case ElementType::Bool: v = v != 0; break;
      case ElementType::UInt8: v = static_cast<std::uint8_t>(v); break;
      case ElementType::Int8: v = static_cast<std::int8_t>(static_cast<std::uint8_t>(v)); break;
      case ElementType::Int16: v = static_cast<std::int16_t>(static_cast<std::uint16_t>(v)); break;
      case ElementType::UInt16: v = static_cast<std::uint16_t>(v); break;
      case ElementType::UInt32: v = static_cast<std::uint32_t>(v); break;
      default: break;
    }
  return t;
}

}  // namespace

std::vector<Tensor> Model::run(const std::map<std::string, Tensor>& feeds) {
  Impl& m = *impl_;
  for (const auto& [name, t] : feeds) {
    bool known = false;
    for (const TensorInfo& i : m.inputs) known = known || i.name == name;
    if (!known) {
      std::string names;
      for (const TensorInfo& i : m.inputs) names += (names.empty() ? "'" : ", '") + i.name + "'";
      throw Error(ErrorKind::InvalidArgument, "the network has no input '" + name + "' (its inputs: " + (names.empty() ? "none" : names) + ")");
    }
  }
  std::vector<TensorData> in;
  for (const TensorInfo& i : m.inputs) {
    const auto it = feeds.find(i.name);
    if (it == feeds.end()) throw Error(ErrorKind::InvalidArgument, "input '" + i.name + "' is not given");
    in.push_back(to_graph(i, it->second));
  }
  std::vector<TensorData> out;
  if (m.reference) {
    out = m.reference->run_all(std::move(in));
  } else if (m.outputs.size() == 1) {
    out.push_back(TensorData::f32(m.out_shape, std::vector<float>(output_size())));
    run(in.at(0).f.data(), out[0].f.data());
  } else {
    std::vector<float*> bufs;
    for (const TensorInfo& o : m.outputs) out.push_back(TensorData::f32(o.shape, std::vector<float>(static_cast<std::size_t>(numel(o.shape)))));
    for (TensorData& t : out) bufs.push_back(t.f.data());
    m.exec->run_outputs(in.at(0).f.data(), bufs);
  }
  std::vector<Tensor> res;
  for (std::size_t o = 0; o < out.size(); ++o) res.push_back(from_graph_value(m.outputs.at(o), std::move(out[o])));
  return res;
}

void Model::run(const float* input, float* output) {
  Impl& m = *impl_;
  m.need_image_api("run");
  if (m.run_batch == batch()) return m.exec->run(input, output);
  m.each_run(input, output, [&](const float* x, float* y) { m.exec->run(x, y); });
}

std::int64_t Model::batch() const { return input_shape().empty() ? 1 : std::max<std::int64_t>(input_shape()[0], 1); }

void Model::run_items(const float* input, std::int64_t count, float* output) {
  if (count < 0) throw Error(ErrorKind::InvalidArgument, "run_items: count " + std::to_string(count));
  const std::int64_t b = batch();
  Impl& m = *impl_;
  m.need_image_api("run_items");
  if (count == b) return run(input, output);
  // Item by item only where the output's first dimension is the batch.
  if (m.in_shape.empty() || m.out_shape.empty() || m.out_shape[0] != m.in_shape[0])
    throw Error(ErrorKind::InvalidArgument, "the network's output " + shape_str(m.out_shape) + " is not one per item of its input " +
                                                shape_str(m.in_shape) + ": give exactly " + std::to_string(b) + " item(s)");
  in_runs(input, count, b, input_size() / static_cast<std::size_t>(b), output_size() / static_cast<std::size_t>(b), output, m.pad_in,
          m.pad_out, [this](const float* x, float* y) { run(x, y); });
}

void Model::run_image(const ImageView<std::uint8_t>& rgb, const Preset& preset, float* output) {
  const std::int64_t S = preset.size;
  const Shape want = preset.layout == Layout::NCHW ? Shape{1, 3, S, S} : Shape{1, S, S, 3};
  if (want != input_shape())
    throw Error(ErrorKind::InvalidArgument, "preset '" + preset.name + "' makes " + shape_str(want) +
                                                " but the model takes " + shape_str(input_shape()));
  if (rgb.channels != 3) throw Error(ErrorKind::InvalidArgument, "run_image: expects an RGB image");
  Impl& m = *impl_;
  m.need_image_api("run_image");
  if (m.exec->run_image(rgb, preset, output)) return;
  if (!m.pre || !detail::same_preprocessing(m.pre->preset(), preset)) m.pre = std::make_unique<Preprocessor>(preset, 1);
  m.pre_tensor.resize(input_size());
  m.pre->run(rgb, m.pre_tensor.data());
  run(m.pre_tensor.data(), output);
}

std::vector<LayerProfile> Model::profile(const float* input, float* output) {
  Impl& m = *impl_;
  m.need_image_api("profile");
  if (m.run_batch == batch()) return m.exec->profile(input, output);
  // Each micro-batch's run timed; a layer's time and work summed over them.
  std::vector<LayerProfile> sum;
  m.each_run(input, output, [&](const float* x, float* y) {
    std::vector<LayerProfile> p = m.exec->profile(x, y);
    if (sum.empty()) sum = std::move(p);
    else
      for (std::size_t i = 0; i < sum.size() && i < p.size(); ++i)
        sum[i].ms += p[i].ms, sum[i].flops += p[i].flops, sum[i].weight_bytes += p[i].weight_bytes;
  });
  return sum;
}
std::vector<std::pair<std::string, double>> Model::last_run_stages() { return impl_->exec->stage_times(); }
int Model::threads() const { return resolve_threads(impl_->options.threads); }
std::array<std::int64_t, 2> Model::team_runs() const { return impl_->exec->team_runs(); }

Calibration Model::calibration() const {
  const Impl& m = *impl_;
  const std::vector<std::pair<int, ActivationRange>> ranges = m.exec->ranges();
  if (!m.options.record_ranges || ranges.empty() || m.exec->runs() == 0)
    throw Error(ErrorKind::InvalidArgument, "calibration(): load the model with record_ranges and run it on some images first");
  if (m.released) throw Error(ErrorKind::InvalidArgument, "calibration(): needs the graph's weights (keep_constants)");
  const Graph& g = m.graph;
  Calibration c;
  c.model = g.name;
  c.fingerprint = calibration_fingerprint(g);
  c.images = static_cast<int>(std::min<std::int64_t>(m.exec->runs() * m.run_batch, 1 << 30));
  for (const auto& [v, r] : ranges) {
    if (!std::isfinite(r.min) || !std::isfinite(r.max))
      throw Error(ErrorKind::BadInput, "calibration(): the values of '" + g.value(v).name +
                                           "' are not finite on these images (the network overflows)");
    c.activations[g.value(v).name] = r;
  }
  // Per output channel, max|w| / 127 (1 for a channel of zeros): a Conv's
  // [oc, ...] weights by rows, a fully connected layer's by its outputs.
  for (const Node& n : g.nodes) {
    if (n.inputs.size() < 2 || !c.activations.count(g.value(n.inputs[0]).name)) continue;
    const TensorData* w = g.constant(n.inputs[1]);
    if (!w || w->shape.empty() || w->shape[0] <= 0) continue;
    std::vector<float>& s = c.weight_scales[n.name];
    if (n.op == "Conv") {
      const auto oc = static_cast<std::size_t>(w->shape[0]);
      const std::size_t per = w->f.size() / oc;
      s.assign(oc, 0.f);
      for (std::size_t o = 0; o < oc; ++o)
        for (std::size_t i = 0; i < per; ++i) s[o] = std::max(s[o], std::fabs(w->f[o * per + i]));
    } else {
      const detail::DenseParams dp = detail::dense_params(g, n);
      const TensorData& t = dp.kn ? *dp.kn : dp.weights();  // [K, N] or [N, K]
      s.assign(static_cast<std::size_t>(dp.N), 0.f);
      for (std::size_t i = 0; i < t.f.size(); ++i) {
        float& m_abs = s[dp.kn ? i % static_cast<std::size_t>(dp.N) : i / static_cast<std::size_t>(dp.K)];
        m_abs = std::max(m_abs, std::fabs(t.f[i]));
      }
    }
    for (float& v : s) v = v > 0 ? v / 127.f : 1.f;
  }
  return c;
}

void Model::set_threads(int threads) {
  if (threads == impl_->options.threads) return;
  if (impl_->released)
    throw Error(ErrorKind::InvalidArgument,
                "set_threads: the model was loaded with keep_constants = false; load it again with the thread count");
  impl_->options.threads = threads;
  impl_->exec.reset();
  impl_->compile();
  impl_->take_tune_ms();  // oneDNN sizes its work for the thread count at creation
}

Preset model_preset(const Model& m, const std::string& name) {
  const Shape& in = m.input_shape();
  if (in.size() != 4 || in[0] < 1) throw Error(ErrorKind::Unsupported, "model input " + shape_str(in) + " is not a batch of images");
  const bool nchw = in[1] == 3;
  const std::int64_t size = nchw ? in[2] : in[1];
  if ((nchw && in[3] != size) || (!nchw && (in[3] != 3 || in[2] != size)))
    throw Error(ErrorKind::Unsupported, "model input " + shape_str(in) + " is not a square 3-channel image");
  Preset p = preset(name, static_cast<int>(size));
  if ((p.layout == Layout::NCHW) != nchw)
    throw Error(ErrorKind::InvalidArgument, "preset '" + name + "' produces " + (nchw ? "NHWC" : "NCHW") + " but the model takes " + shape_str(in));
  return p;
}

bool Model::outputs_probabilities() const {
  const Graph& g = graph();
  for (const Node& n : g.nodes)
    if (n.op == "Softmax" && !n.outputs.empty() && n.outputs[0] == g.outputs[0]) return true;
  return false;
}

}  // namespace vinfer
