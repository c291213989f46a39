// Reference TopK kernel (ONNX TopK-11): the k largest or smallest values along the middle
// dim of a contiguous [outer, n, inner] tensor, sorted, with their indices.
//
// Order: descending (largest) or ascending values; NaN counts as larger than every
// number; equal values keep the lower index first. Outputs are contiguous
// [outer, k, inner]. The caller gives scratch for n int64 values. No allocation, no
// threads, no throwing.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// Shape of a TopK: in [outer, n, inner] -> values / indices [outer, k, inner], k <= n.
struct TopKParams {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  int64_t k = 1;
  bool largest = true;  ///< false: the k smallest
};

/// Writes the top k of each row (values may be null, indices may be null).
/// T = float, double, int32_t, int64_t.
template <typename T>
void topk(const TopKParams& p, const T* in, int64_t* scratch, T* values, int64_t* indices);

}  // namespace tern::kernels::ref
