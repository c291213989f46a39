#include "kernels/reference/norm.h"

#include <algorithm>
#include <cmath>

namespace tern::kernels::ref {

void f32_normalize_rows(const float* x, float* y, int64_t outer, int64_t n, float epsilon,
                        float* mean, float* inv_std) {
  for (int64_t r = 0; r < outer; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += xr[i];
    const double m = n > 0 ? sum / static_cast<double>(n) : 0.0;
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sq += (xr[i] - m) * (xr[i] - m);
    const double var = n > 0 ? sq / static_cast<double>(n) : 0.0;
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
    for (int64_t i = 0; i < n; ++i) yr[i] = static_cast<float>((xr[i] - m) * inv);
    if (mean) mean[r] = static_cast<float>(m);
    if (inv_std) inv_std[r] = static_cast<float>(inv);
  }
}

void f32_lrn(const float* x, float* y, int64_t batch, int64_t channels, int64_t inner, int64_t size,
             float alpha, float beta, float bias) {
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * channels * inner;
    float* yb = y + b * channels * inner;
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min<int64_t>(channels - 1, c + after);
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0.0;
        for (int64_t k = lo; k <= hi; ++k) {
          const double v = xb[k * inner + i];
          sq += v * v;
        }
        const double d = std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
        yb[c * inner + i] = static_cast<float>(xb[c * inner + i] / d);
      }
    }
  }
}

}  // namespace tern::kernels::ref
