// Convolution to few output channels with the input channels along the vectors (Highway,
// dispatched at run time): FusedConv's `dot` algorithm. Each output is a dot product of
// the NCHWc channel vectors an output pixel's taps read with a row of the weights (OIHW
// for a 1x1 conv, OHWI for any window), so every lane holds an input channel however few
// output channels there are (a detection head's 128 -> 4 conv uses 4 of the 16 lanes of
// the pointwise kernel's output-channel vectors). See README.md in this folder.
#pragma once

#include <cstdint>

#include "kernels/reference/fused_conv.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// Whether f32_dot_conv computes `p` with the SIMD target run-time dispatch picks now: a
/// 2-D conv with one group, x NCHWc with that target's vector width as block, weights OHWI
/// [M, kH, kW, C] (w_ohwi; any kernel, stride, padding and dilation) or, for a 1x1 conv
/// with stride 1 and no padding, OIHW [M, C, 1, 1] (the same array; w_block 1), y NCHWc
/// with the same block, NCHW or NHWC.
bool dot_conv_supported(const ref::FusedConvParams& p);

/// The reduction's and the store's cost per pixel and tile of 4 output channels, in
/// FMA instructions (dot_conv_preferred's unit), fitted to conv_bench on AMD Zen 5 with
/// AVX-512, and kept after the cheaper fold of the tiles' sums (README.md).
inline constexpr int64_t kDotReduceCost = 16;

/// kDotReduceCost for 8-lane blocks (AVX2), fitted to conv_bench on AMD Zen 4 under
/// TERN_SIMD_TARGET=AVX2 (README.md, "When it is chosen").
inline constexpr int64_t kDotReduceCost8 = 32;

/// How many interior pixels' time the direct kernel takes for an output pixel whose
/// window reaches into the padding (the nine-patch border routine, one pixel at a time),
/// fitted to conv_bench on the 3x3 heads on 4 x 5 maps to 6, 12 and 30 channels
/// (README.md).
inline constexpr int64_t kDirectBorderCost = 2;

/// The largest input, in bytes, of a conv with taps (any window but a 1x1 one with stride
/// 1 and no padding) that dot_conv_preferred gives the dot kernel. Beyond L1 its taps read
/// the input from L2 again for every 4 output channels, which still paid on UltraFace
/// RFB-640's 3x3 heads from 256 channels at 8 x 10 (80 KiB): to 6 and 12 channels they
/// took 0.59 and 0.77 of the direct kernel's time (AVX-512), 0.76 and 0.71 under AVX2
/// (conv_bench, Zen 4). A 1.2 MB input (256 channels to 16 at 30 x 40) took 2.9 times the
/// direct kernel's time, RetinaFace's SSH convs at 10 x 10 and 20 x 20 1.5 to 2.6 times
/// winograd's; between 80 KiB and 1.2 MB nothing was measured, so the limit stays near the
/// measured 80 KiB.
inline constexpr int64_t kDotWindowInputBytes = 128 * 1024;

/// Whether the dot kernel is expected to beat the kernels with output channels in the
/// lanes of `block`-wide vectors (pointwise, direct) on the 2-D conv `c` with one group
/// (C input channels to M outputs, R = C * kH * kW products per output): their FMA
/// instructions per image, ceil(M / block) * R * (interior + kDirectBorderCost * border
/// pixels) against ceil(M / 4) * (4 R / block + kDotReduceCost) * pixels, where a border
/// pixel's window reaches into the padding. For a conv with taps only when its input is
/// at most kDotWindowInputBytes and M at most 2 blocks, the range measured (4 to 30
/// output channels: the direct kernel's border tile of one pixel x 1 or 2 blocks loads
/// a weight vector per FMA). For 16-lane blocks (AVX-512) and 8-lane ones (AVX2, with
/// kDotReduceCost8), where the constants were measured: false for 4 lanes (there the dot
/// kernel's FMAs alone match the others'). Used by pack-weights to keep a 1x1 conv's
/// weights OIHW or to make a k x k conv's OHWI.
bool dot_conv_preferred(const ref::ConvParams& c, int64_t block);

/// How far over the other kernels' estimate dot_conv_candidate still admits the dot
/// kernel's: about the rule's own error. Its constants were fitted on one machine each
/// (Zen 5, Zen 4, a Xeon); on Zen 4 layers it keeps from dot took 1.13 to 1.97 times the
/// pointwise kernel's time with dot (AVX-512; 1.16 to 2.2 under AVX2), and under AVX2
/// heads it sends to dot took 0.46 to 0.90 of it (README.md).
inline constexpr int64_t kDotCandidateFactor = 2;

/// Whether `--tune` may measure the dot kernel against the kernel with output channels
/// along the vectors (pointwise, direct) on the 2-D conv `c` with one group, `block`-wide
/// vectors: where dot_conv_preferred holds, and where it does not but the conv has at
/// most 2 blocks of outputs (the range the rule was fitted on) and the rule's estimate for
/// the dot kernel is at most kDotCandidateFactor times the other's. A necessary condition
/// only: passes/pack_weights.cc (dot_tunable) narrows it (the target's own blocks, no
/// winograd, beyond the rule only heads) and keeps the layout of the faster kernel.
bool dot_conv_candidate(const ref::ConvParams& c, int64_t block);

/// Work items of one image: tiles of consecutive pixels (4 with 32 vector registers:
/// AVX-512 and NEON; 2 on AVX2, SSE4 and SSSE3), one chunk (outer 1); {0, 0} for an empty
/// image or where dot_conv_supported is false everywhere (the scalar target).
/// f32_dot_conv computes any sub-range of [0, items()).
WorkGrid dot_conv_work(const ref::FusedConvParams& p);

/// y = epilogue(conv(x, w) + bias, z) for work items [begin, end) of one image, like
/// ref::f32_fused_conv. c = p.x_block = the target's float lanes. x [ceil(C/c), H, W, c]
/// (padded lanes never used), w [M, kH, kW, C] (OHWI; OIHW [M, C, 1, 1] at 1x1), bias [M]
/// or nullptr, z (read when p.epilogue.residual) and y in y's layout: [ceil(M/c), oH, oW,
/// c] (y's padded lanes written 0), [M, oH, oW] or [oH, oW, M]. y may be z (the residual
/// updated in place): each output is stored once, after its residual is read. A register
/// tile of P pixels x 4 output channels keeps P * 4 vectors of partial sums over the taps
/// and input channel blocks (a tap in the padding reads a block of zeros), then adds each
/// vector's lanes with interleaves and half-vector adds into the 4 outputs of one pixel,
/// adds the bias and applies the epilogue on those 4 lanes. Requires
/// dot_conv_supported(p) (aborts through HWY_ASSERT on another layout).
void f32_dot_conv(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                  const float* z, float* y, int64_t begin, int64_t end);

}  // namespace tern::kernels
