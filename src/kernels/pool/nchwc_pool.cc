// Max and average pooling on NCHWc; see nchwc_pool.h and README.md.
//
// Each output pixel's window taps inside the input (ref::valid_range per dim, so the
// padding is never read and no padded copy exists) are vector loads folded into one
// accumulator in the reference's order. The folds of one window form a chain, so windows
// go 8 at a time with their chains interleaved (Windows): the interior pixels of a row,
// or the planes of a pool with one output pixel per plane (a global pool).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool/nchwc_pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
#include <limits>

#include "hwy/highway.h"
#include "kernels/pool/nchwc_pool.h"
#include "kernels/reference/spatial.h"
#include "kernels/simd/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

static_assert(!HWY_HAVE_SCALABLE, "tern's NCHWc kernels need a fixed vector width");

// The running max or sum after one more tap v, in the reference's order: max keeps acc
// unless v compares greater (std::max, so a NaN tap is skipped). On x86, max(v, acc)
// returns acc unless v > acc, NaN included (kX86MaxMin): the same bits in one
// instruction instead of a compare and a blend.
template <PoolKind kKind, class D, class V = hn::Vec<D>>
HWY_INLINE V Fold(V acc, V v) {
  if constexpr (kKind == PoolKind::kAverage) {
    return hn::Add(acc, v);
  } else if constexpr (kX86MaxMin) {
    return hn::Max(v, acc);
  } else {
    return hn::IfThenElse(hn::Lt(acc, v), v, acc);
  }
}

// P windows of the same shape, window q's tap (0, 0) at xr0 + q * x_step (rows [rows.begin,
// rows.end) and columns [cols.begin, cols.end) of it inside the input), their results
// at y + q * y_step: consecutive pixels of a row whose windows lie inside the input
// along W, or the one output pixel of P planes (a global pool). Each window's taps fold in the
// reference's order; the P chains interleave, so the fold's latency (4 cycles a tap on
// AVX-512) no longer bounds the pool. One window at a time, SqueezeNet's 3x3 max pools
// ran at 18 to 22 GB/s from L2 and a global average pool at one tap per 4 cycles.
template <PoolKind kKind, int P>
HWY_INLINE void Windows(const ref::PoolParams& p, const float* xr0, int64_t x_step, ref::Range rows,
                        ref::Range cols, float divisor, float* y, int64_t y_step) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  V acc[P];
  const V init =
      kKind == PoolKind::kMax ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
  HWY_UNROLL(8) for (int q = 0; q < P; ++q) acc[q] = init;
  for (int64_t i = rows.begin; i < rows.end; ++i) {
    const float* xr = xr0 + i * p.dilation.d * p.in.h * c;
    for (int64_t j = cols.begin; j < cols.end; ++j) {
      const float* xt = xr + j * p.dilation.h * c;
      HWY_UNROLL(8) for (int q = 0; q < P; ++q) {
        acc[q] = Fold<kKind, decltype(d)>(acc[q], hn::LoadU(d, xt + q * x_step));
      }
    }
  }
  HWY_UNROLL(8) for (int q = 0; q < P; ++q) {
    if constexpr (kKind == PoolKind::kAverage) {
      // An empty window (pads >= kernel) stays 0 rather than NaN, as in the reference.
      if (divisor > 0) acc[q] = hn::Div(acc[q], hn::Set(d, divisor));
    }
    hn::StoreU(acc[q], d, y + q * y_step);
  }
}

// Output pixel ow of row od (window rows [rows.begin, rows.end) from input row row0, with
// count_d of them counted) alone: Windows for one window, its columns inside the input
// only (valid_range) and its own divisor.
template <PoolKind kKind>
HWY_INLINE void Pixel(const ref::PoolParams& p, const float* xp, float* yr, int64_t row0,
                      ref::Range rows, int64_t count_d, int64_t ow) {
  const int64_t c = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t col0 = ow * p.stride.h - p.pad_begin.h;
  const ref::Range cols = ref::valid_range(p.kernel.h, p.dilation.h, col0, p.in.h);
  const int64_t count =
      kKind == PoolKind::kMax
          ? 0
          : count_d * ref::pool_window_count(ow, p.in.h, p.kernel.h, p.stride.h, p.dilation.h,
                                             p.pad_begin.h, p.pad_end.h, p.count_include_pad);
  Windows<kKind, 1>(p, xp + (row0 * p.in.h + col0) * c, 0, rows, cols, static_cast<float>(count),
                    yr + ow * c, 0);
}

// Windows that interleave their chains (Windows).
constexpr int kWindows = 8;

