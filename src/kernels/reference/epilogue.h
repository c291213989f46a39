// Reference epilogue of the fused operators (FusedConv, FusedGemm, FusedMatMul): what
// happens to an accumulated output element before it is stored: bias, an optional
// residual tensor added before or after the activation, the activation itself, and an
// affine map with one scale and shift after it (FusedConv only: PaddlePaddle's
// LearnableAffineBlock, a scalar Mul and Add after every activation of ppocr's backbone).
// The paper's "bias on the first input-channel pass, ReLU on the last, in registers"
// (DESIGN.md) is this function applied while the accumulator is still in a register.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tern::kernels::ref {

/// The activation a fused operator applies. Each matches the ONNX op of the same name
/// element for element (the same float expression), so a fused graph gives the results
/// of the unfused one bit for bit where the accumulation order is the same.
enum class Activation {
  kNone,
  kRelu,         ///< x > 0 ? x : 0 (ONNX Relu; NaN gives 0, like the Relu kernel)
  kClip,         ///< min(max(x, alpha), beta) (ONNX Clip-13: beta wins when alpha > beta)
  kLeakyRelu,    ///< x >= 0 ? x : alpha * x
  kHardSigmoid,  ///< max(0, min(1, alpha * x + beta))
  kHardSwish,    ///< x * max(0, min(1, x / 6 + 1 / 2))
  kSigmoid,      ///< 1 / (1 + exp(-x))
  kSilu,         ///< x * sigmoid(x): ONNX Mul(x, Sigmoid(x)), also called Swish
};

/// Bias, residual, activation and affine map of one fused operator. The op adds its bias
/// (per output channel or column) to the accumulator first; then, with
/// f(v) = act(v) * scale + shift when `affine` (else act(v)),
///   residual_before_activation: y = f(acc + bias + z)
///   otherwise:                  y = f(acc + bias) + z
/// and without a residual y = f(acc + bias). The affine map is the op's "activation
/// stage" as much as the activation is: every kernel applies both where it applies act.
struct Epilogue {
  Activation activation = Activation::kNone;
  float alpha = 0.0f;     ///< kClip: min; kLeakyRelu, kHardSigmoid: alpha
  float beta = 0.0f;      ///< kClip: max; kHardSigmoid: beta
  bool residual = false;  ///< a residual tensor z is added
  bool residual_before_activation = false;
  bool affine = false;  ///< act(v) * scale + shift (ONNX Mul then Add: two roundings)
  float scale = 1.0f;
  float shift = 0.0f;

  /// Whether the activation stage changes any value: an activation or the affine map.
  bool maps_values() const { return activation != Activation::kNone || affine; }
};

/// The activation of `e` alone applied to one value (no affine map).
inline float activation_only(const Epilogue& e, float v) {
  switch (e.activation) {
    case Activation::kNone:
      return v;
    case Activation::kRelu:
      return v > 0.0f ? v : 0.0f;
    case Activation::kClip:
      v = v < e.alpha ? e.alpha : v;
      return v > e.beta ? e.beta : v;
    case Activation::kLeakyRelu:
      return v >= 0.0f ? v : e.alpha * v;
    case Activation::kHardSigmoid:
      return std::max(0.0f, std::min(1.0f, e.alpha * v + e.beta));
    case Activation::kHardSwish:
      return v * std::max(0.0f, std::min(1.0f, v * (1.0f / 6.0f) + 0.5f));
    case Activation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-v));
    case Activation::kSilu:
      return v * (1.0f / (1.0f + std::exp(-v)));
  }
  return v;
}

/// The activation stage of `e` applied to one value: the activation, then the affine map
/// when e.affine (the expression of the ScaleShift kernel it replaces, x * s + t).
inline float activate(const Epilogue& e, float v) {
  v = activation_only(e, v);
  return e.affine ? v * e.scale + e.shift : v;
}

/// Applies the epilogue to n elements:
///   y[i * y_stride] = epilogue(acc[i * acc_stride] + bias[i * bias_stride],
///                              z[i * z_stride])
/// bias: nullptr for none; bias_stride 0 adds one value (a conv's output channel) to all.
/// z: the residual, read only when e.residual (then non-null). acc may be y (same stride:
/// in place). Strides are in elements.
void f32_epilogue(const Epilogue& e, int64_t n, const float* acc, int64_t acc_stride,
                  const float* bias, int64_t bias_stride, const float* z, int64_t z_stride,
                  float* y, int64_t y_stride);

}  // namespace tern::kernels::ref
