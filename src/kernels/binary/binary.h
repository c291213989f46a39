// Elementwise binary arithmetic (Add, Sub, Mul, Div, Max, Min, PRelu) on float32 runs,
// with Highway, dispatched at run time. See README.md in this folder; the reference twin
// is ref::binary (kernels/reference/elementwise.h).
#pragma once

#include <cstdint>

#include "kernels/reference/elementwise.h"

namespace tern::kernels {

/// Whether f32_binary computes `kind` with operand strides a_stride and b_stride (in
/// elements): kAdd, kSub, kMul, kDiv, kMax, kMin and kPRelu, each operand contiguous
/// (stride 1) or one value for the whole run (stride 0). The others (integer remainders,
/// shifts) and other strides stay with the reference.
bool f32_binary_supported(ref::BinaryKind kind, int64_t a_stride, int64_t b_stride);

/// y[i] = f(a[i * a_stride], b[i * b_stride]) for i in [0, n), y contiguous (it may be a
/// or b when that operand is contiguous): bit for bit what ref::binary<float> computes
/// (ONNX Add-14, Sub-14, Mul-14, Div-14, Max-13, Min-13 with two inputs, PRelu-16), since
/// each lane does the same IEEE operation (a NaN from two NaN inputs may carry the other's
/// payload). Max and Min return NaN where b is NaN and a
/// where a is NaN, as the reference. Throws InvalidArgument when
/// f32_binary_supported(kind, a_stride, b_stride) is false.
void f32_binary(ref::BinaryKind kind, int64_t n, const float* a, int64_t a_stride, const float* b,
                int64_t b_stride, float* y);

/// y[r * row + j] = f(a', b') for r in [0, rows), j in [0, row), y contiguous: the operand
/// that `a_repeats` names (a when true, else b) is one run of `row` elements that every run
/// reuses (a' = a[j] or b' = b[j]), the other is contiguous over rows * row elements. This
/// is a per-channel operand against a map in NCHWc: [N, Cb, 1, 1, c] against [N, Cb, H, W,
/// c], per (n, cb), rows = H * W and row = c, a run the broadcast iterator would hand over
/// c elements at a time (ops/binary.cc). The same bits as f32_binary over each run. Throws
/// InvalidArgument when f32_binary_supported(kind, 1, 1) is false.
void f32_binary_rows(ref::BinaryKind kind, int64_t rows, int64_t row, const float* a,
                     bool a_repeats, const float* b, float* y);

}  // namespace tern::kernels
