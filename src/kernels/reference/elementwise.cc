#include "kernels/reference/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/dtype_dispatch.h"
#include "base/float16.h"
#include "kernels/reference/string_cast.h"
#include "kernels/reference/wrapping.h"

namespace tern::kernels::ref {

namespace {

// The stride patterns a BroadcastIterator produces, each with its own loop so the
// common ones (contiguous, broadcast scalar) vectorize. F is a lambda (inlined).
template <typename TX, typename TY, typename F>
inline void map1(int64_t n, const TX* x, int64_t sx, TY* y, F f) {
  if (sx == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  } else if (sx == 0) {
    const TY v = f(x[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i * sx]);
  }
}

template <typename TA, typename TB, typename TY, typename F>
inline void map2(int64_t n, const TA* a, int64_t sa, const TB* b, int64_t sb, TY* y, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const TB bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const TA av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
  }
}

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

template <typename T>
inline bool is_nan(T v) {
  if constexpr (kIsFloat<T>) {
    return v != v;
  } else {
    (void)v;
    return false;
  }
}

// |x|: clears the sign bit of a float (|-0| = 0); |MIN| wraps to MIN for integers.
template <typename T>
inline T abs_of(T a) {
  if constexpr (kIsFloat<T>) {
    return std::fabs(a);
  } else {
    return a < 0 ? wrapping_neg(a) : a;
  }
}
// C division truncates toward zero; for integers MIN / -1 overflows, so negate instead.
template <typename T>
inline T div(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return a / b;
  } else {
    return b == -1 ? wrapping_neg(a) : static_cast<T>(a / b);
  }
}

// float/double -> integer: truncate toward zero, saturate, NaN -> 0.
template <typename T>
inline T float_to_int(double d) {
  if (std::isnan(d)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  // max + 1 is a power of two, exactly representable.
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (d <= lo) return std::numeric_limits<T>::min();
  if (d >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

template <typename T>
inline T int_pow(T base, T exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? 1 : -1;
    return 0;
  }
  T result = 1;
  using U = std::make_unsigned_t<T>;
  U e = static_cast<U>(exp);
  while (e != 0) {
    if (e & 1u) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    e >>= 1;
  }
  return result;
}

template <typename TBase, typename TExp>
inline TBase pow_one(TBase a, TExp b) {
  if constexpr (std::is_same_v<TBase, float> && std::is_same_v<TExp, float>) {
    return std::pow(a, b);
  } else if constexpr (kIsFloat<TBase>) {
    return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else if constexpr (kIsFloat<TExp>) {
    return float_to_int<TBase>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else {
    // Both integers: do the power in the wider of the two types, then narrow (wraps).
    using W = std::conditional_t<(sizeof(TBase) >= sizeof(TExp)), TBase, TExp>;
    return static_cast<TBase>(int_pow<W>(static_cast<W>(a), static_cast<W>(b)));
  }
}

// ---- Cast -----------------------------------------------------------------------------

// Element conversion for Cast. Float16 and BFloat16 go through float (every value of both
// is exactly a float); bool is a byte holding 0 or 1.
template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename T>
inline float half_value(T v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return half_to_float(v.bits);
  } else {
    return bfloat16_to_float(v.bits);
  }
}

template <typename From, typename To>
inline To convert(From v) {
  if constexpr (std::is_same_v<From, To>) {
    return v;
  } else if constexpr (kIsHalf<From>) {
    return convert<float, To>(half_value(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_same_v<To, Float16>) {
    return Float16{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16{float_to_bfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    return float_to_int<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);  // integer or bool -> integer: modular (C++20)
  }
}

template <typename T>
void copy_typed(int64_t n, const void* x, int64_t sx, void* y, int64_t sy) {
  const T* xs = static_cast<const T*>(x);
  T* ys = static_cast<T*>(y);
  if (sx == 1 && sy == 1) {
    std::memmove(ys, xs, static_cast<size_t>(n) * sizeof(T));
  } else if (sy == 1) {
    map1(n, xs, sx, ys, [](T v) { return v; });
  } else {
    for (int64_t i = 0; i < n; ++i) ys[i * sy] = xs[i * sx];
  }
}

}  // namespace


// ---- unary ------------------------------------------------------------------------------

template <typename T>
void unary(const UnaryParams& p, int64_t n, const T* x, int64_t sx, T* y) {
  switch (p.kind) {
    case UnaryKind::kRelu:
      return map1(n, x, sx, y, [](T v) { return v > T{0} ? v : T{0}; });
    case UnaryKind::kNeg:
      return map1(n, x, sx, y, [](T v) { return wrapping_neg(v); });
    case UnaryKind::kAbs:
      return map1(n, x, sx, y, [](T v) { return abs_of(v); });
    default:
      break;
  }
  if constexpr (kIsFloat<T>) {
    const float alpha = p.alpha;
    const float beta = p.beta;
    switch (p.kind) {
      case UnaryKind::kLeakyRelu:
        return map1(n, x, sx, y, [alpha](float v) { return v >= 0.f ? v : alpha * v; });
      case UnaryKind::kSigmoid:
        return map1(n, x, sx, y, [](float v) { return 1.f / (1.f + std::exp(-v)); });
      case UnaryKind::kHardSigmoid:
        return map1(n, x, sx, y, [alpha, beta](float v) {
          return std::max(0.f, std::min(1.f, alpha * v + beta));
        });
      case UnaryKind::kHardSwish:
        return map1(n, x, sx, y, [](float v) {
          return v * std::max(0.f, std::min(1.f, v * (1.f / 6.f) + 0.5f));
        });
      case UnaryKind::kTanh:
        return map1(n, x, sx, y, [](float v) { return std::tanh(v); });
      case UnaryKind::kExp:
        return map1(n, x, sx, y, [](float v) { return std::exp(v); });
      case UnaryKind::kLog:
        return map1(n, x, sx, y, [](float v) { return std::log(v); });
      case UnaryKind::kSqrt:
        return map1(n, x, sx, y, [](float v) { return std::sqrt(v); });
      default:
        break;
    }
  }
}

template void unary<float>(const UnaryParams&, int64_t, const float*, int64_t, float*);
template void unary<int32_t>(const UnaryParams&, int64_t, const int32_t*, int64_t, int32_t*);
template void unary<int64_t>(const UnaryParams&, int64_t, const int64_t*, int64_t, int64_t*);

// ---- clip -------------------------------------------------------------------------------

template <typename T>
void clip(int64_t n, const T* x, int64_t sx, T lo, T hi, T* y) {
  // Written with comparisons (not std::min/max) so a NaN input stays NaN.
  map1(n, x, sx, y, [lo, hi](T v) {
    const T a = v < lo ? lo : v;
    return a > hi ? hi : a;
  });
}

template void clip<float>(int64_t, const float*, int64_t, float, float, float*);
template void clip<int32_t>(int64_t, const int32_t*, int64_t, int32_t, int32_t, int32_t*);
template void clip<int64_t>(int64_t, const int64_t*, int64_t, int64_t, int64_t, int64_t*);
template void clip<int8_t>(int64_t, const int8_t*, int64_t, int8_t, int8_t, int8_t*);
template void clip<uint8_t>(int64_t, const uint8_t*, int64_t, uint8_t, uint8_t, uint8_t*);

// ---- binary -----------------------------------------------------------------------------

template <typename T>
void binary(BinaryKind kind, int64_t n, const T* a, int64_t sa, const T* b, int64_t sb, T* out) {
  switch (kind) {
    case BinaryKind::kAdd:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return wrapping_add(x, y); });
    case BinaryKind::kSub:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return wrapping_sub(x, y); });
    case BinaryKind::kMul:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return wrapping_mul(x, y); });
    case BinaryKind::kDiv:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return div(x, y); });
    case BinaryKind::kMax:
      // y wins when larger or NaN; a NaN x stays (comparisons with NaN are false).
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return (x < y || is_nan(y)) ? y : x; });
    case BinaryKind::kMin:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return (y < x || is_nan(y)) ? y : x; });
    case BinaryKind::kPRelu:
      return map2(n, a, sa, b, sb, out,
                  [](T x, T slope) { return x < 0 ? wrapping_mul(x, slope) : x; });
  }
}

