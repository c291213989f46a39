#include "kernels/reference/resize.h"

#include <algorithm>
#include <cmath>

namespace tern::kernels::ref {

double resize_source_coord(ResizeCoordMode mode, int64_t x, double scale, double length,
                           int64_t in) {
  const double xd = static_cast<double>(x);
  switch (mode) {
    case ResizeCoordMode::kHalfPixel:
      return (xd + 0.5) / scale - 0.5;
    case ResizeCoordMode::kPytorchHalfPixel:
      return length > 1.0 ? (xd + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordMode::kAlignCorners:
      return length == 1.0 ? 0.0 : xd * static_cast<double>(in - 1) / (length - 1.0);
    case ResizeCoordMode::kAsymmetric:
      return xd / scale;
    case ResizeCoordMode::kTfHalfPixelForNn:
      return (xd + 0.5) / scale;
  }
  return 0.0;
}

int64_t resize_nearest_index(ResizeNearestMode mode, double x_original, double scale, int64_t in) {
  const double f = std::floor(x_original);
  const double frac = x_original - f;  // exact in double
  double r = f;
  switch (mode) {
    case ResizeNearestMode::kRoundPreferFloor:
      r = frac > 0.5 ? f + 1.0 : f;
      break;
    case ResizeNearestMode::kRoundPreferCeil:
      r = frac >= 0.5 ? f + 1.0 : f;
      break;
    case ResizeNearestMode::kFloor:
      r = f;
      break;
    case ResizeNearestMode::kCeil:
      r = std::ceil(x_original);
      break;
    case ResizeNearestMode::kSimple:
      r = scale < 1.0 ? std::ceil(x_original) : f;
      break;
  }
  // Clamp in double: NaN, inf and values beyond int64 never reach the conversion.
  if (!(r > 0.0)) return 0;
  if (r >= static_cast<double>(in - 1)) return in - 1;
  return static_cast<int64_t>(r);
}

int64_t resize_nearest_row_offset(const ResizeNearestParams& p, int64_t r) {
  // Decompose r into output indices, last leading dim first.
  const int last = p.rank - 1;
  int64_t rem = r;
  int64_t in_off = 0;
  int64_t in_stride = p.in_shape[last] * p.inner;
  for (int d = last - 1; d >= 0; --d) {
    const int64_t o = rem % p.out_shape[d];
    rem /= p.out_shape[d];
    in_off += p.src_index[d][o] * in_stride;
    in_stride *= p.in_shape[d];
  }
  return in_off;
}

void f32_resize_nearest(const ResizeNearestParams& p, const float* x, float* y, int64_t row_begin,
                        int64_t row_end) {
  const int last = p.rank - 1;
  const int64_t out_w = p.out_shape[last];
  const int64_t* index_w = p.src_index[last];
  const int64_t inner = p.inner;
  // Upsampling repeats input rows: an output row that reads the same input row as the
  // one before it is a copy of that output row (one memcpy instead of a gather; ppocr's
  // 2x to 8x nearest upsamplings took 0.6 ms of its 10 at 1 thread).
  int64_t prev_off = -1;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t in_off = resize_nearest_row_offset(p, r);
    const float* xrow = x + in_off;
    float* yrow = y + r * out_w * inner;
    if (in_off == prev_off) {
      std::copy_n(yrow - out_w * inner, out_w * inner, yrow);
      continue;
    }
    prev_off = in_off;
    if (inner == 1) {
      for (int64_t ow = 0; ow < out_w; ++ow) yrow[ow] = xrow[index_w[ow]];
    } else {
      for (int64_t ow = 0; ow < out_w; ++ow)
        std::copy_n(xrow + index_w[ow] * inner, inner, yrow + ow * inner);
    }
  }
}

void f32_resize_axis(const float* x, float* y, int64_t outer, int64_t in_len, int64_t out_len,
                     int64_t inner, const ResizeTaps* taps) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * in_len * inner;
    float* yo = y + o * out_len * inner;
    for (int64_t j = 0; j < out_len; ++j) {
      const ResizeTaps& t = taps[j];
      float* yj = yo + j * inner;
      for (int64_t i = 0; i < inner; ++i) {
        float acc = 0.0f;
        for (int k = 0; k < t.n; ++k) acc += t.weight[k] * xo[t.index[k] * inner + i];
        yj[i] = acc;
      }
    }
  }
}

void resize_cubic_weights(double t, double a, double w[4]) {
  // Keys' kernel: |s| <= 1: (a+2)|s|^3 - (a+3)|s|^2 + 1; 1 < |s| < 2: a|s|^3 - 5a|s|^2 +
  // 8a|s| - 4a. The four distances are 1 + t, t, 1 - t, 2 - t.
  auto near = [a](double s) { return ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0; };
  auto far = [a](double s) { return ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a; };
  w[0] = far(1.0 + t);
  w[1] = near(t);
  w[2] = near(1.0 - t);
  w[3] = far(2.0 - t);
}

}  // namespace tern::kernels::ref
