// Small checks shared by every op: axis normalization, dtype checks, overflow-checked
// shape arithmetic, and reading int32/int64 argument tensors (Reshape's shape, Slice's
// starts, Unsqueeze's axes...). Every error starts with the op's where() ("Concat 'cat1'")
// and says what was expected and what was found.
//
// Dtype rule of every op: an input dtype the op does not implement is UnsupportedOpError
// (check_dtype); two inputs whose dtypes the spec requires to be equal but are not is
// InvalidArgument (check_same_dtype).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ops/op.h"

namespace tern::ops {

/// Resolves `axis` (valid range [-rank, rank - 1]; negative counts from the end) to
/// [0, rank). Throws ShapeError "{where}: axis 3 is out of range for a rank-2 input
/// (expected -2..1)" otherwise. `what` names the argument ("axis", "axes[1]").
/// `allow_end` also accepts axis == rank (range [-rank, rank], e.g. Flatten's axis and
/// the 2-D coercion axis of Softmax-1/11), which resolves to rank.
int normalize_axis(int64_t axis, int rank, const std::string& where, const char* what = "axis",
                   bool allow_end = false);

/// normalize_axis() for every element of `axes`; a repeated axis throws ShapeError
/// naming `what` ("axes", "perm").
std::vector<int> normalize_axes(std::span<const int64_t> axes, int rank, const std::string& where,
                                const char* what = "axes");

/// The dtypes of ONNX's "all numeric types" constraint (T in Add, Abs, Neg...): every
/// float and integer type, without bool and string.
inline constexpr std::initializer_list<DType> kNumericTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
    DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64,
    DType::kUint8,   DType::kUint16,  DType::kUint32,  DType::kUint64};

/// Throws UnsupportedOpError "{where}: input 0 (X) dtype int32 is not supported
/// (supported: float32)" unless `got` is one of `allowed` (the dtypes the op implements
/// for input `index`, named `name`).
void check_dtype(DType got, std::initializer_list<DType> allowed, const std::string& where,
                 int index, const char* name);

/// check_dtype() for every present input; `names[i]` names input i (as many names as the
/// op has inputs).
void check_dtypes(std::span<const InferInput> inputs, std::initializer_list<DType> allowed,
                  const std::string& where, std::initializer_list<const char*> names);

/// Throws InvalidArgument "{where}: input 1 (B) must have the dtype of input 0 (A), float32,
/// but got int32" when `got` (input `index`, `name`) differs from `expected` (the dtype of
/// input `ref_index`, `ref_name`), for inputs the spec ties to one type.
void check_same_dtype(DType got, DType expected, const std::string& where, int index,
                      const char* name, int ref_index, const char* ref_name);

/// "float32, int32 or int64".
std::string dtype_list(std::initializer_list<DType> dtypes);

/// The values of an int32 or int64 tensor of rank 0 or 1 (shape, starts, axes, repeats...)
/// as int64. Throws UnsupportedOpError for another dtype (check_dtype) and InvalidArgument
/// for a higher rank.
std::vector<int64_t> int_values(const Tensor& t, const std::string& where, int index,
                                const char* name);

/// The single value of a 1-element tensor converted to double (Clip's min, Dropout's
/// training_mode). Throws InvalidArgument when it holds more than one element.
double scalar_value(const Tensor& t, const std::string& where, int index, const char* name);

/// a + b for shape arithmetic on values that come from a model or its inputs (dims,
/// pads, repeats...). Throws ShapeError "{where}: {what} overflows int64 (a + b)" when the
/// sum does not fit, where `what` (a format string and its arguments, formatted only on
/// failure) names the quantity: checked_add(x, p, where(), "output dim {}", d).
template <typename... Args>
int64_t checked_add(int64_t a, int64_t b, const std::string& where,
                    fmt::format_string<Args...> what, Args&&... args) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]] {
    TERN_THROW(ShapeError, "{}: {} overflows int64 ({} + {})", where,
               fmt::format(what, std::forward<Args>(args)...), a, b);
  }
  return r;
}

