#include "ops/op_args.h"

#include <algorithm>

namespace tern::ops {

int normalize_axis(int64_t axis, int rank, const std::string& where, const char* what,
                   bool allow_end) {
  const int hi = allow_end ? rank : rank - 1;
  TERN_CHECK(axis >= -rank && axis <= hi, ShapeError,
             "{}: {} {} is out of range for a rank-{} input (expected {}..{})", where, what, axis,
             rank, -rank, hi);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int> normalize_axes(std::span<const int64_t> axes, int rank, const std::string& where,
                                const char* what) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    const int n = normalize_axis(a, rank, where, "axis");
    TERN_CHECK(std::find(out.begin(), out.end(), n) == out.end(), ShapeError,
               "{}: {} {} names axis {} twice (expected distinct axes)", where, what,
               std::vector<int64_t>(axes.begin(), axes.end()), n);
    out.push_back(n);
  }
  return out;
}

std::string dtype_list(std::initializer_list<DType> dtypes) {
  std::string s;
  size_t i = 0;
  for (DType t : dtypes) {
    if (i > 0) s += (i + 1 == dtypes.size()) ? " or " : ", ";
    s += dtype_name(t);
    ++i;
  }
  return s;
}

void check_dtype(DType got, std::initializer_list<DType> allowed, const std::string& where,
                 int index, const char* name) {
  if (std::find(allowed.begin(), allowed.end(), got) != allowed.end()) return;
  TERN_THROW(UnsupportedOpError, "{}: input {} ({}) dtype {} is not supported (supported: {})",
             where, index, name, dtype_name(got), dtype_list(allowed));
}

void check_dtypes(std::span<const InferInput> inputs, std::initializer_list<DType> allowed,
                  const std::string& where, std::initializer_list<const char*> names) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    const char* name = i < names.size() ? names.begin()[i] : "input";
    check_dtype(inputs[i].dtype, allowed, where, static_cast<int>(i), name);
  }
}

void check_same_dtype(DType got, DType expected, const std::string& where, int index,
                      const char* name, int ref_index, const char* ref_name) {
  TERN_CHECK(got == expected, InvalidArgument,
             "{}: input {} ({}) must have the dtype of input {} ({}), {}, but got {}", where, index,
             name, ref_index, ref_name, dtype_name(expected), dtype_name(got));
}

int64_t checked_numel(const Shape& shape, const std::string& where, const char* what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    TERN_CHECK(d >= 0, ShapeError, "{}: the {} shape {} has a negative dim", where, what,
               shape_str(shape));
    TERN_CHECK(!__builtin_mul_overflow(n, d, &n), ShapeError,
               "{}: the {} shape {} has more elements than int64 can count", where, what,
               shape_str(shape));
  }
  return n;
}

std::vector<int64_t> int_values(const Tensor& t, const std::string& where, int index,
                                const char* name) {
  check_dtype(t.dtype(), {DType::kInt32, DType::kInt64}, where, index, name);
  TERN_CHECK(t.rank() <= 1, InvalidArgument,
             "{}: input {} ({}) must be a 1-D tensor, but got shape {}", where, index, name,
             shape_str(t.shape()));
  return t.to_int64_vector();
}

double scalar_value(const Tensor& t, const std::string& where, int index, const char* name) {
  TERN_CHECK(t.numel() == 1, InvalidArgument,
             "{}: input {} ({}) must hold one value, but got shape {}", where, index, name,
             shape_str(t.shape()));
  return t.item_as_double(std::vector<int64_t>(t.rank(), 0));
}

}  // namespace tern::ops
