#include "ops/op_args.h"

#include <algorithm>

namespace tern::ops {

int normalize_axis(int64_t axis, int rank, const std::string& where, const char* what) {
  TERN_CHECK(axis >= -rank && axis < rank, ShapeError,
             "{}: {} {} is out of range for a rank-{} input (expected {}..{})", where, what, axis,
             rank, -rank, rank - 1);
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
  TERN_THROW(InvalidArgument, "{}: input {} ({}) must be {}, but got {}", where, index, name,
             dtype_list(allowed), dtype_name(got));
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
