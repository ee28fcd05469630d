// vinfer/engine.hpp: load a network once, run it on many inputs.
//
//   vinfer::EngineOptions opt;
//   opt.threads = 2;
//   vinfer::Model m = vinfer::Model::load_onnx("densenet121.onnx", opt);
//   std::vector<float> logits(m.output_size());
//   m.run(input.data(), logits.data());   // input: m.input_shape(), NCHW float32
//
// Loading runs the graph passes (constant folding, BatchNorm folding,
// activation/residual fusion, in-place concatenation), packs the weights once
// and plans one arena for every intermediate tensor. run() allocates nothing.
// A Model is not thread-safe: use one per thread.
#pragma once
#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vinfer/calibration.hpp"
#include "vinfer/graph.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer {

enum class Backend {
  Cpu,        // oneDNN with vinfer's own kernels where they win
  Reference,  // plain loops, the semantic oracle for tests (slow)
  Cuda,       // cuDNN + cuBLAS + vinfer's kernels, replayed as one CUDA graph
              // (only in builds with CUDA: see vinfer/devices.hpp)
};

// The arithmetic of the forward pass.
enum class Precision {
  F32,   // float32 throughout (the default; within ~1e-6 of PyTorch's float32)
  BF16,  // Cpu: convolutions in bfloat16 (weights and inputs rounded, float32 accumulation), on CPUs
         // with bfloat16 dot products (AVX512_BF16 or AMX; cpu_has_bf16()); everything else float32.
         // Faster, and less exact: logits move by ~1e-3..1e-2 of their range. `vinfer check`
         // measures by how much on a user's own images.
  INT8,  // Cpu: convolutions in 8-bit integers (post-training static quantization): inputs
         // quantized with the ranges of a Calibration (EngineOptions::calibration), weights per
         // output channel, int32 accumulation; on CPUs with int8 dot products (AVX512_VNNI;
         // cpu_has_int8()). The network's first convolution (the image's few channels) runs in
         // int8 too, except on AMX (bfloat16 there) or where the calibration has no range for its
         // input; grouped convolutions and what is neither a convolution nor a fully connected
         // layer stay float32.
};
const char* to_string(Precision p);  // "f32", "bf16", "int8"
// "f32"/"fp32"/"float32", "bf16"/"bfloat16" or "int8"; throws InvalidArgument otherwise.
Precision parse_precision(const std::string& name);
// Whether this CPU runs Precision::BF16 (dot products in bfloat16); false on
// CPUs without them, where a bfloat16 mode would be slower than float32.
bool cpu_has_bf16();
// Whether this CPU runs Precision::INT8 (AVX512_VNNI dot products).
bool cpu_has_int8();

// A tensor of the general API (Model::run by name): row-major values,
// float32 ones in f, every integer and boolean type's in i (as int64,
// booleans 0 or 1).
struct Tensor {
  ElementType type = ElementType::Float32;
  Shape shape;
  std::vector<float> f;
  std::vector<std::int64_t> i;
};

// A graph input or output as the general API sees it: its name, its
// element type and its shape as compiled (and as the file declares it, -1
// where a dimension is symbolic: EngineOptions::input_shapes fixes those).
struct TensorInfo {
  std::string name;
  ElementType type = ElementType::Float32;
  Shape shape;
  Shape file_shape;
};

