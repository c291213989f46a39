// Reference pooling, NCHW (and NCW / NCDHW), float32. ONNX MaxPool-12, AveragePool-11,
// GlobalAveragePool-1, GlobalMaxPool-1.
#pragma once

#include <cstdint>

#include "kernels/reference/spatial.h"

namespace tern::kernels::ref {

/// Window of one pooling op. Spatial dims not used are 1. The op resolves auto_pad and
/// ceil_mode into `out`, `pad_begin` and `pad_end` (pad_end matters only for the
/// AveragePool divisor with count_include_pad).
struct PoolParams {
  Dims3 in;
  Dims3 out;
  Dims3 kernel;
  Dims3 stride;
  Dims3 dilation;            ///< MaxPool only; AveragePool expects 1 (ONNX opsets <= 17)
  Dims3 pad_begin{0, 0, 0};  ///< >= 0
  Dims3 pad_end{0, 0, 0};    ///< >= 0
  /// AveragePool divisor: true counts the taps inside the padded extent
  /// [-pad_begin, in + pad_end) (a window that runs past pad_end, possible with
  /// ceil_mode, is clipped there, as in PyTorch); false counts only taps inside the input.
  bool count_include_pad = false;
};

/// The AveragePool divisor's factor along one dim for output index o: how many taps of
/// its window lie inside the padded extent [-pad_begin, in + pad_end) (include_pad, ONNX
/// count_include_pad = 1) or inside the input [0, in). The divisor is the product over dims.
inline int64_t pool_window_count(int64_t o, int64_t in, int64_t k, int64_t stride,
                                 int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                 bool include_pad) {
  const int64_t start = o * stride - pad_begin;
  const Range r = include_pad ? valid_range(k, dilation, start + pad_begin, in + pad_begin + pad_end)
                              : valid_range(k, dilation, start, in);
  return r.empty() ? 0 : r.end - r.begin;
}

/// Max over each window, planes [plane_begin, plane_end) of x: [planes, in.d, in.h,
/// in.w] into y: [planes, out.d, out.h, out.w] (both contiguous). Padding never wins:
/// only taps inside the input are compared (a window with no such tap gives -inf).
void f32_max_pool(const PoolParams& p, const float* x, float* y, int64_t plane_begin,
                  int64_t plane_end);

/// Max pooling with the position of each max (MaxPool's Indices output), any ordered T
/// (instantiated for float, double, int8_t, uint8_t); same layouts as f32_max_pool.
/// indices (may be null) gets, per output, the flat index of the first tap holding the max
/// in x including the plane offset: plane * in.size() + (d * in.h + h) * in.w + w, or with
/// column_major (storage_order = 1) plane * in.size() + (w * in.h + h) * in.d + d. A
/// window with no tap inside the input gives -inf (floating T; the lowest value for integer T)
/// and index -1.
template <typename T>
void max_pool_with_indices(const PoolParams& p, const T* x, T* y, int64_t* indices,
                           int64_t plane_begin, int64_t plane_end, bool column_major);

/// Mean over each window (divisor as count_include_pad says), planes
/// [plane_begin, plane_end), same layouts as f32_max_pool.
void f32_average_pool(const PoolParams& p, const float* x, float* y, int64_t plane_begin,
                      int64_t plane_end);

/// y[i] = mean of x[i*plane_size .. (i+1)*plane_size), i in [plane_begin, plane_end).
void f32_global_average_pool(const float* x, float* y, int64_t plane_size, int64_t plane_begin,
                             int64_t plane_end);

/// y[i] = max of x[i*plane_size .. (i+1)*plane_size), i in [plane_begin, plane_end).
void f32_global_max_pool(const float* x, float* y, int64_t plane_size, int64_t plane_begin,
                         int64_t plane_end);

}  // namespace tern::kernels::ref
