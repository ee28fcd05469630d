// libjpeg-turbo's integer inverse DCTs (jidctint.c, jidctred.c), same
// constants, same rounding points, same shortcuts for all-zero columns and
// rows (which give the same numbers as the full formulas).
#include "image/jpeg_idct.hpp"

#include <algorithm>

#include "util/cpu_features.hpp"

namespace vinfer::detail {
namespace {

constexpr int kConstBits = 13, kPass1Bits = 2;
// FIX(x) with CONST_BITS 13, rounded as libjpeg rounds it.
constexpr int fix(double x) { return static_cast<int>(x * (1 << kConstBits) + 0.5); }
constexpr int k0_211 = fix(0.211164243), k0_298 = fix(0.298631336), k0_390 = fix(0.390180644),
              k0_509 = fix(0.509795579), k0_541 = fix(0.541196100), k0_601 = fix(0.601344887),
              k0_720 = fix(0.720959822), k0_765 = fix(0.765366865), k0_850 = fix(0.850430095),
              k0_899 = fix(0.899976223), k1_061 = fix(1.061594337), k1_175 = fix(1.175875602),
              k1_272 = fix(1.272758580), k1_451 = fix(1.451774981), k1_501 = fix(1.501321110),
              k1_847 = fix(1.847759065), k1_961 = fix(1.961570560), k2_053 = fix(2.053119869),
              k2_172 = fix(2.172734803), k2_562 = fix(2.562915447), k3_072 = fix(3.072711026),
              k3_624 = fix(3.624509785);
static_assert(k0_298 == 2446 && k3_072 == 25172 && k3_624 == 29692 && k0_211 == 1730);

using L = long long;
constexpr L descale(L x, int n) { return (x + (L{1} << (n - 1))) >> n; }
inline std::uint8_t out8(L v) { return static_cast<std::uint8_t>(std::clamp<L>(v + 128, 0, 255)); }
inline L deq(const std::int16_t* c, const std::uint16_t* q, int i) { return L{c[i]} * q[i]; }

// The 8-point islow butterfly on in[0..7] (already dequantized / from the
// workspace); writes the eight sums before descaling.
inline void islow_1d(L i0, L i1, L i2, L i3, L i4, L i5, L i6, L i7, L o[8]) {
  L z1 = (i2 + i6) * k0_541;
  const L tmp2 = z1 + i6 * -k1_847, tmp3 = z1 + i2 * k0_765;
  const L t0 = (i0 + i4) * (L{1} << kConstBits), t1 = (i0 - i4) * (L{1} << kConstBits);
  const L tmp10 = t0 + tmp3, tmp13 = t0 - tmp3, tmp11 = t1 + tmp2, tmp12 = t1 - tmp2;
  L a0 = i7, a1 = i5, a2 = i3, a3 = i1;
  z1 = a0 + a3;
  L z2 = a1 + a2, z3 = a0 + a2, z4 = a1 + a3;
  const L z5 = (z3 + z4) * k1_175;
  a0 *= k0_298;
  a1 *= k2_053;
  a2 *= k3_072;
  a3 *= k1_501;
  z1 *= -k0_899;
  z2 *= -k2_562;
  z3 = z3 * -k1_961 + z5;
  z4 = z4 * -k0_390 + z5;
  a0 += z1 + z3;
  a1 += z2 + z4;
  a2 += z2 + z3;
  a3 += z1 + z4;
  o[0] = tmp10 + a3;
  o[7] = tmp10 - a3;
  o[1] = tmp11 + a2;
  o[6] = tmp11 - a2;
  o[2] = tmp12 + a1;
  o[5] = tmp12 - a1;
  o[3] = tmp13 + a0;
  o[4] = tmp13 - a0;
}


// Each transform is written once, over an output policy: samples (descaled,
// clamped) or the sums before the last shift (jpeg_idct.hpp, "deferred").
struct ToSamples {
  std::uint8_t* out;
  std::ptrdiff_t stride;
  int shift;
  void put(int y, int x, L v) const { out[y * stride + x] = out8(descale(v, shift)); }
};
struct ToSums {
  std::int32_t* out;
  int size, shift;
  void put(int y, int x, L v) const { out[y * size + x] = static_cast<std::int32_t>(v + (L{1} << (shift - 1))); }
};

template <class Out>
void islow_8x8(const std::int16_t* c, const std::uint16_t* q, const Out& out) {
  int ws[64];
  for (int x = 0; x < 8; ++x) {  // columns
    if (!c[8 + x] && !c[16 + x] && !c[24 + x] && !c[32 + x] && !c[40 + x] && !c[48 + x] && !c[56 + x]) {
      const int dc = static_cast<int>(deq(c, q, x) * (1 << kPass1Bits));
      for (int y = 0; y < 8; ++y) ws[8 * y + x] = dc;
      continue;
    }
    L o[8];
    islow_1d(deq(c, q, x), deq(c, q, 8 + x), deq(c, q, 16 + x), deq(c, q, 24 + x), deq(c, q, 32 + x),
             deq(c, q, 40 + x), deq(c, q, 48 + x), deq(c, q, 56 + x), o);
    for (int y = 0; y < 8; ++y) ws[8 * y + x] = static_cast<int>(descale(o[y], kConstBits - kPass1Bits));
  }
  for (int y = 0; y < 8; ++y) {  // rows (libjpeg's all-zero-row shortcut gives the same numbers)
    const int* w = ws + 8 * y;
    L o[8];
    islow_1d(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], o);
    for (int x = 0; x < 8; ++x) out.put(y, x, o[x]);
  }
}

template <class Out>
void reduced_4x4(const std::int16_t* c, const std::uint16_t* q, const Out& out) {
  int ws[32];  // 4 rows of 8 columns
  for (int x = 0; x < 8; ++x) {
    if (x == 4) continue;  // the second pass does not use column 4
    if (!c[8 + x] && !c[16 + x] && !c[24 + x] && !c[40 + x] && !c[48 + x] && !c[56 + x]) {
      const int dc = static_cast<int>(deq(c, q, x) * (1 << kPass1Bits));
      for (int y = 0; y < 4; ++y) ws[8 * y + x] = dc;
      continue;
    }
    const L t0 = deq(c, q, x) * (L{1} << (kConstBits + 1));
    const L t2 = deq(c, q, 16 + x) * k1_847 + deq(c, q, 48 + x) * -k0_765;
    const L t10 = t0 + t2, t12 = t0 - t2;
    const L z1 = deq(c, q, 56 + x), z2 = deq(c, q, 40 + x), z3 = deq(c, q, 24 + x), z4 = deq(c, q, 8 + x);
    const L a0 = z1 * -k0_211 + z2 * k1_451 + z3 * -k2_172 + z4 * k1_061;
    const L a2 = z1 * -k0_509 + z2 * -k0_601 + z3 * k0_899 + z4 * k2_562;
    constexpr int n = kConstBits - kPass1Bits + 1;
    ws[x] = static_cast<int>(descale(t10 + a2, n));
    ws[24 + x] = static_cast<int>(descale(t10 - a2, n));
    ws[8 + x] = static_cast<int>(descale(t12 + a0, n));
    ws[16 + x] = static_cast<int>(descale(t12 - a0, n));
  }
  for (int y = 0; y < 4; ++y) {
    const int* w = ws + 8 * y;
    const L t0 = L{w[0]} * (L{1} << (kConstBits + 1));
    const L t2 = L{w[2]} * k1_847 + L{w[6]} * -k0_765;
    const L t10 = t0 + t2, t12 = t0 - t2;
    const L z1 = w[7], z2 = w[5], z3 = w[3], z4 = w[1];
    const L a0 = z1 * -k0_211 + z2 * k1_451 + z3 * -k2_172 + z4 * k1_061;
    const L a2 = z1 * -k0_509 + z2 * -k0_601 + z3 * k0_899 + z4 * k2_562;
    out.put(y, 0, t10 + a2);
    out.put(y, 3, t10 - a2);
    out.put(y, 1, t12 + a0);
    out.put(y, 2, t12 - a0);
  }
}

template <class Out>
void reduced_2x2(const std::int16_t* c, const std::uint16_t* q, const Out& out) {
  int ws[16];  // 2 rows of 8 columns
  for (int x = 0; x < 8; ++x) {
    if (x == 2 || x == 4 || x == 6) continue;  // unused by the second pass
    if (!c[8 + x] && !c[24 + x] && !c[40 + x] && !c[56 + x]) {
      const int dc = static_cast<int>(deq(c, q, x) * (1 << kPass1Bits));
      ws[x] = ws[8 + x] = dc;
      continue;
    }
    const L t10 = deq(c, q, x) * (L{1} << (kConstBits + 2));
    const L t0 = deq(c, q, 56 + x) * -k0_720 + deq(c, q, 40 + x) * k0_850 + deq(c, q, 24 + x) * -k1_272 +
                 deq(c, q, 8 + x) * k3_624;
    constexpr int n = kConstBits - kPass1Bits + 2;
    ws[x] = static_cast<int>(descale(t10 + t0, n));
    ws[8 + x] = static_cast<int>(descale(t10 - t0, n));
  }
  for (int y = 0; y < 2; ++y) {
    const int* w = ws + 8 * y;
    const L t10 = L{w[0]} * (L{1} << (kConstBits + 2));
    const L t0 = L{w[7]} * -k0_720 + L{w[5]} * k0_850 + L{w[3]} * -k1_272 + L{w[1]} * k3_624;
    out.put(y, 0, t10 + t0);
    out.put(y, 1, t10 - t0);
  }
}

}  // namespace

