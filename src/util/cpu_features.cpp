#include "util/cpu_features.hpp"

#include "util/debug_env.hpp"

#include <hwy/detect_targets.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vinfer::detail {
namespace {

IsaLevel detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (avx2 && avx512) return IsaLevel::Avx512;
  if (avx2) return IsaLevel::Avx2;
#endif
  return IsaLevel::Plain;
}

// VINFER_ISA, if set to a known level; anything else is reported once and ignored.
IsaLevel requested(IsaLevel fallback) {
  const char* v = debug_env(DebugVar::Isa);
  if (!v || !*v) return fallback;
  if (std::strcmp(v, "plain") == 0) return IsaLevel::Plain;
  if (std::strcmp(v, "avx2") == 0) return IsaLevel::Avx2;
  if (std::strcmp(v, "avx512") == 0) return IsaLevel::Avx512;
  std::fprintf(stderr, "vinfer: warning: VINFER_ISA=%s is not plain, avx2 or avx512; ignored\n", v);
  return fallback;
}

CpuFeatures make() {
  CpuFeatures f;
  f.detected = detect();
  const IsaLevel want = requested(f.detected);
  f.level = want < f.detected ? want : f.detected;
  f.avx2 = f.level >= IsaLevel::Avx2;
  f.avx512 = f.level >= IsaLevel::Avx512;
#if defined(__x86_64__) || defined(__i386__)
  f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vnni");
  // (CPUID leaf 7, sub-leaf 1, EAX bit 5: gcc 12's __builtin_cpu_supports lacks it.)
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool bf16 = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1);
  f.avx512_bf16 = f.avx512 && bf16 && !debug_env_is(DebugVar::Bf16, "0");
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = make();
  return f;
}

std::int64_t hwy_target() {
  static const std::int64_t target = [] {
    const CpuFeatures& f = cpu_features();
#if defined(__x86_64__) || defined(__i386__)
    // Highway's groups: SSSE3; SSE4 = + SSE4.1, SSE4.2, CLMUL, AES; AVX2 =
    // + AVX, AVX2, BMI, BMI2, FMA, F16C, LZCNT; AVX3 = + AVX-512 F, VL, DQ, BW.
    const bool ssse3 = __builtin_cpu_supports("ssse3");
    const bool sse4 = ssse3 && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("sse4.2") &&
                      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("aes");
    // (F16C and LZCNT from CPUID: clang's __builtin_cpu_supports lacks them.)
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
    const bool lzcnt = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c >> 5 & 1);
    const bool avx2 = sse4 && f.avx2 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("bmi") && f16c && lzcnt;
    if (avx2 && f.avx512) return static_cast<std::int64_t>(HWY_AVX3);
    if (avx2) return static_cast<std::int64_t>(HWY_AVX2);
    if (sse4) return static_cast<std::int64_t>(HWY_SSE4);
    if (ssse3) return static_cast<std::int64_t>(HWY_SSSE3);
#endif
    return static_cast<std::int64_t>(HWY_SCALAR);
  }();
  return target;
}

const char* to_string(IsaLevel level) {
  switch (level) {
    case IsaLevel::Plain: return "plain";
    case IsaLevel::Avx2: return "avx2";
    case IsaLevel::Avx512: return "avx512";
  }
  return "?";
}

}  // namespace vinfer::detail