// Output row od of one plane: xp [H, W, c], yp [oH, oW, c].
template <PoolKind kKind>
void Row(const ref::PoolParams& p, const float* xp, float* yp, int64_t od) {
  const int64_t c = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t row0 = od * p.stride.d - p.pad_begin.d;
  const ref::Range rows = ref::valid_range(p.kernel.d, p.dilation.d, row0, p.in.d);
  const int64_t count_d = ref::pool_window_count(od, p.in.d, p.kernel.d, p.stride.d, p.dilation.d,
                                                 p.pad_begin.d, p.pad_end.d, p.count_include_pad);
  float* yr = yp + od * p.out.h * c;
  // The pixels whose window lies inside the input along W (the nine-patch interior of
  // the row, as the conv kernels find it) go kWindows at a time; their divisor (average)
  // is the same.
  int64_t ow = 0;
  if (p.out.h >= kWindows) {
    const ref::Range in = ref::valid_range(p.out.h, p.stride.h, -p.pad_begin.h,
                                           p.in.h - (p.kernel.h - 1) * p.dilation.h);
    const int64_t ia = std::clamp<int64_t>(in.begin, 0, p.out.h);
    const int64_t ib = std::clamp<int64_t>(in.end, ia, p.out.h);
    for (; ow < ia; ++ow) Pixel<kKind>(p, xp, yr, row0, rows, count_d, ow);
    const float divisor = static_cast<float>(
        count_d * ref::pool_window_count(ia, p.in.h, p.kernel.h, p.stride.h, p.dilation.h,
                                         p.pad_begin.h, p.pad_end.h, p.count_include_pad));
    const float* xr0 = xp + (row0 * p.in.h - p.pad_begin.h) * c;  // pixel 0's tap (0, 0)
    for (; ow + kWindows <= ib; ow += kWindows) {
      Windows<kKind, kWindows>(p, xr0 + ow * p.stride.h * c, p.stride.h * c, rows, {0, p.kernel.h},
                               divisor, yr + ow * c, c);
    }
  }
  for (; ow < p.out.h; ++ow) Pixel<kKind>(p, xp, yr, row0, rows, count_d, ow);
}

// Planes [begin, end) of a pool with one output pixel per plane (x0: plane 0's tap (0,
// 0)), kWindows at a time, the rest 4, 2 and 1 at a time.
template <PoolKind kKind, int P = kWindows>
void GlobalPools(const ref::PoolParams& p, const float* x0, float* y, ref::Range rows,
                 ref::Range cols, float divisor, int64_t begin, int64_t end) {
  const int64_t in_plane = p.in.size(), out_plane = p.out.size();
  for (; begin + P <= end; begin += P) {
    Windows<kKind, P>(p, x0 + begin * in_plane, in_plane, rows, cols, divisor,
                      y + begin * out_plane, out_plane);
  }
  if constexpr (P > 1) GlobalPools<kKind, P / 2>(p, x0, y, rows, cols, divisor, begin, end);
}

}  // namespace

bool NchwcPoolSupported(const ref::PoolParams& p) {
  const int64_t c = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  return c >= 4 && p.in.w == c && p.out.w == c && p.kernel.w == 1 && p.stride.w == 1 &&
         p.dilation.w == 1 && p.pad_begin.w == 0 && p.pad_end.w == 0;
}

void NchwcPool(const ref::PoolParams& p, PoolKind kind, const float* x, float* y, int64_t begin,
               int64_t end) {
  HWY_ASSERT(NchwcPoolSupported(p));
  const int64_t in_plane = p.in.size(), out_plane = p.out.size();
  if (p.out.d == 1 && p.out.h == 1) {
    // One output pixel per plane (a global pool, or a window as large as the input),
    // whose items are its planes: kWindows planes at a time.
    const ref::Range rows = ref::valid_range(p.kernel.d, p.dilation.d, -p.pad_begin.d, p.in.d);
    const ref::Range cols = ref::valid_range(p.kernel.h, p.dilation.h, -p.pad_begin.h, p.in.h);
    const float divisor =
        static_cast<float>(ref::pool_window_count(0, p.in.d, p.kernel.d, p.stride.d, p.dilation.d,
                                                  p.pad_begin.d, p.pad_end.d, p.count_include_pad) *
                           ref::pool_window_count(0, p.in.h, p.kernel.h, p.stride.h, p.dilation.h,
                                                  p.pad_begin.h, p.pad_end.h, p.count_include_pad));
    const int64_t c = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
    const float* x0 = x + (-p.pad_begin.d * p.in.h - p.pad_begin.h) * c;  // tap (0, 0)
    if (kind == PoolKind::kMax) {
      GlobalPools<PoolKind::kMax>(p, x0, y, rows, cols, divisor, begin, end);
    } else {
      GlobalPools<PoolKind::kAverage>(p, x0, y, rows, cols, divisor, begin, end);
    }
    return;
  }
  for (int64_t item = begin; item < end; ++item) {
    const int64_t plane = item / p.out.d, od = item % p.out.d;
    const float* xp = x + plane * in_plane;
    float* yp = y + plane * out_plane;
    if (kind == PoolKind::kMax) {
      Row<PoolKind::kMax>(p, xp, yp, od);
    } else {
      Row<PoolKind::kAverage>(p, xp, yp, od);
    }
  }
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(NchwcPoolSupported);
HWY_EXPORT(NchwcPool);

bool nchwc_pool_supported(const ref::PoolParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(NchwcPoolSupported)(p);
}

WorkGrid nchwc_pool_work(const ref::PoolParams& p, int64_t planes) {
  return {planes, p.out.d};
}

void f32_nchwc_pool(const ref::PoolParams& p, PoolKind kind, const float* x, float* y,
                    int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(NchwcPool)(p, kind, x, y, begin, end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
