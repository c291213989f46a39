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

// Float16 and BFloat16 compute through float (every value of both is exactly a float);
// bool is a byte holding 0 or 1.
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

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

template <typename T>
inline bool nan_of(T v) {
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
    if constexpr (std::is_signed_v<T>) {
      return a < 0 ? wrapping_neg(a) : a;
    } else {
      return a;
    }
  }
}
// C division truncates toward zero; for integers MIN / -1 overflows, so negate instead.
template <typename T>
inline T div(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return a / b;
  } else {
    if constexpr (std::is_signed_v<T>) {
      return b == -1 ? wrapping_neg(a) : static_cast<T>(a / b);
    } else {
      return static_cast<T>(a / b);
    }
  }
}

// ---- Cast -----------------------------------------------------------------------------

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

// The type a kernel computes in: float for the half types, T itself otherwise.
template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<Float16> {
  using type = float;
};
template <>
struct ComputeOf<BFloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeOf<T>::type;

template <typename T>
inline compute_t<T> up(T v) {
  if constexpr (kIsHalf<T>) {
    return half_value(v);
  } else {
    return v;
  }
}
template <typename T>
inline T down(compute_t<T> v) {
  if constexpr (kIsHalf<T>) {
    return convert<float, T>(v);
  } else {
    return v;
  }
}

// base^exp for integers by squaring (wrapping in TBase, which equals the exact power
// reduced modulo 2^bits). A negative exponent gives 1 / base^|exp| truncated.
template <typename TBase, typename TExp>
inline TBase int_pow(TBase base, TExp exp) {
  if constexpr (std::is_signed_v<TExp>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed_v<TBase>) {
        if (base == -1) return (exp % 2 == 0) ? 1 : -1;
      }
      return 0;
    }
  }
  TBase result = 1;
  auto e = static_cast<std::make_unsigned_t<TExp>>(exp);
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
    return static_cast<TBase>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else if constexpr (kIsFloat<TExp>) {
    return float_to_int<TBase>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else {
    return int_pow<TBase, TExp>(a, b);
  }
}

// Remainder with the sign of the dividend (C fmod); integer MIN % -1 (undefined in C++)
// is 0.
template <typename C>
inline C fmod_of(C a, C b) {
  if constexpr (kIsFloat<C>) {
    return std::fmod(a, b);
  } else if constexpr (std::is_signed_v<C>) {
    return b == -1 ? C{0} : static_cast<C>(a % b);
  } else {
    return static_cast<C>(a % b);
  }
}

// Remainder with the sign of the divisor (Python %).
template <typename C>
inline C mod_of(C a, C b) {
  C r = fmod_of(a, b);
  if constexpr (std::is_signed_v<C> || kIsFloat<C>) {
    if (r != C{0} && ((r < C{0}) != (b < C{0}))) r = static_cast<C>(r + b);
  }
  return r;
}

// a << b or a >> b for unsigned T; 0 once b reaches the bit width (undefined in C++).
template <typename T>
inline T shift_of(T a, T b, bool left) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b >= kBits) return 0;
  using W = std::common_type_t<T, unsigned>;
  return static_cast<T>(left ? static_cast<W>(a) << b : static_cast<W>(a) >> b);
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

bool unary_kind_has_integers(UnaryKind kind) {
  return kind == UnaryKind::kRelu || kind == UnaryKind::kNeg || kind == UnaryKind::kAbs ||
         kind == UnaryKind::kSign || kind == UnaryKind::kShrink;
}

