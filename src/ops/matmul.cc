// MatMul (ONNX MatMul-9/13): numpy matmul semantics, float32.
// Kernel: kernels/gemm (SIMD), one product per batch.
#include <algorithm>

#include "kernels/gemm/gemm.h"
#include "kernels/reference/gemm.h"
#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// MatMul: A: [..., M, K], B: [..., K, N] -> Y: [..., M, N], batch dims broadcast as in
/// numpy. A 1-D A ([K]) is treated as [1, K] and a 1-D B ([K]) as [K, 1], and the
/// added dim is removed from Y (so [K] x [K] gives a scalar). ShapeError for rank 0,
/// mismatched K, batch dims that do not broadcast or shapes whose element counts
/// overflow int64; UnsupportedOpError for dtypes other than float32.
class MatMulOp final : public Op {
 public:
  MatMulOp(const Attrs&, const OpContext& ctx) : Op(ctx) {}

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"A", "B"});
    return {TensorType{DType::kFloat32, plan(inputs[0].shape, inputs[1].shape).y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor a = inputs[0].contiguous();
    const Tensor b = inputs[1].contiguous();
    const Plan pl = plan(a.shape(), b.shape());
    const kernels::ref::GemmParams& p = pl.gemm;
    const float* ad = a.data<float>();
    const float* bd = b.data<float>();
    float* yd = outputs[0].data<float>();
    const int64_t batches = shape_numel(pl.batch);
    const int rank = static_cast<int>(pl.batch.size());
    // Work: (batch, item of the product) pairs; MatMul's B is never transposed.
    const int64_t items = kernels::gemm_work(p).items();
    const int64_t work = batches * items;
    parallel_for(work, ctx.num_threads, [&](int64_t w) {
      const int64_t bi = w / items;
      const int64_t item = w % items;
      // Offsets of batch bi in A and B (strides are 0 along broadcast dims).
      int64_t rem = bi, a_off = 0, b_off = 0;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t i = rem % pl.batch[d];
        rem /= pl.batch[d];
        a_off += i * pl.a_strides[d];
        b_off += i * pl.b_strides[d];
      }
      kernels::f32_gemm(p, ad + a_off, bd + b_off, yd + bi * p.m * p.n, {}, item, item + 1);
    });
  }

  int64_t macs(std::span<const TensorType> inputs, std::span<const TensorType>) const override {
    const Plan pl = plan(inputs[0].shape, inputs[1].shape);
    const int64_t per_batch = saturating_mul(saturating_mul(pl.gemm.m, pl.gemm.n), pl.gemm.k);
    return saturating_mul(saturating_product(pl.batch), per_batch);
  }

 private:
  struct Plan {
    Shape y;          // output shape
    Shape batch;      // broadcast batch dims
    Shape a_strides;  // element stride of each batch dim in A (0 = broadcast)
    Shape b_strides;
    kernels::ref::GemmParams gemm;  // one [M, K] x [K, N] product
  };

  Plan plan(const Shape& a_in, const Shape& b_in) const {
    TERN_CHECK(!a_in.empty() && !b_in.empty(), ShapeError,
               "{}: expected A and B of rank >= 1, but got shapes {} and {}", where(),
               shape_str(a_in), shape_str(b_in));
    Shape a = a_in, b = b_in;
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    Plan pl;
    kernels::ref::GemmParams& p = pl.gemm;
    p.m = a[a.size() - 2];
    p.k = a.back();
    p.n = b.back();
    TERN_CHECK(b[b.size() - 2] == p.k, ShapeError,
               "{}: expected B with {} rows (the last dim of A {}), but got B {}", where(), p.k,
               shape_str(a_in), shape_str(b_in));
    p.lda = p.k;
    p.ldb = p.n;
    p.ldy = p.n;

    const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
    pl.batch.assign(r, 1);
    pl.a_strides.assign(r, 0);
    pl.b_strides.assign(r, 0);
    // Batch strides in elements; checked, since infer() may see shapes no tensor has yet.
    int64_t sa = checked_mul(p.m, p.k, where(), "the size of A's matrices (M * K)");
    int64_t sb = checked_mul(p.k, p.n, where(), "the size of B's matrices (K * N)");
    for (size_t i = 0; i < r; ++i) {  // from the innermost batch dim outwards
      const size_t d = r - 1 - i;
      const int64_t da = i < ra ? a[ra - 1 - i] : 1;
      const int64_t db = i < rb ? b[rb - 1 - i] : 1;
      TERN_CHECK(da == db || da == 1 || db == 1, ShapeError,
                 "{}: batch dims of A {} and B {} do not broadcast", where(), shape_str(a_in),
                 shape_str(b_in));
      pl.batch[d] = da == 1 ? db : da;
      pl.a_strides[d] = da == 1 ? 0 : sa;
      pl.b_strides[d] = db == 1 ? 0 : sb;
      sa = checked_mul(sa, da, where(), "the element count of A {}", shape_str(a_in));
      sb = checked_mul(sb, db, where(), "the element count of B {}", shape_str(b_in));
    }
    pl.y = pl.batch;
    if (a_in.size() > 1) pl.y.push_back(p.m);
    if (b_in.size() > 1) pl.y.push_back(p.n);
    checked_numel(pl.y, where());
    return pl;
  }
};

}  // namespace

void register_matmul(OpRegistry& r) { r.add(make_schema<MatMulOp>("MatMul", 2, 2)); }

}  // namespace tern::ops
