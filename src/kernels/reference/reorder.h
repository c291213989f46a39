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

/// x: NCHWc [N, ceil(C/c), H, W, c] -> y: NCHW [N, C, H, W]. Writes the pixels
/// [pixel_begin, pixel_end) (row-major over H x W, 0 <= begin <= end <= H * W) of every
/// channel of every image; padded lanes of x are not read. It goes through runs of
/// kReorderRun pixels, every lane of a block per run: the run's c * kReorderRun floats of x
/// (4 KiB at c = 16) stay in L1 while the lanes are picked out of them, where a loop per
/// channel over all pixels read each line of x c times from L2 or beyond: ppocr's largest,
/// 96 x 64 x 96, took 0.47 to 0.63 ms against 0.18 for a memcpy of its size, in runs 0.36;
/// its 8 reorders 0.88 ms, in runs 0.51 (`tern bench --per-layer`, 1 thread), and ppocr
/// 0.986 of its time at 1 thread and 0.976 at 2 (alternated). Splitting threads by pixels
/// also matches the convolutions' split by rows (ops::parallel_grid). Plans run its SIMD
/// twin, kernels::f32_reorder_to_nchw (kernels/reorder), which transposes 4 x 4 tiles.
void f32_reorder_to_nchw(const ReorderParams& p, const float* x, float* y, int64_t pixel_begin,
                         int64_t pixel_end);

/// Pixels per run of f32_reorder_to_nchw.
inline constexpr int64_t kReorderRun = 64;

}  // namespace tern::kernels::ref