namespace {

// map1 through the compute type: f takes and returns compute_t<T>.
template <typename T, typename F>
inline void map_up(int64_t n, const T* x, int64_t sx, T* y, F f) {
  map1(n, x, sx, y, [f](T v) { return down<T>(f(up(v))); });
}

// The kinds defined on floats only; C = float or double.
template <typename T>
void unary_float(const UnaryParams& p, int64_t n, const T* x, int64_t sx, T* y) {
  using C = compute_t<T>;
  const C alpha = static_cast<C>(p.alpha);
  const C beta = static_cast<C>(p.beta);
  const C gamma = static_cast<C>(p.gamma);
  const C zero{0};
  const C one{1};
  switch (p.kind) {
    case UnaryKind::kLeakyRelu:
      return map_up(n, x, sx, y, [alpha](C v) { return v >= C{0} ? v : alpha * v; });
    case UnaryKind::kSigmoid:
      return map_up(n, x, sx, y, [one](C v) { return one / (one + std::exp(-v)); });
    case UnaryKind::kHardSigmoid:
      return map_up(n, x, sx, y,
                    [=](C v) { return std::max(zero, std::min(one, alpha * v + beta)); });
    case UnaryKind::kHardSwish:
      return map_up(n, x, sx, y, [=](C v) {
        return v * std::max(zero, std::min(one, v * (one / C{6}) + C{0.5}));
      });
    case UnaryKind::kTanh:
      return map_up(n, x, sx, y, [](C v) { return std::tanh(v); });
    case UnaryKind::kExp:
      return map_up(n, x, sx, y, [](C v) { return std::exp(v); });
    case UnaryKind::kLog:
      return map_up(n, x, sx, y, [](C v) { return std::log(v); });
    case UnaryKind::kSqrt:
      return map_up(n, x, sx, y, [](C v) { return std::sqrt(v); });
    case UnaryKind::kErf:
      return map_up(n, x, sx, y, [](C v) { return std::erf(v); });
    case UnaryKind::kElu:
      return map_up(n, x, sx, y, [=](C v) { return v > zero ? v : alpha * std::expm1(v); });
    case UnaryKind::kSelu:
      return map_up(n, x, sx, y,
                    [=](C v) { return gamma * (v > zero ? v : alpha * std::expm1(v)); });
    case UnaryKind::kCelu:
      return map_up(n, x, sx, y, [=](C v) {
        return std::max(zero, v) + std::min(zero, alpha * std::expm1(v / alpha));
      });
    case UnaryKind::kSoftplus:
      // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large |x|.
      return map_up(n, x, sx, y,
                    [=](C v) { return std::max(v, zero) + std::log1p(std::exp(-std::fabs(v))); });
    case UnaryKind::kSoftsign:
      return map_up(n, x, sx, y, [=](C v) { return v / (one + std::fabs(v)); });
    case UnaryKind::kThresholdedRelu:
      return map_up(n, x, sx, y, [=](C v) { return v > alpha ? v : zero; });
    case UnaryKind::kReciprocal:
      return map_up(n, x, sx, y, [=](C v) { return one / v; });
    case UnaryKind::kFloor:
      return map_up(n, x, sx, y, [](C v) { return std::floor(v); });
    case UnaryKind::kCeil:
      return map_up(n, x, sx, y, [](C v) { return std::ceil(v); });
    case UnaryKind::kRound:
      // The default rounding mode (to nearest, ties to even) is the one ONNX asks for.
      return map_up(n, x, sx, y, [](C v) { return std::nearbyint(v); });
    case UnaryKind::kSin:
      return map_up(n, x, sx, y, [](C v) { return std::sin(v); });
    case UnaryKind::kCos:
      return map_up(n, x, sx, y, [](C v) { return std::cos(v); });
    case UnaryKind::kTan:
      return map_up(n, x, sx, y, [](C v) { return std::tan(v); });
    case UnaryKind::kAsin:
      return map_up(n, x, sx, y, [](C v) { return std::asin(v); });
    case UnaryKind::kAcos:
      return map_up(n, x, sx, y, [](C v) { return std::acos(v); });
    case UnaryKind::kAtan:
      return map_up(n, x, sx, y, [](C v) { return std::atan(v); });
    case UnaryKind::kSinh:
      return map_up(n, x, sx, y, [](C v) { return std::sinh(v); });
    case UnaryKind::kCosh:
      return map_up(n, x, sx, y, [](C v) { return std::cosh(v); });
    case UnaryKind::kAsinh:
      return map_up(n, x, sx, y, [](C v) { return std::asinh(v); });
    case UnaryKind::kAcosh:
      return map_up(n, x, sx, y, [](C v) { return std::acosh(v); });
    case UnaryKind::kAtanh:
      return map_up(n, x, sx, y, [](C v) { return std::atanh(v); });
    default:
      break;
  }
}

}  // namespace

