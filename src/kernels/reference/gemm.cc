#include "kernels/reference/gemm.h"

#include <algorithm>

namespace tern::kernels::ref {

void f32_gemm(const GemmParams& p, const float* a, const float* b, float* y, int64_t row_begin,
              int64_t row_end) {
  // Element (i, kk) of op(A).
  auto a_at = [&](int64_t i, int64_t kk) {
    return p.trans_a ? a[kk * p.lda + i] : a[i * p.lda + kk];
  };
  for (int64_t i = row_begin; i < row_end; ++i) {
    float* __restrict yrow = y + i * p.ldy;
    if (p.beta == 0.0f) {
      std::fill(yrow, yrow + p.n, 0.0f);
    } else if (p.beta != 1.0f) {
      for (int64_t j = 0; j < p.n; ++j) yrow[j] *= p.beta;
    }
    if (!p.trans_b) {
      // y_row += (alpha * a_ik) * B[kk, :]
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const float s = p.alpha * a_at(i, kk);
        const float* __restrict brow = b + kk * p.ldb;
        for (int64_t j = 0; j < p.n; ++j) yrow[j] += s * brow[j];
      }
    } else {
      // y_ij += alpha * dot(op(A)[i, :], B[j, :])
      for (int64_t j = 0; j < p.n; ++j) {
        const float* brow = b + j * p.ldb;
        float dot = 0.0f;
        for (int64_t kk = 0; kk < p.k; ++kk) dot += a_at(i, kk) * brow[kk];
        yrow[j] += p.alpha * dot;
      }
    }
  }
}

}  // namespace tern::kernels::ref
