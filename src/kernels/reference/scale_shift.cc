#include "kernels/reference/scale_shift.h"

namespace tern::kernels::ref {

void f32_scale_shift_nchw(const ScaleShiftParams& p, const float* x, const float* scale,
                          const float* shift, float* y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t c = i % p.channels;
    const float a = scale[c];
    const float b = shift[c];
    const float* xi = x + i * p.inner;
    float* yi = y + i * p.inner;
    for (int64_t k = 0; k < p.inner; ++k) yi[k] = xi[k] * a + b;
  }
}

void f32_scale_shift_nchwc(const ScaleShiftParams& p, const float* x, const float* scale,
                           const float* shift, float* y, int64_t begin, int64_t end) {
  const int64_t c = p.block;
  const int64_t blocks = (p.channels + c - 1) / c;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t first = (i % blocks) * c;  // channel of lane 0
    const int64_t lanes = p.channels - first < c ? p.channels - first : c;
    const float* xi = x + i * p.inner * c;
    float* yi = y + i * p.inner * c;
    for (int64_t k = 0; k < p.inner; ++k) {
      const float* xv = xi + k * c;
      float* yv = yi + k * c;
      for (int64_t l = 0; l < lanes; ++l) yv[l] = xv[l] * scale[first + l] + shift[first + l];
      for (int64_t l = lanes; l < c; ++l) yv[l] = 0.0f;
    }
  }
}

}  // namespace tern::kernels::ref
