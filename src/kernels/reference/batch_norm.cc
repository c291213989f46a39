#include "kernels/reference/batch_norm.h"

#include <cmath>

namespace tern::kernels::ref {

void f32_batch_norm(const BatchNormParams& p, const float* x, const float* scale, const float* bias,
                    const float* mean, const float* var, float* y) {
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t c = 0; c < p.channels; ++c) {
      const float a = scale[c] / std::sqrt(var[c] + p.epsilon);
      const float b = bias[c] - mean[c] * a;
      const int64_t base = (n * p.channels + c) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) y[base + i] = x[base + i] * a + b;
    }
  }
}

void f32_batch_stats(const BatchNormParams& p, const float* x, float* mean, float* var) {
  const double count = static_cast<double>(p.batch * p.inner);
  for (int64_t c = 0; c < p.channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < p.batch; ++n) {
      const float* xc = x + (n * p.channels + c) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) sum += xc[i];
    }
    const double m = count > 0 ? sum / count : 0.0;
    double sq = 0.0;
    for (int64_t n = 0; n < p.batch; ++n) {
      const float* xc = x + (n * p.channels + c) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) sq += (xc[i] - m) * (xc[i] - m);
    }
    mean[c] = static_cast<float>(m);
    var[c] = static_cast<float>(count > 0 ? sq / count : 0.0);
  }
}

}  // namespace tern::kernels::ref
