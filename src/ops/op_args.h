// Small checks shared by the tensor-manipulation and elementwise ops: axis
// normalization, dtype checks, and reading int32/int64 argument tensors (Reshape's
// shape, Slice's starts, Unsqueeze's axes...). Every error starts with the op's where()
// ("Concat 'cat1'") and says what was expected and what was found.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "ops/op.h"

namespace tern::ops {

/// Resolves `axis` (valid range [-rank, rank - 1]; negative counts from the end) to
/// [0, rank). Throws ShapeError "{where}: axis 3 is out of range for a rank-2 input
/// (expected -2..1)" otherwise. `what` names the argument ("axis", "axes[1]").
int normalize_axis(int64_t axis, int rank, const std::string& where, const char* what = "axis");

/// normalize_axis() for every element of `axes`; a repeated axis throws ShapeError
/// naming `what` ("axes", "perm").
std::vector<int> normalize_axes(std::span<const int64_t> axes, int rank, const std::string& where,
                                const char* what = "axes");

/// Throws InvalidArgument "{where}: input {index} ({name}) must be float32, int32 or
/// int64, but got uint8" unless `got` is one of `allowed`.
void check_dtype(DType got, std::initializer_list<DType> allowed, const std::string& where,
                 int index, const char* name);

/// "float32, int32 or int64".
std::string dtype_list(std::initializer_list<DType> dtypes);

/// The values of an int32 or int64 tensor of rank 0 or 1 (shape, starts, axes, repeats...)
/// as int64. Throws InvalidArgument for another dtype or a higher rank.
std::vector<int64_t> int_values(const Tensor& t, const std::string& where, int index,
                                const char* name);

/// The single value of a 1-element tensor converted to double (Clip's min, Dropout's
/// training_mode). Throws InvalidArgument when it holds more than one element.
double scalar_value(const Tensor& t, const std::string& where, int index, const char* name);

/// True when input `i` exists in `inputs` and is present (not an omitted optional input).
inline bool has_input(std::span<const InferInput> inputs, size_t i) {
  return i < inputs.size() && inputs[i].present;
}
inline bool has_input(std::span<const Tensor> inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined();
}

/// Calls f.template operator()<T>() for the T among Ts whose DType is `t`, e.g.
///   visit_dtype<float, int32_t, int64_t>(x.dtype(), [&]<typename T>() { ... });
/// Throws InvalidArgument naming `where` when `t` is none of them (ops check dtypes in
/// infer(), so this only fires on a contract violation).
template <typename... Ts, typename F>
void visit_dtype(DType t, const std::string& where, F&& f) {
  const bool done = ((dtype_of<Ts>() == t ? (f.template operator()<Ts>(), true) : false) || ...);
  TERN_CHECK(done, InvalidArgument, "{}: dtype {} is not supported here", where, dtype_name(t));
}

/// Throws InvalidArgument unless `t` (an op's output) is contiguous, as the op contract
/// promises for preallocated outputs.
inline void check_contiguous_output(const Tensor& t, const std::string& where, int index = 0) {
  TERN_CHECK(t.numel() == 0 || t.is_contiguous(), InvalidArgument,
             "{}: output {} must be a contiguous tensor (got shape {}, strides {})", where, index,
             shape_str(t.shape()), shape_str(t.strides()));
}

}  // namespace tern::ops
