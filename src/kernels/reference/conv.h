// Reference direct convolution, NCHW (and NCW / NCDHW), float32. ONNX Conv-1/11.
#pragma once

#include <cstdint>

#include "kernels/reference/spatial.h"

namespace tern::kernels::ref {

/// Shape and window of one convolution. Spatial dims not used are 1 (see Dims3).
/// Output extent per dim: out = floor((in + pad_begin + pad_end - dilation*(k-1) - 1)
/// / stride) + 1; the caller computes it (pads and auto_pad are resolved by the op) and
/// only pad_begin is needed here: taps that fall outside the input read zero.
struct ConvParams {
  int64_t in_channels = 0;   ///< C: input channels of the whole conv
  int64_t out_channels = 0;  ///< M: output channels of the whole conv
  int64_t groups = 1;        ///< C and M are multiples of groups
  Dims3 in;                  ///< input spatial extent
  Dims3 out;                 ///< output spatial extent
  Dims3 kernel;              ///< kernel spatial extent
  Dims3 stride;              ///< >= 1
  Dims3 dilation;            ///< >= 1
  Dims3 pad_begin{0, 0, 0};  ///< >= 0: zeros before the input along each dim
};

/// Whether `c` is a pointwise window: a 1x1 kernel with stride 1 and no padding whose
/// output has the input's extent, so output pixel i is input pixel i (any spatial rank).
inline bool pointwise_window(const ConvParams& c) {
  return c.kernel.size() == 1 && c.stride.size() == 1 && c.pad_begin.d == 0 && c.pad_begin.h == 0 &&
         c.pad_begin.w == 0 && c.out.d == c.in.d && c.out.h == c.in.h && c.out.w == c.in.w;
}

/// Direct convolution of one image, output channels [oc_begin, oc_end) only.
///
/// x: [C, in.d, in.h, in.w] contiguous (one image). w: [M, C/groups, k.d, k.h, k.w]
/// contiguous (ONNX weight layout). bias: [M] or nullptr. y: [M, out.d, out.h, out.w]
/// contiguous; only planes oc_begin..oc_end-1 are written (bias + sum over taps).
///
/// Loop order oc -> ic -> kd -> kh -> kw -> od -> oh -> ow: the innermost loop is a run
/// over output columns that reads input columns at `stride.w` apart (contiguous for
/// stride 1), so the compiler vectorizes it. Input channels go four at a time through
/// that loop (one load and store of the output row per four multiply-adds); the sum
/// order therefore differs from a naive loop by float rounding only. Callers parallelize
/// over (image, oc).
void f32_conv_nchw(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                   int64_t oc_begin, int64_t oc_end);

}  // namespace tern::kernels::ref
