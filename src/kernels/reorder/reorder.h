// NCHWc -> NCHW reorder with 4 x 4 transposes in 128-bit vectors (Highway, dispatched at run
// time). See README.md in this folder; the reference twin is ref::f32_reorder_to_nchw
// (kernels/reference/reorder.h).
#pragma once

#include <cstdint>

#include "kernels/reference/reorder.h"

namespace tern::kernels {

/// x: NCHWc [N, ceil(C/c), H, W, c] -> y: NCHW [N, C, H, W], pixels [pixel_begin,
/// pixel_end) (row-major over H x W, 0 <= begin <= end <= H * W) of every channel of every
/// image: what ref::f32_reorder_to_nchw writes, bit for bit. Padded lanes of x (channels
/// >= C) may be loaded but are never stored, so they may hold anything (NaN). Where c is
/// a multiple of 4 and the target has 128-bit vectors (every SIMD target), each 4 pixels x
/// 4 lanes go through one 4 x 4 transpose in registers (4 loads, 8 interleaves, 4 stores);
/// elsewhere (c not a multiple of 4, such as 1 in a build whose only target is scalar) and for the
/// pixels left over after whole groups of 4, it runs the reference's element loop.
void f32_reorder_to_nchw(const ref::ReorderParams& p, const float* x, float* y, int64_t pixel_begin,
                         int64_t pixel_end);

}  // namespace tern::kernels
