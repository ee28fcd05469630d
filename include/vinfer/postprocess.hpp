// vinfer/postprocess.hpp: from a network's logits to classes.
//
//   std::vector<float> p = vinfer::softmax(logits.data(), 1000);
//   for (int i : vinfer::topk_indices(p.data(), 1000, 5))
//     std::printf("%.2f%% %s\n", 100 * p[i], vinfer::imagenet_label(i).c_str());   // vinfer/labels.hpp
#pragma once
#include <vector>

namespace vinfer {

// Indices of the k largest values, largest first (ties: lower index first).
std::vector<int> topk_indices(const float* values, int n, int k);
// Softmax in double precision, for printing probabilities from logits.
std::vector<float> softmax(const float* logits, int n);

}  // namespace vinfer
