// Register-blocked direct convolution into NCHWc (Highway, dispatched at run time): the
// kernel for the network's first layer (plain NCHW input, nine-patch borders, no padded
// copy) and for every 2-D convolution that has no more specific kernel (k x k, any
// stride, dilation and padding; groups whose output channels fill whole blocks). See
// README.md in this folder for the data contract and the register blocking.
#pragma once

#include <cstdint>

#include "kernels/reference/fused_conv.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// Whether f32_direct_conv computes `p` with the SIMD target run-time dispatch picks now:
/// a 2-D convolution (depth 1) with packed weights whose block is that target's vector
/// width (p.w_block == Lanes), x NCHW (x_block 1) or NCHWc with the same block, y NCHWc
/// with the same block or NCHW, and groups == 1 or M / groups a multiple of the block
/// (so each output block reads one group's input channels).
bool direct_conv_supported(const ref::FusedConvParams& p);

/// Spatial units (output rows x row segments) direct_conv_work gives an image at least by
/// default, where whole 12-pixel tiles allow: a row's segments are then shortened to reach
/// this many (a 10x10 pointwise layer, 100 pixels, gets 9 segments of 12).
/// ops::parallel_grid splits a layer by region only with kMinSpatialUnitsPerThread units
/// per thread; this keeps 2 threads on that split.
inline constexpr int64_t kDirectMinSpatialUnits = 16;

/// Input channels per group from which, and up to which, a pointwise layer may run
/// GroupTile (direct_group_tile): below 32 its per-pixel reduction is too large a share of
/// its FMAs; above 256 its interleaved weights would outgrow their stack buffer.
inline constexpr int64_t kGroupTileMinChannels = 32;
inline constexpr int64_t kGroupTileMaxChannels = 256;

/// Whether f32_direct_conv runs a pointwise conv (1x1, stride 1, no padding, one group,
/// NCHWc input) with `out_channels` outputs from `in_channels` inputs on GroupTile, whose
/// lanes hold 4 outputs x 4 input channels (README.md, "GroupTile"): on 16-lane targets
/// (`lanes`, the target's float lanes) only, for at most 12 or 17 to 20 outputs (13 to 16
/// fill a block's lanes anyway) and kGroupTileMinChannels to kGroupTileMaxChannels inputs.
/// conv_bench's lane count and the tests use it to know which tile runs.
inline bool direct_group_tile(int64_t out_channels, int64_t in_channels, int64_t lanes) {
  return lanes == 16 && in_channels >= kGroupTileMinChannels &&
         in_channels <= kGroupTileMaxChannels &&
         (out_channels <= 12 || (out_channels >= 17 && out_channels <= 20));
}

/// Work items of one image: (chunk of up to 4 output-channel blocks (3 on SSE4, and on AVX2
/// for an NCHW input; a group's chunks differ by at most one block), output row, row segment)
/// triples, chunk major: a
/// grid of chunks x (rows x segments); f32_direct_conv computes any sub-range of [0, items()), so
/// callers split it across threads (ops::parallel_grid). min_units: the spatial units to reach (see
/// kDirectMinSpatialUnits); 1 for a caller that computes every item in one call (a
/// ConvChain's band), whose rows then keep full-length segments. It must be the value
/// given to f32_direct_conv.
WorkGrid direct_conv_work(const ref::FusedConvParams& p,
                          int64_t min_units = kDirectMinSpatialUnits);

/// y = epilogue(conv(x, w) + bias, z) for work items [begin, end) of one image, like
/// ref::f32_fused_conv (same layouts: x [C, H, W] or [ceil(C/c), H, W, c]; w packed
/// [ceil(M/c), C/g, kH, kW, c]; bias [M] or nullptr; z and y [ceil(M/c), oH, oW, c] or
/// [M, oH, oW]; padded output lanes written 0, padded input lanes never read).
/// Nine-patch: the taps of a row that fall in the top or bottom padding are skipped for
/// the whole row; the interior columns run a register tile of B output blocks x R pixels;
/// the left and right border pixels run the same code, in runs of pixels that skip the
/// same taps on the padding. Input channels go in passes whose weights fit in L1 (a
/// pointwise layer's: in a quarter of L2, fed as fast as its tiles use them): the first starts the
/// accumulators from -0 and adds the bias after its FMAs, later ones start from the
/// partial sums stored in y, and the last applies the epilogue in registers before its
/// store. Items are those of direct_conv_work(p, min_units). Requires
/// direct_conv_supported(p).
void f32_direct_conv(const ref::FusedConvParams& p, const float* x, const float* w,
                     const float* bias, const float* z, float* y, int64_t begin, int64_t end,
                     int64_t min_units = kDirectMinSpatialUnits);

}  // namespace tern::kernels
