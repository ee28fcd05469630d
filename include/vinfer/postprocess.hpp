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

// How far one network's logits are from another's on the same input (a
// reduced precision against float32: `vinfer check`). Errors are relative to
// the reference's largest |logit|, so that they mean the same for any scale.
struct LogitAgreement {
  bool top1 = false;        // the same class first
  bool top5 = false;        // the same five classes first (in any order)
  double max_rel = 0;       // max |test - ref| / max |ref|
  double mean_rel = 0;      // mean |test - ref| / max |ref|
  double cosine = 0;        // test . ref / (|test| |ref|)
};
LogitAgreement compare_logits(const float* ref, const float* test, int n);

}  // namespace vinfer
