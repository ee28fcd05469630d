// Internal: Winograd 3x3 convolutions on channel-blocked tensors (nChw8c /
// nChw16c), vinfer's own kernels, in three forms:
// - stride 1, F(4x4, 3x3): a 6x6 input tile gives a 4x4 output tile with 36
//   multiplications per channel pair instead of 144 (4x fewer). For machines
//   where oneDNN 2.6 has no Winograd (AVX2), and for maps where its F(2,3) does
//   less well.
// - stride 1, F(2x2, 3x3): a 4x4 input tile gives a 2x2 output tile with 16
//   multiplications instead of 36 (2.25x fewer), with 16 / 36 of F(4,3)'s
//   transformed weights and no partial tiles on 14x14 maps (F(4,3) computes
//   16x16 there, 8x8 of 7x7): for small maps with wide layers (ResNet50's
//   layer4, 16.8 instead of 37.7 MB), where the load-time timing picks it.
// - stride 2 (ResNet's downsampling 3x3s, for which no library here has a
//   Winograd form): taken apart into its even and odd rows and columns, a
//   stride-2 3x3 is a 2x2 stride-1 convolution of the even samples plus 1-tap
//   ones of the odd samples. Per dimension two outputs of five inputs x0..x4,
//     y0 = w0 x0 + w1 x1 + w2 x2,   y1 = w0 x2 + w1 x3 + w2 x4,
//   take five multiplications instead of six: F(2,2) on the even samples,
//   (x0 - x2) w0, x2 (w0 + w2), (x4 - x2) w2, and x1 w1, x3 w1. A 5x5 input
//   tile gives a 2x2 output tile with 25 multiplications instead of 36 (1.44x
//   fewer); every coefficient is 0 or +-1. The products of the odd samples
//   share their weight (w1), so they are one GEMM with two or four times the
//   rows: the transformed weights are 4x4 matrices per channel pair (1.8x the
//   plain ones), not 5x5.
//
// A batch's images are one list of tiles (image after image): one pass over
// the transformed weights serves all of them, where run image by image each
// image read them again (ResNet50's 7x7 layers at batch 32: 16.8-37.7 MB a
// layer, 32 times).
//
// Three steps: input transform (V = B^T d B), one GEMM per weight position
// against the weights transformed once at load (U = G g G^T), output
// transform (Y = A^T M A) with bias and clamp, written into dst. Two ways to
// split them among threads:
// - by tiles: each thread takes an equal run of tiles, in chunks of at most
//   two GEMM register tiles of rows, each chunk through all three steps while
//   its scratch stays in L2. Each chunk reads all of U: good while U is small
//   next to the work of a chunk (DenseNet's 128 -> 32 layers on large maps).
// - by positions: all threads transform their share of all tiles, then each
//   multiplies its share of the GEMMs' rows for all tiles (reading only its
//   share of U, once), then each transforms its tiles' outputs; two barriers.
//   For wide layers on small maps (U over 1 MiB, at most 64 tiles: VGG19's
//   and ResNet50's 28x28 and 14x14 layers).
//   Split so, F(4,3) keeps its weights half transformed, W = G g (6 x 3
//   per channel pair, 18 floats instead of U's 36), and makes each
//   position's panel of U = W G^T just before its GEMM: U's column b of row
//   a is G[b] . W[a], so W[a]'s three runs serve its six positions from L2.
//   With W's first run stored times G[0][0], U's first and last positions
//   are two of W's runs as they are; the four others come in pairs that
//   share all but a sign (G's rows 1 and 2, 3 and 4). These layers hold most
//   of VGG19's 3x3 weights (126 of 225 MiB transformed, in every process
//   that loads it); they read half of that from memory, for about 10 %
//   more time at batch 1 (49 tiles share each made panel) and less with a
//   batch's images folded in. F(2,3) (16 positions: 12 of W) keeps U: there
//   the saving was small and the time 4 % more.

#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu/aligned.hpp"
#include "cpu/out_act.hpp"
#include "cpu/prefetch.hpp"

namespace vinfer::cpu {

struct WinogradGeometry {
  int ic = 0, oc = 0;        // channels (any: the last block partial, its padding lanes ignored on input, zero on output)
  int h = 0, w = 0;          // input size
  int oh = 0, ow = 0;        // output size
  int pad_t = 0, pad_l = 0;  // leading padding (0..2)
  int block = 8;             // channel block of src and dst (8 or 16)
  int stride = 1;            // 1: F(4x4, 3x3) or F(2x2, 3x3); 2: the form for stride 2
  int out_tile = 4;          // stride 1: output tile side, 4 (F(4x4, 3x3)) or 2 (F(2x2, 3x3))
  int images = 1;            // the most images one run takes (its scratch is sized for them)
  std::size_t src_image = 0, dst_image = 0;  // floats from one image to the next (0: packed)

