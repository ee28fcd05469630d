// Internal: the CPU backend's building blocks. A graph node becomes one CpuOp
// in three steps, as in every op here:
//   validate  - the op factory checks what it supports and throws Unsupported;
//   prepare   - it creates the oneDNN primitive (or picks a kernel), packs the
//               weights once, and declares the arena buffers it reads and writes;
//   execute   - runs on memory bound once after planning; allocates nothing.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/aligned.hpp"
#include "cpu/prefetch.hpp"
#include "vinfer/calibration.hpp"
#include "vinfer/graph.hpp"

namespace vinfer::cpu {

using dnnl::memory;
using Tag = memory::format_tag;

// How a value is stored in the arena.
enum class Form {
  Plain,    // row-major (NCHW for 4-D), exactly the ONNX tensor
  Blocked,  // nChw8c or nChw16c (channel_block()): channels in blocks, zero-padded (4-D only)
  ChannelsLast,  // NHWC (4-D only): for grouped convolutions whose groups are not whole blocks
  BlockedBf16,   // Blocked in bfloat16: what convolutions read (and, for other convolutions, write)
                 // with Precision::BF16
  PlainBf16,     // Plain in bfloat16: the image for a first convolution, rows for a matrix product
  ChannelsLastBf16,  // NHWC in bfloat16: what convolutions read and write with Precision::BF16 where
                     // oneDNN has AMX kernels (they take channels-last only: amx_bf16())
  ChannelsLastU8,  // NHWC in unsigned 8-bit integers, value / scale (Precision::INT8; a range >= 0)
  ChannelsLastS8,  // NHWC in signed 8-bit integers, value / scale (Precision::INT8; a range with negatives)
  BlockedPacked,   // Blocked with the images one after another: the copy, for ops that need that, of a
                   // value whose Blocked form is a view into a concatenation at batch > 1 (each image's
                   // channels a slice of that image in the concatenation's buffer)
};
bool is_int8(Form form);
bool is_bf16(Form form);
const char* form_name(Form form);

struct TensorRef {
  int buffer = -1;   // arena buffer id
  memory::desc md;   // (of a batch; where image_bytes is set, of images packed)
  std::size_t image_bytes = 0;  // bytes from one image to the next, where not md's (a view at batch > 1)
};

class CpuOp {
 public:
  virtual ~CpuOp() = default;
  std::string name;  // the node's label, for profiles and errors
  std::string impl;  // which kernel runs it (oneDNN's implementation name or vinfer's)
  // Activation arguments: oneDNN argument id -> arena tensor. Bound by bind().
  std::map<int, TensorRef> acts;
  // Arguments that the op owns (packed weights, bias).
  std::unordered_map<int, memory> args;
  std::vector<Block> buffers;  // the memory behind large args, allocated here (huge pages; pack_weights)
  memory::desc scratch_md;  // oneDNN's scratchpad for this op (shared arena-wide buffer)
  double flops = 0;  // multiply-adds x 2, for the profile

  // The constant bytes the op reads (packed weights, bias): the arguments
  // that are not activations, unless the op keeps its own.
  virtual std::vector<ByteSpan> weights() const;
  // The constant bytes the last execute() read: weights(), unless the kernel
  // skips some (for the profile).
  virtual double weight_bytes_read() const;
  // Whether the op prefetches while it runs (prefetch.hpp): then `prefetch`
  // holds the next layers' weights, set once the program is built.
  virtual bool prefetches() const { return false; }
  std::vector<ByteSpan> prefetch;

  // Gives every activation argument its place in the arena.
  virtual void bind(const dnnl::engine& eng, const std::function<void*(int buffer)>& address, void* scratch);
  virtual void execute(dnnl::stream& s) = 0;
  // Whether execute() gives the same answer when parallel regions are
  // inactive (a run on one thread of the team, or a caller's own parallel
  // region), preparing what it needs for that. vinfer's kernels split their
  // work by the threads they find, so they do.
  virtual bool can_run_alone() { return true; }
};

// An op that is one oneDNN primitive.
class PrimitiveOp : public CpuOp {
 public:
  dnnl::primitive prim;
  dnnl::primitive_desc_base pd;  // prim's (set by finish())
  // Some oneDNN kernels (brgemm's matmul and convolutions) split their work
  // for the thread count they were created with and, given one thread, do
  // that thread's share alone: where regions are inactive they run as a
  // twin made for one thread (same implementation and layouts).
  void execute(dnnl::stream& s) override;
  bool can_run_alone() override;

