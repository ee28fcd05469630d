// vinfer's baseline JPEG scan decoder: see jpeg_scan.hpp for what it takes
// and why. Layout: unstuff the entropy-coded bytes, decode Huffman codes into
// coefficient blocks stored MCU by MCU (on two threads), then inverse-transform
// and hand rows to the caller (on two threads).
#include "image/jpeg_scan.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "image/jpeg_idct.hpp"
#include "util/scratch.hpp"
#include "util/thread_pool.hpp"

namespace vinfer::detail {
namespace {

// Zigzag position -> natural position, padded (with 63) for the positions
// past the end that a run or an end-of-block's jump (kEobJump) lands on.
constexpr int kEobJump = 96;
struct NaturalOrder {
  std::uint8_t at[64 + kEobJump] = {};
  constexpr NaturalOrder() {
    constexpr std::uint8_t zigzag[64] = {
        0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
        41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
        30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};
    for (int i = 0; i < 64 + kEobJump; ++i) at[i] = i < 64 ? zigzag[i] : 63;
  }
};
constexpr NaturalOrder kNatural;

// A code and, when they fit, its extra bits are looked up in one step from
// the next kFastBits bits of the stream.
constexpr int kFastBits = 10;
constexpr std::uint32_t kFull = 64;  // the entry is complete: AC advance and value, or DC value

inline int extend(std::uint32_t v, int s) {  // JPEG's sign rule for an s-bit magnitude
  return static_cast<int>(v) + (v < (1u << (s - 1)) ? 1 - (1 << s) : 0);
}

struct Huff {
  // Entry: bits 0-5 bits to consume; bit 6 kFull; bits 8-15 the symbol,
  // or for a complete AC entry how far it moves along the block (run + 1,
  // 16 for ZRL, kEobJump for end of block); bits 16-31 the value (kFull);
  // 0: a code longer than kFastBits.
  std::uint32_t fast[1 << kFastBits];
  std::int32_t maxcode[17];  // largest code of each length, -1 if none
  std::int32_t valoff[17];   // symbol index minus code, per length
  std::uint8_t sym[256];