template <typename T>
void unary(const UnaryParams& p, int64_t n, const T* x, int64_t sx, T* y) {
  using C = compute_t<T>;
  switch (p.kind) {
    case UnaryKind::kRelu:
      return map_up(n, x, sx, y, [](C v) { return v > C{0} ? v : C{0}; });
    case UnaryKind::kNeg:
      return map_up(n, x, sx, y, [](C v) { return wrapping_neg(v); });
    case UnaryKind::kAbs:
      return map_up(n, x, sx, y, [](C v) { return abs_of(v); });
    case UnaryKind::kSign:
      return map_up(n, x, sx, y, [](C v) {
        if (v > C{0}) return C{1};
        if (v == C{0}) return C{0};
        if constexpr (std::is_unsigned_v<C>) {
          return C{0};  // unreachable
        } else {
          return nan_of(v) ? v : static_cast<C>(-1);
        }
      });
    case UnaryKind::kShrink: {
      const double lambd = p.alpha;
      const double bias = p.beta;
      return map_up(n, x, sx, y, [=](C v) {
        const double d = static_cast<double>(v);
        const double r = d < -lambd ? d + bias : (d > lambd ? d - bias : 0.0);
        if constexpr (kIsFloat<C>) {
          return static_cast<C>(r);
        } else {
          return float_to_int<C>(r);
        }
      });
    }
    default:
      break;
  }
  if constexpr (kIsFloat<C>) unary_float<T>(p, n, x, sx, y);
}

// Every dtype but bool.
#define TERN_FOR_NUMERIC(X)                                                                 \
  X(float)                                                                                  \
  X(double)                                                                                 \
  X(Float16)                                                                                \
  X(BFloat16) X(int8_t) X(int16_t) X(int32_t) X(int64_t) X(uint8_t) X(uint16_t) X(uint32_t) \
      X(uint64_t)

#define TERN_UNARY_INSTANCE(T) \
  template void unary<T>(const UnaryParams&, int64_t, const T*, int64_t, T*);
TERN_FOR_NUMERIC(TERN_UNARY_INSTANCE)
#undef TERN_UNARY_INSTANCE

template <typename T>
void is_nan(int64_t n, const T* x, int64_t sx, bool* y) {
  map1(n, x, sx, y, [](T v) { return std::isnan(up(v)); });
}

template <typename T>
void is_inf(int64_t n, const T* x, int64_t sx, bool neg, bool pos, bool* y) {
  map1(n, x, sx, y, [neg, pos](T v) {
    const auto c = up(v);
    return std::isinf(c) && (c < 0 ? neg : pos);
  });
}

#define TERN_FLOAT_TEST_INSTANCE(T)                           \
  template void is_nan<T>(int64_t, const T*, int64_t, bool*); \
  template void is_inf<T>(int64_t, const T*, int64_t, bool, bool, bool*);
TERN_FLOAT_TEST_INSTANCE(float)
TERN_FLOAT_TEST_INSTANCE(double)
TERN_FLOAT_TEST_INSTANCE(Float16)
TERN_FLOAT_TEST_INSTANCE(BFloat16)
#undef TERN_FLOAT_TEST_INSTANCE

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

namespace {

// map2 through the compute type: f takes two compute_t<T> and returns one.
template <typename T, typename F>
inline void map2_up(int64_t n, const T* a, int64_t sa, const T* b, int64_t sb, T* out, F f) {
  map2(n, a, sa, b, sb, out, [f](T x, T y) { return down<T>(f(up(x), up(y))); });
}

}  // namespace

template <typename T>
void binary(BinaryKind kind, int64_t n, const T* a, int64_t sa, const T* b, int64_t sb, T* out) {
  using C = compute_t<T>;
  switch (kind) {
    case BinaryKind::kAdd:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return wrapping_add(x, y); });
    case BinaryKind::kSub:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return wrapping_sub(x, y); });
    case BinaryKind::kMul:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return wrapping_mul(x, y); });
    case BinaryKind::kDiv:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return div(x, y); });
    case BinaryKind::kMax:
      // y wins when larger or NaN; a NaN x stays (comparisons with NaN are false).
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return (x < y || nan_of(y)) ? y : x; });
    case BinaryKind::kMin:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return (y < x || nan_of(y)) ? y : x; });
    case BinaryKind::kPRelu:
      if constexpr (std::is_unsigned_v<C>) {
        return map2_up(n, a, sa, b, sb, out, [](C x, C) { return x; });
      } else {
        return map2_up(n, a, sa, b, sb, out,
                       [](C x, C slope) { return x < C{0} ? wrapping_mul(x, slope) : x; });
      }
    case BinaryKind::kMod:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return mod_of(x, y); });
    case BinaryKind::kFmod:
      return map2_up(n, a, sa, b, sb, out, [](C x, C y) { return fmod_of(x, y); });
    case BinaryKind::kShiftLeft:
    case BinaryKind::kShiftRight:
      if constexpr (std::is_unsigned_v<C>) {
        const bool left = kind == BinaryKind::kShiftLeft;
        return map2_up(n, a, sa, b, sb, out, [left](C x, C y) { return shift_of(x, y, left); });
      }
      return;
  }
}

