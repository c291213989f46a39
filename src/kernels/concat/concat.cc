// NCHWc channel concatenation with lane table lookups; see concat.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/concat/concat.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>

#include "hwy/highway.h"
#include "kernels/concat/concat.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// Pixels [s0, s1) of x block xb into y: y block yb's lanes [lo, hi) take x's lanes
// [lo - shift, hi - shift) (shift may be negative: x's lanes from -shift on).
HWY_INLINE void CopyLanes(const float* xb, float* yb, int64_t c, int64_t lo, int64_t hi,
                          int64_t shift, int64_t s0, int64_t s1) {
  const hn::ScalableTag<float> d;
  if (lo == 0 && hi == c && shift == 0) {  // a whole block in place: a copy
    for (int64_t s = s0; s < s1; ++s) hn::StoreU(hn::LoadU(d, xb + s * c), d, yb + s * c);
    return;
  }
  const hn::RebindToSigned<decltype(d)> di;
  HWY_ALIGN int32_t lanes[hn::MaxLanes(di)];
  for (int64_t i = 0; i < c; ++i)
    lanes[i] = static_cast<int32_t>(std::clamp(i - shift, int64_t{0}, c - 1));
  const auto table = hn::SetTableIndices(d, lanes);
  const auto mask =
      hn::AndNot(hn::FirstN(d, static_cast<size_t>(lo)), hn::FirstN(d, static_cast<size_t>(hi)));
  for (int64_t s = s0; s < s1; ++s) {
    const auto v = hn::TableLookupLanes(hn::LoadU(d, xb + s * c), table);
    hn::StoreU(hn::IfThenElse(mask, v, hn::LoadU(d, yb + s * c)), d, yb + s * c);
  }
}

void CopyChannels(const ref::ChannelCopy& p, const float* x, float* y, int64_t begin, int64_t end) {
  const int64_t c = p.block;
  if (c != static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())) || c == 1) {
    ref::f32_nchwc_copy_channels(p, x, y, begin, end);
    return;
  }
  const int64_t xblocks = (p.x_channels + c - 1) / c, shift = p.offset % c;
  const int64_t hw = p.pixels;
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t b = 0; b < xblocks; ++b) {
      const int64_t lanes = std::min(c, p.x_channels - b * c);
      const int64_t to = p.offset + b * c;  // y's channel of x's lane 0
      const float* xb = x + (n * xblocks + b) * hw * c;
      float* y0 = y + (n * p.y_blocks + to / c) * hw * c;
      // x's lanes [0, min(lanes, c - shift)) into y's block to / c from lane `shift`; the
      // rest, x's [c - shift, lanes), into the next block from lane 0.
      CopyLanes(xb, y0, c, shift, std::min(c, shift + lanes), shift, begin, end);
      if (shift + lanes > c)
        CopyLanes(xb, y0 + hw * c, c, 0, shift + lanes - c, shift - c, begin, end);
    }
  }
}

}  // namespace
}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tern::kernels {

HWY_EXPORT(CopyChannels);

void f32_nchwc_copy_channels(const ref::ChannelCopy& p, const float* x, float* y,
                             int64_t pixel_begin, int64_t pixel_end) {
  HWY_DYNAMIC_DISPATCH(CopyChannels)(p, x, y, pixel_begin, pixel_end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
