// Unary elementwise ops. Any input strides; output contiguous, same shape.
// Sources: ONNX Relu-14, LeakyRelu-16, Sigmoid-13, HardSigmoid-6, HardSwish-14, Tanh-13,
// Exp-13, Log-13, Sqrt-13, Neg-13, Abs-13, Sign-13, Erf-13, Elu-6, Selu-6, Celu-12,
// Softplus-1, Softsign-1, ThresholdedRelu-10, Reciprocal-13, Floor-13, Ceil-13, Round-11,
// Sin/Cos/Tan/Asin/Acos/Atan-7, Sinh/Cosh/Asinh/Acosh/Atanh-9, Shrink-9, IsNaN-13, IsInf-10.
// Dtypes: float32, float64, float16 and bfloat16 (computed in float) for all; besides these,
// every integer type for Abs, Sign and Shrink, the signed ones for Neg, and every integer
// type for Relu from opset 14 (Relu-14 added them; earlier Relu is float-only).
// IsNaN and IsInf output bool. Older opsets differ only in dtypes and in the removed
// `consumed_inputs` attribute, which is ignored.
#include "kernels/unary/unary.h"

#include <initializer_list>
#include <type_traits>

#include "kernels/reference/elementwise.h"
#include "ops/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::UnaryKind;
using kernels::ref::UnaryParams;

constexpr std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64,
                                                      DType::kFloat16, DType::kBFloat16};
constexpr std::initializer_list<DType> kSignedTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
    DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64};

enum class TypeSet { kFloat, kSigned, kNumeric };

struct UnaryInfo {
  const char* name;
  UnaryKind kind;
  TypeSet types;
};

constexpr UnaryInfo kUnaryOps[] = {
    {"Relu", UnaryKind::kRelu, TypeSet::kNumeric},
    {"LeakyRelu", UnaryKind::kLeakyRelu, TypeSet::kFloat},
    {"Sigmoid", UnaryKind::kSigmoid, TypeSet::kFloat},
    {"HardSigmoid", UnaryKind::kHardSigmoid, TypeSet::kFloat},
    {"HardSwish", UnaryKind::kHardSwish, TypeSet::kFloat},
    {"Tanh", UnaryKind::kTanh, TypeSet::kFloat},
    {"Exp", UnaryKind::kExp, TypeSet::kFloat},
    {"Log", UnaryKind::kLog, TypeSet::kFloat},
    {"Sqrt", UnaryKind::kSqrt, TypeSet::kFloat},
    {"Neg", UnaryKind::kNeg, TypeSet::kSigned},
    {"Abs", UnaryKind::kAbs, TypeSet::kNumeric},
    {"Sign", UnaryKind::kSign, TypeSet::kNumeric},
    {"Erf", UnaryKind::kErf, TypeSet::kFloat},
    {"Elu", UnaryKind::kElu, TypeSet::kFloat},
    {"Selu", UnaryKind::kSelu, TypeSet::kFloat},
    {"Celu", UnaryKind::kCelu, TypeSet::kFloat},
    {"Softplus", UnaryKind::kSoftplus, TypeSet::kFloat},
    {"Softsign", UnaryKind::kSoftsign, TypeSet::kFloat},
    {"ThresholdedRelu", UnaryKind::kThresholdedRelu, TypeSet::kFloat},
    {"Reciprocal", UnaryKind::kReciprocal, TypeSet::kFloat},
    {"Floor", UnaryKind::kFloor, TypeSet::kFloat},
    {"Ceil", UnaryKind::kCeil, TypeSet::kFloat},
    {"Round", UnaryKind::kRound, TypeSet::kFloat},
    {"Sin", UnaryKind::kSin, TypeSet::kFloat},
    {"Cos", UnaryKind::kCos, TypeSet::kFloat},
    {"Tan", UnaryKind::kTan, TypeSet::kFloat},
    {"Asin", UnaryKind::kAsin, TypeSet::kFloat},
    {"Acos", UnaryKind::kAcos, TypeSet::kFloat},
    {"Atan", UnaryKind::kAtan, TypeSet::kFloat},
    {"Sinh", UnaryKind::kSinh, TypeSet::kFloat},
    {"Cosh", UnaryKind::kCosh, TypeSet::kFloat},
    {"Asinh", UnaryKind::kAsinh, TypeSet::kFloat},
    {"Acosh", UnaryKind::kAcosh, TypeSet::kFloat},
    {"Atanh", UnaryKind::kAtanh, TypeSet::kFloat},
    {"Shrink", UnaryKind::kShrink, TypeSet::kNumeric},
};

