// Reference elementwise kernels: unary activations and math, Clip, binary arithmetic,
// Pow, dtype conversion (Cast) and strided copies.
//
// Data contract: every kernel processes one run of n elements. Inputs are read at
// x[i * x_stride] (stride 1 = contiguous, 0 = one broadcast value, anything else = a
// strided view); the output is contiguous unless a stride is given for it. Strides are
// in elements. Runs come from ops::BroadcastIterator, which does the broadcasting and
// the walk over outer dims; these kernels never allocate, never spawn threads and never
// throw. The stride patterns 1/1, 1/0 and 0/1 get their own loops so the compiler can
// vectorize them.
//
// Element types: listed per kernel; Float16 and BFloat16 compute through float.
// Integer arithmetic wraps (two's complement) instead of overflowing, so int64 shape
// arithmetic is exact and UB-free.
#pragma once

#include <cstdint>

#include "tern/tensor.h"

namespace tern::kernels::ref {

/// Unary functions (ONNX Relu-14, LeakyRelu-16, Sigmoid-13, HardSigmoid-6, HardSwish-14,
/// Tanh-13, Exp-13, Log-13, Sqrt-13, Neg-13, Abs-13, Erf-13, Elu-6, Selu-6, Celu-12,
/// Softplus-1, Softsign-1, ThresholdedRelu-10, Reciprocal-13, Floor-13, Ceil-13, Round-11,
/// Sign-13, Sin/Cos/Tan/Asin/Acos/Atan-7, Sinh/Cosh/Asinh/Acosh/Atanh-9, Shrink-9).
enum class UnaryKind {
  kRelu,         ///< max(x, 0)
  kLeakyRelu,    ///< x >= 0 ? x : alpha * x
  kSigmoid,      ///< 1 / (1 + exp(-x))
  kHardSigmoid,  ///< max(0, min(1, alpha * x + beta))
  kHardSwish,    ///< x * max(0, min(1, x / 6 + 1 / 2))
  kTanh,
  kExp,
  kLog,   ///< natural log; log(0) = -inf, log(x < 0) = NaN
  kSqrt,  ///< sqrt(x < 0) = NaN
  kNeg,   ///< -x (integers wrap: -INT_MIN = INT_MIN)
  kAbs,   ///< |x| (integers wrap: |INT_MIN| = INT_MIN)
  kSign,  ///< -1, 0 or 1 (NaN stays NaN)
  kErf,
  kElu,              ///< x > 0 ? x : alpha * (exp(x) - 1)
  kSelu,             ///< gamma * (x > 0 ? x : alpha * (exp(x) - 1))
  kCelu,             ///< max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  kSoftplus,         ///< log(1 + exp(x)) (overflow-safe form)
  kSoftsign,         ///< x / (1 + |x|)
  kThresholdedRelu,  ///< x > alpha ? x : 0
  kReciprocal,       ///< 1 / x
  kFloor,
  kCeil,
  kRound,  ///< to nearest, ties to even
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kShrink,  ///< x < -alpha ? x + beta : x > alpha ? x - beta : 0 (alpha = lambd, beta = bias)
};

/// A unary function and its attributes.
struct UnaryParams {
  UnaryKind kind = UnaryKind::kRelu;
  float alpha = 0.f;  ///< LeakyRelu, HardSigmoid, Elu, Selu, Celu, ThresholdedRelu alpha;
                      ///< Shrink lambd
  float beta = 0.f;   ///< HardSigmoid beta; Shrink bias
  float gamma = 0.f;  ///< Selu gamma
};

/// True for the kinds defined on integers too (kRelu, kNeg, kAbs, kSign, kShrink).
bool unary_kind_has_integers(UnaryKind kind);

/// y[i] = f(x[i * x_stride]) for i in [0, n); y contiguous. T = float, double, Float16,
/// BFloat16 (computed in float, rounded once to nearest even) for every kind; T = any
/// integer type for the kinds where unary_kind_has_integers() is true (other kinds leave y
/// untouched). Integer Shrink computes in double and truncates (saturating).
template <typename T>
void unary(const UnaryParams& p, int64_t n, const T* x, int64_t x_stride, T* y);

/// ONNX IsNaN-13 (detect_negative/detect_positive ignored) and IsInf-10: y[i] = whether
/// x[i * x_stride] is NaN, or an infinity of a detected sign. T = float, double, Float16,
/// BFloat16.
template <typename T>
void is_nan(int64_t n, const T* x, int64_t x_stride, bool* y);
template <typename T>
void is_inf(int64_t n, const T* x, int64_t x_stride, bool detect_negative, bool detect_positive,
            bool* y);

/// y[i] = min(max(x[i * x_stride], lo), hi) (ONNX Clip-13: hi wins when lo > hi; NaN
/// passes through). T = float, int32_t, int64_t, int8_t, uint8_t.
template <typename T>
void clip(int64_t n, const T* x, int64_t x_stride, T lo, T hi, T* y);

/// Binary functions (ONNX Add-14, Sub-14, Mul-14, Div-14, Max-13, Min-13, PRelu-16, Mod-13,
/// BitShift-11).
enum class BinaryKind {
  kAdd,
  kSub,
  kMul,
  kDiv,  ///< integers truncate toward zero like C; the caller guarantees b != 0
  kMax,  ///< floats: NaN in either input gives NaN
  kMin,
  kPRelu,       ///< a < 0 ? a * b : a  (a = X, b = slope)
  kMod,         ///< integers only: remainder with the divisor's sign (Python %); b != 0
  kFmod,        ///< remainder with the dividend's sign (C fmod / integer %); integers: b != 0
  kShiftLeft,   ///< unsigned integers only: a << b (0 when b >= bit width)
  kShiftRight,  ///< unsigned integers only: a >> b (0 when b >= bit width)
};

/// out[i] = f(a[i * a_stride], b[i * b_stride]) for i in [0, n); out contiguous.
/// T = float, double, Float16, BFloat16 (computed in float, rounded once) and every integer
/// type. kMod and the shifts leave out untouched for types they are not defined on.
template <typename T>
void binary(BinaryKind kind, int64_t n, const T* a, int64_t a_stride, const T* b, int64_t b_stride,
            T* out);

/// Comparisons (ONNX Equal-13, Greater-13, GreaterOrEqual-16, Less-13, LessOrEqual-16):
/// out[i] = a[i * a_stride] op b[i * b_stride] as bool (NaN compares false except for
/// !=). T = any dtype (bool included; half types compare as float).
enum class CompareKind { kEqual, kGreater, kGreaterOrEqual, kLess, kLessOrEqual };
template <typename T>
void compare(CompareKind kind, int64_t n, const T* a, int64_t a_stride, const T* b,
             int64_t b_stride, bool* out);

/// Logical functions on bool (ONNX And-7, Or-7, Xor-7, Not-1).
enum class LogicalKind { kAnd, kOr, kXor };
void logical(LogicalKind kind, int64_t n, const bool* a, int64_t a_stride, const bool* b,
             int64_t b_stride, bool* out);
void logical_not(int64_t n, const bool* x, int64_t x_stride, bool* y);

/// out[i] = c[i * c_stride] ? a[i * a_stride] : b[i * b_stride] (ONNX Where-16) for
/// elements of `elem_size` bytes (1, 2, 4 or 8).
void select(int64_t n, int elem_size, const bool* c, int64_t c_stride, const void* a,
            int64_t a_stride, const void* b, int64_t b_stride, void* out);

/// out[i] = a^b (ONNX Pow-15): the result has the base's type. Float results use
/// std::pow in double precision when either side is an integer or double. Integer base and
/// exponent: exact power by squaring (wrapping); a negative exponent gives 1 / a^|b|
/// truncated (1 for a = 1, +-1 for a = -1, else 0). An integer result from a float power
/// is truncated toward zero and saturated to the type's range (NaN gives 0).
/// TBase = float, double, int32_t, int64_t; TExp = float, double or any integer type.
template <typename TBase, typename TExp>
void pow(int64_t n, const TBase* a, int64_t a_stride, const TExp* b, int64_t b_stride, TBase* out);

/// Converts n elements of dtype `from` (read at x[i * x_stride]) to dtype `to` (written
/// contiguously at y) for every pair of tern dtypes (ONNX Cast-13):
///   float -> integer truncates toward zero and saturates to the target range (NaN -> 0;
///   ONNX leaves out-of-range values undefined); integer -> narrower integer wraps;
///   anything -> bool is (x != 0) (NaN -> true); bool -> anything is 0 or 1;
///   float16 and bfloat16 go through float (round to nearest even); to and from string
///   as kernels/reference/string_cast.h says.
void cast(int64_t n, DType from, const void* x, int64_t x_stride, DType to, void* y);

/// Copies n elements of `elem_size` bytes (1, 2, 4 or 8) from x[i * x_stride] to
/// y[i * y_stride]. The ranges must not overlap unless x == y with equal strides.
void copy(int64_t n, int elem_size, const void* x, int64_t x_stride, void* y, int64_t y_stride);

/// Copies m runs of n elements of `elem_size` bytes: run i of x starts at
/// x + i * x_row_bytes and holds its elements x_stride elements apart (y likewise).
/// copy() row by row, in one call, for runs too short to pay a call each: contiguous runs
/// of the sizes the models copy (4, 8, 12, 16, 20, 24, 32, 40, 48, 64 or 80 bytes: 1 to 20
/// floats) are one fixed-size move per row, other contiguous runs one memcpy per row.
void copy_rows(int64_t m, int64_t n, int elem_size, const void* x, int64_t x_stride,
               int64_t x_row_bytes, void* y, int64_t y_stride, int64_t y_row_bytes);

/// Sets n contiguous elements of `elem_size` bytes at y to the element at `value`.
void fill(int64_t n, int elem_size, const void* value, void* y);

}  // namespace tern::kernels::ref
