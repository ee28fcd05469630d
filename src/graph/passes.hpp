// Internal: graph rewrites. Each returns how many nodes it changed and keeps
// the graph's meaning (tests/unit/test_passes.cpp holds each one to the
// reference evaluation of the unrewritten graph).
#pragma once
#include <string>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

// Infers shapes node by node and evaluates every node whose inputs are all
// constants (and Shape nodes, whose result only needs a known input shape);
// folded nodes are removed. Also checks the graph's limits.
int fold_constants(Graph& g, const GraphLimits& limits);
// Identity and Dropout (inference) are removed; their users read the input.
int remove_identities(Graph& g);
// A zero Pad of H and W before a Conv (or an AveragePool counting padding, or a
// MaxPool over a Relu's output) becomes its pads.
int fold_pad(Graph& g);
// BatchNormalization after a Conv (whose result nothing else reads) is folded
// into the Conv's weights and bias.
int fold_batchnorm(Graph& g);
// GELU as exporters spell it with Erf (x / sqrt(2) -> Erf -> + 1 -> * x ->
// * 0.5; or x * (1 / sqrt(2))) becomes one Gelu node, which
// fuse_activations may then fuse into the matrix product before it.
int fuse_gelu(Graph& g);
// An Einsum that is a batched matrix product (MaxViT's "bghid,bghjd->bghij"
// and "bghij,bghjd->bghid") becomes a MatMul, after a Transpose of its
// second operand where the equation reads it transposed.
int einsum_to_matmul(Graph& g);
// Attention (opset 23) of 4-D Q, K and V with as many key as query heads,
// no mask, not causal, no softcap, Y its only output read (what torch's
// exporter writes for scaled_dot_product_attention) becomes Mul(Q, r),
// Transpose(K) then Mul by r, MatMul, Softmax and MatMul by V, r =
// sqrt(scale): the kernels of those. Other Attentions stay (the reference).
int attention_to_matmul(Graph& g);
// An Expand whose every reader is an Add/Sub/Mul/Div that would broadcast
// the unexpanded value to the same shape (F.normalize as exported) is
// dropped: the reader broadcasts it.
int remove_broadcast_expands(Graph& g);
// MatMul by a constant [K, N] whose only reader adds a constant of N values
// (PyTorch's Linear on more than 2-D, as exported) takes that as its bias: a
// third input, vinfer's extension of MatMul.
int fuse_matmul_bias(Graph& g);
// A Mul by a constant per-channel scale after a MatMul by a constant [K, N]
// (and its bias), directly or after the NHWC -> NCHW Transpose of its
// result (ConvNeXt's layer scale), is folded into the weights' columns and
// the bias. Only the rounding differs.
int fold_scale_into_matmul(Graph& g);
// Every remaining BatchNormalization becomes vinfer.ScaleShift(x, scale, shift).
int batchnorm_to_scale_shift(Graph& g);
// Relu, Clip, Sigmoid and x*Sigmoid(x) after Conv, Gemm, MatMul or ScaleShift
// become the producer's post-ops.
int fuse_activations(Graph& g);
// Add(conv(x), y) becomes a Sum post-op of the Conv (y must be ready before the Conv runs).
int fuse_residual_add(Graph& g);
// ReduceMean over H and W of a 4-D value, keeping the dimensions (how
// torch's dynamo exporter writes adaptive_avg_pool2d(x, 1)), becomes the
// GlobalAveragePool it is, which the backends and the other passes know.
int spatial_mean_to_global_pool(Graph& g);
// AveragePool(Conv1x1(x)) becomes Conv1x1(AveragePool(x)) when the pool's
// windows tile the map (kernel == stride, no padding) and the convolution is
// linear (no post-ops): both are linear and per pixel / per channel, so they
// commute, and the convolution then runs on 1/k^2 of the pixels (DenseNet's
// transitions: a quarter of their multiplications). Only the rounding differs.
int pool_before_conv1x1(Graph& g);
// ShuffleNet's channel shuffle, Reshape([N, G, C/G, H, W]) -> Transpose(0,
// 2, 1, 3, 4) -> Reshape([N, C, H, W]), becomes one vinfer.ChannelGather of
// the Concat's inputs before it (or of its input), and each Slice or Split
// part of the channels after it another, of those channels: one pass over the values
// instead of four layout copies (the Concat, both reshapes' reorders, the
// Slice). The nodes left unread are removed by remove_dead_nodes.
int fuse_channel_shuffle(Graph& g);
// Nodes whose results nobody reads are removed.
int remove_dead_nodes(Graph& g);

// The standard pipeline; appends "pass: N" lines to `log`.
void optimize(Graph& g, const GraphLimits& limits, bool fuse, std::vector<std::string>* log);

// Replaces every read of value `from` (node inputs, Sum operands, graph outputs) by `to`.
void replace_uses(Graph& g, int from, int to);

}  // namespace vinfer::detail
