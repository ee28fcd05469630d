// vinfer/labels.hpp: the 1000 ImageNet-1k class names, compiled in.
#pragma once
#include <string>
#include <vector>

namespace vinfer {

// Index -> name ("tench, Tinca tinca"); "class N" outside 0..999.
std::string imagenet_label(int index);
int imagenet_label_count();

// Indices of the k largest values, largest first (ties: lower index first).
std::vector<int> topk_indices(const float* values, int n, int k);
// Softmax in double precision, for printing probabilities from logits.
std::vector<float> softmax(const float* logits, int n);

}  // namespace vinfer
