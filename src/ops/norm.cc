// Normalization ops, float32: InstanceNormalization (ONNX -1/6; the same semantics),
// LayerNormalization (ONNX -17), MeanVarianceNormalization (ONNX -9/13) and LRN (ONNX
// -1/13). Statistics are accumulated in double whatever stash_type says (stash_type only
// names float32, the sole accepted value, for the optional Mean / InvStdDev outputs).
// Kernels: kernels/reference/norm.h.
#include "kernels/reference/norm.h"

#include <cmath>
#include <numeric>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// InstanceNormalization: X [N, C, D1, ...] (rank >= 3 in the spec; rank 2 accepted and
/// normalizes a single value per channel), scale and B [C]:
///   Y[n, c] = scale[c] * (X[n, c] - mean) / sqrt(var + epsilon) + B[c], with mean and
///   (biased) var over the spatial dims of (n, c).
class InstanceNormOp final : public Op {
 public:
  InstanceNormOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), epsilon_(a.get_float("epsilon", 1e-5f)) {
    TERN_CHECK(epsilon_ >= 0.0f, ModelError, "{}: attribute 'epsilon' must be >= 0, but got {}",
               where(), epsilon_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"input", "scale", "B"});
    const Shape& x = inputs[0].shape;
    TERN_CHECK(x.size() >= 2, ShapeError,
               "{}: expected input of rank >= 2 (N x C x ...), but got shape {}", where(),
               shape_str(x));
    for (int i = 1; i < 3; ++i) {
      TERN_CHECK(inputs[i].shape == Shape{x[1]}, ShapeError,
                 "{}: expected input {} of shape [{}] (C), but got {}", where(), i, x[1],
                 shape_str(inputs[i].shape));
    }
    return {TensorType{DType::kFloat32, x}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor x = inputs[0].contiguous();
    const Tensor scale = inputs[1].contiguous(), bias = inputs[2].contiguous();
    const int64_t n = x.dim(0), c = x.dim(1);
    const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);
    float* y = outputs[0].data<float>();
    kernels::ref::f32_normalize_rows(x.data<float>(), y, n * c, inner, epsilon_, nullptr, nullptr);
    const float* s = scale.data<float>();
    const float* b = bias.data<float>();
    for (int64_t r = 0; r < n * c; ++r) {
      for (int64_t i = 0; i < inner; ++i) y[r * inner + i] = y[r * inner + i] * s[r % c] + b[r % c];
    }
  }

 private:
  float epsilon_;
};

/// LayerNormalization: normalizes X over dims [axis, rank) (axis default -1, negative
/// counts from the end): Y = (X - mean) * inv_std * Scale + B, where Scale and the
/// optional B broadcast (numpy rules, unidirectionally) to X.shape[axis:]. Optional
/// outputs Mean and InvStdDev have shape X.shape[:axis] + [1] * (rank - axis).
/// stash_type must be 1 (float32); other values are UnsupportedOpError.
class LayerNormOp final : public Op {
 public:
  LayerNormOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), axis_(a.get_int("axis", -1)), epsilon_(a.get_float("epsilon", 1e-5f)) {
    const int64_t stash = a.get_int("stash_type", 1);
    TERN_CHECK(stash == 1, UnsupportedOpError,
               "{}: stash_type {} is not supported (supported: 1, float32)", where(), stash);
    TERN_CHECK(epsilon_ >= 0.0f, ModelError, "{}: attribute 'epsilon' must be >= 0, but got {}",
               where(), epsilon_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"X", "Scale", "B"});
    const Shape& x = inputs[0].shape;
    TERN_CHECK(!x.empty(), ShapeError, "{}: expected X of rank >= 1, but got a scalar", where());
    const int axis = normalize_axis(axis_, static_cast<int>(x.size()), where());
    const Shape norm(x.begin() + axis, x.end());
    for (size_t i = 1; i < 3 && i < inputs.size(); ++i) {
      if (!inputs[i].present) continue;
      broadcast_strides(inputs[i].shape, norm, i);
    }
    Shape stat(x.begin(), x.begin() + axis);
    stat.resize(x.size(), 1);
    return {TensorType{DType::kFloat32, x}, TensorType{DType::kFloat32, stat},
            TensorType{DType::kFloat32, stat}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor x = inputs[0].contiguous();
    const int axis = normalize_axis(axis_, x.rank(), where());
    const Shape norm(x.shape().begin() + axis, x.shape().end());
    const int64_t n = shape_numel(norm);
    const int64_t outer = n == 0 ? 0 : x.numel() / n;
    std::vector<float> mean(outer), inv(outer);
    float* y = outputs[0].data<float>();
    kernels::ref::f32_normalize_rows(x.data<float>(), y, outer, n, epsilon_, mean.data(),
                                     inv.data());
    // Scale, then bias, each broadcast over the normalized dims.
    for (size_t k = 1; k < 3; ++k) {
      if (!has_input(inputs, k)) continue;
      const Tensor p = inputs[k].contiguous();
      const std::vector<int64_t> st = broadcast_strides(p.shape(), norm, k);
      const float* pd = p.data<float>();
      std::vector<int64_t> off(n);
      for (int64_t i = 0; i < n; ++i) {
        int64_t rem = i, o = 0;
        for (int d = static_cast<int>(norm.size()) - 1; d >= 0; --d) {
          o += (rem % norm[d]) * st[d];
          rem /= norm[d];
        }
        off[i] = o;
      }
      for (int64_t r = 0; r < outer; ++r) {
        for (int64_t i = 0; i < n; ++i) {
          float& v = y[r * n + i];
          v = k == 1 ? v * pd[off[i]] : v + pd[off[i]];
        }
      }
    }
    if (outputs.size() > 1 && outputs[1].defined()) {
      std::copy(mean.begin(), mean.end(), outputs[1].data<float>());
    }
    if (outputs.size() > 2 && outputs[2].defined()) {
      std::copy(inv.begin(), inv.end(), outputs[2].data<float>());
    }
  }

 private:
  // Strides (in elements, 0 where broadcast) of a contiguous tensor of shape `p` read as
  // `norm` (numpy right-aligned broadcast of p to norm). ShapeError when it does not fit.
  std::vector<int64_t> broadcast_strides(const Shape& p, const Shape& norm, size_t index) const {
    TERN_CHECK(p.size() <= norm.size(), ShapeError,
               "{}: input {} of shape {} does not broadcast to the normalized shape {}", where(),
               index, shape_str(p), shape_str(norm));
    std::vector<int64_t> st(norm.size(), 0);
    int64_t stride = 1;
    for (size_t j = 0; j < p.size(); ++j) {
      const size_t pd = p.size() - 1 - j, nd = norm.size() - 1 - j;
      TERN_CHECK(p[pd] == norm[nd] || p[pd] == 1, ShapeError,
                 "{}: input {} of shape {} does not broadcast to the normalized shape {}", where(),
                 index, shape_str(p), shape_str(norm));
      st[nd] = p[pd] == 1 ? 0 : stride;
      stride *= p[pd];
    }
    return st;
  }

  int64_t axis_;
  float epsilon_;
};

