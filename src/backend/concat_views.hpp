// Internal: concatenations without copies. When every input of a Concat can
// live at its place inside the Concat's result (a contiguous slice of each
// image of it in the backend's layout), producers write there directly and the Concat does
// nothing. DenseNet's chains of growing concatenations (cat(x0..xk) for every
// k) all become prefixes of one buffer per dense block.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

struct ConcatViews {
  std::vector<int> root;               // per value: the value whose buffer holds it, or -1
  std::vector<std::int64_t> offset;    // byte offset inside root's buffer
  std::vector<bool> node_is_view;      // per node: a Concat that needs no kernel
  int count = 0;                       // Concats made free
};

// Flatten, Reshape, Squeeze, Unsqueeze: backends run them as aliases of their input's storage.
bool is_reshape_op(const std::string& op);
// Per value: produced by such an op (an alias, which cannot also live inside a concatenation).
std::vector<bool> reshape_products(const Graph& g);

// `sliceable(v)`: the backend stores v so that a channel range of one image
// is one contiguous block (a compatible layout). `bytes(v)`: the size of one
// image there; offsets are within an image, and at batch > 1 the backend
// places each image's slice in that image of the root (TensorRef::image_bytes
// in the CPU backend).
ConcatViews plan_concat_views(const Graph& g, const std::function<bool(int)>& sliceable,
                              const std::function<std::int64_t(int)>& bytes);

}  // namespace vinfer::detail
