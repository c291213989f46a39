// Reference concatenation of channel-blocked NCHWc tensors along channels whose counts are
// not multiples of the block (ONNX Concat-13 on axis 1 of the logical NCHW tensors), float32.
// Pure data movement.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// One input of an NCHWc channel concatenation: x holds x_channels channels as NCHWc
/// [N, ceil(x_channels / block), P, block] (P = H * W pixels), and they go to channels
/// [offset, offset + x_channels) of y, NCHWc [N, y_blocks, P, block].
struct ChannelCopy {
  int64_t n = 0;
  int64_t pixels = 0;  ///< P = H * W
  int64_t block = 0;   ///< c (>= 1)
  int64_t x_channels = 0;
  int64_t offset = 0;  ///< y's channel of x's channel 0
  int64_t y_blocks = 0;
};

/// Copies x's channels to theirs in y (see ChannelCopy) for pixels [pixel_begin, pixel_end)
/// of every image: y[n, (offset + ch) / c, s, (offset + ch) % c] = x[n, ch / c, s, ch % c].
/// y's other lanes are left as they are; x's padded lanes (channels >= x_channels) are not
/// read. The SIMD twin is kernels::f32_nchwc_copy_channels (kernels/concat).
void f32_nchwc_copy_channels(const ChannelCopy& p, const float* x, float* y, int64_t pixel_begin,
                             int64_t pixel_end);

}  // namespace tern::kernels::ref