/// MeanVarianceNormalization: Y = (X - mean) / (sqrt(var) + 1e-9), with mean and the
/// biased var over `axes` (default [0, 2, 3]; negative counts from the end).
class MvnOp final : public Op {
 public:
  MvnOp(const Attrs& a, const OpContext& ctx) : Op(ctx), axes_(a.get_ints("axes", {0, 2, 3})) {}

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"X"});
    normalize_axes(axes_, static_cast<int>(inputs[0].shape.size()), where());
    return {TensorType{DType::kFloat32, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor& x = inputs[0];
    const int rank = x.rank();
    const std::vector<int> axes = normalize_axes(axes_, rank, where());
    // Permute the reduced axes to the end, normalize rows, permute back.
    std::vector<int> perm;
    std::vector<bool> reduced(rank, false);
    for (int a : axes) reduced[a] = true;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) perm.push_back(d);
    }
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) {
        perm.push_back(d);
        n *= x.dim(d);
      }
    }
    const Tensor xp = x.permute(perm).contiguous();
    Tensor yp = Tensor::empty(DType::kFloat32, xp.shape());
    const int64_t outer = n == 0 ? 0 : xp.numel() / n;
    const float* xd = xp.data<float>();
    float* yd = yp.data<float>();
    for (int64_t r = 0; r < outer; ++r) {
      double sum = 0.0, sq = 0.0;
      for (int64_t i = 0; i < n; ++i) sum += xd[r * n + i];
      const double m = sum / static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) sq += (xd[r * n + i] - m) * (xd[r * n + i] - m);
      const double sd = std::sqrt(sq / static_cast<double>(n)) + 1e-9;
      for (int64_t i = 0; i < n; ++i) yd[r * n + i] = static_cast<float>((xd[r * n + i] - m) / sd);
    }
    std::vector<int> inv(rank);
    for (int d = 0; d < rank; ++d) inv[perm[d]] = d;
    outputs[0].copy_from(yp.permute(inv));
  }

 private:
  std::vector<int64_t> axes_;
};

/// LRN over channels of X [N, C, D1, ...] (rank >= 2): attributes size (required, >= 1),
/// alpha (1e-4), beta (0.75), bias (1.0); see kernels::ref::f32_lrn.
class LrnOp final : public Op {
 public:
  LrnOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx),
        size_(a.require_int("size")),
        alpha_(a.get_float("alpha", 1e-4f)),
        beta_(a.get_float("beta", 0.75f)),
        bias_(a.get_float("bias", 1.0f)) {
    TERN_CHECK(size_ >= 1, ModelError, "{}: attribute 'size' must be >= 1, but got {}", where(),
               size_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"X"});
    TERN_CHECK(inputs[0].shape.size() >= 2, ShapeError,
               "{}: expected X of rank >= 2 (N x C x ...), but got shape {}", where(),
               shape_str(inputs[0].shape));
    return {TensorType{DType::kFloat32, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor x = inputs[0].contiguous();
    const int64_t n = x.dim(0), c = x.dim(1);
    const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);
    kernels::ref::f32_lrn(x.data<float>(), outputs[0].data<float>(), n, c, inner, size_, alpha_,
                          beta_, bias_);
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

void register_norm(OpRegistry& r) {
  r.add(make_schema<InstanceNormOp>("InstanceNormalization", 3, 3));
  r.add(make_schema<LayerNormOp>("LayerNormalization", 2, 3, 1, 3));
  r.add(make_schema<MvnOp>("MeanVarianceNormalization", 1, 1));
  r.add(make_schema<LrnOp>("LRN", 1, 1));
}

}  // namespace tern::ops
