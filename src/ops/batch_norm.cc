// BatchNormalization (ONNX BatchNormalization-7/9/14/15), float32: inference mode, and
// training_mode = 1 (opset 14+) with the running_mean / running_var outputs.
// Kernel: kernels/reference/batch_norm.h.
#include "kernels/reference/batch_norm.h"

#include <vector>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// BatchNormalization with the running statistics:
///   Y = (X - mean) / sqrt(var + epsilon) * scale + B.
/// X: [N, C, D1, ...] (rank >= 2); scale, B, mean, var: [C]. With spatial = 0 (opset 7/8
/// only) the statistics are per activation instead: shape [C, D1, ...].
/// training_mode = 1 (opset 14+) normalizes with the batch statistics instead (mean and
/// biased variance over N and the spatial dims) and writes the optional outputs
///   running_mean = input_mean * momentum + batch_mean * (1 - momentum) (same for var),
/// momentum default 0.9. Declaring outputs 1.. without training_mode = 1 (or before opset
/// 14, whose training outputs differ) is UnsupportedOpError at creation.
class BatchNormOp final : public Op {
 public:
  BatchNormOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx),
        epsilon_(a.get_float("epsilon", 1e-5f)),
        spatial_(ctx.opset < 9 ? a.get_int("spatial", 1) : 1) {
    TERN_CHECK(epsilon_ >= 0.0f, ModelError, "{}: attribute 'epsilon' must be >= 0, but got {}",
               where(), epsilon_);
    const int64_t training = ctx.opset >= 14 ? a.get_int("training_mode", 0) : 0;
    TERN_CHECK(training == 0 || training == 1, ModelError,
               "{}: attribute 'training_mode' must be 0 or 1, but got {}", where(), training);
    training_ = training == 1;
    momentum_ = a.get_float("momentum", 0.9f);
    TERN_CHECK(spatial_ == 0 || spatial_ == 1, ModelError,
               "{}: attribute 'spatial' must be 0 or 1, but got {}", where(), spatial_);
    TERN_CHECK(ctx.num_outputs <= 1 || (training_ && ctx.num_outputs <= 3), UnsupportedOpError,
               "{}: the node declares {} outputs, but output 1 (a training output: running / "
               "saved mean and variance) and later ones are supported only as running_mean "
               "and running_var with training_mode = 1 (opset 14+)",
               where(), ctx.num_outputs);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    check_dtypes(inputs, {DType::kFloat32}, where(),
                 {kNames[0], kNames[1], kNames[2], kNames[3], kNames[4]});
    const Shape& x = inputs[0].shape;
    TERN_CHECK(x.size() >= 2, ShapeError,
               "{}: expected input X of rank >= 2 (N x C x ...), but got shape {}", where(),
               shape_str(x));
    const Shape stats = stats_shape(x);
    for (size_t i = 1; i < 5; ++i) {
      TERN_CHECK(inputs[i].shape == stats, ShapeError,
                 "{}: expected {} of shape {} (C = {}), but got {}", where(), kNames[i],
                 shape_str(stats), x[1], shape_str(inputs[i].shape));
    }
    return {TensorType{DType::kFloat32, x}, TensorType{DType::kFloat32, stats},
            TensorType{DType::kFloat32, stats}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor x = inputs[0].contiguous();
    Tensor stats[4];
    for (int i = 0; i < 4; ++i) stats[i] = inputs[i + 1].contiguous();
    kernels::ref::BatchNormParams p;
    p.batch = x.dim(0);
    p.channels = spatial_ ? x.dim(1) : shape_numel(stats_shape(x.shape()));
    p.inner = x.numel() / std::max<int64_t>(1, p.batch * p.channels);
    p.epsilon = epsilon_;
    const float* mean = stats[2].data<float>();
    const float* var = stats[3].data<float>();
    std::vector<float> batch_mean, batch_var;
    if (training_) {
      batch_mean.resize(p.channels);
      batch_var.resize(p.channels);
      kernels::ref::f32_batch_stats(p, x.data<float>(), batch_mean.data(), batch_var.data());
      for (int k = 1; k < 3; ++k) {
        if (static_cast<int>(outputs.size()) <= k || !outputs[k].defined()) continue;
        const float* running = k == 1 ? mean : var;
        const std::vector<float>& batch = k == 1 ? batch_mean : batch_var;
        float* out = outputs[k].data<float>();
        for (int64_t c = 0; c < p.channels; ++c) {
          out[c] = running[c] * momentum_ + batch[c] * (1.0f - momentum_);
        }
      }
      mean = batch_mean.data();
      var = batch_var.data();
    }
    kernels::ref::f32_batch_norm(p, x.data<float>(), stats[0].data<float>(), stats[1].data<float>(),
                                 mean, var, outputs[0].data<float>());
  }

 private:
  Shape stats_shape(const Shape& x) const {
    return spatial_ ? Shape{x[1]} : Shape(x.begin() + 1, x.end());
  }

  float epsilon_;
  int64_t spatial_;
  bool training_ = false;
  float momentum_ = 0.9f;
};

}  // namespace

void register_batch_norm(OpRegistry& r) {
  r.add(make_schema<BatchNormOp>("BatchNormalization", 5, 5, 1, 5));
}

}  // namespace tern::ops
