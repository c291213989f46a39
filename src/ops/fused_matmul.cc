// FusedGemm and FusedMatMul (internal, domain "tern"): Gemm or MatMul followed by an
// epilogue (bias, residual Add, activation), created by the fuse-epilogue pass. The
// product itself is the registered Gemm / MatMul op (same attributes, checks and
// kernel); the epilogue is kernels/reference/epilogue.h applied to each output row.
#include "kernels/reference/epilogue.h"
#include "ops/epilogue.h"
#include "ops/op_args.h"
#include "ops/registry.h"
#include "ops/parallel.h"

namespace tern::ops {

namespace {

/// The shared part: an inner Gemm or MatMul op created from the same attributes (its
/// messages name this node), `product_inputs` inputs of it, then an optional bias vector
/// along the last dim (input `bias_input`, -1 when the op has none) and an optional
/// residual Z of the output's shape (input `residual_input`).
class FusedProductOp : public Op {
 public:
  FusedProductOp(const Attrs& a, const OpContext& ctx, const char* inner_type, int product_inputs,
                 int bias_input, int residual_input)
      : Op(ctx),
        epilogue_(parse_epilogue(a)),
        product_inputs_(product_inputs),
        bias_input_(bias_input),
        residual_input_(residual_input) {
    const OpSchema* schema = OpRegistry::global().find(inner_type);
    TERN_CHECK(schema != nullptr, InvalidArgument, "{}: op {} is not registered", where(),
               inner_type);
    inner_ = schema->create(a, ctx);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const size_t n = std::min<size_t>(inputs.size(), product_inputs_);
    std::vector<TensorType> out = inner_->infer(inputs.subspan(0, n));
    const Shape& y = out[0].shape;
    if (bias_input_ >= 0 && has_input(inputs, bias_input_)) {
      const InferInput& b = inputs[bias_input_];
      check_dtype(b.dtype, {DType::kFloat32}, where(), bias_input_, "bias");
      TERN_CHECK(!y.empty() && b.shape == Shape{y.back()}, ShapeError,
                 "{}: expected a bias of shape [{}] (the output's last dim, output {}), but "
                 "got {}",
                 where(), y.empty() ? 0 : y.back(), shape_str(y), shape_str(b.shape));
    }
    if (has_input(inputs, residual_input_)) {
      const InferInput& z = inputs[residual_input_];
      check_dtype(z.dtype, {DType::kFloat32}, where(), residual_input_, "Z");
      TERN_CHECK(z.shape == y, ShapeError,
                 "{}: expected residual Z of the output's shape {}, but got {}", where(),
                 shape_str(y), shape_str(z.shape));
    }
    return out;
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const size_t n = std::min<size_t>(inputs.size(), product_inputs_);
    inner_->run(inputs.subspan(0, n), outputs, ctx);
    const Tensor b = bias_input_ >= 0 && has_input(inputs, bias_input_)
                         ? inputs[bias_input_].contiguous()
                         : Tensor();
    const Tensor z =
        has_input(inputs, residual_input_) ? inputs[residual_input_].contiguous() : Tensor();
    kernels::ref::Epilogue e = epilogue_;
    e.residual = z.defined();
    if (!b.defined() && !e.residual && !e.maps_values()) return;
    Tensor& y = outputs[0];
    float* yd = y.data<float>();
    const float* bd = b.defined() ? b.data<float>() : nullptr;
    const float* zd = z.defined() ? z.data<float>() : nullptr;
    const int64_t cols = y.rank() == 0 ? 1 : y.shape().back();
    const int64_t rows = cols == 0 ? 0 : y.numel() / cols;
    parallel_for(rows, ctx.num_threads, [&](int64_t r) {
      float* yr = yd + r * cols;
      kernels::ref::f32_epilogue(e, cols, yr, 1, bd, 1, zd ? zd + r * cols : nullptr, 1, yr, 1);
    });
  }

  int64_t macs(std::span<const TensorType> inputs,
               std::span<const TensorType> outputs) const override {
    const size_t n = std::min<size_t>(inputs.size(), product_inputs_);
    return inner_->macs(inputs.subspan(0, n), outputs);
  }

 private:
  kernels::ref::Epilogue epilogue_;
  std::unique_ptr<Op> inner_;
  int product_inputs_;
  int bias_input_;
  int residual_input_;
};

/// FusedGemm: Y = epilogue(Gemm(A, B, C), Z). Inputs A, B, C (optional; Gemm's
/// broadcast bias), Z (optional residual of Y's shape [M, N]). Attributes: Gemm's
/// (alpha, beta, transA, transB) and the epilogue's (ops/epilogue.h).
class FusedGemmOp final : public FusedProductOp {
 public:
  FusedGemmOp(const Attrs& a, const OpContext& ctx) : FusedProductOp(a, ctx, "Gemm", 3, -1, 3) {}
};

/// FusedMatMul: Y = epilogue(MatMul(A, B) + bias, Z). Inputs A, B, bias (optional, [N]:
/// added along Y's last dim), Z (optional residual of Y's shape). Attributes: the
/// epilogue's (ops/epilogue.h).
class FusedMatMulOp final : public FusedProductOp {
 public:
  FusedMatMulOp(const Attrs& a, const OpContext& ctx) : FusedProductOp(a, ctx, "MatMul", 2, 2, 3) {}
};

}  // namespace

void register_fused_matmul(OpRegistry& r) {
  OpSchema gemm = make_schema<FusedGemmOp>("FusedGemm", 2, 4);
  gemm.domain = kInternalDomain;
  r.add(std::move(gemm));
  OpSchema matmul = make_schema<FusedMatMulOp>("FusedMatMul", 2, 4);
  matmul.domain = kInternalDomain;
  r.add(std::move(matmul));
}

}  // namespace tern::ops
