// Nearest-neighbour resize with table lookups; see resize.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/resize/resize.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
#include <vector>

#include "hwy/highway.h"
#include "kernels/resize/resize.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
void ResizeNearest(const ref::ResizeNearestParams& p, const float* x, float* y, int64_t row_begin,
                   int64_t row_end) {
  ref::f32_resize_nearest(p, x, y, row_begin, row_end);
}
#else
using D = hn::ScalableTag<float>;

// The row loop: output rows [row_begin, row_end), each a copy of the row before it where
// both read the same input row, else gather(the input row's offset in x, output row).
template <class Gather>
HWY_INLINE void Rows(const ref::ResizeNearestParams& p, float* y, int64_t row_begin,
                     int64_t row_end, const Gather& gather) {
  const int64_t row = p.out_shape[p.rank - 1] * p.inner;  // floats per output row
  int64_t prev_off = -1;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t in_off = ref::resize_nearest_row_offset(p, r);
    float* yrow = y + r * row;
    if (in_off == prev_off) {
      std::copy_n(yrow - row, row, yrow);
      continue;
    }
    prev_off = in_off;
    gather(in_off, yrow);
  }
}

// Elements of p.inner floats, a multiple of DV's lanes (NCHWc's lanes): each copied in
// vectors, where the reference calls memmove per element.
template <class DV>
void ResizeElements(DV dv, const ref::ResizeNearestParams& p, const float* x, float* y,
                    int64_t row_begin, int64_t row_end) {
  const int64_t out_w = p.out_shape[p.rank - 1], inner = p.inner;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dv));
  const int64_t* index_w = p.src_index[p.rank - 1];
  Rows(p, y, row_begin, row_end, [&](int64_t in_off, float* yrow) HWY_ATTR {
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const float* from = x + in_off + index_w[ow] * inner;
      float* to = yrow + ow * inner;
      for (int64_t k = 0; k < inner; k += lanes) hn::StoreU(hn::LoadU(dv, from + k), dv, to + k);
    }
  });
}

// Single floats (NCHW): table lookups, see resize.h.
void ResizeFloats(const ref::ResizeNearestParams& p, const float* x, float* y, int64_t row_begin,
                  int64_t row_end) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t out_w = p.out_shape[p.rank - 1];
  const int64_t* index_w = p.src_index[p.rank - 1];
  int64_t x_size = 1;
  for (int k = 0; k < p.rank; ++k) x_size *= p.in_shape[k];
  // Per whole output vector v of a row: the input index its first lane reads (first[v]),
  // or -1 where the vector's indices do not lie in [first, first + lanes); and each
  // lane's index relative to first[v] (table[v * lanes + l]). The same for every row.
  const int64_t vectors = out_w / lanes;
  thread_local std::vector<int64_t> first;
  thread_local std::vector<int32_t> table;
  first.assign(static_cast<size_t>(vectors), -1);
  table.assign(static_cast<size_t>(vectors * lanes), 0);
  for (int64_t v = 0; v < vectors; ++v) {
    const int64_t i0 = index_w[v * lanes];
    bool in_span = true;
    for (int64_t l = 0; l < lanes; ++l) {
      const int64_t k = index_w[v * lanes + l] - i0;
      in_span = in_span && k >= 0 && k < lanes;
      table[v * lanes + l] = static_cast<int32_t>(in_span ? k : 0);
    }
    if (in_span) first[v] = i0;
  }
  Rows(p, y, row_begin, row_end, [&](int64_t in_off, float* yrow) HWY_ATTR {
    const float* xrow = x + in_off;
    for (int64_t v = 0; v < vectors; ++v) {
      const int64_t o = v * lanes;
      if (first[v] >= 0 && in_off + first[v] + lanes <= x_size) {
        const auto idx = hn::SetTableIndices(d, table.data() + o);
        hn::StoreU(hn::TableLookupLanes(hn::LoadU(d, xrow + first[v]), idx), d, yrow + o);
      } else {
        for (int64_t ow = o; ow < o + lanes; ++ow) yrow[ow] = xrow[index_w[ow]];
      }
    }
    for (int64_t ow = vectors * lanes; ow < out_w; ++ow) yrow[ow] = xrow[index_w[ow]];
  });
}

void ResizeNearest(const ref::ResizeNearestParams& p, const float* x, float* y, int64_t row_begin,
                   int64_t row_end) {
  const D d;
  const hn::Full128<float> d4;
  if (p.inner == 1) {
    ResizeFloats(p, x, y, row_begin, row_end);
  } else if (p.inner % static_cast<int64_t>(hn::Lanes(d)) == 0) {
    ResizeElements(d, p, x, y, row_begin, row_end);
  } else if (p.inner % 4 == 0) {
    ResizeElements(d4, p, x, y, row_begin, row_end);
  } else {
    ref::f32_resize_nearest(p, x, y, row_begin, row_end);
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace
}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tern::kernels {

HWY_EXPORT(ResizeNearest);

void f32_resize_nearest(const ref::ResizeNearestParams& p, const float* x, float* y,
                        int64_t row_begin, int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(ResizeNearest)(p, x, y, row_begin, row_end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
