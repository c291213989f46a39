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

/// y[r * y_row_stride + j] = f(a[r * a_row_stride + j], b[r * b_row_stride + j]) for r in
/// [0, rows), j in [0, row): `rows` runs of `row` contiguous elements, each operand's runs
/// its row stride (in elements) apart, 0 for an operand whose one run every run reuses.
/// The short runs of a broadcast over NCHWc blocks, which ops/binary.cc takes a row of
/// runs at a time from BroadcastIterator::for_each_rows: a per-channel operand against a
/// map, [N or 1, Cb, 1, 1, c] against [N, Cb, H, W, c], is H * W runs of c per (n, cb),
/// its runs 0 apart. y may be an operand whose runs are y's. The same bits as f32_binary
/// over each run. Throws InvalidArgument when f32_binary_supported(kind, 1, 1) is false.
void f32_binary_rows(ref::BinaryKind kind, int64_t rows, int64_t row, const float* a,
                     int64_t a_row_stride, const float* b, int64_t b_row_stride, float* y,
                     int64_t y_row_stride);

}  // namespace tern::kernels
