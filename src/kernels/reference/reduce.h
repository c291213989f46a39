// Reference reduction kernels: Sum, Mean and Max over the middle dim of a contiguous
// [outer, reduce, inner] tensor, and ArgMax over the same layout (ONNX ReduceSum-13,
// ReduceMean-13, ReduceMax-13, ArgMax-13).
//
// Data contract: `in` is contiguous [outer, reduce, inner]; `out` is contiguous
// [outer, inner]. Ops bring any reduction over adjacent axes to this form by merging the
// dims before, inside and after the reduced block; non-adjacent axes take several passes.
// The accumulation order is sequential along `reduce` (float accumulator); for
// inner > 1 the loops walk whole rows, so the inner loop is contiguous and vectorizes.
// No allocation, no threads, no throwing.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

enum class ReduceKind {
  kSum,   ///< sum; 0 for an empty reduction
  kMean,  ///< sum / reduce; NaN (float) or 0 (integer) for an empty reduction
  kMax,   ///< maximum (a NaN wins); lowest value (-inf for float) for an empty reduction
};

/// Shape of a reduction: in [outer, reduce, inner] -> out [outer, inner].
struct ReduceParams {
  ReduceKind kind = ReduceKind::kSum;
  int64_t outer = 1;
  int64_t reduce = 1;
  int64_t inner = 1;
};

/// out[o, i] = reduce_r in[o, r, i]. T = float, int32_t, int64_t (integer mean divides
/// with truncation toward zero; integer sums wrap).
template <typename T>
void reduce(const ReduceParams& p, const T* in, T* out);

/// Shape of an ArgMax: in [outer, reduce, inner] -> out [outer, inner] (int64 indices).
struct ArgMaxParams {
  int64_t outer = 1;
  int64_t reduce = 1;  ///< must be >= 1
  int64_t inner = 1;
  bool select_last_index = false;  ///< ties: last index instead of first
};

/// out[o, i] = index r of the largest in[o, r, i]. T = float, int32_t, int64_t.
/// NaN compares false, so NaNs are skipped unless the first element is NaN.
template <typename T>
void argmax(const ArgMaxParams& p, const T* in, int64_t* out);

}  // namespace tern::kernels::ref
