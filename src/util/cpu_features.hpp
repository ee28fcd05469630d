// Internal: which instruction sets this process may use, detected once.
//
// Every ISA-specific translation unit (compiled with -mavx2, -mavx512f, ...)
// is reached only after asking here; nothing else in vinfer calls
// __builtin_cpu_supports. The environment variable VINFER_ISA
// (plain|avx2|avx512; a debugging aid, see docs/architecture.md) caps the
// level below what the CPU has, so that one machine can run the paths of an
// older one: the tests run the suite at each level the machine reaches.
#pragma once
#include <cstdint>

namespace vinfer::detail {

enum class IsaLevel {
  Plain = 0,   // portable code only (Highway up to SSE4)
  Avx2 = 1,    // AVX2 + FMA + BMI2 (Haswell, Zen 1 and later)
  Avx512 = 2,  // AVX-512 F + BW + DQ + VL (Skylake-SP, Zen 4 and later)
};

struct CpuFeatures {
  IsaLevel detected = IsaLevel::Plain;  // what the CPU has
  IsaLevel level = IsaLevel::Plain;     // what vinfer uses: detected, capped by VINFER_ISA
  bool avx2 = false;                    // level >= Avx2
  bool avx512 = false;                  // level >= Avx512
  bool avx512_vnni = false;             // avx512 and the CPU has VBMI + VNNI (Ice Lake, Zen 4)
  // avx512 and the CPU has bfloat16 dot products (AVX512_BF16: Cooper Lake,
  // Sapphire Rapids, Zen 4), unless VINFER_BF16=0 hides them (to run, on
  // such a CPU, what a CPU without them does).
  bool avx512_bf16 = false;
};

// Detected on first use; thread-safe.
const CpuFeatures& cpu_features();

// The Highway target (HWY_AVX3, HWY_AVX2, HWY_SSE4, HWY_SSSE3 or
// HWY_SCALAR) that the level and the CPU allow: the features Highway asks
// of each (hwy_dispatch.hpp).
std::int64_t hwy_target();

const char* to_string(IsaLevel level);

}  // namespace vinfer::detail
