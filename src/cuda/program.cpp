// The CUDA backend: the optimized graph as a list of ops over one device
// arena, all tensors plain NCHW float32. Convolutions run through cuDNN
// (bias, ReLU and a residual add fused where cuDNN's fused call takes them,
// else one epilogue kernel); Gemm/MatMul through cuBLAS; everything else is
// vinfer's kernels (kernels.cu). DenseNet's concatenations are views: at
// batch 1 a channel range of an NCHW tensor is one contiguous slice.
//
// run(): the user's input is copied to pinned memory, then one CUDA graph
// replays upload, every kernel and download; the stream is synchronised and
// the pinned output copied back. FP32 throughout: TF32 only when asked.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>

#include "cuda/cuda_backend.hpp"
#include "cuda/kernels.hpp"
#include "graph/activation.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"
#include "image/fused_prep.hpp"
#include "backend/concat_views.hpp"
#include "backend/memory_plan.hpp"
#include "vinfer/error.hpp"
#include "util/debug_env.hpp"

namespace vinfer::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(ErrorKind::Internal, std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}
void check(cudnnStatus_t e, const char* what) {
  if (e != CUDNN_STATUS_SUCCESS) throw Error(ErrorKind::Internal, std::string("cuDNN: ") + what + ": " + cudnnGetErrorString(e));
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw Error(ErrorKind::Internal, std::string("cuBLAS: ") + what + ": status " + std::to_string(static_cast<int>(e)));
}
#define VINFER_CU(expr) check((expr), #expr)

// cuBLAS, opened on first use instead of linked: libcublasLt's static
// initializers cost every process that links it ~0.15 s and ~210 MB of
// memory at start (an empty program linked with it, on the development
// machine), CPU-only runs and `vinfer resize` included.
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetProperty) get_property = nullptr;
};

const Cublas& cublas() {
  static const Cublas api = [] {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw Error(ErrorKind::Unsupported, "CUDA backend: cannot load " + name + ": " + dlerror());
    const auto sym = [&](auto& fn, const char* symbol) {
      void* p = dlsym(lib, symbol);
      if (!p) throw Error(ErrorKind::Unsupported, "CUDA backend: " + name + " lacks " + symbol);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    Cublas c;
    sym(c.create, "cublasCreate_v2");
    sym(c.destroy, "cublasDestroy_v2");
    sym(c.set_stream, "cublasSetStream_v2");
    sym(c.set_math_mode, "cublasSetMathMode");
    sym(c.set_workspace, "cublasSetWorkspace_v2");
    sym(c.sgemm, "cublasSgemm_v2");
    sym(c.get_property, "cublasGetProperty");
    return c;
  }();
  return api;
}

[[noreturn]] void unsupported(const Node& n, const std::string& what) {
  throw Error(ErrorKind::Unsupported, n.label() + ": " + what + " is not supported by the CUDA backend");
}

// Device memory owned by the program.
struct DeviceBuffer {
  void* ptr = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) { VINFER_CU(cudaMalloc(&ptr, std::max<std::size_t>(bytes, 256))); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr) { o.ptr = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr, o.ptr);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  float* f() const { return static_cast<float*>(ptr); }
};

