// Internal: the geometry of windowed operators (Conv, MaxPool, AveragePool),
// resolved once from ONNX attributes so that shape inference, the reference
// kernels and every backend agree on pads, strides and output sizes.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

struct WindowParams {
  int spatial = 2;                      // number of spatial dims
  std::vector<std::int64_t> kernel, strides, dilations, pads_begin, pads_end;
  std::vector<std::int64_t> out;        // output spatial sizes
  std::int64_t group = 1;               // Conv only
  bool ceil_mode = false;               // pools only
  bool count_include_pad = false;       // AveragePool only
  // pads_end as a backend that needs out = (in + pb + pe - dk) / s + 1 exactly sees it
  // (ceil_mode extends it, floor may shrink it).
  std::vector<std::int64_t> pads_end_effective;
};

// x: [N, C, spatial...]; kernel from W (Conv) or the kernel_shape attribute (pools).
WindowParams conv_params(const Node& n, const Shape& x, const Shape& w);
WindowParams pool_params(const Node& n, const Shape& x);

// ConvTranspose: x [N, C, spatial...] (1 to 3 spatial dims), w [C, M/group,
// kernel...]. Output sizes and pads as ONNX resolves them: from output_shape
// or auto_pad SAME_* where given (pads then derived, and may be negative when
// output_shape asks for more than the full transposed window), else from
// pads and output_padding. pads_end_effective is unused.
struct TransposedWindow : WindowParams {
  std::vector<std::int64_t> output_padding;
};
TransposedWindow conv_transpose_params(const Node& n, const Shape& x, const Shape& w);

// Resize in mode nearest (any coordinate mode but tf_crop_and_resize): the
// output shape and, per dimension, the input index each output position
// reads, as the reference reads it (graph/ops/nn.cpp). nullopt for other
// modes. roi, scales and sizes are the node's constant inputs (null: absent).
struct NearestResize {
  Shape out;
  std::vector<std::vector<std::int64_t>> source;
};
std::optional<NearestResize> nearest_resize(const Node& n, const Shape& x, const TensorData* roi, const TensorData* scales,
                                            const TensorData* sizes);

// Resize in any mode, as the reference computes it: one pass per resized
// axis, in order, each output position y of it reading input positions
// first[y] + k (clamped to the axis) with weight taps[y][k], or the
// extrapolation value where outside[y] (tf_crop_and_resize).
struct ResizeAxis {
  std::size_t axis = 0;
  std::int64_t in = 0, out = 0;
  std::vector<std::int64_t> first;
  std::vector<std::vector<double>> taps;
  std::vector<char> outside;
};
struct SeparableResize {
  Shape out;
  std::vector<ResizeAxis> axes;
  float extrapolation = 0;
};
SeparableResize separable_resize(const Node& n, const Shape& x, const TensorData* roi, const TensorData* scales, const TensorData* sizes);

// A Conv that is a per-pixel matrix product: 1x1 kernel (w: OIHW), stride 1,
// no dilation, no padding, one group.
bool is_pointwise(const WindowParams& p, const Shape& w);
// A pool whose windows tile the map x exactly: kernel == stride, no dilation,
// no padding, no ceil_mode overhang, the map a whole number of windows.
bool windows_tile_map(const WindowParams& p, const Shape& x);

// Gemm / MatMul with a constant right operand, as backends run it:
// Y[M, N] = A[M, K] x W[N, K]^T + bias, alpha folded into W and beta into bias.
// Throws Unsupported (naming the node) for what backends do not take: a
// runtime right operand, transA with more than one row, C that is not one row.
struct DenseParams {
  std::int64_t M = 0, N = 0, K = 0;
  // The graph's constant as it is, when alpha is 1: [N, K] (Gemm with
  // transB, as the TorchScript exporter writes a Linear) or [K, N] (MatMul,
  // Gemm without transB; the ONNX importer reads PyTorch's large Linear
  // weights this way). Kernels that take either layout use it without a copy
  // (VGG19's first classifier layer is 411 MB).
  std::shared_ptr<const TensorData> nk, kn;
  // [N, K] always: nk itself, else a transposed or scaled copy made on first call.
  const TensorData& weights() const;
  TensorData bias;     // [N], empty when there is none

  std::shared_ptr<const TensorData> b;  // the graph's constant
  bool trans_b = false;
  float alpha = 1.f;
  mutable TensorData copy;
};
DenseParams dense_params(const Graph& g, const Node& n);

// Broadcast shape per ONNX (numpy) rules; throws BadInput naming the node.
Shape broadcast_shapes(const Node& n, const Shape& a, const Shape& b);

// Normalizes a possibly negative axis against a rank; throws BadInput naming the node.
int normalize_axis(const Node& n, std::int64_t axis, std::size_t rank);

// Slice (opset 10+): the window of x it reads, from its constant starts,
// ends, axes and steps (empty: ONNX's defaults): element k along axis d is
// x's begin[d] + k * step[d]. Throws BadInput for lists of different
// lengths or a step of 0.
struct SliceWindow {
  Shape begin, size, step;
};
SliceWindow slice_window(const Node& n, const Shape& x, const std::vector<std::int64_t>& starts,
                         const std::vector<std::int64_t>& ends, const std::vector<std::int64_t>& axes,
                         const std::vector<std::int64_t>& steps);

// Attention (opset 23) per head: softmax(Q K^T * scale + bias) V, where Q,
// K and V are 4-D [batch, heads, seq, size] or 3-D [batch, seq, heads *
// size] (the head counts then the q_num_heads and kv_num_heads
// attributes); K and V may have fewer heads than Q (grouped: each serves
// q_heads / kv_heads of them). Throws BadInput naming the node where the
// shapes or head counts do not fit together.
struct AttentionDims {
  std::int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, size = 0, v_size = 0;
  bool three_d = false;
  double scale = 0;  // the attribute, else 1 / sqrt(size)
};
AttentionDims attention_dims(const Node& n, const Shape& q, const Shape& k, const Shape& v);

// LayerNormalization over x as [outer, len]: each of the outer rows
// normalized over its len values (the dimensions from `axis` on).
struct LayerNormExtent {
  std::int64_t outer = 1, len = 1;
  float epsilon = 1e-5f;
};
LayerNormExtent layer_norm_extent(const Node& n, const Shape& x);

// Einsum's equation, explicit form without ellipses ("bhid,bhjd->bhij";
// spaces ignored): one string of letters per input and the output's.
// Throws Unsupported for other forms, BadInput for a malformed one.
struct EinsumTerms {
  std::vector<std::string> inputs;
  std::string output;
};
EinsumTerms einsum_terms(const Node& n);

// Split: the axis and each output's length along it, from the split input
// (opset 13+), the attribute (before), or num_outputs (opset 18: equal
// parts, the last smaller) or the number of outputs.
struct SplitParams {
  int axis = 0;
  std::vector<std::int64_t> lengths;
};
SplitParams split_params(const Graph& g, const Node& n, const Shape& x);

// Softmax over x as [outer, len, inner], normalized along len. Before opset 13
// ONNX's Softmax normalizes over all dimensions from `axis` on, as one (inner 1).
struct SoftmaxExtent {
  std::int64_t outer = 1, len = 1, inner = 1;
};
SoftmaxExtent softmax_extent(const Node& n, const Shape& x);

}  // namespace vinfer::detail
