// Reference matrix multiply, float32, row-major. ONNX Gemm-11/13 and MatMul-13.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// One product Y = alpha * op(A) * op(B) + beta * Y, with op(A): [M, K], op(B): [K, N].
/// A is stored row-major as [M, K] (lda >= K), or as [K, M] (lda >= M) when trans_a;
/// B as [K, N] (ldb >= N), or as [N, K] (ldb >= K) when trans_b. Y is [M, N], ldy >= N.
struct GemmParams {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  /// 0 ignores Y's previous content (even NaN); otherwise Y is scaled and accumulated.
  float beta = 0.0f;
  int64_t lda = 0;
  int64_t ldb = 0;
  int64_t ldy = 0;
};

/// Computes rows [row_begin, row_end) of Y (see GemmParams). Y must not overlap A or B.
/// Without trans_b the inner loop is y_row += a_ik * b_row (contiguous, vectorizable);
/// with trans_b each y_ij is a dot product of two contiguous rows. Callers parallelize
/// over row ranges (and batches).
void f32_gemm(const GemmParams& p, const float* a, const float* b, float* y, int64_t row_begin,
              int64_t row_end);

}  // namespace tern::kernels::ref