 private:
  dnnl::primitive alone_;
  int alone_state_ = 0;  // 0 not tried, 1 runs alone (prim or alone_), -1 cannot
};

// What op factories may ask of the program being built.
class BuildContext {
 public:
  virtual ~BuildContext() = default;
  virtual const Graph& graph() const = 0;
  virtual const dnnl::engine& engine() const = 0;
  // Whether convolutions may use Winograd (EngineOptions::winograd).
  virtual bool winograd() const = 0;
  // Whether vinfer's Winograd split by positions holds its weights half
  // transformed (EngineOptions::compact_weights).
  virtual bool compact_weights() const = 0;
  // Whether convolutions run in bfloat16 (EngineOptions::precision).
  virtual bool bf16() const = 0;
  // The bfloat16 form `value` may be written in alone (BlockedBf16 or
  // ChannelsLastBf16), or Form::Plain for none: bf16(), 4-D, not the
  // network's output nor a view into a concatenation, and read only by
  // convolutions that read it in that form (conv_input_form), as their
  // input or as the operand of their residual add, or (ChannelsLastBf16)
  // by max pools whose output may be so.
  virtual Form bf16_form(int value) const = 0;
  // Precision::INT8: whether convolutions run in int8, and the calibration's
  // range of a value (null if it has none) and weight scales of a Conv, Gemm
  // or MatMul (null if none, or not as many as its output channels).
  virtual bool int8() const = 0;
  virtual const ActivationRange* int8_range(int value) const = 0;
  virtual const std::vector<float>* int8_weight_scales(const Node& conv) const = 0;
  // The 8-bit form of a value with a range (ChannelsLastU8 for a range >= 0)
  // and its scale (value = integer x scale: max|range| / 255 or / 127).
  virtual Form int8_form(int value) const = 0;
  virtual float int8_scale(int value) const = 0;
  // Whether `value` may be written in int8_form alone: 4-D, not the output
  // nor a view into a concatenation, read only by int8 convolutions
  // (conv_int8) as their input.
  virtual bool int8_value(int value) const = 0;
  // EngineOptions::record_ranges: whether convolutions' inputs are watched
  // (then they are kept apart, not absorbed into other ops).
  virtual bool recording() const = 0;
  // Whether kernels may be chosen by timing them at load (EngineOptions::tune),
  // and the record of it: time spent timing, and each tuned layer (whether the
  // timing overruled the rule).
  virtual bool tune() const = 0;
  virtual void note_tuning(double ms) = 0;
  virtual void note_choice(bool overruled) = 0;
  // The value in the given form; inserts a layout conversion if it exists only in another.
  virtual TensorRef input(int value, Form form) = 0;
  // Which forms the value exists in now.
  virtual bool has_form(int value, Form form) const = 0;
  // Declares the value produced in `form`; returns where to write it.
  virtual TensorRef output(int value, Form form) = 0;
  // Whether `value` is written in place into a concatenation (its Blocked form).
  virtual bool is_view(int value) const = 0;
  // The Blocked form as it is, for ops that take a batch's images apart
  // (TensorRef::image_bytes; vinfer's convolution kernels): a view at batch
  // > 1 then is read and written where it lies. input() and output() give
  // other ops a packed copy (BlockedPacked) and copy it in or out.
  virtual TensorRef input_images(int value) = 0;
  virtual TensorRef output_images(int value) = 0;
  // Declares `value` as a reinterpretation (reshape) of `source`'s plain storage.
  virtual void alias_plain(int value, int source) = 0;
  // Declares `value` in `form` as `source`'s storage in `source_form`, the
  // same bytes (a Transpose that only renames a layout: NCHW's channels-last
  // storage is the NHWC tensor's plain one, and back). `source` must exist
  // in `source_form`.
  virtual void alias_form(int value, Form form, int source, Form source_form) = 0;
  // Declares `value` in `form` written over `source`'s storage in
  // `source_form` (an accumulation in place; the two forms the same size),
  // where that is safe: `source` exists in `source_form` with the same
  // shape, is not the network's input or output nor a view, no other value
  // lives in its storage, and the node being built is its last reader and
  // reads it only so. Returns whether it did.
  virtual bool write_over(int value, Form form, int source, Form source_form) = 0;
  virtual void add(std::unique_ptr<CpuOp> op) = 0;
  // The node that writes `value` (null for inputs and constants), and the
  // nodes that read it.
  virtual const Node* producer(int value) const = 0;
  virtual const std::vector<int>& consumers(int value) const = 0;
};

dnnl::primitive_attr default_attr();
// Channels per block of the Blocked form: 16 where oneDNN runs AVX-512 kernels, else 8.
int channel_block();
// Whether oneDNN runs bfloat16 convolutions on AMX here (Sapphire Rapids and
// later, unless VINFER_AMX=0): then only in channels-last layouts.
bool amx_bf16();
memory::desc plain_md(const Shape& s);
memory::desc blocked_md(const Shape& s);
memory::desc md_for(const Shape& s, Form form);
memory::dims to_dims(const Shape& s);
// A packed copy of constant weights in the layout a primitive asked for. A
// large copy lives in a huge-page block (aligned.hpp) appended to `keep`,
// which must outlive the memory.
// attr: the reorder's (int8: scales that quantize the weights per channel;
// its scratchpad stays oneDNN's).
memory pack_weights(const dnnl::engine& eng, const TensorData& w, const memory::desc& user, const memory::desc& want,
                    std::vector<Block>& keep, const dnnl::primitive_attr& attr = {});
// oneDNN post-ops for a node's fused epilogue. A Sum is a binary add with the
// operand's tensor, or with `sum_in_place` (and where write_over allows) an
// accumulation into the output written over the operand: oneDNN's
// channels-last 1x1 kernels (brgconv_1x1) take that and not a binary add
// (ResNet50's residual 1x1s on AMX in int8: 0.03-0.06 ms against
// 0.13-0.41, in bfloat16: 0.08-0.19 against 0.16-0.30; on VNNI without AMX
// in int8: 0.07-0.18 against 0.11-0.70; float32 blocks gain nothing).
// An int8 output accumulates in place only (sum_scale: the operand's int8
// scale over the output's), else Error(Internal).
dnnl::post_ops make_post_ops(BuildContext& ctx, const Node& n, Form form, std::vector<std::pair<int, TensorRef>>& binary_args,
                             bool sum_in_place = false, float sum_scale = 1.f);
// One oneDNN element-wise step (algorithm, alpha, beta).
struct EltwiseStep {
  dnnl::algorithm alg;
  float alpha = 0, beta = 0;
};
// The oneDNN steps that compute an activation (HardSigmoid takes two).
std::vector<EltwiseStep> eltwise_steps(const PostOp& act);
// Records a primitive's scratchpad and implementation name.
void finish(PrimitiveOp& op, const dnnl::primitive_desc_base& pd);
[[noreturn]] void unsupported(const Node& n, const std::string& what);

// One factory per op family (src/cpu/op_*.cpp). Each validates the node and adds ops.
void build_conv(BuildContext& ctx, const Node& n);
// With Precision::BF16, the form in which the convolution reads its input:
// BlockedBf16 or PlainBf16 where oneDNN's bfloat16 kernel runs it, another
// (float32) where a float32 kernel does (vinfer's Winograd on large maps).
Form conv_input_form(const BuildContext& ctx, const Node& conv);
// Whether the convolution could run in int8 (4-D, not grouped, at least 16
// input channels, constant weights): the ones whose input range calibration
// records.
bool conv_int8_candidate(const BuildContext& ctx, const Node& conv);
// With Precision::INT8, whether it does (a candidate the calibration covers).
bool conv_int8(const BuildContext& ctx, const Node& conv);
// The same for a fully connected layer (Gemm or MatMul of 2-D rows by
// constant weights, no residual Sum): its input's range is recorded and,
// covered, it runs in int8.
bool fc_int8_candidate(const BuildContext& ctx, const Node& n);
bool fc_int8(const BuildContext& ctx, const Node& n);
// With Precision::INT8, whether a fully connected layer left out of int8
// has its weights rounded to bfloat16 (float32 sums).
bool fc_bf16_weights(const BuildContext& ctx, const Node& n);
// Whether a vinfer.ScaleShift node is applied by the op that reads it (its
// only consumer: a 1x1 convolution, see conv1x1.hpp, or an average pool whose
// windows tile the map); it is then not built.
bool scale_shift_absorbed(const BuildContext& ctx, const Node& scale_shift);
// Whether a Mul node (squeeze-and-excite's x * s, s per image and channel)
// is applied by the 1x1 convolution that is its only reader; it is then
// not built.
bool channel_scale_absorbed(const BuildContext& ctx, const Node& mul);
void build_pool(BuildContext& ctx, const Node& n);
// Squeeze-and-excite's gate (op_squeeze_excite.cpp): builds it as one op
// for the GlobalAveragePool that starts it, if it runs so (false: not);
// its two 1x1 convolutions are then absorbed (not built), and so is the
// Mul(x, s) that reads it where no 1x1 convolution applies that.
bool build_squeeze_excite(BuildContext& ctx, const Node& pool);
bool squeeze_excite_absorbed(const BuildContext& ctx, const Node& conv);
bool squeeze_excite_scale_absorbed(const BuildContext& ctx, const Node& mul);
// vinfer's kernels where oneDNN has only its reference one (op_broadcast.cpp):
// Add/Sub/Mul/Div with any broadcast, on plain tensors (in: the operands,
// in[0] the full-size one where the op allows), and a reduction over the
// last axes alone (false when `reduced` is not that).
void build_broadcast_binary(BuildContext& ctx, const Node& n, const int (&in)[2]);
bool build_row_reduce(BuildContext& ctx, const Node& n, const std::vector<bool>& reduced);
void build_gather_rows(BuildContext& ctx, const Node& n);
// Plain copies as contiguous runs (memcpy): a Concat of runtime values along
// `axis`, and a window of x (step 1) that is whole in every axis but one,
// into output `output`. False where they do not apply.
bool build_plain_concat(BuildContext& ctx, const Node& n, int axis);
bool build_window_runs(BuildContext& ctx, const Node& n, const Shape& xs, const Shape& begin, const Shape& size, std::size_t output);
void build_reduce(BuildContext& ctx, const Node& n);
// The vinfer.ScaleShift (+ ReLU) that this AveragePool applies as it reads
// it, or null.
const Node* pool_absorbable_scale_shift(const BuildContext& ctx, const Node& pool);
// An activation, Sqrt, or Pow by a constant scalar, alone (oneDNN eltwise).
void build_eltwise(BuildContext& ctx, const Node& n);
void build_binary(BuildContext& ctx, const Node& n);
void build_concat(BuildContext& ctx, const Node& n);
void build_inner_product(BuildContext& ctx, const Node& n);
void build_softmax(BuildContext& ctx, const Node& n);
void build_conv_transpose(BuildContext& ctx, const Node& n);
void build_resize(BuildContext& ctx, const Node& n);
void build_layer_norm(BuildContext& ctx, const Node& n);
void build_scale_shift(BuildContext& ctx, const Node& n);
// The vinfer.ScaleShift (constant scale and shift, at most a ReLU after it)
// that produces `value` for one reader only (not a graph output): an op that
// reads `value` may then apply it itself. Null otherwise.
const Node* sole_reader_pre_activation(const BuildContext& ctx, int value);
void build_reshape(BuildContext& ctx, const Node& n);
void build_transpose(BuildContext& ctx, const Node& n);
void build_slice(BuildContext& ctx, const Node& n);
void build_gather(BuildContext& ctx, const Node& n);
void build_pad(BuildContext& ctx, const Node& n);
void build_split(BuildContext& ctx, const Node& n);
void build_channel_gather(BuildContext& ctx, const Node& n);
// Any other node the reference evaluator runs (graph/reference.hpp), on
// plain float tensors: slow but exact, named by `vinfer info`.
void build_reference(BuildContext& ctx, const Node& n);
// A layout conversion between two tensors (used by the program for Form
// changes). Float32 to bfloat16 in the same layout (Blocked to BlockedBf16,
// Plain to PlainBf16) is vinfer's AVX512_BF16 loop: oneDNN 2.6's reorder
// for it (jit:uni) ran at ~1-2 GB/s, in ResNet50 costing more than the
// float32 Winograd before it saved.
// scale (to an int8 form): the values are divided by it, rounded, saturated.
std::unique_ptr<CpuOp> make_reorder(const dnnl::engine& eng, const TensorRef& from, const TensorRef& to, const std::string& name,
                                    float scale = 1.f);
// Float32 channels-last (a convolution's output on AMX or in int8) into its
// place in a concatenation, 16-channel blocks as they lie (`to`'s
// image_bytes at batch > 1), where `from` fits (nhwc, whole 16-channel
// blocks, AVX-512's block); elsewhere make_reorder and a copy do it.
// (oneDNN's reorder wrote a packed tensor that a copy then moved: DenseNet121
// at batch 32 in bf16, 59 ms of 199.)
bool channels_last_into_blocks_fits(const memory::desc& from);
std::unique_ptr<CpuOp> make_channels_last_into_blocks(const TensorRef& from, const TensorRef& to, const std::string& name);
// SiLU or GELU over a float32 tensor (not a view; its size a multiple of
// channel_block()) in place, vinfer's (out_act.hpp), where
// simd_block_runs: after a convolution or matrix product on oneDNN, whose
// swish post-op took as long as EfficientNet's stem convolution itself
// (0.17 ms of B3's 0.35) and whose GELU post-op a third of ConvNeXt-T's
// first products.
enum class InPlaceFn { Silu, Gelu };
std::unique_ptr<CpuOp> make_in_place(const TensorRef& t, InPlaceFn f, const std::string& name);
// An op that widens ranges[slot] to the values of `t` (float32; padded lanes count as zeros).
std::unique_ptr<CpuOp> make_range_op(const TensorRef& t, ActivationRange* range, const std::string& name);

}  // namespace vinfer::cpu
