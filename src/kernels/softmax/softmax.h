// Softmax and log-softmax with vectorised exp (Highway, dispatched at run time). See
// README.md in this folder; the reference twin is kernels/reference/softmax.h.
#pragma once

#include <cstdint>

namespace tern::kernels {

/// Softmax (or log-softmax when `log`) of x viewed as [outer, axis_len, inner]
/// (contiguous), along the middle dim, into y of the same shape, for outer indices
/// [outer_begin, outer_end); what ref::f32_softmax computes (ONNX Softmax and LogSoftmax,
/// opsets 1 to 13), with every exp taken by Highway's Exp (at most 1 ULP from std::exp)
/// on whole vectors:
///   - inner == 1, axis_len >= lanes: each row's max, exp and sum run along the row;
///   - inner == 1, shorter rows (a detection head's 2 classes): the rows' maxima are
///     taken one row at a time, then x - max for a chunk of rows goes through Exp as one
///     contiguous array, then each row is summed and scaled;
///   - inner > 1: the lanes are `inner` consecutive softmaxes (vectors along inner).
/// NaN inputs give NaN rows as in the reference. x and y may be the same buffer.
void f32_softmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
                 int64_t inner, bool log);

}  // namespace tern::kernels
