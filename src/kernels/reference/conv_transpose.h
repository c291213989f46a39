// Reference transposed convolution (a.k.a. deconvolution), NCHW (and NCW / NCDHW),
// float32. ONNX ConvTranspose-11.
#pragma once

#include <cstdint>

#include "kernels/reference/spatial.h"

namespace tern::kernels::ref {

/// Shape and window of one transposed convolution. Spatial dims not used are 1.
/// Input position i feeds output position o = i*stride + k*dilation - pad_begin for each
/// kernel tap k; positions outside [0, out) are dropped. The op resolves output_shape,
/// output_padding and auto_pad into `out` and `pad_begin`.
struct ConvTransposeParams {
  int64_t in_channels = 0;   ///< C: input channels
  int64_t out_channels = 0;  ///< M: output channels (weight dim 1 times groups)
  int64_t groups = 1;
  Dims3 in;
  Dims3 out;
  Dims3 kernel;
  Dims3 stride;
  Dims3 dilation;
  /// Usually >= 0; negative when output_shape asks for more than the natural output
  /// (the extra border then holds only the bias).
  Dims3 pad_begin{0, 0, 0};
};

/// Transposed convolution of one image, output channels [oc_begin, oc_end) only.
///
/// x: [C, in.d, in.h, in.w] contiguous. w: [C, M/groups, k.d, k.h, k.w] contiguous (ONNX
/// ConvTranspose weight layout). bias: [M] or nullptr. y: [M, out.d, out.h, out.w]
/// contiguous; planes oc_begin..oc_end-1 are overwritten.
///
/// Scatter form: for each output channel, each input channel of its group and each tap,
/// every input row is multiplied by the tap and added to the output row it lands on
/// (output columns `stride.w` apart). The upsampling case (1-D or 2-D, kernel == stride,
/// dilation 1, no padding, output = input * stride, as in ppocr's and U-Net's decoders)
/// builds each output row once instead: one tap per output pixel, the kernel row's taps
/// interleaved along the row. Output channels are independent, so callers parallelize
/// over (image, oc).
void f32_conv_transpose_nchw(const ConvTransposeParams& p, const float* x, const float* w,
                             const float* bias, float* y, int64_t oc_begin, int64_t oc_end);

}  // namespace tern::kernels::ref
