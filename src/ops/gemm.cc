// Gemm (ONNX Gemm-7/9/11/13): Y = alpha * A' * B' + beta * C, float32.
// Kernel: kernels/gemm (SIMD; B as [K, N], which pack-weights makes of a constant B^T),
// else kernels/reference/gemm.h.
#include "kernels/gemm/gemm.h"

#include "kernels/reference/gemm.h"
#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// Gemm: A' = transA ? A^T : A, [M, K]; B' = transB ? B^T : B, [K, N]; C (optional from
/// opset 11) broadcasts unidirectionally to [M, N] (shape [], [N], [1, N], [M, 1],
/// [M, N]...). Y: [M, N]. ShapeError for ranks other than 2, mismatched K or a C that
/// does not broadcast; UnsupportedOpError for dtypes other than float32.
class GemmOp final : public Op {
 public:
  GemmOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx),
        alpha_(a.get_float("alpha", 1.0f)),
        beta_(a.get_float("beta", 1.0f)),
        trans_a_(a.get_int("transA", 0)),
        trans_b_(a.get_int("transB", 0)) {
    TERN_CHECK((trans_a_ == 0 || trans_a_ == 1) && (trans_b_ == 0 || trans_b_ == 1), ModelError,
               "{}: attributes 'transA' and 'transB' must be 0 or 1, but got {} "
               "and {}",
               where(), trans_a_, trans_b_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"A", "B", "C"});
    const kernels::ref::GemmParams p = geometry(inputs[0].shape, inputs[1].shape);
    if (inputs.size() > 2 && inputs[2].present) {
      const Shape& c = inputs[2].shape;
      const Shape y = {p.m, p.n};
      bool ok = c.size() <= 2;
      for (size_t i = 0; ok && i < c.size(); ++i) {
        const int64_t yd = y[2 - c.size() + i];
        ok = c[i] == 1 || c[i] == yd;
      }
      TERN_CHECK(ok, ShapeError, "{}: expected C broadcastable to [M, N] = {}, but got shape {}",
                 where(), shape_str(y), shape_str(c));
    }
    return {TensorType{DType::kFloat32, {p.m, p.n}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor a = inputs[0].contiguous();
    const Tensor b = inputs[1].contiguous();
    kernels::ref::GemmParams p = geometry(a.shape(), b.shape());
    Tensor& y = outputs[0];
    float* yd = y.data<float>();
    p.beta = 0.0f;
    if (inputs.size() > 2 && inputs[2].defined() && beta_ != 0.0f) {
      // Y = beta * C broadcast to [M, N]; the kernel then accumulates alpha * A'B'.
      const Tensor c = inputs[2].contiguous();
      const float* cd = c.data<float>();
      const Shape& cs = c.shape();
      const int64_t cm = cs.size() == 2 ? cs[0] : 1;
      const int64_t cn = cs.empty() ? 1 : cs.back();
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          yd[i * p.n + j] = beta_ * cd[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
        }
      }
      p.beta = 1.0f;
    }
    const float* ad = a.data<float>();
    const float* bd = b.data<float>();
    if (kernels::gemm_supported(p)) {
      parallel_ranges(
          kernels::gemm_work(p).items(), ctx.num_threads,
          [&](int64_t begin, int64_t end) { kernels::f32_gemm(p, ad, bd, yd, {}, begin, end); });
      return;
    }
    parallel_ranges(p.m, ctx.num_threads, [&](int64_t begin, int64_t end) {
      kernels::ref::f32_gemm(p, ad, bd, yd, begin, end);
    });
  }

  int64_t macs(std::span<const TensorType> inputs, std::span<const TensorType>) const override {
    const kernels::ref::GemmParams p = geometry(inputs[0].shape, inputs[1].shape);
    return saturating_mul(saturating_mul(p.m, p.n), p.k);
  }

 private:
  kernels::ref::GemmParams geometry(const Shape& a, const Shape& b) const {
    TERN_CHECK(a.size() == 2 && b.size() == 2, ShapeError,
               "{}: expected A and B of rank 2, but got shapes {} and {}", where(), shape_str(a),
               shape_str(b));
    kernels::ref::GemmParams p;
    p.trans_a = trans_a_ != 0;
    p.trans_b = trans_b_ != 0;
    p.m = p.trans_a ? a[1] : a[0];
    p.k = p.trans_a ? a[0] : a[1];
    p.n = p.trans_b ? b[0] : b[1];
    const int64_t kb = p.trans_b ? b[1] : b[0];
    TERN_CHECK(kb == p.k, ShapeError,
               "{}: expected B with K = {} {} (A {} with transA {}), but got B {} with "
               "transB {}",
               where(), p.k, p.trans_b ? "columns" : "rows", shape_str(a), trans_a_, shape_str(b),
               trans_b_);
    p.alpha = alpha_;
    p.lda = a[1];
    p.ldb = b[1];
    p.ldy = p.n;
    return p;
  }

  float alpha_;
  float beta_;
  int64_t trans_a_;
  int64_t trans_b_;
};

}  // namespace

void register_gemm(OpRegistry& r) { r.add(make_schema<GemmOp>("Gemm", 2, 3)); }

}  // namespace tern::ops
