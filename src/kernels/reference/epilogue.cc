#include "kernels/reference/epilogue.h"

namespace tern::kernels::ref {

void f32_epilogue(const Epilogue& e, int64_t n, const float* acc, int64_t acc_stride,
                  const float* bias, int64_t bias_stride, const float* z, int64_t z_stride,
                  float* y, int64_t y_stride) {
  const bool before = e.residual && e.residual_before_activation;
  const bool after = e.residual && !e.residual_before_activation;
  for (int64_t i = 0; i < n; ++i) {
    float v = acc[i * acc_stride];
    if (bias) v += bias[i * bias_stride];
    if (before) v += z[i * z_stride];
    v = activate(e, v);
    if (after) v += z[i * z_stride];
    y[i * y_stride] = v;
  }
}

}  // namespace tern::kernels::ref
