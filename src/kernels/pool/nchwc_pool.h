// Max and average pooling on NCHWc (Highway, dispatched at run time): channels are the
// vector lanes, so every tap of a window is one vector load and one max or add. See
// README.md in this folder for the data contract.
#pragma once

#include <cstdint>

#include "kernels/reference/pool.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// Which reduction f32_nchwc_pool computes over a window.
enum class PoolKind { kMax, kAverage };

/// Whether f32_nchwc_pool computes `p` with the SIMD target dispatch picks now. `p` is the
/// 3-D window that assign-layout makes of a 2-D pooling over NCHWc (and of a global one):
/// dims (d, h, w) = (H, W, lanes) of x [planes, H, W, c], kernel [kH, kW, 1], stride
/// [sH, sW, 1], with c (= in.w = out.w) this target's vector width and no padding or
/// dilation on the lane dim. Any dilation and padding on H and W.
bool nchwc_pool_supported(const ref::PoolParams& p);

/// Work items: the output rows of every plane, plane major: a grid of planes x out.d;
/// f32_nchwc_pool computes any sub-range of [0, items()), so callers split it across
/// threads (ops::parallel_grid).
WorkGrid nchwc_pool_work(const ref::PoolParams& p, int64_t planes);

/// y = max or mean of each window, for work items [begin, end). x: [planes, H, W, c],
/// y: [planes, oH, oW, c] (both contiguous, the shapes p gives). The results are the
/// reference's (ref::f32_max_pool / f32_average_pool on the same 3-D window) bit for bit:
/// taps are visited in the same order, only taps inside the input count (a window with
/// none gives -inf for max and 0 for average), max keeps the running value unless a tap
/// compares greater (so NaN taps are skipped as std::max skips them), and the mean divides
/// the sum by the divisor count_include_pad gives. Requires nchwc_pool_supported(p).
void f32_nchwc_pool(const ref::PoolParams& p, PoolKind kind, const float* x, float* y,
                    int64_t begin, int64_t end);

}  // namespace tern::kernels
