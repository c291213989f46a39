// NCHWc -> NCHW reorder with 4 x 4 transposes; see reorder.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/reorder/reorder.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>

#include "hwy/highway.h"
#include "kernels/reorder/reorder.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
void ReorderToNchw(const ref::ReorderParams& p, const float* x, float* y, int64_t begin,
                   int64_t end) {
  ref::f32_reorder_to_nchw(p, x, y, begin, end);
}
#else
using D4 = hn::Full128<float>;
using V4 = hn::Vec<D4>;

// The lanes of `lanes` channels (lane0 + 0 .. lane0 + lanes - 1 of x's block, lanes <= 4)
// for pixels [s0, s1) of one channel block: xb is the block ([H*W, c]), yb its first
// channel's plane in y ([lanes][H*W] at distance hw).
HWY_INLINE void CopyLanes(const float* xb, float* yb, int64_t c, int64_t hw, int64_t lane0,
                          int64_t lanes, int64_t s0, int64_t s1) {
  for (int64_t s = s0; s < s1; ++s) {
    for (int64_t i = 0; i < lanes; ++i) yb[(lane0 + i) * hw + s] = xb[s * c + lane0 + i];
  }
}

// Rows r[k] = lanes (g .. g + 3) of pixel s + k become columns: r[i] = lane g + i of pixels
// s .. s + 3. 32-bit interleaves pair rows (0, 1) and (2, 3); 64-bit ones join the pairs.
HWY_INLINE void Transpose4x4(V4 (&r)[4]) {
  const D4 d;
  const hn::Repartition<double, D4> dd;
  const auto t0 = hn::BitCast(dd, hn::InterleaveLower(d, r[0], r[1]));  // a0 b0 a1 b1
  const auto t1 = hn::BitCast(dd, hn::InterleaveLower(d, r[2], r[3]));  // c0 d0 c1 d1
  const auto t2 = hn::BitCast(dd, hn::InterleaveUpper(d, r[0], r[1]));  // a2 b2 a3 b3
  const auto t3 = hn::BitCast(dd, hn::InterleaveUpper(d, r[2], r[3]));  // c2 d2 c3 d3
  r[0] = hn::BitCast(d, hn::InterleaveLower(dd, t0, t1));               // a0 b0 c0 d0
  r[1] = hn::BitCast(d, hn::InterleaveUpper(dd, t0, t1));               // a1 b1 c1 d1
  r[2] = hn::BitCast(d, hn::InterleaveLower(dd, t2, t3));               // a2 b2 c2 d2
  r[3] = hn::BitCast(d, hn::InterleaveUpper(dd, t2, t3));               // a3 b3 c3 d3
}

void ReorderToNchw(const ref::ReorderParams& p, const float* x, float* y, int64_t begin,
                   int64_t end) {
  const int64_t c = p.block, hw = p.h * p.w, cb = p.blocks();
  if (c % 4 != 0) {
    ref::f32_reorder_to_nchw(p, x, y, begin, end);
    return;
  }
  if (hw == 1 && begin == 0 && end == 1) {
    // One pixel (a global pool's [N, C, 1, 1]): both layouts hold the channels in order,
    // NCHWc with padded lanes after them.
    for (int64_t n = 0; n < p.n; ++n) std::copy_n(x + n * cb * c, p.channels, y + n * p.channels);
    return;
  }
  const D4 d;
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t b = 0; b < cb; ++b) {
      const int64_t lanes = std::min(c, p.channels - b * c);
      const float* xb = x + (n * cb + b) * hw * c;
      float* yb = y + (n * p.channels + b * c) * hw;
      // Runs of pixels whose c * kReorderRun floats of x (4 KiB at c = 16) stay in L1
      // while every group of 4 lanes is taken out of them; per group, 4 planes of y are
      // written front to back.
      for (int64_t s0 = begin; s0 < end; s0 += ref::kReorderRun) {
        const int64_t s1 = std::min(s0 + ref::kReorderRun, end);
        for (int64_t g = 0; g < lanes; g += 4) {
          const int64_t rows = std::min<int64_t>(4, lanes - g);  // real channels
          int64_t s = s0;
          for (; s + 4 <= s1; s += 4) {
            const float* in = xb + s * c + g;
            V4 r[4] = {hn::LoadU(d, in), hn::LoadU(d, in + c), hn::LoadU(d, in + 2 * c),
                       hn::LoadU(d, in + 3 * c)};
            Transpose4x4(r);
            float* out = yb + g * hw + s;
            hn::StoreU(r[0], d, out);
            if (rows > 1) hn::StoreU(r[1], d, out + hw);
            if (rows > 2) hn::StoreU(r[2], d, out + 2 * hw);
            if (rows > 3) hn::StoreU(r[3], d, out + 3 * hw);
          }
          CopyLanes(xb, yb, c, hw, g, rows, s, s1);
        }
      }
    }
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace
}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tern::kernels {

HWY_EXPORT(ReorderToNchw);

void f32_reorder_to_nchw(const ref::ReorderParams& p, const float* x, float* y, int64_t pixel_begin,
                         int64_t pixel_end) {
  HWY_DYNAMIC_DISPATCH(ReorderToNchw)(p, x, y, pixel_begin, pixel_end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
