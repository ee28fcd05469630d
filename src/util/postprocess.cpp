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

LogitAgreement compare_logits(const float* ref, const float* test, int n) {
  LogitAgreement a;
  if (n <= 0) return a;
  double peak = 0, sum = 0, dot = 0, rr = 0, tt = 0;
  for (int i = 0; i < n; ++i) {
    const double r = ref[i], t = test[i], e = std::fabs(t - r), d = std::isnan(e) ? HUGE_VAL : e;  // NaN: no agreement
    peak = std::max(peak, std::fabs(r));
    a.max_rel = std::max(a.max_rel, d);
    sum += d, dot += r * t, rr += r * r, tt += t * t;
  }
  a.mean_rel = sum / n;
  if (peak > 0) a.max_rel /= peak, a.mean_rel /= peak;
  a.cosine = rr > 0 && tt > 0 ? dot / std::sqrt(rr * tt) : (rr == tt ? 1.0 : 0.0);
  std::vector<int> r5 = topk_indices(ref, n, 5), t5 = topk_indices(test, n, 5);
  a.top1 = r5[0] == t5[0];
  std::sort(r5.begin(), r5.end());
  std::sort(t5.begin(), t5.end());
  a.top5 = r5 == t5;
  return a;
}

}  // namespace vinfer