int idct_last_shift(int size) {
  switch (size) {
    case 8: return kConstBits + kPass1Bits + 3;
    case 4: return kConstBits + kPass1Bits + 3 + 1;
    case 2: return kConstBits + kPass1Bits + 3 + 2;
    case 1: return 3;
    default: return 0;
  }
}

int idct_dc_scale_log2(int size) {
  // A DC step of d (dequantized) moves every sum before the last shift by
  // d << this: the DC enters the first pass at 2^(13 + s1), survives its
  // descale exactly (a multiple of it), and the second pass multiplies again.
  switch (size) {
    case 8: return 2 + kConstBits;      // (d << 13 >> 11) << 13
    case 4: return 2 + kConstBits + 1;  // (d << 14 >> 12) << 14
    case 2: return 2 + kConstBits + 2;  // (d << 15 >> 13) << 15
    case 1: return 0;
    default: return 0;
  }
}

std::uint8_t idct_finish(std::int64_t sum, int size) {
  const L v = sum >> idct_last_shift(size);
  if (size != 1) return out8(v);
  // 1x1 is plain C in libjpeg-turbo too, through its range-limit table:
  // values wrap modulo 1024 outside -512..511 (only corrupt files get there).
  const int i = static_cast<int>(v & 1023);
  return static_cast<std::uint8_t>(i < 128 ? i + 128 : i < 512 ? 255 : i < 896 ? 0 : i - 896);
}