/// a * b, as checked_add() ("... overflows int64 (a * b)").
template <typename... Args>
int64_t checked_mul(int64_t a, int64_t b, const std::string& where,
                    fmt::format_string<Args...> what, Args&&... args) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]] {
    TERN_THROW(ShapeError, "{}: {} overflows int64 ({} * {})", where,
               fmt::format(what, std::forward<Args>(args)...), a, b);
  }
  return r;
}

/// a * b for counts that only inform (Op::macs()): INT64_MAX when the product does not fit.
/// a, b >= 0.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

/// Product of `dims` saturated to INT64_MAX (for Op::macs()); dims >= 0.
inline int64_t saturating_product(std::span<const int64_t> dims) {
  int64_t r = 1;
  for (int64_t d : dims) r = saturating_mul(r, d);
  return r;
}

/// Element count of `shape` (dims >= 0). Throws ShapeError "{where}: the {what} shape
/// [..] has more elements than int64 can count" when the product overflows, and for a
/// negative dim. `what` names the tensor ("output", "input", "requested").
int64_t checked_numel(const Shape& shape, const std::string& where, const char* what = "output");

/// True when input `i` exists in `inputs` and is present (not an omitted optional input).
inline bool has_input(std::span<const InferInput> inputs, size_t i) {
  return i < inputs.size() && inputs[i].present;
}
inline bool has_input(std::span<const Tensor> inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined();
}

/// Calls f.template operator()<T>() for the T among Ts whose DType is `t`, e.g.
///   visit_dtype<float, int32_t, int64_t>(x.dtype(), [&]<typename T>() { ... });
/// Throws UnsupportedOpError naming `where` when `t` is none of them (ops check dtypes in
/// infer(), so this only fires when run() is called without infer()).
template <typename... Ts, typename F>
void visit_dtype(DType t, const std::string& where, F&& f) {
  const bool done = ((dtype_of<Ts>() == t ? (f.template operator()<Ts>(), true) : false) || ...);
  TERN_CHECK(done, UnsupportedOpError, "{}: dtype {} is not supported (supported: {})", where,
             dtype_name(t), dtype_list({dtype_of<Ts>()...}));
}

/// Throws InvalidArgument unless `t` (an op's output) is contiguous, as the op contract
/// promises for preallocated outputs.
inline void check_contiguous_output(const Tensor& t, const std::string& where, int index = 0) {
  TERN_CHECK(t.numel() == 0 || t.is_contiguous(), InvalidArgument,
             "{}: output {} must be a contiguous tensor (got shape {}, strides {})", where, index,
             shape_str(t.shape()), shape_str(t.strides()));
}

/// Reads an int32/int64 indices tensor as int64, checking each value against `dim_of(j)`
/// (the size of the dim index j addresses) and wrapping negative values. Throws
/// InvalidArgument naming `where` and the element for an index outside [-n, n), and
/// UnsupportedOpError for another dtype. Used by GatherElements/ND and Scatter*.
template <typename DimOf>
std::vector<int64_t> checked_indices(const Tensor& indices, const std::string& where,
                                     DimOf dim_of) {
  const Tensor t = indices.contiguous();
  std::vector<int64_t> out(t.numel());
  visit_dtype<int32_t, int64_t>(t.dtype(), where, [&]<typename TI>() {
    const TI* idx = t.data<TI>();
    for (size_t j = 0; j < out.size(); ++j) {
      const int64_t n = dim_of(static_cast<int64_t>(j));
      int64_t k = static_cast<int64_t>(idx[j]);
      TERN_CHECK(k >= -n && k < n, InvalidArgument,
                 "{}: index {} (indices element {}) is out of range for a dim of size {} "
                 "(expected {}..{})",
                 where, k, j, n, -n, n - 1);
      out[j] = k < 0 ? k + n : k;
    }
  });
  return out;
}

/// Row-major strides of `shape`.
inline std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * shape[d + 1];
  return st;
}

}  // namespace tern::ops