#define TERN_BINARY_INSTANCE(T) \
  template void binary<T>(BinaryKind, int64_t, const T*, int64_t, const T*, int64_t, T*);
TERN_FOR_NUMERIC(TERN_BINARY_INSTANCE)
#undef TERN_BINARY_INSTANCE

// ---- compare, logical, select -----------------------------------------------------------

template <typename T>
void compare(CompareKind kind, int64_t n, const T* a, int64_t sa, const T* b, int64_t sb,
             bool* out) {
  using C = compute_t<T>;
  switch (kind) {
    case CompareKind::kEqual:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return up(x) == up(y); });
    case CompareKind::kGreater:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return C(up(x)) > C(up(y)); });
    case CompareKind::kGreaterOrEqual:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return C(up(x)) >= C(up(y)); });
    case CompareKind::kLess:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return C(up(x)) < C(up(y)); });
    case CompareKind::kLessOrEqual:
      return map2(n, a, sa, b, sb, out, [](T x, T y) { return C(up(x)) <= C(up(y)); });
  }
}

#define TERN_COMPARE_INSTANCE(T) \
  template void compare<T>(CompareKind, int64_t, const T*, int64_t, const T*, int64_t, bool*);
TERN_FOR_NUMERIC(TERN_COMPARE_INSTANCE)
TERN_COMPARE_INSTANCE(bool)
#undef TERN_COMPARE_INSTANCE

void logical(LogicalKind kind, int64_t n, const bool* a, int64_t sa, const bool* b, int64_t sb,
             bool* out) {
  switch (kind) {
    case LogicalKind::kAnd:
      return map2(n, a, sa, b, sb, out, [](bool x, bool y) { return x && y; });
    case LogicalKind::kOr:
      return map2(n, a, sa, b, sb, out, [](bool x, bool y) { return x || y; });
    case LogicalKind::kXor:
      return map2(n, a, sa, b, sb, out, [](bool x, bool y) { return x != y; });
  }
}

void logical_not(int64_t n, const bool* x, int64_t sx, bool* y) {
  map1(n, x, sx, y, [](bool v) { return !v; });
}

namespace {

template <typename E>
void select_typed(int64_t n, const bool* c, int64_t sc, const void* a, int64_t sa, const void* b,
                  int64_t sb, void* out) {
  const E* as = static_cast<const E*>(a);
  const E* bs = static_cast<const E*>(b);
  E* o = static_cast<E*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? as[i * sa] : bs[i * sb];
}

}  // namespace

void select(int64_t n, int elem_size, const bool* c, int64_t sc, const void* a, int64_t sa,
            const void* b, int64_t sb, void* out) {
  switch (elem_size) {
    case 1:
      return select_typed<uint8_t>(n, c, sc, a, sa, b, sb, out);
    case 2:
      return select_typed<uint16_t>(n, c, sc, a, sa, b, sb, out);
    case 4:
      return select_typed<uint32_t>(n, c, sc, a, sa, b, sb, out);
    default:
      return select_typed<uint64_t>(n, c, sc, a, sa, b, sb, out);
  }
}

// ---- pow --------------------------------------------------------------------------------

template <typename TBase, typename TExp>
void pow(int64_t n, const TBase* a, int64_t sa, const TExp* b, int64_t sb, TBase* out) {
  map2(n, a, sa, b, sb, out, [](TBase x, TExp y) { return pow_one<TBase, TExp>(x, y); });
}