/// One unary function y = f(x) of the same dtype as x (see the file comment for dtypes).
/// Throws UnsupportedOpError for another dtype.
class UnaryOp final : public Op {
 public:
  UnaryOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const std::string& t = ctx.op_type;
    const UnaryInfo* info = nullptr;
    for (const UnaryInfo& u : kUnaryOps) {
      if (t == u.name) info = &u;
    }
    TERN_CHECK(info != nullptr, UnsupportedOpError, "{}: not a unary op", where());
    params_.kind = info->kind;
    types_ = info->types;
    if (info->kind == UnaryKind::kRelu && ctx.opset < 14) types_ = TypeSet::kFloat;
    switch (info->kind) {
      case UnaryKind::kLeakyRelu:
        params_.alpha = attrs.get_float("alpha", 0.01f);
        break;
      case UnaryKind::kHardSigmoid:
        params_.alpha = attrs.get_float("alpha", 0.2f);
        params_.beta = attrs.get_float("beta", 0.5f);
        break;
      case UnaryKind::kElu:
      case UnaryKind::kThresholdedRelu:
        params_.alpha = attrs.get_float("alpha", 1.0f);
        break;
      case UnaryKind::kCelu:
        params_.alpha = attrs.get_float("alpha", 1.0f);
        TERN_CHECK(params_.alpha != 0.f, ModelError, "{}: attribute 'alpha' must not be 0",
                   where());
        break;
      case UnaryKind::kSelu:
        params_.alpha = attrs.get_float("alpha", 1.67326319217681884765625f);
        params_.gamma = attrs.get_float("gamma", 1.05070102214813232421875f);
        break;
      case UnaryKind::kShrink:
        params_.alpha = attrs.get_float("lambd", 0.5f);
        params_.beta = attrs.get_float("bias", 0.0f);
        break;
      default:
        break;
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    switch (types_) {
      case TypeSet::kFloat:
        check_dtype(x.dtype, kFloatTypes, where(), 0, "X");
        break;
      case TypeSet::kSigned:
        check_dtype(x.dtype, kSignedTypes, where(), 0, "X");
        break;
      case TypeSet::kNumeric:
        check_dtype(x.dtype, kNumericTypes, where(), 0, "X");
        break;
    }
    return {TensorType{x.dtype, x.shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    // Float runs of Exp, Sigmoid and Tanh go to the vector kernel; the rest, and strided
    // runs (a broadcast input), to the reference.
    const bool vector = kernels::f32_unary_supported(params_.kind);
    auto make_kernel = [this, vector]<typename T>() {
      return [this, vector](int64_t n, const T* x, int64_t sx, T* y) {
        if constexpr (std::is_same_v<T, float>) {
          if (vector && sx == 1) return kernels::f32_unary(params_, n, x, y);
        }
        kernels::ref::unary<T>(params_, n, x, sx, y);
      };
    };
    run_unary<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
              uint16_t, uint32_t, uint64_t>(inputs[0], outputs[0], where(), ctx.num_threads,
                                            make_kernel);
  }

 private:
  UnaryParams params_;
  TypeSet types_ = TypeSet::kFloat;
};

/// IsNaN and IsInf: bool y of x's shape. x: float32, float64, float16 or bfloat16.
class FloatTestOp final : public Op {
 public:
  FloatTestOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    is_inf_ = ctx.op_type == "IsInf";
    if (is_inf_) {
      detect_negative_ = attrs.get_int("detect_negative", 1) != 0;
      detect_positive_ = attrs.get_int("detect_positive", 1) != 0;
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, kFloatTypes, where(), 0, "X");
    return {TensorType{DType::kBool, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor& x = inputs[0];
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(x)};
    visit_dtype<float, double, Float16, BFloat16>(x.dtype(), where(), [&]<typename T>() {
      it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
        const T* xs = reinterpret_cast<const T*>(p[1]);
        bool* ys = reinterpret_cast<bool*>(p[0]);
        if (is_inf_) {
          kernels::ref::is_inf<T>(n, xs, s[1], detect_negative_, detect_positive_, ys);
        } else {
          kernels::ref::is_nan<T>(n, xs, s[1], ys);
        }
      });
    });
  }

 private:
  bool is_inf_ = false;
  bool detect_negative_ = true;
  bool detect_positive_ = true;
};

}  // namespace

void register_unary(OpRegistry& r) {
  for (const UnaryInfo& u : kUnaryOps) r.add(make_schema<UnaryOp>(u.name, 1, 1));
  r.add(make_schema<FloatTestOp>("IsNaN", 1, 1));
  r.add(make_schema<FloatTestOp>("IsInf", 1, 1));
}

}  // namespace tern::ops
