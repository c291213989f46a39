// Nearest-neighbour resize with vector table lookups along the rows (Highway, dispatched
// at run time). See README.md in this folder; the reference twin is
// ref::f32_resize_nearest (kernels/reference/resize.h).
#pragma once

#include <cstdint>

#include "kernels/reference/resize.h"

namespace tern::kernels {

/// Writes output rows [row_begin, row_end) of y as ref::f32_resize_nearest does, bit for
/// bit (ONNX Resize-10/11/13 and Upsample, mode nearest, after the op's index tables).
/// An output row that reads the same input row as the row before it is a copy of it. In
/// the other rows of an NCHW tensor (p.inner == 1), each vector of outputs whose input
/// indices lie within one vector's span from the first (any upsampling along W: 2x reads
/// 8 inputs for 16 outputs at 16 lanes) is one unaligned load and a table lookup; the other
/// vectors (downsampling) and the row's tail take the reference's loop. Elements of
/// p.inner > 1 floats (NCHWc's lanes, or a trailing dim the op does not resize) are copied
/// in whole vectors, or 128-bit ones, where
/// p.inner is a multiple of their lanes (else the reference's loop). A load may read past
/// its input row, never past x (the product of p.in_shape times p.inner floats).
void f32_resize_nearest(const ref::ResizeNearestParams& p, const float* x, float* y,
                        int64_t row_begin, int64_t row_end);

}  // namespace tern::kernels