  // libjpeg's checks (jpeg_make_d_derived_tbl): at most 256 symbols, no
  // all-ones code, DC symbols at most 15.
  bool build(const JpegHuffSpec& s, bool dc) {
    int total = 0;
    for (int l = 1; l <= 16; ++l) total += s.counts[l];
    if (total > 256) return false;
    std::memset(fast, 0, sizeof fast);
    int code = 0, k = 0;
    for (int l = 1; l <= 16; ++l) {
      valoff[l] = k - code;
      for (int i = 0; i < s.counts[l]; ++i, ++k, ++code) {
        if (code >= (1 << l)) return false;  // more codes than this length has
        const int symbol = sym[k] = s.symbols[k];
        if (dc && symbol > 15) return false;
        if (l > kFastBits) continue;
        const int size = dc ? symbol : symbol & 15;
        const int spare = kFastBits - l;
        for (int f = 0; f < (1 << spare); ++f) {
          const int idx = (code << spare) | f;
          std::uint32_t e = static_cast<std::uint32_t>(l) | static_cast<std::uint32_t>(symbol) << 8;
          if (size && l + size <= kFastBits) {
            const int value = extend(static_cast<std::uint32_t>(idx >> (spare - size)) & ((1u << size) - 1), size);
            const int step = dc ? symbol : (symbol >> 4) + 1;
            e = static_cast<std::uint32_t>(l + size) | kFull | static_cast<std::uint32_t>(step) << 8 |
                static_cast<std::uint32_t>(static_cast<std::uint16_t>(value)) << 16;
          } else if (!dc && size == 0) {  // ZRL, or (any other run) end of block, as libjpeg reads them
            e = static_cast<std::uint32_t>(l) | kFull | static_cast<std::uint32_t>(symbol == 0xF0 ? 16 : kEobJump) << 8;
          }
          fast[idx] = e;
        }
      }
      maxcode[l] = s.counts[l] ? code - 1 : -1;
      if (code >= (1 << l)) return false;
      code <<= 1;
    }
    return true;
  }
};

// MSB-first bit reader over unstuffed bytes (zero-padded past the end):
// the top `n` bits of `buf` are the next ones; each refill leaves 56 or more.
struct Bits {
  const std::uint8_t* p;
  std::uint64_t buf = 0;
  int n = 0;
  explicit Bits(const std::uint8_t* at) : p(at) {}
  // Keeps at least 32 bits (a code and its extra bits) in the buffer.
  void ensure() {
    if (n < 32) refill();
  }
  void refill() {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    buf |= __builtin_bswap64(w) >> n;
    p += (63 - n) >> 3;
    n |= 56;
  }
  std::uint32_t peek(int k) const { return static_cast<std::uint32_t>(buf >> (64 - k)); }
  void skip(int k) {
    buf <<= k;
    n -= k;
  }
  std::uint32_t get(int k) {
    const std::uint32_t v = peek(k);
    skip(k);
    return v;
  }
  std::size_t pos(const std::uint8_t* base) const { return static_cast<std::size_t>(p - base) * 8 - n; }
};

// A code longer than kFastBits (libjpeg's jpeg_huff_decode); -1: no such code.
int decode_slow(const Huff& h, Bits& b) {
  const std::uint32_t c16 = b.peek(16);
  for (int l = kFastBits + 1; l <= 16; ++l) {
    const int c = static_cast<int>(c16 >> (16 - l));
    if (c <= h.maxcode[l]) {
      b.skip(l);
      return h.sym[h.valoff[l] + c];
    }
  }
  return -1;
}

// Where decoded coefficients go: a zeroed block in natural order, or
// nowhere (unwanted chroma, whose codes must still be read).
struct BlockOut {
  std::int16_t* blk;
  void start() { std::memset(blk, 0, 64 * sizeof(std::int16_t)); }
  void put(int pos, int v) { blk[pos] = static_cast<std::int16_t>(v); }
};
struct NoOut {
  void start() {}
  void put(int, int) {}
};

// One block: 0 on a bad code or a run past the block's end, 1 when it has
// only a DC coefficient, 2 otherwise.
template <class Out>
inline int decode_block(Bits& b, const Huff& dc, const Huff& ac, int& pred, Out& out) {
  out.start();
  b.ensure();
  std::uint32_t e = dc.fast[b.peek(kFastBits)];
  if (e & kFull) {
    pred += static_cast<std::int16_t>(e >> 16);
    b.skip(static_cast<int>(e & 63));
  } else {
    int s;
    if (e & 63) {
      s = static_cast<int>((e >> 8) & 255);
      b.skip(static_cast<int>(e & 63));
    } else if ((s = decode_slow(dc, b)) < 0) {
      return 0;
    }
    if (s) pred += extend(b.get(s), s);
  }
  out.put(0, pred);
  int k = 1;
  while (k < 64) {
    b.ensure();
    e = ac.fast[b.peek(kFastBits)];
    if (e & kFull) {
      k += static_cast<int>((e >> 8) & 255);
      out.put(kNatural.at[k - 1], static_cast<std::int16_t>(e >> 16));  // EOB, ZRL: a zero
      b.skip(static_cast<int>(e & 63));
      continue;
    }
    int rs;
    if (e & 63) {
      rs = static_cast<int>((e >> 8) & 255);
      b.skip(static_cast<int>(e & 63));
    } else if ((rs = decode_slow(ac, b)) < 0) {
      return 0;
    }
    const int r = rs >> 4, s = rs & 15;
    if (s) {
      k += r;
      out.put(kNatural.at[k], extend(b.get(s), s));
      ++k;
    } else if (r == 15) {
      k += 16;
    } else {
      k += kEobJump;
    }
  }
  if (k == 1 + kEobJump) return 1;
  return k == 64 || k > kEobJump ? 2 : 0;  // else a run went past the block's end
}

constexpr int kMaxSlots = 10;  // blocks per MCU (JPEG's limit)

struct Layout {
  int slots = 0;                               // blocks per MCU
  int comp[kMaxSlots] = {};                    // component of each block
  int bx[kMaxSlots] = {}, by[kMaxSlots] = {};  // its place in the MCU, in blocks
  bool keep[kMaxSlots] = {};
  int kept = 0;  // blocks wanted per MCU
  int mcus_per_row = 0, mcu_rows = 0, mcus = 0;
  Huff dc[3], ac[3];
};

// One MCU into `blocks` (kept x 64, natural order); has_ac[t]: whether
// kept block t has AC coefficients.
inline bool decode_mcu(Bits& b, const Layout& L, int pred[3], std::int16_t* blocks, bool* has_ac) {
  for (int s = 0; s < L.slots; ++s) {
    const int c = L.comp[s];
    if (L.keep[s]) {
      BlockOut o{blocks};
      const int r = decode_block(b, L.dc[c], L.ac[c], pred[c], o);
      if (!r) return false;
      *has_ac++ = r == 2;
      blocks += 64;
    } else {
      NoOut o;
      if (!decode_block(b, L.dc[c], L.ac[c], pred[c], o)) return false;
    }
  }
  return true;
}

// The entropy-coded bytes with 0xFF00 turned back into 0xFF, fill bytes
// dropped, and where each restart interval begins.
struct Unstuffed {
  std::vector<std::uint8_t> bytes;  // then kPad zero bytes
  std::size_t size = 0;
  std::vector<std::size_t> restarts;  // offsets of intervals 1, 2, ...
};
constexpr std::size_t kPad = 4096;  // > what one MCU can read (10 blocks of 64 codes of <= 31 bits)

// False unless the data ends at EOI, with restart markers in sequence.
bool unstuff(const std::uint8_t* d, std::size_t n, Unstuffed& u) {
  u.bytes.resize(n + kPad);
  u.restarts.clear();
  std::uint8_t* o = u.bytes.data();
  std::size_t i = 0;
  int next_rst = 0;
  bool eoi = false;
  while (i < n) {
    const void* ff = std::memchr(d + i, 0xFF, n - i);
    const std::size_t j = ff ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - d) : n;
    std::memcpy(o, d + i, j - i);
    o += j - i;
    if (j + 1 >= n) break;  // no marker before the end of the file
    const std::uint8_t m = d[j + 1];
    if (m == 0x00) {
      *o++ = 0xFF;
      i = j + 2;
    } else if (m == 0xFF) {
      i = j + 1;
    } else if (m >= 0xD0 && m <= 0xD7) {
      if (m != 0xD0 + next_rst) return false;
      next_rst = (next_rst + 1) & 7;
      u.restarts.push_back(static_cast<std::size_t>(o - u.bytes.data()));
      i = j + 2;
    } else {
      eoi = m == 0xD9;
      break;
    }
  }
  u.size = static_cast<std::size_t>(o - u.bytes.data());
  std::memset(o, 0, kPad);
  return eoi;
}

// A bit reader over MCUs that knows the restart intervals: at the first
// MCU of an interval it moves to that interval's bytes and resets the DC
// predictors, after checking the last interval stayed inside its bytes.
struct Reader {
  const Unstuffed& u;
  int interval;  // MCUs per restart interval, 0: none
  Bits b;
  int pred[3] = {0, 0, 0};
  Reader(const Unstuffed& un, int ri, std::size_t byte) : u(un), interval(ri), b(un.bytes.data() + byte) {}
  std::size_t pos() const { return b.pos(u.bytes.data()); }
  std::size_t end_of(int i) const {  // bit position where interval i's bytes end
    const std::size_t n = static_cast<std::size_t>(u.restarts.size());
    return (static_cast<std::size_t>(i) < n ? u.restarts[static_cast<std::size_t>(i)] : u.size) * 8;
  }
  // Before MCU m; false if the previous interval overran.
  bool at(int m) {
    if (interval == 0 || m % interval != 0) return true;
    const int i = m / interval;
    if (i > 0 && pos() > end_of(i - 1)) return false;
    b = Bits(u.bytes.data() + (i == 0 ? 0 : u.restarts[static_cast<std::size_t>(i) - 1]));
    pred[0] = pred[1] = pred[2] = 0;
    return true;
  }
  bool ended_inside(int last_mcu) const {  // after the last MCU
    return pos() <= (interval ? end_of(last_mcu / interval) : u.size * 8);
  }
};

// The second part's output. It cannot finish its samples before it knows
// its DC predictors, so it keeps each block's transform sums without the DC
// (jpeg_idct.hpp, deferred form) and the DC apart: MCU j's sums at
// j * sums_per_mcu, its kept blocks' DCs at j * kept.
struct Deferred {
  std::vector<std::int32_t> sums;
  std::vector<std::int16_t> dc;
  std::vector<std::size_t> bitpos;  // where its MCU j began (speculation)
  std::vector<int> pred;              // its DC predictors there (3 per MCU)
  std::atomic<int> count{0};          // MCUs begun (their bitpos is final)
  std::atomic<bool> done{false}, cancel{false};
  int decoded = 0;    // MCUs decoded
  int last_bad = -1;  // its last MCU that hit bad data (before sync: noise)
  std::size_t end_bits = 0;  // where it stopped
};

std::atomic<long> g_decoded{0}, g_speculative{0}, g_restart_split{0};

struct State {
  Unstuffed u;
  Deferred deferred;
  std::vector<std::uint8_t> planes[3];
};

}  // namespace