template void binary<float>(BinaryKind, int64_t, const float*, int64_t, const float*, int64_t,
                            float*);
template void binary<int32_t>(BinaryKind, int64_t, const int32_t*, int64_t, const int32_t*, int64_t,
                              int32_t*);
template void binary<int64_t>(BinaryKind, int64_t, const int64_t*, int64_t, const int64_t*, int64_t,
                              int64_t*);

// ---- pow --------------------------------------------------------------------------------

template <typename TBase, typename TExp>
void pow(int64_t n, const TBase* a, int64_t sa, const TExp* b, int64_t sb, TBase* out) {
  map2(n, a, sa, b, sb, out, [](TBase x, TExp y) { return pow_one<TBase, TExp>(x, y); });
}

#define TERN_POW_INSTANCE(TB, TE) \
  template void pow<TB, TE>(int64_t, const TB*, int64_t, const TE*, int64_t, TB*);
TERN_POW_INSTANCE(float, float)
TERN_POW_INSTANCE(float, int32_t)
TERN_POW_INSTANCE(float, int64_t)
TERN_POW_INSTANCE(int32_t, float)
TERN_POW_INSTANCE(int32_t, int32_t)
TERN_POW_INSTANCE(int32_t, int64_t)
TERN_POW_INSTANCE(int64_t, float)
TERN_POW_INSTANCE(int64_t, int32_t)
TERN_POW_INSTANCE(int64_t, int64_t)
#undef TERN_POW_INSTANCE

// ---- cast, copy, fill -------------------------------------------------------------------

void cast(int64_t n, DType from, const void* x, int64_t sx, DType to, void* y) {
  if (to == DType::kString) return cast_to_string(n, from, x, sx, static_cast<std::string*>(y));
  if (from == DType::kString) {
    return cast_from_string(n, static_cast<const std::string*>(x), sx, to, y);
  }
  visit_dtype(from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      map1(n, static_cast<const From*>(x), sx, static_cast<To*>(y),
           [](From v) { return convert<From, To>(v); });
    });
  });
}

void copy(int64_t n, int elem_size, const void* x, int64_t sx, void* y, int64_t sy) {
  switch (elem_size) {
    case 1:
      return copy_typed<uint8_t>(n, x, sx, y, sy);
    case 2:
      return copy_typed<uint16_t>(n, x, sx, y, sy);
    case 4:
      return copy_typed<uint32_t>(n, x, sx, y, sy);
    case 8:
      return copy_typed<uint64_t>(n, x, sx, y, sy);
    default: {
      const char* xs = static_cast<const char*>(x);
      char* ys = static_cast<char*>(y);
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(ys + i * sy * elem_size, xs + i * sx * elem_size, elem_size);
      }
    }
  }
}

void fill(int64_t n, int elem_size, const void* value, void* y) {
  copy(n, elem_size, value, 0, y, 1);
}

}  // namespace tern::kernels::ref
