// Integer arithmetic that wraps (two's complement) instead of overflowing, and plain IEEE
// arithmetic for floats, plus the saturating double -> integer conversion, for the reference
// kernels that add, subtract or multiply elements of any dtype (elementwise, reduce). Signed
// overflow is undefined behaviour in C++; unsigned arithmetic wraps, so integers go through their
// unsigned type, widened to at least unsigned int (uint8_t/uint16_t would otherwise promote to int,
// and 65535 * 65535 overflows int). This makes int64 shape arithmetic in a model (Add/Mul on
// shapes) exact and UB-free.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace tern::kernels::ref {

/// a + b (integers wrap).
template <typename T>
inline T wrapping_add(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
}

/// a - b (integers wrap).
template <typename T>
inline T wrapping_sub(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a - b;
  } else {
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  }
}

/// a * b (integers wrap).
template <typename T>
inline T wrapping_mul(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a * b;
  } else {
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
}

/// -a (integers wrap: -MIN = MIN).
template <typename T>
inline T wrapping_neg(T a) {
  if constexpr (std::is_floating_point_v<T>) {
    return -a;
  } else {
    return wrapping_sub(T{0}, a);
  }
}

/// double -> integer T: truncates toward zero and saturates to T's range; NaN gives 0.
/// (A plain static_cast is undefined behaviour for NaN, inf or an out-of-range value.)
template <typename T>
inline T float_to_int(double d) {
  static_assert(std::is_integral_v<T>);
  if (std::isnan(d)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  // max + 1 is a power of two, exactly representable.
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (d <= lo) return std::numeric_limits<T>::min();
  if (d >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

}  // namespace tern::kernels::ref
