#include "util/cpu_features.hpp"

#include "util/debug_env.hpp"

#include <hwy/targets.h>

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

// Highway dispatches on its own; keep it at or below the chosen level too.
void cap_highway(IsaLevel level) {
  std::int64_t allowed = hwy::SupportedTargets();
  if (level < IsaLevel::Avx512) allowed &= ~static_cast<std::int64_t>(HWY_AVX3 | HWY_AVX3_DL);
  if (level < IsaLevel::Avx2) allowed &= ~static_cast<std::int64_t>(HWY_AVX2);
  if (allowed != hwy::SupportedTargets()) hwy::SetSupportedTargetsForTest(allowed);
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
#endif
  cap_highway(f.level);
  return f;
}

// Applied before main(), so that Highway's first dispatch already sees the cap.
[[maybe_unused]] const CpuFeatures& applied_at_startup = cpu_features();

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = make();
  return f;
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
