// Reference reduction kernels: Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum and
// LogSumExp over the middle dim of a contiguous
// [outer, reduce, inner] tensor, and ArgMax/ArgMin over the same layout (ONNX
// Reduce*-13, ArgMax-13, ArgMin-13).
//
// Data contract: `in` is contiguous [outer, reduce, inner]; `out` is contiguous
// [outer, inner]. Ops bring any reduction over adjacent axes to this form by merging the
// dims before, inside and after the reduced block; non-adjacent axes take several passes
// (kinds that compose, see reduce_kind_composes()) or are permuted to be adjacent first.
// The accumulation order is sequential along `reduce` (float accumulator); for
// inner > 1 the loops walk whole rows, so the inner loop is contiguous and vectorizes.
// No allocation, no threads, no throwing.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

enum class ReduceKind {
  kSum,        ///< sum; 0 for an empty reduction
  kMean,       ///< sum / reduce; NaN (float) or 0 (integer) for an empty reduction
  kMax,        ///< maximum (a NaN wins); lowest value (-inf for float) for an empty reduction
  kMin,        ///< minimum (a NaN wins); highest value (+inf for float) for an empty reduction
  kProd,       ///< product (integers wrap); 1 for an empty reduction
  kL1,         ///< sum of |x|; 0 for an empty reduction
  kL2,         ///< sqrt(sum of x^2); 0 for an empty reduction
  kSumSquare,  ///< sum of x^2 (integers wrap); 0 for an empty reduction
  kLogSum,     ///< log(sum); -inf for an empty reduction
  kLogSumExp,  ///< log(sum(exp(x))), computed as max + log(sum(exp(x - max))); -inf when empty
};

/// True for the kinds that may be split into passes over disjoint sets of axes
/// (reduce(reduce(x)) == reduce(x)): Sum, Max, Min, Prod (and Mean, summed per pass and
/// divided once). The others must see all reduced elements in one call.
inline bool reduce_kind_composes(ReduceKind k) {
  return k == ReduceKind::kSum || k == ReduceKind::kMean || k == ReduceKind::kMax ||
         k == ReduceKind::kMin || k == ReduceKind::kProd;
}

/// Shape of a reduction: in [outer, reduce, inner] -> out [outer, inner].
struct ReduceParams {
  ReduceKind kind = ReduceKind::kSum;
  int64_t outer = 1;
  int64_t reduce = 1;
  int64_t inner = 1;
};

/// out[o, i] = reduce_r in[o, r, i]. T = float, double, int32_t, int64_t (integer mean
/// divides with truncation toward zero; integer sums and products wrap; the float kinds
/// L2, LogSum, LogSumExp accumulate in double and round once, also for integer T).
template <typename T>
void reduce(const ReduceParams& p, const T* in, T* out);

/// Shape of an ArgMax: in [outer, reduce, inner] -> out [outer, inner] (int64 indices).
struct ArgMaxParams {
  int64_t outer = 1;
  int64_t reduce = 1;  ///< must be >= 1
  int64_t inner = 1;
  bool select_last_index = false;  ///< ties: last index instead of first
  bool arg_min = false;            ///< ArgMin: index of the smallest instead of the largest
};

/// out[o, i] = index r of the largest (arg_min: smallest) in[o, r, i]. T = float, double,
/// int32_t, int64_t. NaN compares false, so NaNs are skipped unless the first element is NaN.
template <typename T>
void argmax(const ArgMaxParams& p, const T* in, int64_t* out);

}  // namespace tern::kernels::ref