  // Channels rounded up to the block: the GEMMs' k and n (zero weights on the padding).
  int ic_blocks() const { return (ic + block - 1) / block * block; }
  int oc_blocks() const { return (oc + block - 1) / block * block; }
  std::size_t src_stride() const { return src_image ? src_image : static_cast<std::size_t>(ic_blocks()) * h * w; }
  std::size_t dst_stride() const { return dst_image ? dst_image : static_cast<std::size_t>(oc_blocks()) * oh * ow; }
};

// The distance (in floats) between the positions of V or M for `floats`
// per position: whole cache lines, an odd number of them, so that the 36
// lines a tile's transform stores (or the output transform loads) fall in 36
// different L1 sets. With 196 x 128 floats (DenseNet's 56x56 layers) the
// positions were 0x800 bytes apart modulo 4 KiB (two sets for 36 lines), with
// 24 x 128 (a chunk) all in one set (that layer, split by tiles, 2 threads:
// 0.27 ms then, 0.19 now).
inline std::size_t position_stride(std::size_t floats) {
  const std::size_t lines = (floats + 15) / 16;
  return (lines | 1) * 16;
}

// Where the rows of V (or M) are, for `rows` tiles of `ch` channels: weight
// position p's rows start at at[p] floats; a position of the stride-2 form
// that serves several transformed samples (the odd ones) has one run of
// `rows` rows per sample, `pitch` = rows x ch floats apart, so that its GEMM
// is over all of them at once.
struct WinogradLayout {
  std::array<std::size_t, 36> at{};
  std::size_t pitch = 0;
  std::size_t floats = 0;  // all of it
};

// The kernels of one ISA and form. input / output: the transforms of tiles
// [tile0, tile0 + T) of the batch (v and m point at tile0's row; tile t is
// tile t % per_image of image t / per_image), with pf_bytes at pf
// prefetched into L2 during the input transform; gemm: C[T][n] = A[T][k] x
// B[k][n], prefetching what pf hands out (or nothing: null).
struct WinogradKernelFns {
  void (*input)(const WinogradGeometry& g, int tiles_w, int per_image, int tile0, int T, const WinogradLayout& lv,
                const float* src, float* v, const float* pf, std::size_t pf_bytes);
  void (*gemm)(const float* a, const float* b, float* c, int k, int n, int T, PrefetchCursor* pf);
  // The columns [col, col + width) of that product from one panel of B
  // (k x width; width 2L, or L for the last of an odd number of vectors),
  // fetching the 2L x k floats at own_next (if not null) into L2 meanwhile.
  void (*gemm_panel)(const float* a, const float* panel, float* c, int k, int n, int col, int width, int T,
                     PrefetchCursor* pf, const float* own_next);
  // The panels of U for two positions whose rows of G differ only in the
  // middle coefficient's sign (F(4,3)'s 1 and 2, 3 and 4),
  // from a panel of W's three runs (w, w + stride, w + 2 stride):
  // out1 = c0 w0 + c1 w1 + c2 w2, out2 = c0 w0 - c1 w1 + c2 w2, for `count`
  // floats (a multiple of the vector).
  void (*combine)(const float* w, std::size_t stride, const float coef[3], float* out1, float* out2,
                  std::size_t count);
  // res: a tensor shaped as dst added where `residual` says (or null).
  void (*output)(const WinogradGeometry& g, int tiles_w, int per_image, int tile0, int T, const WinogradLayout& lm,
                 const float* m, const float* bias, float lo, float hi, OutAct act, Residual residual, const float* res,
                 float* dst);
};
extern const WinogradKernelFns winograd_f43_avx2, winograd_f43_avx512, winograd_f23_avx2, winograd_f23_avx512,
    winograd_s2_avx2, winograd_s2_avx512;

class Winograd3x3 {
 public:
  // How threads share the work (above); Auto: choose_split(g). A kernel
  // keeps its split.
  enum class Split { Auto, Tiles, Positions };

  // Whether a kernel for the block runs here (8: AVX2 + FMA, 16: AVX-512)
  // and handles this geometry (stride 1 with output tiles of 4 or 2, or
  // stride 2).
  static bool supports(const WinogradGeometry& g);

