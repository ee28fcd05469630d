#include "vinfer/postprocess.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vinfer {

std::vector<int> topk_indices(const float* v, int n, int k) {
  std::vector<int> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  k = std::clamp(k, 0, n);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int a, int b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
  idx.resize(static_cast<std::size_t>(k));
  return idx;
}

std::vector<float> softmax(const float* logits, int n) {
  const float mx = n ? *std::max_element(logits, logits + n) : 0.f;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - mx);
  std::vector<float> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = static_cast<float>(std::exp(static_cast<double>(logits[i]) - mx) / sum);
  return p;
}

}  // namespace vinfer
