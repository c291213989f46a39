// Reference softmax and log-softmax, float32. ONNX Softmax-1/11/13, LogSoftmax-1/11/13.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// Softmax (or log-softmax when `log`) of x viewed as [outer, axis_len, inner]
/// (contiguous), along the middle dim, into y of the same shape; only outer indices
/// [outer_begin, outer_end) are computed. Numerically stable: the max along the axis is
/// subtracted before exp, so large inputs do not overflow:
///   softmax: y = exp(x - m) / sum(exp(x - m));  log-softmax: y = x - m - log(sum(exp(x - m))).
/// x and y may be the same buffer.
void f32_softmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
                 int64_t inner, bool log);

/// Hardmax of x viewed as [outer, axis_len, inner] along the middle dim: y = 1 at the first
/// index holding the maximum (a later NaN never wins), 0 elsewhere; outer indices
/// [outer_begin, outer_end) only. x and y must not overlap.
void f32_hardmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
                 int64_t inner);

}  // namespace tern::kernels::ref
