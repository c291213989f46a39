// Depthwise convolution on NCHWc (Highway, dispatched at run time): every channel
// convolved with its own k x k filter (3x3 and 5x5 in the models; any size, stride,
// dilation and padding), nine-patch borders, the epilogue fused. See README.md in this
// folder for the data contract and the register blocking.
#pragma once

#include <cstdint>

#include "kernels/reference/fused_conv.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// Whether f32_depthwise_conv computes `p` with the SIMD target dispatch picks now: a 2-D
/// convolution with groups == C == M (one filter per channel), x NCHWc and packed weights
/// whose block is that target's vector width, y NCHWc with that block or NCHW.
bool depthwise_conv_supported(const ref::FusedConvParams& p);

/// Work items of one image: (channel block, output row, row segment) triples, channel
/// block major: a grid of channel blocks x (rows x segments); f32_depthwise_conv computes
/// any sub-range of [0, items()), so callers split it across threads (ops::parallel_grid).
WorkGrid depthwise_conv_work(const ref::FusedConvParams& p);

/// y = epilogue(depthwise_conv(x, w) + bias, z) for work items [begin, end) of one image.
/// x: [ceil(C/c), H, W, c]; w: packed [ceil(C/c), 1, kH, kW, c]; bias: [C] or nullptr;
/// z and y: [ceil(C/c), oH, oW, c] or [C, oH, oW]. Channels are the vector lanes, so
/// every tap is one vector FMA: acc[pixel] += x[pixel + tap] * w[tap]. Nine-patch: taps in
/// the top or bottom padding are skipped for the whole row, the row runs R pixels at
/// once (R accumulators in registers, initialised with the bias; 3x3 tiles load each
/// input vector of a kernel row once, a sliding window), and the border pixels, in the
/// row's first and last tiles, skip their padded taps. x's padded lanes may be read;
/// the lanes they reach are written as 0. Requires depthwise_conv_supported(p).
void f32_depthwise_conv(const ref::FusedConvParams& p, const float* x, const float* w,
                        const float* bias, const float* z, float* y, int64_t begin, int64_t end);

}  // namespace tern::kernels
