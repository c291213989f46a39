// Reference layout reorders between plain NCHW and channel-blocked NCHWc (DESIGN.md:
// "NCHWc"), float32. Pure data movement.
//
// NCHWc with block c stores channel ch of a [N, C, H, W] tensor at
// [n, ch / c, h, w, ch % c] of a [N, ceil(C / c), H, W, c] buffer; lanes ch >= C of the
// last block are padding.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// Geometry of one reorder: the logical NCHW extents and the channel block c.
struct ReorderParams {
  int64_t n = 0;
  int64_t channels = 0;  ///< C, the logical channel count
  int64_t h = 0;
  int64_t w = 0;
  int64_t block = 0;  ///< c (>= 1)
  /// ceil(C / c): the number of channel blocks.
  int64_t blocks() const { return (channels + block - 1) / block; }
};

/// x: NCHW [N, C, H, W] -> y: NCHWc [N, ceil(C/c), H, W, c]. Writes the channel blocks
/// [block_begin, block_end) of every image (0 <= begin <= end <= blocks()), padded lanes
/// set to 0.
void f32_reorder_to_nchwc(const ReorderParams& p, const float* x, float* y, int64_t block_begin,
                          int64_t block_end);

/// x: NCHWc [N, ceil(C/c), H, W, c] -> y: NCHW [N, C, H, W]. Writes the channels
/// [channel_begin, channel_end) of every image (0 <= begin <= end <= C); padded lanes of
/// x are not read.
void f32_reorder_to_nchw(const ReorderParams& p, const float* x, float* y, int64_t channel_begin,
                         int64_t channel_end);

}  // namespace tern::kernels::ref
