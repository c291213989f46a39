#include "kernels/reference/topk.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace tern::kernels::ref {

namespace {

// -1 when a goes first, 1 when b goes first, 0 when they rank equal (NaN is the largest).
template <typename T>
int rank_order(T a, T b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) {
      if (na && nb) return 0;
      return (na == largest) ? -1 : 1;
    }
  }
  if (a == b) return 0;
  return ((a > b) == largest) ? -1 : 1;
}

}  // namespace

template <typename T>
void topk(const TopKParams& p, const T* in, int64_t* scratch, T* values, int64_t* indices) {
  const int64_t n = p.n, inner = p.inner, k = p.k;
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* row = in + o * n * inner + i;
      std::iota(scratch, scratch + n, int64_t{0});
      std::partial_sort(scratch, scratch + k, scratch + n, [&](int64_t a, int64_t b) {
        const int r = rank_order(row[a * inner], row[b * inner], p.largest);
        return r < 0 || (r == 0 && a < b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t off = (o * k + j) * inner + i;
        if (values) values[off] = row[scratch[j] * inner];
        if (indices) indices[off] = scratch[j];
      }
    }
  }
}

template void topk<float>(const TopKParams&, const float*, int64_t*, float*, int64_t*);
template void topk<double>(const TopKParams&, const double*, int64_t*, double*, int64_t*);
template void topk<int32_t>(const TopKParams&, const int32_t*, int64_t*, int32_t*, int64_t*);
template void topk<int64_t>(const TopKParams&, const int64_t*, int64_t*, int64_t*, int64_t*);

}  // namespace tern::kernels::ref