#define TERN_POW_EXPONENTS(TB, X)                                                             \
  X(TB, float)                                                                                \
  X(TB, double)                                                                               \
  X(TB, int8_t)                                                                               \
  X(TB, int16_t) X(TB, int32_t) X(TB, int64_t) X(TB, uint8_t) X(TB, uint16_t) X(TB, uint32_t) \
      X(TB, uint64_t)
#define TERN_POW_INSTANCE(TB, TE) \
  template void pow<TB, TE>(int64_t, const TB*, int64_t, const TE*, int64_t, TB*);
TERN_POW_EXPONENTS(float, TERN_POW_INSTANCE)
TERN_POW_EXPONENTS(double, TERN_POW_INSTANCE)
TERN_POW_EXPONENTS(int32_t, TERN_POW_INSTANCE)
TERN_POW_EXPONENTS(int64_t, TERN_POW_INSTANCE)
#undef TERN_POW_INSTANCE
#undef TERN_POW_EXPONENTS
#undef TERN_FOR_NUMERIC

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

namespace {

template <typename T>
void copy_rows_typed(int64_t m, int64_t n, const char* x, int64_t sx, int64_t rx, char* y,
                     int64_t sy, int64_t ry) {
  for (int64_t i = 0; i < m; ++i, x += rx, y += ry) {
    const T* xs = reinterpret_cast<const T*>(x);
    T* ys = reinterpret_cast<T*>(y);
    for (int64_t j = 0; j < n; ++j) ys[j * sy] = xs[j * sx];
  }
}

// Rows of kBytes contiguous bytes: one fixed-size move per row, which the compiler makes
// a load and a store (a detection head's Slice and Concat copy rows of 2 floats; the
// generic loop took 1.5 ns per row, 4 % of UltraFace slim-320).
// Unrolled by 4 rows: a one-row loop of 6 instructions ran at 1.35 or 2.4 cycles per
// 8-byte row depending on where the linker placed it (UltraFace slim-320's box Slices:
// 1.6 or 2.8 us, op_bench on AMD Zen 4, after an unrelated change moved the code).
template <int kBytes>
void copy_rows_fixed(int64_t m, const char* x, int64_t rx, char* y, int64_t ry) {
#pragma GCC unroll 4
  for (int64_t i = 0; i < m; ++i, x += rx, y += ry) std::memcpy(y, x, kBytes);
}

// Contiguous rows of `bytes` bytes: copy_rows_fixed for the first of kSizes that equals
// `bytes` (the row sizes the models' Slices, Concats and Splits copy: 2 to 20 floats,
// RetinaFace's landmark heads 20), else one memcpy per row.
template <int... kSizes>
void copy_rows_contiguous(int64_t m, int64_t bytes, const char* x, int64_t rx, char* y,
                          int64_t ry) {
  const bool fixed = ((bytes == kSizes && (copy_rows_fixed<kSizes>(m, x, rx, y, ry), true)) || ...);
  if (fixed) return;
  for (int64_t i = 0; i < m; ++i) std::memcpy(y + i * ry, x + i * rx, static_cast<size_t>(bytes));
}

}  // namespace

void copy_rows(int64_t m, int64_t n, int elem_size, const void* x, int64_t sx, int64_t rx,
               void* y, int64_t sy, int64_t ry) {
  const char* xb = static_cast<const char*>(x);
  char* yb = static_cast<char*>(y);
  if (sx == 1 && sy == 1) {
    copy_rows_contiguous<4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80>(m, n * elem_size, xb, rx, yb,
                                                                   ry);
    return;
  }
  switch (elem_size) {
    case 1:
      return copy_rows_typed<uint8_t>(m, n, xb, sx, rx, yb, sy, ry);
    case 2:
      return copy_rows_typed<uint16_t>(m, n, xb, sx, rx, yb, sy, ry);
    case 4:
      return copy_rows_typed<uint32_t>(m, n, xb, sx, rx, yb, sy, ry);
    case 8:
      return copy_rows_typed<uint64_t>(m, n, xb, sx, rx, yb, sy, ry);
    default:
      for (int64_t i = 0; i < m; ++i) copy(n, elem_size, xb + i * rx, sx, yb + i * ry, sy);
  }
}

void fill(int64_t n, int elem_size, const void* value, void* y) {
  copy(n, elem_size, value, 0, y, 1);
}

}  // namespace tern::kernels::ref
