// Internal: Highway's per-target code, chosen by cpu_features() rather than by
// libhwy. Highway's own dispatch (HWY_EXPORT / HWY_DYNAMIC_DISPATCH) needs
// libhwy.so, which times its clock each time it is loaded: 3-4 ms of every
// vinfer process start. Only Highway's headers are used.
//
// Use in a file that includes <hwy/foreach_target.h>, after the per-target
// code, inside `#if HWY_ONCE`, in the namespace that holds the per-target
// namespaces: VINFER_HWY_DISPATCH(Fn)(args...) calls the best version of Fn.
#pragma once
#include <cstdint>

#include <hwy/highway.h>

#include "util/cpu_features.hpp"

namespace vinfer::detail {

// The version for hwy_target() or, where that was not compiled, the best
// one below it; `fallback` (the baseline's) where none is.
template <class Fn>
Fn hwy_choose(const Fn (&by_target)[4], Fn fallback) {
  static constexpr std::int64_t kOrder[4] = {HWY_AVX3, HWY_AVX2, HWY_SSE4, HWY_SSSE3};
  const std::int64_t target = hwy_target();
  for (int i = 0; i < 4; ++i)
    if (kOrder[i] >= target && by_target[i]) return by_target[i];  // (a larger bit is a lesser target)
  return fallback;
}

}  // namespace vinfer::detail

#if HWY_TARGETS & HWY_AVX3
#define VINFER_HWY_AVX3_(FN) &N_AVX3::FN
#else
#define VINFER_HWY_AVX3_(FN) nullptr
#endif
#if HWY_TARGETS & HWY_AVX2
#define VINFER_HWY_AVX2_(FN) &N_AVX2::FN
#else
#define VINFER_HWY_AVX2_(FN) nullptr
#endif
#if HWY_TARGETS & HWY_SSE4
#define VINFER_HWY_SSE4_(FN) &N_SSE4::FN
#else
#define VINFER_HWY_SSE4_(FN) nullptr
#endif
#if HWY_TARGETS & HWY_SSSE3
#define VINFER_HWY_SSSE3_(FN) &N_SSSE3::FN
#else
#define VINFER_HWY_SSSE3_(FN) nullptr
#endif

// Chosen once per call site.
#define VINFER_HWY_DISPATCH(FN)                                                                                        \
  ([]() {                                                                                                              \
    using Fn_ = decltype(&HWY_STATIC_DISPATCH(FN));                                                                    \
    static const Fn_ fn = ::vinfer::detail::hwy_choose<Fn_>(                                                           \
        {VINFER_HWY_AVX3_(FN), VINFER_HWY_AVX2_(FN), VINFER_HWY_SSE4_(FN), VINFER_HWY_SSSE3_(FN)},                    \
        &HWY_STATIC_DISPATCH(FN));                                                                                     \
    return fn;                                                                                                         \
  }())
