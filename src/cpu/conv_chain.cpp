// The inverted-residual chain (conv_chain.hpp): the split of rows among
// threads; the kernels are conv1x1's and group_conv's.
#include "cpu/conv_chain.hpp"

#include <omp.h>

#include <algorithm>

namespace vinfer::cpu {
namespace {

// The output rows a thread computes at a time (each step expands the rows
// they need and projects them): 4 and 8 measured alike.
constexpr int kChainRows = 4;

std::size_t lines(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

bool ConvChain::supports(const Conv1x1Geometry& ex, const GroupConvGeometry& dw, const Conv1x1Geometry& pr, int threads) {
  return !ex.gathers() && !pr.gathers() && ex.ic > 16 && ex.block == dw.block && pr.block == dw.block &&
         ex.oc == dw.c && pr.ic == dw.c && ex.hw == dw.h * dw.w && pr.hw == dw.oh * dw.ow &&
         dw.oh >= 7 * std::max(1, threads) && Conv1x1Pre::supports(ex) && Conv1x1Pre::supports(pr) &&
         GroupConv::supports(dw);
}

ConvChain::ConvChain(std::unique_ptr<Conv1x1Pre> expand, std::unique_ptr<GroupConv> dw, std::unique_ptr<Conv1x1Pre> project)
    : expand_(std::move(expand)), dw_(std::move(dw)), project_(std::move(project)) {}

std::size_t ConvChain::thread_bytes() const {
  return lines(expand_->scratch_bytes(1)) + lines(project_->scratch_bytes(1)) +
         lines(sizeof(float) * dw_->ring_floats_per_thread());
}

std::size_t ConvChain::scratch_bytes(int threads) const { return thread_bytes() * std::max(1, threads); }

void ConvChain::run(const float* x, float* e, float* d, float* y, const float* residual, void* scratch, int max_threads,
                    int images, const ConvChainStrides& st, const std::vector<ByteSpan>* prefetch) const {
  const GroupConvGeometry& g = dw_->geometry();
  const int B = g.block, e_channels = g.blocks() * B;
  const int y_channels = (project_->geometry().oc + B - 1) / B * B;
  const int threads = std::max(1, std::min(omp_get_max_threads(), max_threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    char* mine = static_cast<char*>(scratch) + thread_bytes() * t;
    auto* packed_e = reinterpret_cast<float*>(mine);
    auto* packed_y = reinterpret_cast<float*>(mine + lines(expand_->scratch_bytes(1)));
    auto* ring = reinterpret_cast<float*>(mine + lines(expand_->scratch_bytes(1)) + lines(project_->scratch_bytes(1)));
    // The input rows [first_in, end_in) an output row reads, and the rows
    // each thread expands: from its first output row's window on, shifted
    // by half the window's overlap, so that both neighbours have about as
    // many rows left for after the barrier.
    auto first_in = [&](int oy) { return std::max(0, oy * g.stride - g.pad_t); };
    auto end_in = [&](int oy) { return std::min(g.h, oy * g.stride - g.pad_t + g.k); };
    auto out_bound = [&](int i) { return g.oh * i / n; };
    auto in_bound = [&](int i) {
      return i == 0 ? 0 : i == n ? g.h : std::clamp(out_bound(i) * g.stride - g.pad_t + (g.k - g.stride) / 2, 0, g.h);
    };
    const int y0 = out_bound(t), y1 = out_bound(t + 1), e0 = in_bound(t), e1 = in_bound(t + 1);
    // Rows [l0, l1) read only this thread's expanded rows.
    int l0 = y0, l1 = y1;
    while (l0 < y1 && first_in(l0) < e0) ++l0;
    while (l1 > l0 && end_in(l1 - 1) > e1) --l1;
    // The next layers' weights, spread over the thread's register tiles.
    PrefetchCursor pf(prefetch, t, n,
                      images * (expand_->tiles((e1 - e0) * g.w, e_channels) + project_->tiles((y1 - y0) * g.ow, y_channels)));
    pf.own_next = false;
    for (int i = 0; i < images; ++i) {
      const float* xi = x + i * st.x;
      float* ei = e + i * st.e;
      float* di = d + i * st.d;
      float* yi = y + i * st.y;
      const float* ri = residual ? residual + i * st.y : nullptr;
      const auto rows = [&](int a, int b) {
        for (int blk = 0; blk < g.blocks(); ++blk) dw_->run_band(ei, di, blk, a, b, ring);
        project_->run_pixels(di, yi, ri, a * g.ow, b * g.ow, 0, y_channels, packed_y, &pf);
      };
      int expanded = e0;
      const auto expand_to = [&](int row) {
        if (row > expanded) expand_->run_pixels(xi, ei, nullptr, expanded * g.w, row * g.w, 0, e_channels, packed_e, &pf);
        expanded = std::max(expanded, row);
      };
      for (int a = l0; a < l1; a += kChainRows) {
        const int b = std::min(l1, a + kChainRows);
        expand_to(end_in(b - 1));
        rows(a, b);
      }
      expand_to(e1);
#pragma omp barrier
      if (l0 >= l1) {
        rows(y0, y1);
      } else {
        if (y0 < l0) rows(y0, l0);
        if (l1 < y1) rows(l1, y1);
      }
    }
  }
}

}  // namespace vinfer::cpu
