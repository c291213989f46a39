// Reference normalization kernels, float32: mean / variance normalization over groups of
// values (InstanceNormalization, LayerNormalization, MeanVarianceNormalization) and local
// response normalization (LRN). Plain loops with double accumulators (the test oracle).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// x viewed as [outer, n] (contiguous): per row r, mean[r] = sum(x) / n and
/// inv_std[r] = 1 / sqrt(sum((x - mean)^2) / n + epsilon) (the biased variance).
/// y[r, i] = (x[r, i] - mean[r]) * inv_std[r]. mean / inv_std may be null.
void f32_normalize_rows(const float* x, float* y, int64_t outer, int64_t n, float epsilon,
                        float* mean, float* inv_std);

/// LRN over the channel dim of x viewed as [batch, channels, inner] (contiguous):
///   y = x / (bias + alpha / size * sum_{c' in window(c)} x[c']^2) ^ beta,
/// with window(c) = [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped.
void f32_lrn(const float* x, float* y, int64_t batch, int64_t channels, int64_t inner, int64_t size,
             float alpha, float beta, float bias);

}  // namespace tern::kernels::ref
