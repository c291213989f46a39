// Unary elementwise ops: Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Exp,
// Log, Sqrt, Neg, Abs. Any input strides; output contiguous, same shape and dtype.
// Sources: ONNX Relu-14, LeakyRelu-16, Sigmoid-13, HardSigmoid-6, HardSwish-14, Tanh-13,
// Exp-13, Log-13, Sqrt-13, Neg-13, Abs-13.
#include <initializer_list>

#include "kernels/reference/elementwise.h"
#include "ops/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::UnaryKind;
using kernels::ref::UnaryParams;

/// One unary function. Dtypes: float32 for all; int32/int64 also for Neg and Abs (all
/// opsets) and Relu (opset >= 14).
class UnaryOp final : public Op {
 public:
  UnaryOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const std::string& t = ctx.op_type;
    if (t == "Relu") {
      params_.kind = UnaryKind::kRelu;
      int_ok_ = ctx.opset >= 14;
    } else if (t == "LeakyRelu") {
      params_.kind = UnaryKind::kLeakyRelu;
      params_.alpha = attrs.get_float("alpha", 0.01f);
    } else if (t == "Sigmoid") {
      params_.kind = UnaryKind::kSigmoid;
    } else if (t == "HardSigmoid") {
      params_.kind = UnaryKind::kHardSigmoid;
      params_.alpha = attrs.get_float("alpha", 0.2f);
      params_.beta = attrs.get_float("beta", 0.5f);
    } else if (t == "HardSwish") {
      params_.kind = UnaryKind::kHardSwish;
    } else if (t == "Tanh") {
      params_.kind = UnaryKind::kTanh;
    } else if (t == "Exp") {
      params_.kind = UnaryKind::kExp;
    } else if (t == "Log") {
      params_.kind = UnaryKind::kLog;
    } else if (t == "Sqrt") {
      params_.kind = UnaryKind::kSqrt;
    } else if (t == "Neg") {
      params_.kind = UnaryKind::kNeg;
      int_ok_ = true;
    } else if (t == "Abs") {
      params_.kind = UnaryKind::kAbs;
      int_ok_ = true;
    } else {
      TERN_THROW(UnsupportedOpError, "{}: not a unary op", where());
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    if (int_ok_) {
      check_dtype(x.dtype, {DType::kFloat32, DType::kInt32, DType::kInt64}, where(), 0, "X");
    } else {
      check_dtype(x.dtype, {DType::kFloat32}, where(), 0, "X");
    }
    return {TensorType{x.dtype, x.shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    auto make_kernel = [this]<typename T>() {
      return [this](int64_t n, const T* x, int64_t sx, T* y) {
        kernels::ref::unary<T>(params_, n, x, sx, y);
      };
    };
    run_unary<float, int32_t, int64_t>(inputs[0], outputs[0], where(), ctx.num_threads,
                                       make_kernel);
  }

 private:
  UnaryParams params_;
  bool int_ok_ = false;
};

}  // namespace

void register_unary(OpRegistry& r) {
  for (const char* name : {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
                           "Exp", "Log", "Sqrt", "Neg", "Abs"}) {
    r.add(make_schema<UnaryOp>(name, 1, 1));
  }
}

}  // namespace tern::ops