struct EngineOptions {
  Backend backend = Backend::Cpu;
  int threads = 0;         // 0: the CPUs this process may use (default_threads(): affinity and cgroup quota)
  bool adapt_threads = true;  // Cpu, threads > 1: a run may take one thread instead, where runs on the whole
                              // team have slowed down (another process holds a CPU, and every layer waits for
                              // the thread it preempted) and one thread is measured faster; the team is tried
                              // again every so often. false: every run takes them all.
  bool optimize = true;    // run the fusion passes (false: constant folding only)
  bool winograd = true;    // 3x3 convolutions may use Winograd where the backend has it (fewer
                           // multiplications; results differ from direct convolution by ~1e-6 relative)
  bool tune = true;        // Cpu: where several kernels can run a layer (a 3x3 convolution: oneDNN's, or
                           // vinfer's Winograd split two ways; a depthwise one with a clamp: oneDNN's or
                           // vinfer's), time them once on its shape at load and keep
                           // the fastest (ModelInfo::passes says how long it took; choices are remembered per
                           // shape for the process). Which is fastest differs between CPUs; on a busy machine
                           // the choice may differ between runs. false: a fixed rule by shape.
  std::string tune_cache;  // Cpu, with tune: a file that keeps the choices between processes (read at
                           // load, rewritten when something new was timed; lines per CPU model), so that
                           // loads repeat the same kernels without timing them. Empty: none. The CLI uses
                           // $VINFER_TUNE_CACHE, else $XDG_CACHE_HOME/vinfer/tune.txt or ~/.cache/vinfer/tune.txt.
  int device = 0;          // Cuda: which GPU
  bool allow_tf32 = false; // Cuda: let convolutions and GEMMs use TF32 tensor cores (faster; ~1e-3
                           // relative error instead of FP32's ~1e-6)
  Precision precision = Precision::F32;  // see Precision; BF16 or INT8 on a CPU without it is refused at load
  std::shared_ptr<const Calibration> calibration;  // INT8: the ranges (vinfer/calibration.hpp); required
  bool record_ranges = false;  // Cpu, F32: record the range of every convolution's input (and residual
                               // operand) over the runs, for calibration() (slower; convolutions also keep
                               // their input apart)
  int batch = 0;           // images per run(): the network's batch dimension, where it is symbolic (the
                           // built-in networks; ONNX files exported with a dynamic batch). 0: the network's
                           // own (a symbolic one runs as 1). A fixed batch other than this one is refused.
  int micro_batch = 0;     // Cpu, with a symbolic batch dimension and batch > 1: run() computes the batch
                           // in runs of this many images (the backend compiled for that many; a last
                           // partial run padded), so that a few images' activations stay in cache where a
                           // whole batch's would not (DenseNet201 int8 at batch 32: 4 at a time ~16 %
                           // faster per image). 0: automatic: 4 where the batch is a multiple of 4 above
                           // it and the network's weights weigh no more than one image's activations
                           // (the DenseNets; ModelInfo::passes says which; networks heavier in weights
                           // read them once per run and do better whole). A value >= batch: whole batches.
  std::map<std::string, Shape> input_shapes;  // inputs' symbolic dimensions fixed by name (ONNX Runtime's free
                                              // dimensions): each shape of the input's rank, equal to it where
                                              // the file fixes a dimension. Inputs not named here: see batch.
  GraphLimits limits;
  std::int64_t max_file_bytes = 4LL << 30;  // model files larger than this are refused
  bool keep_constants = true;  // Cpu, Cuda: keep the graph's weights after compiling (graph() shows them,
                               // set_threads() recompiles from them). false: freed once the backend holds its
                               // own packed copies (VGG19: ~490 MB less); set_threads() then throws.
  bool compact_weights = false;  // Cpu: where vinfer's F(4,3) Winograd runs a wide 3x3 layer on a small map
                                 // (split by positions: VGG19's 512-channel layers), hold its weights half
                                 // transformed (18 floats per channel pair instead of 36: VGG19 ~60 MiB less)
                                 // and finish the transform as it runs (those layers ~10 % slower at batch 1).
                                 // The CLI's classify and info set it: a process that loads to classify a
                                 // few images gains more from the memory than it loses.
};

// What loading did, for `vinfer info` and for tests.
struct ModelInfo {
  std::string name;
  std::string source;             // file path or built-in name
  int nodes_imported = 0;
  int nodes_executed = 0;         // kernels run per inference after the passes
  int concats_in_place = 0;       // Concat nodes turned into views
  std::int64_t arena_bytes = 0;   // peak intermediate memory (one arena)
  std::int64_t naive_bytes = 0;   // the same without reuse, for comparison
  std::int64_t weight_bytes = 0;
  std::vector<std::string> passes;  // "fold_batchnorm: 120 folded", ...
  int opset = 0;                                // ONNX opset of the file (0: a built-in network)
  std::vector<std::pair<std::string, int>> operators;  // imported operators and how many of each, by name
  // Each kernel of a forward pass in order: the node (or layout conversion)
  // and the implementation that runs it ("vinfer:reference": the reference
  // evaluator, slow; passes' "reference_fallback" line says why).
  std::vector<std::pair<std::string, std::string>> kernels;
  // Where loading spent its time, in order, in ms: "read" (file to parsed
  // model, or checkpoint to tensors), "check" (the ONNX checker and shape
  // inference), "convert" (initializers to tensors), "passes", "compile"
  // (kernels created, weights packed) and "tune" (3x3 and depthwise kernels timed; zero
  // with a warm tune cache).
  std::vector<std::pair<std::string, double>> load_ms;
  // The process's peak resident memory when loading finished (Linux's
  // VmHWM; 0 where unknown): whatever else the process held counts too.
  std::int64_t peak_rss_bytes = 0;
};

