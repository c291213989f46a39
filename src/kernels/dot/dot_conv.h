// Pointwise convolution to few output channels with the input channels along the vectors
// (Highway, dispatched at run time): FusedConv's `dot` algorithm. Each output is a dot
// product of an input pixel's NCHWc channel vectors with a row of the OIHW weights, so
// every lane holds an input channel however few output channels there are (a detection
// head's 128 -> 4 conv uses 4 of the 16 lanes of the pointwise kernel's output-channel
// vectors). See README.md in this folder.
#pragma once

#include <cstdint>

#include "kernels/reference/fused_conv.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// Whether f32_dot_conv computes `p` with the SIMD target run-time dispatch picks now: a
/// 2-D 1x1 conv with stride 1, no padding and one group, x NCHWc with that target's vector
/// width as block, weights OIHW [M, C, 1, 1] (w_block 1), y NCHWc with the same block,
/// NCHW or NHWC.
bool dot_conv_supported(const ref::FusedConvParams& p);

/// The reduction's and the store's cost per pixel and tile of 4 output channels, in
/// FMA instructions (dot_conv_preferred's unit), fitted to conv_bench on AMD Zen 5 with
/// AVX-512 (README.md).
inline constexpr int64_t kDotReduceCost = 16;

/// Whether the dot kernel is expected to beat the pointwise kernel (output channels in
/// the lanes of `block`-wide vectors) on a 1x1 conv from `in_channels` to `out_channels`:
/// their FMA instructions per pixel, ceil(M / block) * C against ceil(M / 4) * (4 C /
/// block + kDotReduceCost). Only for 16-lane blocks (AVX-512), where the constant was
/// measured: false for narrower ones (with 4 lanes the dot kernel's FMAs alone match the
/// pointwise kernel's). Used by pack-weights to keep such a conv's weights OIHW.
bool dot_conv_preferred(int64_t in_channels, int64_t out_channels, int64_t block);

/// Work items of one image: tiles of consecutive pixels (4 with 32 vector registers:
/// AVX-512 and NEON; 2 on AVX2, SSE4 and SSSE3), one chunk (outer 1); {0, 0} for an empty
/// image or where dot_conv_supported is false everywhere (the scalar target).
/// f32_dot_conv computes any sub-range of [0, items()).
WorkGrid dot_conv_work(const ref::FusedConvParams& p);

/// y = epilogue(conv(x, w) + bias, z) for work items [begin, end) of one image, like
/// ref::f32_fused_conv. c = p.x_block = the target's float lanes. x [ceil(C/c), H, W, c]
/// (padded lanes never used), w [M, C, 1, 1], bias [M] or nullptr, z (read when
/// p.epilogue.residual) and y in y's layout: [ceil(M/c), H, W, c] (y's padded lanes written
/// 0), [M, H, W] or [H, W, M]. y may be z (the residual updated in place): each output is
/// stored once, after its residual is read. A register tile of P pixels x 4 output
/// channels keeps P * 4 vectors of partial sums over the input channel blocks, then adds
/// each vector's lanes with interleaves and half-vector adds into the 4 outputs of one
/// pixel, adds the bias and applies the epilogue on those 4 lanes. Requires
/// dot_conv_supported(p) (aborts through HWY_ASSERT on another layout).
void f32_dot_conv(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                  const float* z, float* y, int64_t begin, int64_t end);

}  // namespace tern::kernels
