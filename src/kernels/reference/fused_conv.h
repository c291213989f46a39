// Reference fused convolution: a direct convolution (conv.h) that reads and writes plain
// NCHW or channel-blocked NCHWc tensors, takes ONNX (OIHW) or packed weights, and applies
// an epilogue (epilogue.h: bias, residual, activation) before storing. The oracle of the
// fast NCHWc kernels of later issues; plain loops, correct for every geometry.
#pragma once

#include <cstdint>

#include "kernels/reference/conv.h"
#include "kernels/reference/epilogue.h"
#include "tern/tensor.h"

namespace tern::kernels::ref {

/// One fused convolution. Channel blocks: 1 means a plain layout (x and y NCHW, w OIHW);
/// c > 1 means NCHWc for x and y (one image is [ceil(C/c), D, H, W, c], channel ch at
/// [ch / c, ..., ch % c]) and the packed layout for w (see pack_conv_weights).
struct FusedConvParams {
  ConvParams conv;      ///< channels (logical C and M), groups, extents, window
  int64_t x_block = 1;  ///< 1 (NCHW) or c (NCHWc)
  int64_t y_block = 1;  ///< 1 (NCHW) or c (NCHWc); y and z share the layout
  bool y_nhwc = false;  ///< y and z NHWC ([H, W, M] per image; y_block 1, a 2-D conv)
  int64_t w_block = 1;  ///< 1 (OIHW) or c (packed)
  bool w_ohwi = false;  ///< w [M, kD, kH, kW, C/g] (w_block 1): input channels innermost
  Epilogue epilogue;    ///< epilogue.residual: z is read
  /// Pixels between two channel blocks of x (channel planes when x_block is 1), and of y
  /// and z: 0 for the image's extent (in.h * in.w, out.h * out.w). A larger value lets a
  /// kernel compute a band of rows inside a taller image (ops/conv_chain.cc). Only
  /// f32_direct_conv and f32_depthwise_conv read them; every other kernel requires 0.
  int64_t x_plane = 0;
  int64_t y_plane = 0;
};

/// Output channels one image of y holds: M, or M rounded up to a multiple of y_block.
inline int64_t fused_conv_padded_channels(const FusedConvParams& p) {
  const int64_t b = p.y_block;
  return (p.conv.out_channels + b - 1) / b * b;
}

/// Computes output channels [oc_begin, oc_end) of one image:
///   y[oc] = epilogue(conv(x, w)[oc] + bias[oc], z[oc])
/// x: one input image in the x_block layout; its padded lanes are never read.
/// w: [M, C/g, kD, kH, kW] (w_block 1), [ceil(M/c), C/g, kD, kH, kW, c] (w_block c) or
/// [M, kD, kH, kW, C/g] (w_ohwi).
/// bias: [M] or nullptr. z: the residual image, laid out like y (read when
/// p.epilogue.residual). y: one output image in the y_block layout, or NHWC (y_nhwc:
/// channel oc of pixel s at y[s * M + oc], as a conv followed by Transpose(0, 2, 3, 1)).
/// oc_end <= fused_conv_padded_channels(p); a padded channel (oc >= M) is written as 0.
/// Throws InvalidArgument when p.x_plane or p.y_plane is set (whole images only).
/// All plain layouts with OIHW weights run f32_conv_nchw and then the epilogue on each plane. An
/// NCHWc output (y_block <= 16) whose range covers whole blocks computes each block's channels
/// together, lanes innermost, when one group spans the block or the conv is depthwise on
/// an input with the same block. Otherwise each channel's output rows are accumulated in
/// chunks of up to 256 positions in a local array (over taps, then input channels; taps
/// in the padding skipped) and go through the epilogue into y at its element stride.
/// Both blocked paths sum in the same order, so they give the same floats.
void f32_fused_conv(const FusedConvParams& p, const float* x, const float* w, const float* bias,
                    const float* z, float* y, int64_t oc_begin, int64_t oc_end);

/// Packs ONNX conv weights [M, C/g, kH, kW] (any rank >= 3: [M, C/g, k...]) for the NCHWc
/// kernels: [ceil(M/block), C/g, k..., block], output channel m of the packed tensor at
/// [m / block, ..., m % block], the lanes of channels >= M zero. block >= 1. Throws
/// InvalidArgument for a non-float32 tensor, rank < 3 or block < 1.
Tensor pack_conv_weights(const Tensor& oihw, int block);

/// ONNX conv weights [M, C/g, k...] (rank >= 3) with the input channels moved innermost:
/// [M, k..., C/g] (OHWI for a 2-D conv; FusedConvParams::w_ohwi), the layout of the
/// kernels that take dot products along the input channels (kernels/dot). Throws
/// InvalidArgument for a non-float32 tensor or rank < 3.
Tensor ohwi_conv_weights(const Tensor& oihw);

}  // namespace tern::kernels::ref