// One kernel's share of a forward pass (Model::profile).
struct LayerProfile {
  std::string name;  // the node ("Conv 'features.conv0'") or a layout conversion
  std::string impl;  // the implementation that ran it (oneDNN's name, or vinfer's)
  double ms = 0;
  double flops = 0;  // 2 x multiply-adds; 0 where not counted
  // Bytes of constants (packed weights, bias) the op read in this run: all of
  // them, except where a kernel skips some (a batch-1 fully connected layer
  // reads only the rows of its non-zero inputs). CPU only; 0 elsewhere.
  double weight_bytes = 0;
};

class Model {
 public:
  static Model load_onnx(const std::string& path, const EngineOptions& options = {});
  static Model load_onnx_memory(const std::uint8_t* data, std::size_t size, const std::string& name,
                                const EngineOptions& options = {});
  // Compiles a graph (built in code or imported); takes ownership.
  static Model from_graph(Graph graph, const std::string& source, const EngineOptions& options = {});
  // The same, with the stages that made the graph and their ms (an importer's,
  // for ModelInfo::load_ms).
  static Model from_graph(Graph graph, const std::string& source, const EngineOptions& options,
                          std::vector<std::pair<std::string, double>> load_ms);

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  // The image API (run, run_items, run_image, profile): networks with one
  // float32 input and one float32 output.
  const Shape& input_shape() const;
  const Shape& output_shape() const;
  std::size_t input_size() const;
  std::size_t output_size() const;
  const ModelInfo& info() const;
  // The optimized graph that the backend runs (for inspection and tests).
  const Graph& graph() const;

  // input: input_size() floats in input_shape() (NCHW); output: output_size() floats.
  void run(const float* input, float* output);
  // `count` inputs of one item each (input_size() / batch() floats, one after
  // another) to `count` outputs, in runs of batch() items; a last partial run
  // is padded with zeros and only its items' outputs are written. A count
  // other than batch() needs an output whose first dimension is the batch
  // (InvalidArgument otherwise).
  void run_items(const float* input, std::int64_t count, float* output);
  // The general API: any number of inputs and outputs of any ElementType.
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // Every input, by name, in its type and compiled shape, to every output, in
  // outputs()' order. Graphs other than one float32 input to float32
  // outputs (through float32 values) run on the reference evaluator (exact,
  // slow; ModelInfo::passes says so). Throws InvalidArgument for a missing, unknown or misshapen input.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  // Items per run(): the input's first dimension.
  std::int64_t batch() const;
  // From a decoded RGB image: the preset's resize (+ crop) and normalize,
  // then the network. On the CUDA backend, for presets with Pillow's resize
  // rules (all built-in ones), the u8 image is uploaded once and one kernel
  // writes the network's input on the device; elsewhere a Preprocessor runs
  // on the CPU. The same floats either way. Throws InvalidArgument when the
  // preset's tensor is not the model's input shape.
  void run_image(const ImageView<std::uint8_t>& rgb, const Preset& preset, float* output);
  // Runs once, timing every kernel separately (slower than run()).
  std::vector<LayerProfile> profile(const float* input, float* output);
  // Named parts of the last run() or run_image() in ms where the backend
  // times them (CUDA: upload, [preprocess,] compute, download, from CUDA
  // events); empty on the CPU.
  std::vector<std::pair<std::string, double>> last_run_stages();
  // Whether the network's output is a Softmax's (probabilities rather than logits).
  bool outputs_probabilities() const;
  // Recompiles for another thread count; needs the graph's weights (keep_constants).
  void set_threads(int threads);
  int threads() const;
  // Runs so far on all threads() and on one thread (EngineOptions::adapt_threads).
  std::array<std::int64_t, 2> team_runs() const;
  // With EngineOptions::record_ranges: the ranges seen by every run so far,
  // and the weights' scales, as a calibration file holds them
  // (vinfer/calibration.hpp). Throws InvalidArgument when nothing was recorded.
  Calibration calibration() const;

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The preset `name` sized for the model's input, which must be square 3-channel
// images in the preset's layout (Nx3xSxS or NxSxSx3; the preset makes one). Throws
// Error(Unsupported) for other inputs, Error(InvalidArgument) for a preset of
// the other layout.
Preset model_preset(const Model& model, const std::string& name);

}  // namespace vinfer
