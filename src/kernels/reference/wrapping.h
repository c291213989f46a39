// Integer arithmetic that wraps (two's complement) instead of overflowing, and plain IEEE
// arithmetic for floats, for the reference kernels that add, subtract or multiply
// elements of any dtype (elementwise, reduce). Signed overflow is undefined behaviour in
// C++; unsigned arithmetic wraps, so integers go through their unsigned type, widened to
// at least unsigned int (uint8_t/uint16_t would otherwise promote to int, and 65535 * 65535
// overflows int). This makes
// int64 shape arithmetic in a model (Add/Mul on shapes) exact and UB-free.
#pragma once

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

}  // namespace tern::kernels::ref