bool decode_jpeg_scan(const JpegScanDesc& d, int out_height, int threads, const JpegRowSink& sink) {
  if (d.components != 1 && d.components != 3) return false;
  Layout L;
  int max_h = 1, max_v = 1;
  if (d.components == 3) {
    for (int c = 0; c < 3; ++c) {
      if (d.h[c] < 1 || d.h[c] > 4 || d.v[c] < 1 || d.v[c] > 4) return false;
      max_h = std::max(max_h, d.h[c]);
      max_v = std::max(max_v, d.v[c]);
    }
  }
  int hs[3] = {1, 1, 1}, vs[3] = {1, 1, 1};  // a lone component's MCU is one block
  for (int c = 0; c < d.components; ++c) {
    if (d.components == 3) hs[c] = d.h[c], vs[c] = d.v[c];
    for (int y = 0; y < vs[c]; ++y)
      for (int x = 0; x < hs[c]; ++x) {
        if (L.slots == kMaxSlots) return false;
        L.comp[L.slots] = c;
        L.bx[L.slots] = x;
        L.by[L.slots] = y;
        L.keep[L.slots] = d.block_size[c] > 0;
        L.kept += L.keep[L.slots];
        ++L.slots;
      }
    if (d.block_size[c] && !idct_for_size(d.block_size[c])) return false;
    if (!L.dc[c].build(d.dc[c], true) || !L.ac[c].build(d.ac[c], false)) return false;
  }
  if (L.kept == 0 || d.width < 1 || d.height < 1) return false;
  L.mcus_per_row = (d.width + 8 * max_h - 1) / (8 * max_h);
  L.mcu_rows = (d.height + 8 * max_v - 1) / (8 * max_v);
  L.mcus = L.mcus_per_row * L.mcu_rows;

  thread_local State state;
  State& st = state;  // a thread_local named inside the lambdas below would be the pool thread's own
  const ScratchTrim trim(st.u.bytes, st.deferred.sums, st.deferred.dc, st.deferred.bitpos, st.deferred.pred, st.planes[0],
                         st.planes[1], st.planes[2]);
  if (!unstuff(d.data, d.size, st.u)) return false;
  const int ri = d.restart_interval;
  if (ri > 0 ? st.u.restarts.size() != static_cast<std::size_t>((L.mcus + ri - 1) / ri - 1) : !st.u.restarts.empty())
    return false;

  JpegPlanes planes;
  IdctFn idct[3] = {};
  IdctSumsFn sums_fn[3] = {};
  int rows_per_mcu = 0;
  for (int c = 0; c < d.components; ++c) {
    if (!d.block_size[c]) continue;
    idct[c] = idct_for_size(d.block_size[c]);
    sums_fn[c] = idct_sums_for_size(d.block_size[c]);
    planes.stride[c] = static_cast<std::size_t>(L.mcus_per_row) * hs[c] * d.block_size[c];
    st.planes[c].resize(planes.stride[c] * static_cast<std::size_t>(L.mcu_rows) * vs[c] * d.block_size[c]);
    planes.plane[c] = st.planes[c].data();
    if (!rows_per_mcu) rows_per_mcu = vs[c] * d.block_size[c];
  }
  // The kept blocks of MCU m, in slot order, into the planes.
  auto transform = [&](int m, const std::int16_t* blocks, const bool* has_ac) {
    const std::size_t my = static_cast<std::size_t>(m / L.mcus_per_row), mx = static_cast<std::size_t>(m % L.mcus_per_row);
    for (int s = 0; s < L.slots; ++s) {
      if (!L.keep[s]) continue;
      const int c = L.comp[s];
      const std::size_t n = static_cast<std::size_t>(d.block_size[c]);
      std::uint8_t* o = st.planes[c].data() + ((my * vs[c] + L.by[s]) * n) * planes.stride[c] + (mx * hs[c] + L.bx[s]) * n;
      if (*has_ac++ || n == 1) {
        idct[c](blocks, d.quant[c], o, static_cast<std::ptrdiff_t>(planes.stride[c]));
      } else {  // what the transforms give for a lone DC: one value
        const int v = (blocks[0] * d.quant[c][0] * 4 + 16) >> 5;
        const auto px = static_cast<std::uint8_t>(v < -128 ? 0 : v > 127 ? 255 : v + 128);
        for (std::size_t y = 0; y < n; ++y, o += planes.stride[c]) std::memset(o, px, n);
      }
      blocks += 64;
    }
  };
  auto rows_done = [&](int r) {  // MCU row r is in the planes
    const int y0 = r * rows_per_mcu, y1 = std::min(out_height, y0 + rows_per_mcu);
    if (y0 < y1) sink(planes, y0, y1);
  };

  // Part A decodes from the start and transforms as it goes, up to MCU
  // `sync`; part B (second thread) decodes from there in deferred form, and
  // its MCUs are finished afterwards, on both threads. With restart
  // intervals B starts at the middle interval; without, it starts at a byte
  // in the middle of the data, not knowing where it is, and A finds the
  // sync point: the first MCU start they share.
  Deferred& B = st.deferred;
  B.count.store(0);
  B.done.store(false);
  B.cancel.store(false);
  B.last_bad = -1;
  B.decoded = 0;
  int sums_per_mcu = 0, sums_at[kMaxSlots] = {};
  for (int s = 0; s < L.slots; ++s) {
    sums_at[s] = sums_per_mcu;
    if (L.keep[s]) sums_per_mcu += d.block_size[L.comp[s]] * d.block_size[L.comp[s]];
  }
  const bool two = threads >= 2 && L.mcus >= 64 && st.u.size >= 8192 && (ri == 0 || L.mcus / ri >= 2);
  const int intervals = ri ? (L.mcus + ri - 1) / ri : 0;
  const int b_first = two && ri ? (intervals / 2) * ri : 0;  // B's first MCU (restart intervals)
  const std::size_t b_byte = two && !ri ? st.u.size * 13 / 25 : 0;  // B's work per MCU is a little more
  if (two) {
    const std::size_t n = static_cast<std::size_t>(L.mcus);
    B.bitpos.resize(n + 1);
    B.pred.resize(3 * n);
    B.sums.resize(n * static_cast<std::size_t>(sums_per_mcu));
    B.dc.resize(n * static_cast<std::size_t>(L.kept));
  }
  int sync = L.mcus, b_index = 0;  // B's index of MCU sync
  int a_pred_at_sync[3] = {};
  bool a_ok = true;
  auto part_a = [&]() {
    Reader r(st.u, ri, 0);
    alignas(32) std::int16_t blocks[kMaxSlots * 64];
    bool has_ac[kMaxSlots];
    int cursor = 0;
    bool looking = two && !ri;
    const int last = two && ri ? b_first : L.mcus;
    const std::size_t end_bits = st.u.size * 8;
    for (int m = 0; m < last; ++m) {
      // Past the data the reader sees padding; an MCU reads less than the pad.
      if (!r.at(m) || r.pos() > end_bits) {
        a_ok = false;
        break;
      }
      const std::size_t at = r.pos();
      if (looking && at >= b_byte * 8) {
        // Never waits: B may not have started (a nested pool runs the parts in turn).
        const bool done = B.done.load(std::memory_order_acquire);
        const int n = B.count.load(std::memory_order_acquire);
        while (cursor < n && B.bitpos[static_cast<std::size_t>(cursor)] < at) ++cursor;
        if (cursor < n && B.bitpos[static_cast<std::size_t>(cursor)] == at) {
          sync = m;
          b_index = cursor;
          std::copy(r.pred, r.pred + 3, a_pred_at_sync);
          return;
        }
        if (done && cursor >= n) looking = false;
      }
      if (!decode_mcu(r.b, L, r.pred, blocks, has_ac)) {
        a_ok = false;
        break;
      }
      transform(m, blocks, has_ac);
      if (m % L.mcus_per_row == L.mcus_per_row - 1) rows_done(m / L.mcus_per_row);
    }
    if (a_ok) a_ok = r.ended_inside(last - 1);
    if (two && !ri) B.cancel.store(true);  // no sync: A did it all
    if (two && ri) sync = b_first;
  };
  auto part_b = [&]() {
    Reader r(st.u, ri, b_byte);
    const bool speculative = ri == 0;
    const std::size_t end_bits = st.u.size * 8;
    alignas(32) std::int16_t blocks[kMaxSlots * 64];
    bool has_ac[kMaxSlots];
    int j = 0;
    for (int m = ri ? b_first : 0; m < L.mcus; ++m, ++j) {
      if ((speculative && r.pos() >= end_bits) || B.cancel.load(std::memory_order_relaxed)) break;
      if (!speculative && (!r.at(m) || r.pos() > end_bits)) {
        B.last_bad = j;
        break;
      }
      B.bitpos[static_cast<std::size_t>(j)] = r.pos();
      std::copy(r.pred, r.pred + 3, B.pred.begin() + 3 * static_cast<std::ptrdiff_t>(j));
      B.count.store(j + 1, std::memory_order_release);
      if (!decode_mcu(r.b, L, r.pred, blocks, has_ac)) {
        B.last_bad = j;
        if (!speculative) break;
        r.b.refill();  // carry on from wherever the reader is: before sync this is noise
        r.b.skip(1);
        continue;
      }
      std::int32_t* sums = B.sums.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(sums_per_mcu);
      std::int16_t* dc = B.dc.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(L.kept);
      std::int16_t* blk = blocks;
      const bool* ac = has_ac;
      for (int s = 0; s < L.slots; ++s) {
        if (!L.keep[s]) continue;
        *dc++ = blk[0];
        const int c = L.comp[s], n = d.block_size[c];
        if (*ac++ || n == 1) {
          blk[0] = 0;
          sums_fn[c](blk, d.quant[c], sums + sums_at[s]);
        } else {  // no AC: the sums are the rounding term alone
          std::fill_n(sums + sums_at[s], n * n, std::int32_t{1} << (idct_last_shift(n) - 1));
        }
        blk += 64;
      }
    }
    B.bitpos[static_cast<std::size_t>(j)] = r.pos();
    B.decoded = j;
    B.end_bits = r.pos();
    B.done.store(true, std::memory_order_release);
  };
  if (two) {
    parallel_for(2, 2, [&](int part, int) { part ? part_b() : part_a(); });
  } else {
    part_a();
  }
  if (!a_ok) return false;
  int dc_delta[3] = {0, 0, 0};
  if (sync < L.mcus) {
    const int needed = L.mcus - sync;  // B's MCUs b_index .. b_index + needed - 1
    if (B.last_bad >= b_index || B.decoded < b_index + needed) return false;
    if (ri == 0) {
      if (B.bitpos[static_cast<std::size_t>(b_index + needed)] > st.u.size * 8) return false;
      for (int c = 0; c < 3; ++c) dc_delta[c] = a_pred_at_sync[c] - B.pred[3 * static_cast<std::size_t>(b_index) + c];
    } else if (B.end_bits > st.u.size * 8) {  // the last interval overran
      return false;
    }
  }
  // The rows from MCU sync on: B's samples finished, on both threads.
  const IdctFinishFn finish = idct_finish_block_fn();
  const int r_first = sync / L.mcus_per_row, rows = L.mcu_rows - r_first;
  if (rows > 0) {
    parallel_for(rows, std::min(threads, rows), [&](int r0, int r1) {
      for (int r = r_first + r0; r < r_first + r1; ++r) {
        for (int m = std::max(sync, r * L.mcus_per_row); m < (r + 1) * L.mcus_per_row; ++m) {
          const std::size_t j = static_cast<std::size_t>(m - sync + b_index);
          const std::int32_t* sums = B.sums.data() + j * static_cast<std::size_t>(sums_per_mcu);
          const std::int16_t* dc = B.dc.data() + j * static_cast<std::size_t>(L.kept);
          const std::size_t my = static_cast<std::size_t>(m / L.mcus_per_row);
          const std::size_t mx = static_cast<std::size_t>(m % L.mcus_per_row);
          for (int s = 0; s < L.slots; ++s) {
            if (!L.keep[s]) continue;
            const int c = L.comp[s], n = d.block_size[c];
            // libjpeg keeps DC values as 16-bit coefficients.
            const auto true_dc = static_cast<std::int16_t>(*dc++ + dc_delta[c]);
            const std::int64_t add = (std::int64_t{true_dc} * d.quant[c][0]) << idct_dc_scale_log2(n);
            std::uint8_t* o = st.planes[c].data() +
                              ((my * vs[c] + L.by[s]) * n) * planes.stride[c] + (mx * hs[c] + L.bx[s]) * n;
            finish(sums + sums_at[s], n, add, o, static_cast<std::ptrdiff_t>(planes.stride[c]));
          }
        }
        rows_done(r);
      }
    });
  }
  g_decoded.fetch_add(1, std::memory_order_relaxed);
  if (sync < L.mcus) (ri ? g_restart_split : g_speculative).fetch_add(1, std::memory_order_relaxed);
  // Keep buffers for the next image unless they are large.
  if (B.sums.size() * 4 > (std::size_t{64} << 20)) {
    std::vector<std::int32_t>().swap(B.sums);
    std::vector<std::int16_t>().swap(B.dc);
  }
  if (st.u.bytes.size() > (std::size_t{64} << 20)) std::vector<std::uint8_t>().swap(st.u.bytes);
  for (auto& p : st.planes)
    if (p.size() > (std::size_t{64} << 20)) std::vector<std::uint8_t>().swap(p);
  return true;
}

JpegScanCounts jpeg_scan_counts() {
  return {g_decoded.load(), g_speculative.load(), g_restart_split.load()};
}

}  // namespace vinfer::detail
