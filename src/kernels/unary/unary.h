// Elementwise transcendental functions (Exp, Sigmoid, Tanh) on contiguous float32, with
// Highway's vector math, dispatched at run time. See README.md in this folder; the
// reference twin is ref::unary (kernels/reference/elementwise.h).
#pragma once

#include <cstdint>

#include "kernels/reference/elementwise.h"

namespace tern::kernels {

/// Whether f32_unary computes `kind`: kExp, kSigmoid and kTanh, the kinds whose scalar
/// form is a libm call per element (the others are a compare or a multiply, and fused into
/// the convs' epilogues where they follow one).
bool f32_unary_supported(ref::UnaryKind kind);

/// y[i] = f(x[i]) for i in [0, n), x and y contiguous (possibly the same buffer): what
/// ref::unary<float>(p, n, x, 1, y) computes (ONNX Exp-13, Sigmoid-13, Tanh-13), with
/// Highway's Exp and Tanh (at most 1 and 4 ULP from std::exp and std::tanh). NaN stays
/// NaN; Exp overflows to +inf from 88.72283936 on, as std::exp. Throws InvalidArgument when
/// f32_unary_supported(p.kind) is false.
void f32_unary(const ref::UnaryParams& p, int64_t n, const float* x, float* y);

}  // namespace tern::kernels