  // weights: OIHW (oc x ic x 3 x 3); bias: oc values or null. Output values
  // are clamped to [lo, hi] (ReLU: lo = 0; Clip: its bounds), or with act
  // Swish go through SiLU instead; residual: where run()'s residual tensor
  // is added (it must then be given). half: split by
  // positions, F(4,3) holds its weights half transformed (W = G g, 18
  // floats per channel pair instead of U's 36) and makes each position's
  // panels of U as it runs (about 10 % slower); ignored elsewhere.
  Winograd3x3(const WinogradGeometry& g, const float* weights, const float* bias,
              float lo = -std::numeric_limits<float>::infinity(), float hi = std::numeric_limits<float>::infinity(),
              Split split = Split::Auto, bool half = false, OutAct act = OutAct::Clamp,
              Residual residual = Residual::None);

  // src, dst: blocked tensors of the geometry (g.images images). Runs on the current OpenMP
  // threads; allocates only when that needs more scratch than any run before
  // (more threads), so that timed runs do not time fresh pages.
  void run(const float* src, float* dst);

  // The same on caller-provided scratch (64-byte aligned, scratch_bytes(threads)
  // long), with at most `threads` threads: a network's Winograd layers then share
  // one scratch buffer, which stays in cache from layer to layer. The threads
  // meanwhile prefetch `prefetch` (the next layers' weights) into L2.
  // images: how many to run (1 to g.images; 0: g.images). res: the residual
  // (shaped and laid out as dst), where the kernel was made with one.
  std::size_t scratch_bytes(int threads) const;
  void run(const float* src, float* dst, void* scratch, int threads, const std::vector<ByteSpan>* prefetch = nullptr,
           int images = 0, const float* res = nullptr);

  const WinogradGeometry& geometry() const { return g_; }
  // Where the images of a batch are (floats from one to the next; 0: packed).
  void set_image_strides(std::size_t src, std::size_t dst) { g_.src_image = src, g_.dst_image = dst; }

  Split split() const { return split_; }
  bool half_transformed() const { return half_ != 0; }
  // Frees the scratch run(src, dst) allocated for itself.
  void release_scratch() { own_scratch_.reset(), own_bytes_ = 0; }
  // That scratch (null before the first run(src, dst) and after release_scratch()).
  const void* own_scratch() const { return own_scratch_.get(); }
  // The transformed weights (positions x ic x oc floats; half transformed:
  // 6 x 3 x ic x oc), as the kernel holds them.
  const void* transformed_weights() const { return u_.get(); }
  std::size_t transformed_weight_bytes() const { return u_bytes_; }
  // For a geometry: its output tiles (of all its images; of one), and the
  // bytes of its transformed weights, all positions (the B of its GEMMs).
  static int tiles(const WinogradGeometry& g);
  static int tiles_per_image(const WinogradGeometry& g);
  static std::size_t weight_bytes(const WinogradGeometry& g);
  // Chooses by shape; VINFER_WINOGRAD_SPLIT=tiles|positions overrides.
  static Split choose_split(const WinogradGeometry& g);

 private:
  WinogradGeometry g_;
  Split split_ = Split::Tiles;
  int positions_ = 36;   // weight positions: 36 (F(4,3)) or 16 (F(2,3), stride 2)
  int rows_per_tile_ = 36;  // GEMM rows per tile, over all positions: 36, 16 or 25
  std::array<int, 36> mult_{};  // transformed samples a position serves: 1 (stride 2: 1, 2 or 4)
  int tiles_w_ = 0, per_image_ = 0, tiles_ = 0;  // tiles_: of g.images images
  int rows_ = 12;        // the GEMM's register-tile rows
  int max_chunk_ = 24;   // tiles per chunk (the last of a thread takes up to rows_ - 1 more)
  const WinogradKernelFns* fns_ = nullptr;
  int half_ = 0;             // half transformed: 6 (G's rows), else 0
  Block u_;                  // [positions][oc / 2L][ic][2L] (half transformed: [6][3][oc / 2L][ic][2L])
  std::size_t u_bytes_ = 0;
  std::array<float, 6 * 3> g_rows_{};  // half transformed: G's rows for W's runs, in float
  std::vector<float> bias_;  // oc
  float lo_, hi_;
  OutAct act_;
  Residual residual_;
  bool own_next_ = true;  // PrefetchCursor::own_next
  Block own_scratch_;  // for run(src, dst)
  std::size_t own_bytes_ = 0;

  WinogradLayout layout(int rows, int ch) const;
  std::size_t thread_floats() const;
  std::size_t panel_floats() const;
  void run_by_tiles(const WinogradGeometry& g, int tiles, const float* src, float* dst, float* scratch, int max_threads,
                    const std::vector<ByteSpan>* prefetch, const float* res);
  void run_by_positions(const WinogradGeometry& g, int tiles, const float* src, float* dst, float* scratch,
                        int max_threads, const std::vector<ByteSpan>* prefetch, const float* res);
};

}  // namespace vinfer::cpu
