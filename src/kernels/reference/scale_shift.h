// Reference per-channel affine map y = x * scale[c] + shift[c], float32, for the plain
// channel-major layout (NCHW and any rank >= 2) and for the channel-blocked NCHWc layout.
// The internal op ScaleShift (ops/scale_shift.cc) runs it; fold-batch-norm creates that
// op from the BatchNormalization nodes it cannot fold into a Conv or Gemm.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// Geometry of one ScaleShift.
struct ScaleShiftParams {
  int64_t channels = 0;  ///< C, the logical channel count (scale and shift hold C values)
  int64_t inner = 1;     ///< elements per channel and image (product of the spatial dims)
  int64_t block = 0;     ///< c of NCHWc (f32_scale_shift_nchwc only)
};

/// Plain layout: x and y are [batch, channels, inner] contiguous. Computes the planes
/// [begin, end) of the batch * channels planes (plane i is image i / C, channel i % C):
///   y[i][k] = x[i][k] * scale[i % C] + shift[i % C].
/// x and y may be the same buffer.
void f32_scale_shift_nchw(const ScaleShiftParams& p, const float* x, const float* scale,
                          const float* shift, float* y, int64_t begin, int64_t end);

/// NCHWc layout: x and y are [batch, ceil(C / c), inner, c] contiguous (c = p.block);
/// lane l of channel block b holds channel b * c + l. Computes the channel blocks
/// [begin, end) of the batch * ceil(C / c) blocks (block i is image i / ceil(C / c),
/// channel block i % ceil(C / c)). Lanes past the last channel (b * c + l >= C, the
/// padding of the last block) are written as 0. x and y may be the same buffer.
void f32_scale_shift_nchwc(const ScaleShiftParams& p, const float* x, const float* scale,
                           const float* shift, float* y, int64_t begin, int64_t end);

}  // namespace tern::kernels::ref
