#include "kernels/reference/reduce.h"

#include <limits>
#include <type_traits>

#include "kernels/reference/wrapping.h"

namespace tern::kernels::ref {

namespace {

template <typename T>
inline T max_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a < b || b != b) ? b : a;
  } else {
    return a < b ? b : a;
  }
}

template <typename T>
inline T lowest() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

}  // namespace

template <typename T>
void reduce(const ReduceParams& p, const T* in, T* out) {
  const int64_t R = p.reduce;
  const int64_t inner = p.inner;
  const bool is_max = p.kind == ReduceKind::kMax;
  for (int64_t o = 0; o < p.outer; ++o) {
    const T* src = in + o * R * inner;
    T* dst = out + o * inner;
    if (inner == 1) {
      T acc = is_max ? lowest<T>() : T{0};
      if (is_max) {
        for (int64_t r = 0; r < R; ++r) acc = max_of(acc, src[r]);
      } else {
        for (int64_t r = 0; r < R; ++r) acc = wrapping_add(acc, src[r]);
      }
      dst[0] = acc;
    } else {
      const T init = is_max ? lowest<T>() : T{0};
      for (int64_t i = 0; i < inner; ++i) dst[i] = init;
      for (int64_t r = 0; r < R; ++r) {
        const T* row = src + r * inner;
        if (is_max) {
          for (int64_t i = 0; i < inner; ++i) dst[i] = max_of(dst[i], row[i]);
        } else {
          for (int64_t i = 0; i < inner; ++i) dst[i] = wrapping_add(dst[i], row[i]);
        }
      }
    }
    if (p.kind == ReduceKind::kMean) {
      if constexpr (std::is_floating_point_v<T>) {
        const T count = static_cast<T>(R);  // an empty reduction gives 0 / 0 = NaN
        for (int64_t i = 0; i < inner; ++i) dst[i] = dst[i] / count;
      } else {
        for (int64_t i = 0; i < inner; ++i) dst[i] = R == 0 ? T{0} : static_cast<T>(dst[i] / R);
      }
    }
  }
}

template void reduce<float>(const ReduceParams&, const float*, float*);
template void reduce<int32_t>(const ReduceParams&, const int32_t*, int32_t*);
template void reduce<int64_t>(const ReduceParams&, const int64_t*, int64_t*);

template <typename T>
void argmax(const ArgMaxParams& p, const T* in, int64_t* out) {
  const int64_t R = p.reduce;
  const int64_t inner = p.inner;
  for (int64_t o = 0; o < p.outer; ++o) {
    const T* src = in + o * R * inner;
    for (int64_t i = 0; i < inner; ++i) {
      T best = src[i];
      int64_t best_r = 0;
      for (int64_t r = 1; r < R; ++r) {
        const T v = src[r * inner + i];
        if (v > best || (p.select_last_index && v == best)) {
          best = v;
          best_r = r;
        }
      }
      out[o * inner + i] = best_r;
    }
  }
}

template void argmax<float>(const ArgMaxParams&, const float*, int64_t*);
template void argmax<int32_t>(const ArgMaxParams&, const int32_t*, int64_t*);
template void argmax<int64_t>(const ArgMaxParams&, const int64_t*, int64_t*);

}  // namespace tern::kernels::ref
