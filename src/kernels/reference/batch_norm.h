// Reference batch normalization (and training-mode batch statistics), float32. ONNX
// BatchNormalization-7/9/14/15.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// x and y: [batch, channels, inner] contiguous (inner = product of the spatial dims).
struct BatchNormParams {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  float epsilon = 1e-5f;
};

/// y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c], computed as
/// x * a + b with a = scale / sqrt(var + epsilon), b = bias - mean * a. scale, bias,
/// mean, var: [channels]. x and y may be the same buffer.
void f32_batch_norm(const BatchNormParams& p, const float* x, const float* scale, const float* bias,
                    const float* mean, const float* var, float* y);

/// Per-channel statistics of x [batch, channels, inner] for training mode: mean[c] and the
/// biased (population) variance var[c] over batch and inner, accumulated in double.
void f32_batch_stats(const BatchNormParams& p, const float* x, float* mean, float* var);

}  // namespace tern::kernels::ref
