// Winograd F(4x4, 3x3) convolution on NCHWc (Highway, dispatched at run time) for 3x3,
// stride-1 layers (any dilation) with 8 or more channels: 36 multiplications per input
// channel and 4x4 output tile instead of 144 (Lavin and Gray 2016; the reference twin and
// the transforms are in kernels/reference/winograd.h). See README.md in this folder.
#pragma once

#include <cstdint>

#include "kernels/reference/fused_conv.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// Whether f32_winograd_conv computes `p` with the SIMD target dispatch picks now:
/// ref::winograd_applicable(p), x NCHWc and w (winograd weights) with the target's vector
/// width as block, y NCHWc with that block or NCHW.
bool winograd_conv_supported(const ref::FusedConvParams& p);

/// Transformed weights up to this many bytes count as cached for winograd_conv_preferred:
/// the L2 of the development machine's Zen 5 core (1 MiB; Cortex-A72's is 1 MiB shared by
/// 4 cores).
inline constexpr int64_t kWinogradCachedWeightBytes = int64_t{1} << 20;

/// Output tiles (4x4) from which winograd_conv_preferred accepts weights that do not stay
/// cached: 2 FLOP per 4 bytes of streamed weights per tile.
inline constexpr int64_t kWinogradMinStreamedTiles = 12;

/// Input and output channels from which winograd_conv_preferred takes a layer: UltraFace
/// RFB-320's 8 -> 16, 8 -> 12 and 12 -> 16 branch convs at 30x40 ran in 0.019 to 0.026 ms
/// by winograd against 0.032 to 0.045 by the direct kernel (`tern bench --per-layer`, one
/// thread, Zen 4). Fewer channels were not measured.
inline constexpr int64_t kWinogradMinChannels = 8;

/// Output channels from which winograd_conv_preferred takes a layer into an NCHW output
/// (a detection head), on every target: UltraFace RFB-640's 256 -> 12 3x3 head at 8x10
/// took 0.070 ms by winograd plus 0.004 for the Transpose that could no longer fold into
/// it, against 0.065 to 0.068 by direct with NHWC output (Zen 4, AVX-512). Narrower
/// targets were not measured and keep the threshold that held before dilation support.
inline constexpr int64_t kWinogradMinHeadChannels = 16;

/// Whether the plan should run `p` by winograd rather than by the direct kernel: supported,
/// enough channels that the GEMM on the transformed tiles outweighs the transforms
/// (kWinogradMinChannels in and out; kWinogradMinHeadChannels out into an NCHW output), a
/// dilated layer's tiles covering at most twice its outputs, and either transformed
/// weights of at most kWinogradCachedWeightBytes or at least kWinogradMinStreamedTiles
/// output tiles to use them on (from `tern bench --per-layer` on ResNet-18). README.md.
bool winograd_conv_preferred(const ref::FusedConvParams& p);

/// Largest tiles per group (kernels' register tiles divide it: 6, 8 and 12 tiles).
inline constexpr int64_t kWinogradGroupTiles = 24;

/// Output tiles per group (the work items of one group share its input transform) for a
/// layer split over `threads` threads: kWinogradGroupTiles, or 12 or 6 when groups of 24
/// would give the threads fewer than 2 items each (SqueezeNet's fire modules at 27x27
/// have 3 groups of 24 tiles and 2 chunks: at 2 threads, groups of 12 took their 3x3
/// expansions from 0.26 to 0.20 ms); always 24 for one thread.
int64_t winograd_group_tiles(const ref::FusedConvParams& p, int threads);

/// Work items of one image: (group of `group_tiles` (1 to kWinogradGroupTiles)
/// consecutive 4x4 output tiles (row major over ref::WinogradAxis's tiles), chunk of up
/// to 4 output blocks (3 on SSE4)), group major: already in image order, so the
/// grid is 1 x items;
/// f32_winograd_conv with the same group_tiles computes any sub-range of [0, items()), so
/// callers split it across threads (ops::parallel_grid).
WorkGrid winograd_conv_work(const ref::FusedConvParams& p, int64_t group_tiles);

/// Extra memory of one thread's call, in bytes: the transformed input tiles and the
/// products of one work item (allocated once per thread and kept for later calls).
int64_t winograd_conv_workspace_bytes(const ref::FusedConvParams& p);

/// y = epilogue(conv(x, w) + bias, z) for work items [begin, end) of one image, like
/// ref::f32_winograd_conv: x [ceil(C/c), H, W, c] (padded lanes never read); u
/// [36, ceil(M/c), C, c] (ref::winograd_transform_weights); bias [M] or nullptr; z and y
/// [ceil(M/c), oH, oW, c] or [M, oH, oW], padded output lanes written 0. Per item: the
/// input transform B^T d B of each tile and input block (vectors of c channels; patch
/// positions outside the image read as 0, so there is no padded copy), then for each of
/// the 36 points a register-tiled GEMM over the input channels (like the pointwise
/// kernel: B output blocks x R tiles), then the output transform A^T m A with the bias,
/// residual and activation applied in registers before the one store.
/// Requires winograd_conv_supported(p).
void f32_winograd_conv(const ref::FusedConvParams& p, const float* x, const float* u,
                       const float* bias, const float* z, float* y, int64_t group_tiles,
                       int64_t begin, int64_t end);

}  // namespace tern::kernels
