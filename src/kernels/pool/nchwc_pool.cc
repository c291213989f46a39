// Max and average pooling on NCHWc; see nchwc_pool.h and README.md.
//
// One output pixel at a time: its window's taps inside the input (ref::valid_range per
// dim, so the padding is never read and no padded copy exists) are vector loads folded
// into one accumulator. Pooling does one operation per loaded vector, so the loads bound
// it (memory-bound on every layer of the models); consecutive pixels are independent, so
// out-of-order execution overlaps their accumulator chains without register blocking.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool/nchwc_pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <limits>

#include "hwy/highway.h"
#include "kernels/pool/nchwc_pool.h"
#include "kernels/reference/spatial.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

static_assert(!HWY_HAVE_SCALABLE, "tern's NCHWc kernels need a fixed vector width");

// Output row od of one plane: xp [H, W, c], yp [oH, oW, c].
template <PoolKind kKind>
void Row(const ref::PoolParams& p, const float* xp, float* yp, int64_t od) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  const int64_t row0 = od * p.stride.d - p.pad_begin.d;
  const ref::Range rows = ref::valid_range(p.kernel.d, p.dilation.d, row0, p.in.d);
  const int64_t count_d = ref::pool_window_count(od, p.in.d, p.kernel.d, p.stride.d, p.dilation.d,
                                  p.pad_begin.d, p.pad_end.d, p.count_include_pad);
  float* yr = yp + od * p.out.h * c;
  for (int64_t ow = 0; ow < p.out.h; ++ow) {
    const int64_t col0 = ow * p.stride.h - p.pad_begin.h;
    const ref::Range cols = ref::valid_range(p.kernel.h, p.dilation.h, col0, p.in.h);
    V acc = kKind == PoolKind::kMax ? hn::Set(d, -std::numeric_limits<float>::infinity())
                                    : hn::Zero(d);
    for (int64_t i = rows.begin; i < rows.end; ++i) {
      const float* xr = xp + ((row0 + i * p.dilation.d) * p.in.h + col0) * c;
      for (int64_t j = cols.begin; j < cols.end; ++j) {
        const V v = hn::LoadU(d, xr + j * p.dilation.h * c);
        if constexpr (kKind == PoolKind::kMax) {
          acc = hn::IfThenElse(hn::Lt(acc, v), v, acc);  // std::max(acc, v), NaN included
        } else {
          acc = hn::Add(acc, v);
        }
      }
    }
    if constexpr (kKind == PoolKind::kAverage) {
      const int64_t count = count_d * ref::pool_window_count(ow, p.in.h, p.kernel.h, p.stride.h, p.dilation.h,
                                              p.pad_begin.h, p.pad_end.h, p.count_include_pad);
      // An empty window (pads >= kernel) stays 0 rather than NaN, as in the reference.
      if (count > 0) acc = hn::Div(acc, hn::Set(d, static_cast<float>(count)));
    }
    hn::StoreU(acc, d, yr + ow * c);
  }
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