DeviceBuffer upload(const std::vector<float>& v) {
  DeviceBuffer b(v.size() * sizeof(float));
  VINFER_CU(cudaMemcpy(b.ptr, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return b;
}

k::PostOps post_ops(const Node& n, std::size_t from = 0) {
  k::PostOps p;
  for (std::size_t i = from; i < n.post_ops.size(); ++i) {
    if (p.count == 4) unsupported(n, "more than four fused post-ops");
    const PostOp& o = n.post_ops[i];
    p.kind[p.count] = static_cast<int>(o.kind);
    p.alpha[p.count] = o.alpha;
    p.beta[p.count] = o.beta;
    ++p.count;
  }
  return p;
}

struct Handles {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
  bool tf32 = false;
};

// One step of the forward pass. Activation pointers are bound after planning.
class Op {
 public:
  virtual ~Op() = default;
  std::string name, impl;
  double flops = 0;
  std::vector<std::pair<int, float**>> slots;  // arena buffer -> the pointer to fill
  virtual void launch(const Handles& h) = 0;
};

class ConvOp final : public Op {
 public:
  cudnnTensorDescriptor_t xd{}, yd{}, bd{};
  cudnnFilterDescriptor_t wd{};
  cudnnConvolutionDescriptor_t cd{};
  cudnnActivationDescriptor_t ad{};
  cudnnConvolutionFwdAlgo_t algo{};
  DeviceBuffer w, b;
  float *x = nullptr, *y = nullptr, *z = nullptr;  // z: the residual operand of a fused Sum
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  bool fused = false;  // one cudnnConvolutionBiasActivationForward call
  k::PostOps epilogue;
  std::int64_t channels = 0, inner = 0, total = 0;
  bool has_bias = false;

  ~ConvOp() override {
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroyActivationDescriptor(ad);
  }

  k::PostOps all_post;  // the node's post-ops, for falling back from the fused call

  void launch(const Handles& h) override {
    const float one = 1.f, zero = 0.f, alpha2 = z ? 1.f : 0.f;
    if (fused) {
      const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(h.cudnn, &one, xd, x, wd, w.f(), cd, algo, workspace,
                                                                     workspace_bytes, &alpha2, yd, z ? z : y, bd, b.f(), ad, yd, y);
      if (st == CUDNN_STATUS_SUCCESS) return;
      // Some algorithms refuse the fused call (seen in cuDNN's notes for identity
      // activations); the first (uncaptured) run finds out, and the op falls back
      // to a plain convolution plus the epilogue kernel from then on.
      if (st != CUDNN_STATUS_NOT_SUPPORTED && st != CUDNN_STATUS_BAD_PARAM) check(st, "cudnnConvolutionBiasActivationForward");
      fused = false;
      epilogue = all_post;
      impl += " (fused call refused: unfused)";
    }
    VINFER_CU(cudnnConvolutionForward(h.cudnn, &one, xd, x, wd, w.f(), cd, algo, workspace, workspace_bytes, &zero, yd, y));
    if (has_bias || epilogue.count > 0)
      k::affine_post(y, y, nullptr, has_bias ? b.f() : nullptr, channels, inner, total, z, epilogue, h.stream);
  }
};

class KernelOp final : public Op {
 public:
  std::function<void(cudaStream_t)> fn;
  void launch(const Handles& h) override { fn(h.stream); }
};

class Program final : public detail::Executor {
 public:
  Program(const Graph& g, const EngineOptions& o) : g_(g), opt_(o) {}

  ~Program() override {
    ops_.clear();
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    if (body_exec_) cudaGraphExecDestroy(body_exec_);
    if (body_graph_) cudaGraphDestroy(body_graph_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);  // after the graphs that record them
    if (pinned_img_) cudaFreeHost(pinned_img_);
    if (pinned_in_) cudaFreeHost(pinned_in_);
    if (pinned_out_) cudaFreeHost(pinned_out_);
    if (h_.cublas) cublas().destroy(h_.cublas);
    if (h_.cudnn) cudnnDestroy(h_.cudnn);
    if (h_.stream) cudaStreamDestroy(h_.stream);
  }

  void build(ModelInfo& info) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      throw Error(ErrorKind::Unsupported, std::string("no CUDA device (") + (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")");
    if (opt_.device < 0 || opt_.device >= count)
      throw Error(ErrorKind::InvalidArgument, "CUDA device " + std::to_string(opt_.device) + " does not exist (" + std::to_string(count) + " found)");
    VINFER_CU(cudaSetDevice(opt_.device));
    VINFER_CU(cudaStreamCreateWithFlags(&h_.stream, cudaStreamNonBlocking));
    VINFER_CU(cudnnCreate(&h_.cudnn));
    VINFER_CU(cudnnSetStream(h_.cudnn, h_.stream));
    VINFER_CU(cublas().create(&h_.cublas));
    VINFER_CU(cublas().set_stream(h_.cublas, h_.stream));
    VINFER_CU(cublas().set_math_mode(h_.cublas, opt_.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH));
    // A workspace of our own, so that cuBLAS allocates nothing while the graph is captured.
    cublas_workspace_ = DeviceBuffer(std::size_t{8} << 20);
    VINFER_CU(cublas().set_workspace(h_.cublas, cublas_workspace_.ptr, std::size_t{8} << 20));
    h_.tf32 = opt_.allow_tf32;

    const std::vector<bool> reshaped = detail::reshape_products(g_);
    views_ = detail::plan_concat_views(
        g_,
        [&](int v) {
          const Value& val = g_.value(v);
          return val.dtype == DType::F32 && val.shape.size() == 4 && val.shape[0] == 1 && !reshaped[static_cast<std::size_t>(v)];
        },
        [&](int v) { return bytes_of(v); });
    info.concats_in_place = views_.count;

    in_buf_ = value_buffer(g_.inputs.at(0));
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (views_.node_is_view[i]) {
        value_buffer(g_.nodes[i].outputs[0]);
        continue;
      }
      dispatch(g_.nodes[i]);
    }
    const int out = g_.outputs.at(0);
    if (g_.value(out).is_constant()) throw Error(ErrorKind::Unsupported, "the network output is a constant");
    out_buf_ = value_buffer(out);
    plan(info);
    in_bytes_ = static_cast<std::size_t>(bytes_of(g_.inputs[0]));
    out_bytes_ = static_cast<std::size_t>(bytes_of(out));
    VINFER_CU(cudaMallocHost(&pinned_in_, in_bytes_));
    VINFER_CU(cudaMallocHost(&pinned_out_, out_bytes_));
    events_.resize(5);
    for (cudaEvent_t& ev : events_) VINFER_CU(cudaEventCreate(&ev));
    // One plain pass first (cuDNN and cuBLAS may set up lazily), then capture.
    enqueue(true);
    VINFER_CU(cudaStreamSynchronize(h_.stream));
    VINFER_CU(cudaGetLastError());  // a kernel that failed to launch
    capture(true, graph_, exec_);
    info.nodes_executed = static_cast<int>(ops_.size());
    info.kernels.clear();
    for (const auto& op : ops_) info.kernels.emplace_back(op->name, op->impl);
  }

  void run(const float* input, float* output) override {
    image_mode_ = false;
    if (in_bytes_) std::memcpy(pinned_in_, input, in_bytes_);
    if (exec_) VINFER_CU(cudaGraphLaunch(exec_, h_.stream));
    else enqueue(true);
    VINFER_CU(cudaStreamSynchronize(h_.stream));
    if (!exec_) VINFER_CU(cudaGetLastError());
    if (out_bytes_) std::memcpy(output, pinned_out_, out_bytes_);
  }

  std::vector<detail::OpProfile> profile(const float* input, float* output) override {
    if (in_bytes_) std::memcpy(pinned_in_, input, in_bytes_);
    std::vector<detail::OpProfile> prof;
    auto timed = [&](const std::string& name, const std::string& impl, double flops, const std::function<void()>& f) {
      VINFER_CU(cudaEventRecord(events_[0], h_.stream));
      f();
      VINFER_CU(cudaEventRecord(events_[1], h_.stream));
      VINFER_CU(cudaEventSynchronize(events_[1]));
      float ms = 0;
      VINFER_CU(cudaEventElapsedTime(&ms, events_[0], events_[1]));
      prof.push_back({name, impl, ms, flops});
    };
    timed("upload", "cudaMemcpyAsync", 0, [&] { upload_input(); });
    for (auto& op : ops_) timed(op->name, op->impl, op->flops, [&] { op->launch(h_); });
    timed("download", "cudaMemcpyAsync", 0, [&] { download_output(); });
    VINFER_CU(cudaStreamSynchronize(h_.stream));
    if (out_bytes_) std::memcpy(output, pinned_out_, out_bytes_);
    return prof;
  }

  int kernels() const override { return static_cast<int>(ops_.size()); }

  // The u8 image to pinned memory, one copy to the device, the fused
  // preprocessing kernel into the input buffer, then the forward pass and
  // download as a second CUDA graph (captured on first use).
  bool run_image(const ImageView<std::uint8_t>& rgb, const Preset& p, float* output) override {
    if (!detail::can_fuse(p) || rgb.channels != 3) return false;
    prepare_image(rgb, p);
    const std::size_t row = static_cast<std::size_t>(rgb.width) * 3, bytes = row * rgb.height;
    for (int y = 0; y < rgb.height; ++y) std::memcpy(static_cast<std::uint8_t*>(pinned_img_) + y * row, rgb.row(y), row);
    detail::FusedPrepArgs a = prep_->shape;
    const auto* t = static_cast<const std::int32_t*>(prep_tables_.ptr);
    a.start_x = t;
    a.weight_x = a.start_x + prep_->start_x.size();
    a.start_y = a.weight_x + prep_->weight_x.size();
    a.weight_y = a.start_y + prep_->start_y.size();
    a.table = reinterpret_cast<const float*>(a.weight_y + prep_->weight_y.size());
    a.src = static_cast<const std::uint8_t*>(dev_img_.ptr);
    a.src_stride = static_cast<long long>(row);
    a.out = static_cast<float*>(arena_ptr(in_buf_));
    VINFER_CU(cudaEventRecord(events_[0], h_.stream));
    VINFER_CU(cudaMemcpyAsync(dev_img_.ptr, pinned_img_, bytes, cudaMemcpyHostToDevice, h_.stream));
    VINFER_CU(cudaEventRecord(events_[4], h_.stream));
    k::fused_prep(a, h_.stream);
    if (body_exec_) VINFER_CU(cudaGraphLaunch(body_exec_, h_.stream));
    else enqueue(true, false);
    VINFER_CU(cudaStreamSynchronize(h_.stream));
    VINFER_CU(cudaGetLastError());
    if (out_bytes_) std::memcpy(output, pinned_out_, out_bytes_);
    image_mode_ = true;
    return true;
  }

  // Upload, [preprocess,] compute and download of the last run (CUDA events).
  std::vector<std::pair<std::string, double>> stage_times() override {
    float up = 0, prep = 0, compute = 0, down = 0;
    const bool ok = image_mode_ ? cudaEventElapsedTime(&up, events_[0], events_[4]) == cudaSuccess &&
                                      cudaEventElapsedTime(&prep, events_[4], events_[1]) == cudaSuccess
                                : cudaEventElapsedTime(&up, events_[0], events_[1]) == cudaSuccess;
    if (!ok || cudaEventElapsedTime(&compute, events_[1], events_[2]) != cudaSuccess ||
        cudaEventElapsedTime(&down, events_[2], events_[3]) != cudaSuccess) {
      cudaGetLastError();  // not a kernel's error: keep it from the next run's launch check
      return {};
    }
    if (image_mode_) return {{"upload", up}, {"preprocess", prep}, {"compute", compute}, {"download", down}};
    return {{"upload", up}, {"compute", compute}, {"download", down}};
  }

 private:
  // The fused tables for this preset and image size (uploaded when either
  // changes), room for the image, and the forward-pass graph without upload.
  void prepare_image(const ImageView<std::uint8_t>& rgb, const Preset& p) {
    if (!(prep_ && prep_->src_w == rgb.width && prep_->src_h == rgb.height && detail::same_preprocessing(prep_preset_, p))) {
      prep_ = std::make_unique<detail::FusedPrep>(detail::make_fused_prep(p, rgb.width, rgb.height));
      prep_preset_ = p;
      std::vector<std::int32_t> host;
      for (const auto* v : {&prep_->start_x, &prep_->weight_x, &prep_->start_y, &prep_->weight_y})
        host.insert(host.end(), v->begin(), v->end());
      static_assert(sizeof(float) == sizeof(std::int32_t));
      const std::size_t ints = host.size();
      host.resize(ints + prep_->table.size());
      std::memcpy(host.data() + ints, prep_->table.data(), prep_->table.size() * sizeof(float));
      const std::size_t bytes = host.size() * sizeof(std::int32_t);
      if (bytes > prep_tables_bytes_) {
        prep_tables_ = DeviceBuffer(bytes);
        prep_tables_bytes_ = bytes;
      }
      VINFER_CU(cudaMemcpy(prep_tables_.ptr, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    const std::size_t img = static_cast<std::size_t>(rgb.width) * rgb.height * 3;
    if (img > img_bytes_) {
      if (pinned_img_) cudaFreeHost(pinned_img_);
      pinned_img_ = nullptr;
      img_bytes_ = 0;
      VINFER_CU(cudaMallocHost(&pinned_img_, img));
      dev_img_ = DeviceBuffer(img);
      img_bytes_ = img;
    }
    if (!body_exec_) capture(false, body_graph_, body_exec_);
  }

  // The forward pass (with or without the input upload) as a CUDA graph,
  // unless VINFER_CUDA_GRAPH=0 (then run_* enqueue it op by op).
  void capture(bool with_upload, cudaGraph_t& graph, cudaGraphExec_t& exec) {
    if (detail::debug_env_is(detail::DebugVar::CudaGraph, "0")) return;
    VINFER_CU(cudaStreamBeginCapture(h_.stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(true, with_upload);
    } catch (...) {
      cudaGraph_t discard = nullptr;
      cudaStreamEndCapture(h_.stream, &discard);
      if (discard) cudaGraphDestroy(discard);
      throw;
    }
    VINFER_CU(cudaStreamEndCapture(h_.stream, &graph));
    VINFER_CU(cudaGraphInstantiate(&exec, graph, 0));
  }

  std::int64_t bytes_of(int v) const { return numel(g_.value(v).shape) * static_cast<std::int64_t>(sizeof(float)); }

  void upload_input() {
    VINFER_CU(cudaMemcpyAsync(arena_ptr(in_buf_), pinned_in_, in_bytes_, cudaMemcpyHostToDevice, h_.stream));
  }
  void download_output() {
    VINFER_CU(cudaMemcpyAsync(pinned_out_, arena_ptr(out_buf_), out_bytes_, cudaMemcpyDeviceToHost, h_.stream));
  }

  // Records event i on the stream. Inside a capture the record must be an
  // external event node: a plain record there only orders the capture's
  // streams, and the event would never be recorded when the graph runs.
  void record(int i) {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    VINFER_CU(cudaStreamIsCapturing(h_.stream, &capturing));
    VINFER_CU(cudaEventRecordWithFlags(events_[static_cast<std::size_t>(i)], h_.stream,
                                       capturing == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : 0));
  }

  // with_upload false: the input is already on the device (run_image).
  void enqueue(bool with_events, bool with_upload = true) {
    if (with_upload) {
      if (with_events) record(0);
      upload_input();
    }
    if (with_events) record(1);
    for (auto& op : ops_) op->launch(h_);
    if (with_events) record(2);
    download_output();
    if (with_events) record(3);
  }

  // The arena buffer of a runtime value (a view into its concatenation's buffer where planned).
  int value_buffer(int v) {
    auto it = buffer_of_.find(v);
    if (it != buffer_of_.end()) return it->second;
    if (g_.value(v).is_constant()) throw Error(ErrorKind::Unsupported, "constant '" + g_.value(v).name + "' used as an activation");
    detail::PlanBuffer b;
    b.bytes = bytes_of(v);
    const int root = views_.root[static_cast<std::size_t>(v)];
    if (root >= 0) {
      b.alias_of = value_buffer(root);
      b.offset = views_.offset[static_cast<std::size_t>(v)];
    }
    bufs_.push_back(b);
    const int id = static_cast<int>(bufs_.size()) - 1;
    buffer_of_[v] = id;
    return id;
  }

  void alias(int value, int source) {
    detail::PlanBuffer b;
    b.bytes = bytes_of(value);
    b.alias_of = value_buffer(source);
    bufs_.push_back(b);
    buffer_of_[value] = static_cast<int>(bufs_.size()) - 1;
  }

  void* arena_ptr(int buffer) const { return static_cast<char*>(arena_.ptr) + plan_.address[static_cast<std::size_t>(buffer)]; }

  // Binds `slot` to value v's device pointer once planned.
  void bind(Op& op, int v, float** slot) { op.slots.push_back({value_buffer(v), slot}); }

  // The operators this backend runs (besides every activation and reshape),
  // each to its builder; the rest are refused, naming the node.
  using Builder = void (Program::*)(const Node&);
  static const std::map<std::string_view, Builder>& kernel_table() {
    static const std::map<std::string_view, Builder> table = {
        {"Conv", &Program::conv},
        {"vinfer.ScaleShift", &Program::scale_shift},
        {"MaxPool", &Program::pool},
        {"AveragePool", &Program::pool},
        {"GlobalAveragePool", &Program::global_pool},
        {"ReduceMean", &Program::global_pool},
        {"Add", &Program::binary},
        {"Sub", &Program::binary},
        {"Mul", &Program::binary},
        {"Div", &Program::binary},
        {"Concat", &Program::concat},
        {"Gemm", &Program::gemm},
        {"MatMul", &Program::gemm},
        {"Softmax", &Program::softmax},
        {"Transpose", &Program::transpose},
        {"Identity", &Program::alias_node},
        {"Dropout", &Program::alias_node},
    };
    return table;
  }

  void dispatch(const Node& n) {
    if (detail::is_activation(n.op)) return unary(n);
    if (detail::is_reshape_op(n.op)) return alias_node(n);
    const auto& table = kernel_table();
    auto it = table.find(n.op);
    if (it == table.end()) unsupported(n, "operator " + n.op);
    (this->*(it->second))(n);
  }

  void alias_node(const Node& n) { alias(n.outputs[0], n.inputs[0]); }

  void conv(const Node& n) {
    const Shape& xs = g_.value(n.inputs[0]).shape;
    const Shape& ys = g_.value(n.outputs[0]).shape;
    const TensorData* w = g_.constant(n.inputs[1]);
    if (!w) unsupported(n, "a non-constant weight");
    const TensorData* b = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g_.constant(n.inputs[2]) : nullptr;
    if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !b) unsupported(n, "a non-constant bias");
    if (xs.size() != 4) unsupported(n, "a " + std::to_string(xs.size()) + "-D convolution");
    detail::WindowParams p = detail::conv_params(n, xs, w->shape);
    // cuDNN pads symmetrically: other padding is done first, into a scratch tensor.
    int src_buffer = value_buffer(n.inputs[0]);
    Shape src_shape = xs;
    if (p.pads_begin != p.pads_end) {
      src_shape[2] += p.pads_begin[0] + p.pads_end[0];
      src_shape[3] += p.pads_begin[1] + p.pads_end[1];
      detail::PlanBuffer tb;
      tb.bytes = numel(src_shape) * static_cast<std::int64_t>(sizeof(float));
      bufs_.push_back(tb);
      const int padded = static_cast<int>(bufs_.size()) - 1;
      auto pad = std::make_unique<KernelOp>();
      auto args = std::make_shared<std::array<float*, 2>>();
      pad->slots.push_back({src_buffer, &(*args)[0]});
      pad->slots.push_back({padded, &(*args)[1]});
      const std::int64_t planes = xs[0] * xs[1];
      const int h = static_cast<int>(xs[2]), wd = static_cast<int>(xs[3]), oh = static_cast<int>(src_shape[2]),
                ow = static_cast<int>(src_shape[3]), top = static_cast<int>(p.pads_begin[0]), left = static_cast<int>(p.pads_begin[1]);
      pad->fn = [=](cudaStream_t st) { k::pad2d((*args)[0], (*args)[1], planes, h, wd, oh, ow, top, left, st); };
      finish(std::move(pad), n, "vinfer:pad2d");
      ops_.back()->name = "pad for " + n.label();
      src_buffer = padded;
      p.pads_begin = p.pads_end = {0, 0};
    }
    const Shape& cs = src_shape;
    auto op = std::make_unique<ConvOp>();
    VINFER_CU(cudnnCreateTensorDescriptor(&op->xd));
    VINFER_CU(cudnnCreateTensorDescriptor(&op->yd));
    VINFER_CU(cudnnCreateTensorDescriptor(&op->bd));
    VINFER_CU(cudnnCreateFilterDescriptor(&op->wd));
    VINFER_CU(cudnnCreateConvolutionDescriptor(&op->cd));
    VINFER_CU(cudnnCreateActivationDescriptor(&op->ad));
    auto i = [](std::int64_t v) { return static_cast<int>(v); };
    VINFER_CU(cudnnSetTensor4dDescriptor(op->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(cs[0]), i(cs[1]), i(cs[2]), i(cs[3])));
    VINFER_CU(cudnnSetTensor4dDescriptor(op->yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(ys[0]), i(ys[1]), i(ys[2]), i(ys[3])));
    VINFER_CU(cudnnSetTensor4dDescriptor(op->bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, i(ys[1]), 1, 1));
    VINFER_CU(cudnnSetFilter4dDescriptor(op->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(w->shape[0]), i(w->shape[1]),
                                         i(w->shape[2]), i(w->shape[3])));
    VINFER_CU(cudnnSetConvolution2dDescriptor(op->cd, i(p.pads_begin[0]), i(p.pads_begin[1]), i(p.strides[0]), i(p.strides[1]),
                                              i(p.dilations[0]), i(p.dilations[1]), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    VINFER_CU(cudnnSetConvolutionGroupCount(op->cd, i(p.group)));
    // FMA math keeps FP32 exact; tensor cores (TF32) only when allowed.
    VINFER_CU(cudnnSetConvolutionMathType(op->cd, h_.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    VINFER_CU(cudnnSetActivationDescriptor(op->ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    op->w = upload(w->f);
    op->has_bias = b != nullptr;
    op->b = upload(b ? b->f : std::vector<float>(static_cast<std::size_t>(ys[1]), 0.f));
    op->channels = ys[1];
    op->inner = ys[2] * ys[3];
    op->total = numel(ys);
    choose_algo(*op, n, p);
    // cuDNN's fused call computes relu(conv + bias + z): post-ops [Relu] or [Sum, Relu].
    const auto& po = n.post_ops;
    const bool relu_last = !po.empty() && po.back().kind == PostOp::Relu;
    op->fused = relu_last && (po.size() == 1 || (po.size() == 2 && po[0].kind == PostOp::Sum));
    int sum_value = -1;
    for (const PostOp& o : po)
      if (o.kind == PostOp::Sum) {
        if (sum_value >= 0) unsupported(n, "two fused additions");
        sum_value = o.sum_input;
      }
    op->all_post = post_ops(n);
    if (!op->fused) op->epilogue = op->all_post;
    op->name = n.label();
    op->impl = std::string("cudnn:algo") + std::to_string(static_cast<int>(op->algo)) + (op->fused ? "+bias+relu" : "");
    op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(w->numel() / w->shape[0]);
    op->slots.push_back({src_buffer, &op->x});
    if (sum_value >= 0) bind(*op, sum_value, &op->z);
    bind(*op, n.outputs[0], &op->y);
    ops_.push_back(std::move(op));
  }

  // cuDNN's fastest algorithm for the shape, measured once per distinct shape.
  void choose_algo(ConvOp& op, const Node& n, const detail::WindowParams& p) {
    int xn, xc, xh, xw, yn, yc, yh, yw, ns, cs, hs, ws;
    cudnnDataType_t dt;
    VINFER_CU(cudnnGetTensor4dDescriptor(op.xd, &dt, &xn, &xc, &xh, &xw, &ns, &cs, &hs, &ws));
    VINFER_CU(cudnnGetTensor4dDescriptor(op.yd, &dt, &yn, &yc, &yh, &yw, &ns, &cs, &hs, &ws));
    std::string key = std::to_string(xc) + "x" + std::to_string(xh) + "x" + std::to_string(xw) + ">" + std::to_string(yc) + "x" +
                      std::to_string(yh) + "x" + std::to_string(yw);
    for (const auto* v : {&p.kernel, &p.strides, &p.pads_begin, &p.dilations})
      for (const std::int64_t e : *v) key.append(",").append(std::to_string(e));
    key += ",g" + std::to_string(p.group);
    auto it = algo_cache_.find(key);
    if (it == algo_cache_.end()) {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      VINFER_CU(cudnnFindConvolutionForwardAlgorithm(h_.cudnn, op.xd, op.wd, op.cd, op.yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &found, perf));
      constexpr std::size_t kMaxWorkspace = std::size_t{512} << 20;
      int pick = -1;
      for (int j = 0; j < found && pick < 0; ++j)
        if (perf[j].status == CUDNN_STATUS_SUCCESS && perf[j].memory <= kMaxWorkspace &&
            (h_.tf32 || perf[j].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
          pick = j;
      if (pick < 0) unsupported(n, "this convolution shape (cuDNN found no algorithm)");
      it = algo_cache_.emplace(key, std::make_pair(perf[pick].algo, perf[pick].memory)).first;
    }
    op.algo = it->second.first;
    op.workspace_bytes = it->second.second;
    workspace_bytes_ = std::max(workspace_bytes_, op.workspace_bytes);
    workspace_users_.push_back(&op);
  }

  void scale_shift(const Node& n) {
    const Shape& s = g_.value(n.inputs[0]).shape;
    const TensorData* sc = g_.constant(n.inputs[1]);
    const TensorData* sh = g_.constant(n.inputs[2]);
    if (!sc || !sh) unsupported(n, "non-constant scale or shift");
    auto op = std::make_unique<KernelOp>();
    auto scale = std::make_shared<DeviceBuffer>(upload(sc->f)), shift = std::make_shared<DeviceBuffer>(upload(sh->f));
    auto args = std::make_shared<std::array<float*, 3>>();  // x, y, sum
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    for (const PostOp& o : n.post_ops)
      if (o.kind == PostOp::Sum) bind(*op, o.sum_input, &(*args)[2]);
    const std::int64_t channels = s[1], inner = numel(s) / (s[0] * s[1]), total = numel(s);
    const k::PostOps post = post_ops(n);
    op->fn = [=](cudaStream_t st) {
      k::affine_post((*args)[0], (*args)[1], scale->f(), shift->f(), channels, inner, total, (*args)[2], post, st);
    };
    finish(std::move(op), n, "vinfer:affine");
  }

  void pool(const Node& n) {
    const Shape& xs = g_.value(n.inputs[0]).shape;
    const Shape& ys = g_.value(n.outputs[0]).shape;
    if (xs.size() != 4) unsupported(n, "a " + std::to_string(xs.size()) + "-D pool");
    const detail::WindowParams p = detail::pool_params(n, xs);
    k::Pool2d q;
    q.planes = xs[0] * xs[1];
    q.h = static_cast<int>(xs[2]), q.w = static_cast<int>(xs[3]), q.oh = static_cast<int>(ys[2]), q.ow = static_cast<int>(ys[3]);
    q.kh = static_cast<int>(p.kernel[0]), q.kw = static_cast<int>(p.kernel[1]);
    q.sh = static_cast<int>(p.strides[0]), q.sw = static_cast<int>(p.strides[1]);
    q.dh = static_cast<int>(p.dilations[0]), q.dw = static_cast<int>(p.dilations[1]);
    q.pad_t = static_cast<int>(p.pads_begin[0]), q.pad_l = static_cast<int>(p.pads_begin[1]);
    q.pad_b = static_cast<int>(p.pads_end[0]), q.pad_r = static_cast<int>(p.pads_end[1]);
    q.max = n.op == "MaxPool";
    q.count_include_pad = p.count_include_pad;
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 2>>();
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    op->fn = [=](cudaStream_t st) { k::pool2d((*args)[0], (*args)[1], q, st); };
    finish(std::move(op), n, "vinfer:pool2d");
  }

  void global_pool(const Node& n) {
    const Shape& xs = g_.value(n.inputs[0]).shape;
    if (xs.size() != 4) unsupported(n, "a " + std::to_string(xs.size()) + "-D input");
    if (n.op == "ReduceMean") {
      std::vector<std::int64_t> axes = detail::axes_of(g_, n, 1);
      for (auto& a : axes) a = detail::normalize_axis(n, a, xs.size());
      std::sort(axes.begin(), axes.end());
      if (axes != std::vector<std::int64_t>{2, 3}) unsupported(n, "ReduceMean over axes other than {2, 3}");
    }
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 2>>();
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    const std::int64_t planes = xs[0] * xs[1], hw = xs[2] * xs[3];
    op->fn = [=](cudaStream_t st) { k::global_avg((*args)[0], (*args)[1], planes, hw, st); };
    finish(std::move(op), n, "vinfer:global_avg");
  }

  void unary(const Node& n) {
    k::PostOps post;
    post.count = 1;
    const PostOp act = detail::activation_of(g_, n);
    post.kind[0] = static_cast<int>(act.kind);
    post.alpha[0] = act.alpha;
    post.beta[0] = act.beta;
    const std::int64_t total = numel(g_.value(n.inputs[0]).shape);
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 2>>();
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    op->fn = [=](cudaStream_t st) { k::affine_post((*args)[0], (*args)[1], nullptr, nullptr, 1, 1, total, nullptr, post, st); };
    finish(std::move(op), n, "vinfer:eltwise");
  }

  void binary(const Node& n) {
    const Shape& ys = g_.value(n.outputs[0]).shape;
    if (g_.value(n.outputs[0]).dtype != DType::F32) unsupported(n, "integer arithmetic on runtime values");
    if (ys.size() > 6) unsupported(n, "more than 6 dimensions");
    k::Broadcast bc;
    bc.rank = static_cast<int>(ys.size());
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 3>>();
    std::vector<std::shared_ptr<DeviceBuffer>> consts;
    for (int side = 0; side < 2; ++side) {
      const int v = n.inputs[static_cast<std::size_t>(side)];
      Shape s = g_.value(v).shape;
      s.insert(s.begin(), ys.size() - s.size(), 1);
      std::int64_t stride = 1;
      for (int d = bc.rank - 1; d >= 0; --d) {
        (side == 0 ? bc.sa : bc.sb)[d] = s[static_cast<std::size_t>(d)] == 1 ? 0 : stride;
        stride *= s[static_cast<std::size_t>(d)];
      }
      if (const TensorData* c = g_.constant(v)) {
        consts.push_back(std::make_shared<DeviceBuffer>(upload(c->f)));
        (*args)[static_cast<std::size_t>(side)] = consts.back()->f();
      } else {
        bind(*op, v, &(*args)[static_cast<std::size_t>(side)]);
      }
    }
    for (int d = 0; d < bc.rank; ++d) bc.dims[d] = ys[static_cast<std::size_t>(d)];
    bind(*op, n.outputs[0], &(*args)[2]);
    const k::Binary kind = n.op == "Add" ? k::Binary::Add : n.op == "Sub" ? k::Binary::Sub : n.op == "Mul" ? k::Binary::Mul : k::Binary::Div;
    const std::int64_t total = numel(ys);
    op->fn = [=](cudaStream_t st) { k::binary((*args)[0], (*args)[1], (*args)[2], bc, kind, total, st); (void)consts; };
    finish(std::move(op), n, "vinfer:binary");
  }

  // A Concat that is not a view: at batch 1 along channels each input is one
  // contiguous slice of the output; otherwise unsupported.
  void concat(const Node& n) {
    const Shape& ys = g_.value(n.outputs[0]).shape;
    const int axis = detail::normalize_axis(n, n.get_int("axis", 1), ys.size());
    std::int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= ys[static_cast<std::size_t>(d)];
    if (outer != 1) unsupported(n, "concatenation with more than one outer block");
    auto op = std::make_unique<KernelOp>();
    auto ptrs = std::make_shared<std::vector<float*>>(n.inputs.size() + 1);
    std::vector<std::size_t> bytes;
    for (std::size_t j = 0; j < n.inputs.size(); ++j) {
      if (g_.constant(n.inputs[j])) unsupported(n, "a constant input to Concat");
      bind(*op, n.inputs[j], &(*ptrs)[j]);
      bytes.push_back(static_cast<std::size_t>(bytes_of(n.inputs[j])));
    }
    bind(*op, n.outputs[0], &ptrs->back());
    op->fn = [=](cudaStream_t st) {
      char* dst = reinterpret_cast<char*>(ptrs->back());
      for (std::size_t j = 0; j + 1 < ptrs->size(); ++j) {
        VINFER_CU(cudaMemcpyAsync(dst, (*ptrs)[j], bytes[j], cudaMemcpyDeviceToDevice, st));
        dst += bytes[j];
      }
    };
    finish(std::move(op), n, "cudaMemcpyAsync");
  }

  void gemm(const Node& n) {
    const detail::DenseParams d = detail::dense_params(g_, n);
    const std::int64_t M = d.M, N = d.N, K = d.K;
    std::shared_ptr<DeviceBuffer> bias;
    if (!d.bias.f.empty()) bias = std::make_shared<DeviceBuffer>(upload(d.bias.f));
    auto wd = std::make_shared<DeviceBuffer>(upload(d.weights().f));
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 3>>();
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    for (const PostOp& o : n.post_ops)
      if (o.kind == PostOp::Sum) bind(*op, o.sum_input, &(*args)[2]);
    const k::PostOps post = post_ops(n);
    cublasHandle_t cb = h_.cublas;
    op->fn = [=](cudaStream_t st) {
      const float one = 1.f, zero = 0.f;
      // Row-major Y[M,N] = X[M,K] W[N,K]^T is column-major Y^T = W^T' X^T: (op T on W's K x N view).
      VINFER_CU(cublas().sgemm(cb, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &one,
                            wd->f(), static_cast<int>(K), (*args)[0], static_cast<int>(K), &zero, (*args)[1], static_cast<int>(N)));
      if (bias || post.count > 0)
        k::affine_post((*args)[1], (*args)[1], nullptr, bias ? bias->f() : nullptr, N, 1, M * N, (*args)[2], post, st);
    };
    finish(std::move(op), n, "cublas:sgemm", 2.0 * static_cast<double>(M * N * K));
  }

  void softmax(const Node& n) {
    const Shape& s = g_.value(n.inputs[0]).shape;
    const detail::SoftmaxExtent e = detail::softmax_extent(n, s);
    if (e.outer * e.inner > 0x7fffffff) unsupported(n, "more than 2^31 softmax lines");
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 2>>();
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    op->fn = [=](cudaStream_t st) { k::softmax((*args)[0], (*args)[1], e.outer, e.len, e.inner, st); };
    finish(std::move(op), n, "vinfer:softmax");
  }

  void transpose(const Node& n) {
    const Shape& xs = g_.value(n.inputs[0]).shape;
    if (xs.size() > 6) unsupported(n, "more than 6 dimensions");
    const std::vector<std::int64_t> perm = detail::transpose_perm(n, xs.size());
    std::vector<std::int64_t> in_strides(xs.size(), 1);
    for (int d = static_cast<int>(xs.size()) - 2; d >= 0; --d)
      in_strides[static_cast<std::size_t>(d)] = in_strides[static_cast<std::size_t>(d) + 1] * xs[static_cast<std::size_t>(d) + 1];
    k::Permute p;
    p.rank = static_cast<int>(xs.size());
    for (std::size_t d = 0; d < xs.size(); ++d) {
      p.out_dims[d] = xs[static_cast<std::size_t>(perm[d])];
      p.in_strides[d] = in_strides[static_cast<std::size_t>(perm[d])];
    }
    auto op = std::make_unique<KernelOp>();
    auto args = std::make_shared<std::array<float*, 2>>();
    bind(*op, n.inputs[0], &(*args)[0]);
    bind(*op, n.outputs[0], &(*args)[1]);
    const std::int64_t total = numel(xs);
    op->fn = [=](cudaStream_t st) { k::permute((*args)[0], (*args)[1], p, total, st); };
    finish(std::move(op), n, "vinfer:permute");
  }

  void finish(std::unique_ptr<KernelOp> op, const Node& n, const std::string& impl, double flops = 0) {
    op->name = n.label();
    op->impl = impl;
    op->flops = flops;
    ops_.push_back(std::move(op));
  }

  void plan(ModelInfo& info) {
    auto touch = [&](int buffer, int step) {
      detail::PlanBuffer& b = bufs_[static_cast<std::size_t>(buffer)];
      b.first = b.first < 0 ? step : std::min(b.first, step);
      b.last = std::max(b.last, step);
    };
    touch(in_buf_, 0);
    for (std::size_t s = 0; s < ops_.size(); ++s)
      for (const auto& [buffer, slot] : ops_[s]->slots) touch(buffer, static_cast<int>(s));
    touch(out_buf_, static_cast<int>(ops_.size()));
    plan_ = detail::plan_memory(bufs_);
    arena_ = DeviceBuffer(static_cast<std::size_t>(plan_.arena_bytes));
    VINFER_CU(cudaMemset(arena_.ptr, 0, static_cast<std::size_t>(plan_.arena_bytes)));
    workspace_ = DeviceBuffer(workspace_bytes_);
    for (ConvOp* c : workspace_users_) c->workspace = workspace_.ptr;
    for (auto& op : ops_)
      for (const auto& [buffer, slot] : op->slots) *slot = static_cast<float*>(arena_ptr(buffer));
    info.arena_bytes = plan_.arena_bytes;
    info.naive_bytes = plan_.naive_bytes;
  }

  const Graph& g_;
  EngineOptions opt_;
  Handles h_;
  detail::ConcatViews views_;
  std::map<int, int> buffer_of_;
  std::vector<detail::PlanBuffer> bufs_;
  std::vector<std::unique_ptr<Op>> ops_;
  std::map<std::string, std::pair<cudnnConvolutionFwdAlgo_t, std::size_t>> algo_cache_;
  std::vector<ConvOp*> workspace_users_;
  std::size_t workspace_bytes_ = 0;
  detail::MemoryPlan plan_;
  DeviceBuffer arena_, workspace_, cublas_workspace_;
  int in_buf_ = -1, out_buf_ = -1;
  std::size_t in_bytes_ = 0, out_bytes_ = 0;
  void *pinned_in_ = nullptr, *pinned_out_ = nullptr;
  std::vector<cudaEvent_t> events_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  // run_image
  std::unique_ptr<detail::FusedPrep> prep_;
  Preset prep_preset_;
  DeviceBuffer prep_tables_, dev_img_;
  std::size_t prep_tables_bytes_ = 0, img_bytes_ = 0;
  void* pinned_img_ = nullptr;
  cudaGraph_t body_graph_ = nullptr;
  cudaGraphExec_t body_exec_ = nullptr;
  bool image_mode_ = false;
};

}  // namespace

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  cublas().get_property(MAJOR_VERSION, &major);
  cublas().get_property(MINOR_VERSION, &minor);
  cublas().get_property(PATCH_LEVEL, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

BackendInfo probe() {
  BackendInfo b;
  b.name = "cuda";
  b.compiled_in = true;
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  const std::size_t dnn = cudnnGetVersion();
  b.versions = "CUDA runtime " + std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10) + ", driver " +
               (drv ? std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10) : std::string("none")) + ", cuDNN " +
               std::to_string(dnn / 10000) + "." + std::to_string(dnn % 10000 / 100) + "." + std::to_string(dnn % 100);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    b.note = std::string("no device: ") + cudaGetErrorString(e);
    return b;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    DeviceInfo di;
    di.index = d;
    di.name = p.name;
    di.details = "compute " + std::to_string(p.major) + "." + std::to_string(p.minor) + ", " +
                 std::to_string(p.totalGlobalMem >> 20) + " MiB, " + std::to_string(p.multiProcessorCount) + " SMs";
    b.devices.push_back(di);
  }
  if (b.devices.empty()) b.note = "no device found";
  return b;
}

std::unique_ptr<detail::Executor> compile(const Graph& g, const EngineOptions& options, ModelInfo& info) {
  auto p = std::make_unique<Program>(g, options);
  p->build(info);
  return p;
}

}  // namespace vinfer::cuda
