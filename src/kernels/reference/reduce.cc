#include "kernels/reference/reduce.h"

#include <algorithm>
#include <cmath>
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

template <typename T>
inline T min_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (b < a || b != b) ? b : a;
  } else {
    return b < a ? b : a;
  }
}

template <typename T>
inline T highest() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

template <typename T>
inline T abs_of(T a) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(a);
  } else {
    return a < 0 ? wrapping_sub(T{0}, a) : a;
  }
}

// A double result as T: saturating for integers (NaN -> 0, -inf -> lowest, ...).
template <typename T>
inline T from_double(double d) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(d);
  } else {
    return float_to_int<T>(d);
  }
}

// One output of the kinds other than Sum/Mean/Max: reduces the R elements
// src[0], src[stride], ... (sequentially, first to last).
template <typename T>
T reduce_strided(ReduceKind kind, const T* src, int64_t stride, int64_t R) {
  switch (kind) {
    case ReduceKind::kMin: {
      T acc = highest<T>();
      for (int64_t r = 0; r < R; ++r) acc = min_of(acc, src[r * stride]);
      return acc;
    }
    case ReduceKind::kProd: {
      T acc = T{1};
      for (int64_t r = 0; r < R; ++r) acc = wrapping_mul(acc, src[r * stride]);
      return acc;
    }
    case ReduceKind::kL1: {
      T acc = T{0};
      for (int64_t r = 0; r < R; ++r) acc = wrapping_add(acc, abs_of(src[r * stride]));
      return acc;
    }
    case ReduceKind::kSumSquare: {
      T acc = T{0};
      for (int64_t r = 0; r < R; ++r) {
        acc = wrapping_add(acc, wrapping_mul(src[r * stride], src[r * stride]));
      }
      return acc;
    }
    case ReduceKind::kL2: {
      double acc = 0;
      for (int64_t r = 0; r < R; ++r) {
        const double v = static_cast<double>(src[r * stride]);
        acc += v * v;
      }
      return from_double<T>(std::sqrt(acc));
    }
    case ReduceKind::kLogSum: {
      double acc = 0;
      for (int64_t r = 0; r < R; ++r) acc += static_cast<double>(src[r * stride]);
      return from_double<T>(std::log(acc));
    }
    case ReduceKind::kLogSumExp: {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t r = 0; r < R; ++r) m = std::max(m, static_cast<double>(src[r * stride]));
      if (std::isinf(m)) return from_double<T>(m);  // empty, all -inf, or a +inf
      double acc = 0;
      for (int64_t r = 0; r < R; ++r) acc += std::exp(static_cast<double>(src[r * stride]) - m);
      return from_double<T>(m + std::log(acc));
    }
    default:
      return T{0};  // Sum, Mean, Max take the row path in reduce()
  }
}

}  // namespace

template <typename T>
void reduce(const ReduceParams& p, const T* in, T* out) {
  if (p.kind != ReduceKind::kSum && p.kind != ReduceKind::kMean && p.kind != ReduceKind::kMax) {
    for (int64_t o = 0; o < p.outer; ++o) {
      const T* src = in + o * p.reduce * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) {
        out[o * p.inner + i] = reduce_strided(p.kind, src + i, p.inner, p.reduce);
      }
    }
    return;
  }
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
template void reduce<double>(const ReduceParams&, const double*, double*);
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
        const bool better = p.arg_min ? v < best : v > best;
        if (better || (p.select_last_index && v == best)) {
          best = v;
          best_r = r;
        }
      }
      out[o * inner + i] = best_r;
    }
  }
}

template void argmax<float>(const ArgMaxParams&, const float*, int64_t*);
template void argmax<double>(const ArgMaxParams&, const double*, int64_t*);
template void argmax<int32_t>(const ArgMaxParams&, const int32_t*, int64_t*);
template void argmax<int64_t>(const ArgMaxParams&, const int64_t*, int64_t*);

}  // namespace tern::kernels::ref
