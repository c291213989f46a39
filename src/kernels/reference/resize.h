// Reference resize (nearest, and separable linear / cubic one dim at a time), float32.
// ONNX Resize-10/11/13, Upsample-7/9.
//
// The op turns the resize attributes into per-dim tables (output index -> input index
// or linear taps) with the helpers below; the kernels only gather through the tables.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// ONNX Resize coordinate_transformation_mode: how an output index maps to an input
/// coordinate (x_resized -> x_original). `length` is the resized length in * scale (not
/// floored; sizes[d] when sizes were given), as the ONNX reference uses it.
enum class ResizeCoordMode {
  kHalfPixel,         ///< (x + 0.5) / scale - 0.5
  kPytorchHalfPixel,  ///< as half_pixel, but 0 when length <= 1
  kAlignCorners,      ///< x * (in - 1) / (length - 1), 0 when length == 1
  kAsymmetric,        ///< x / scale (Upsample and Resize-10)
  kTfHalfPixelForNn,  ///< (x + 0.5) / scale
};

/// How nearest mode rounds x_original to an index (ONNX nearest_mode), plus kSimple,
/// the rule of Upsample and Resize-10 (as ONNX Runtime and the ONNX backend tests
/// have it): floor when upsampling (scale >= 1), ceil when downsampling.
enum class ResizeNearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

/// x_original for output index `x` along a dim of input length `in`; `scale` is the dim's
/// scale (sizes[d] / in when sizes were given) and `length` the resized length in * scale
/// (sizes[d] when sizes were given). Double arithmetic, as the ONNX reference computes it;
/// the one coordinate transform of every Resize mode but tf_crop_and_resize.
double resize_source_coord(ResizeCoordMode mode, int64_t x, double scale, double length,
                           int64_t in);

/// The input index nearest mode reads for coordinate `x_original`, clamped to [0, in)
/// (in >= 1). The rounding happens in double and the clamp before the conversion, so
/// any coordinate gives a defined index (NaN gives 0).
int64_t resize_nearest_index(ResizeNearestMode mode, double x_original, double scale, int64_t in);

/// Nearest-neighbour resize of a contiguous rank-`rank` tensor. src_index[d] has
/// out_shape[d] entries: the input index along dim d of each output index.
struct ResizeNearestParams {
  int rank = 0;
  const int64_t* in_shape = nullptr;
  const int64_t* out_shape = nullptr;
  const int64_t* const* src_index = nullptr;
  /// Contiguous floats per element: the dims are those of x and y with a trailing
  /// unresized dim of `inner` floats folded away (NCHWc's lanes), copied as one run.
  int64_t inner = 1;
};

/// The offset in x (in floats) of the input row that output row r reads: r's output
/// indices along dims 0 .. rank-2, each mapped through src_index.
int64_t resize_nearest_row_offset(const ResizeNearestParams& p, int64_t r);

/// Writes output rows [row_begin, row_end) of y, where a row is one line along the last
/// dim (rows = product of out_shape[0..rank-2]; 1 for rank 1) of elements of p.inner
/// floats. A row that reads the same input row as the row before it is copied from it.
void f32_resize_nearest(const ResizeNearestParams& p, const float* x, float* y, int64_t row_begin,
                        int64_t row_end);

/// Up to 4 weighted input indices along one dim (nearest: 1, linear: 2, cubic: 4) for one
/// output index of the separable resize.
struct ResizeTaps {
  int n = 0;
  int64_t index[4] = {};
  float weight[4] = {};
};

/// One separable resize step along the middle dim of x [outer, in_len, inner] into
/// y [outer, out_len, inner] (both contiguous): y[o, j, i] = sum_k taps[j].weight[k] *
/// x[o, taps[j].index[k], i]. Indices must lie in [0, in_len).
void f32_resize_axis(const float* x, float* y, int64_t outer, int64_t in_len, int64_t out_len,
                     int64_t inner, const ResizeTaps* taps);

/// The cubic convolution weights (Keys, coefficient a: -0.75 as PyTorch, -0.5 as
/// TensorFlow) of the 4 inputs at floor(x) - 1 .. floor(x) + 2, where t = x - floor(x).
void resize_cubic_weights(double t, double a, double w[4]);

}  // namespace tern::kernels::ref
