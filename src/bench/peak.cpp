// The FP32 multiply-add peak as a loop of independent FMAs in registers
// reaches it: the ceiling `vinfer profile` compares each layer with.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "util/cpu_features.hpp"
#include "vinfer/stats.hpp"

namespace vinfer {
namespace {

constexpr long kIters = 1 << 21;

// 12 independent chains hide the FMA latency (4 cycles x 2 ports + margin);
// named variables, since GCC kept an array of them in memory.
#define VINFER_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx2,fma"))) float fma_loop_avx2(float seed) {
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
#define DECL(i) __m256 a##i = _mm256_set1_ps(seed + i);
  VINFER_CHAINS(DECL)
#undef DECL
  for (long k = 0; k < kIters; ++k) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, m, c);
    VINFER_CHAINS(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, a##i);
  VINFER_CHAINS(SUM)
#undef SUM
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float fma_loop_avx512(float seed) {
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
#define DECL(i) __m512 a##i = _mm512_set1_ps(seed + i);
  VINFER_CHAINS(DECL)
#undef DECL
  for (long k = 0; k < kIters; ++k) {
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, m, c);
    VINFER_CHAINS(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, a##i);
  VINFER_CHAINS(SUM)
#undef SUM
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0];
}
#undef VINFER_CHAINS

}  // namespace

PeakFlops measure_fp32_peak(int threads) {
  PeakFlops p;
  const detail::CpuFeatures& cpu = detail::cpu_features();  // the level the kernels run at
  const bool avx512 = cpu.avx512;
  if (!cpu.avx2) return p;  // no FMA kernels: 0
  p.isa = avx512 ? "AVX-512 FMA" : "AVX2 FMA";
  p.threads = std::max(1, threads);
  const double lanes = avx512 ? 16 : 8;
  double best = 0;
  for (int round = 0; round < 5; ++round) {  // the best of five: the host is shared
    std::vector<std::thread> ts;
    std::vector<float> sink(static_cast<std::size_t>(p.threads));
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < p.threads; ++t)
      ts.emplace_back([&, t] { sink[static_cast<std::size_t>(t)] = avx512 ? fma_loop_avx512(static_cast<float>(t)) : fma_loop_avx2(static_cast<float>(t)); });
    for (auto& t : ts) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * lanes * 12 * kIters * p.threads / s / 1e9);
  }
  p.gflops = best;
  return p;
}

}  // namespace vinfer
