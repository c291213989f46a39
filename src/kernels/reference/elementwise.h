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
// Element types: float = float32, int32_t, int64_t (plus int8_t/uint8_t where noted).
// Integer arithmetic wraps (two's complement) instead of overflowing, so int64 shape
// arithmetic is exact and UB-free.
#pragma once

#include <cstdint>

#include "tern/tensor.h"

namespace tern::kernels::ref {

/// Unary functions (ONNX Relu-14, LeakyRelu-16, Sigmoid-13, HardSigmoid-6, HardSwish-14,
/// Tanh-13, Exp-13, Log-13, Sqrt-13, Neg-13, Abs-13).
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
};

/// A unary function and its attributes.
struct UnaryParams {
  UnaryKind kind = UnaryKind::kRelu;
  float alpha = 0.f;  ///< LeakyRelu slope; HardSigmoid alpha
  float beta = 0.f;   ///< HardSigmoid beta
};

/// y[i] = f(x[i * x_stride]) for i in [0, n); y contiguous. T = float for every kind;
/// T = int32_t / int64_t for kRelu, kNeg and kAbs only (others leave y untouched).
template <typename T>
void unary(const UnaryParams& p, int64_t n, const T* x, int64_t x_stride, T* y);

/// y[i] = min(max(x[i * x_stride], lo), hi) (ONNX Clip-13: hi wins when lo > hi; NaN
/// passes through). T = float, int32_t, int64_t, int8_t, uint8_t.
template <typename T>
void clip(int64_t n, const T* x, int64_t x_stride, T lo, T hi, T* y);

/// Binary functions (ONNX Add-14, Sub-14, Mul-14, Div-14, Max-13, Min-13, PRelu-16).
enum class BinaryKind {
  kAdd,
  kSub,
  kMul,
  kDiv,  ///< integers truncate toward zero like C; the caller guarantees b != 0
  kMax,  ///< floats: NaN in either input gives NaN
  kMin,
  kPRelu,  ///< a < 0 ? a * b : a  (a = X, b = slope)
};

/// out[i] = f(a[i * a_stride], b[i * b_stride]) for i in [0, n); out contiguous.
/// T = float, int32_t, int64_t.
template <typename T>
void binary(BinaryKind kind, int64_t n, const T* a, int64_t a_stride, const T* b, int64_t b_stride,
            T* out);

/// out[i] = a^b (ONNX Pow-15): the result has the base's type. Float results use
/// std::pow in double precision when either side is an integer. Integer base and
/// exponent: exact power by squaring (wrapping); a negative exponent gives 1 / a^|b|
/// truncated (1 for a = 1, +-1 for a = -1, else 0). An integer result from a float power
/// is truncated toward zero and saturated to the type's range (NaN gives 0).
/// TBase, TExp = float, int32_t, int64_t (all nine pairs).
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

/// Sets n contiguous elements of `elem_size` bytes at y to the element at `value`.
void fill(int64_t n, int elem_size, const void* value, void* y);

}  // namespace tern::kernels::ref