void idct_islow_8x8(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t stride) {
  islow_8x8(c, q, ToSamples{out, stride, idct_last_shift(8)});
}
void idct_reduced_4x4(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t stride) {
  reduced_4x4(c, q, ToSamples{out, stride, idct_last_shift(4)});
}
void idct_reduced_2x2(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t stride) {
  reduced_2x2(c, q, ToSamples{out, stride, idct_last_shift(2)});
}
void idct_reduced_1x1(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t) {
  out[0] = idct_finish(static_cast<std::int32_t>(deq(c, q, 0) + 4), 1);
}

void idct_sums_8x8(const std::int16_t* c, const std::uint16_t* q, std::int32_t* out) {
  islow_8x8(c, q, ToSums{out, 8, idct_last_shift(8)});
}
void idct_sums_4x4(const std::int16_t* c, const std::uint16_t* q, std::int32_t* out) {
  reduced_4x4(c, q, ToSums{out, 4, idct_last_shift(4)});
}
void idct_sums_2x2(const std::int16_t* c, const std::uint16_t* q, std::int32_t* out) {
  reduced_2x2(c, q, ToSums{out, 2, idct_last_shift(2)});
}
void idct_sums_1x1(const std::int16_t* c, const std::uint16_t* q, std::int32_t* out) {
  out[0] = static_cast<std::int32_t>(deq(c, q, 0) + 4);
}

void idct_finish_block(const std::int32_t* sums, int size, std::int64_t add, std::uint8_t* out, std::ptrdiff_t stride) {
  for (int y = 0; y < size; ++y, out += stride)
    for (int x = 0; x < size; ++x) out[x] = idct_finish(sums[y * size + x] + add, size);
}

IdctFinishFn idct_finish_block_fn() { return cpu_features().avx2 ? idct_finish_block_avx2 : idct_finish_block; }

IdctSumsFn idct_sums_for_size(int size) {
  switch (size) {
    case 8: return cpu_features().avx2 ? idct_sums_8x8_avx2 : idct_sums_8x8;
    case 4: return cpu_features().avx2 ? idct_sums_4x4_avx2 : idct_sums_4x4;
    case 2: return cpu_features().avx2 ? idct_sums_2x2_avx2 : idct_sums_2x2;
    case 1: return idct_sums_1x1;
    default: return nullptr;
  }
}

IdctFn idct_for_size(int size) {
  switch (size) {
    case 8: return cpu_features().avx2 ? idct_islow_8x8_avx2 : idct_islow_8x8;
    case 4: return cpu_features().avx2 ? idct_reduced_4x4_avx2 : idct_reduced_4x4;
    case 2: return cpu_features().avx2 ? idct_reduced_2x2_avx2 : idct_reduced_2x2;
    case 1: return idct_reduced_1x1;
    default: return nullptr;
  }
}

}  // namespace vinfer::detail
