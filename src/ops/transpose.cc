// Transpose: output dim i is input dim perm[i]; perm defaults to the reversed dims.
// The output is a contiguous copy of the permuted view (any dtype). Source: ONNX
// Transpose-13.
#include <numeric>

#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class TransposeOp final : public Op {
 public:
  TransposeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    has_perm_ = attrs.has("perm");
    perm_ = attrs.get_ints("perm", {});
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    const std::vector<int> perm = resolve_perm(static_cast<int>(x.shape.size()));
    Shape out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = x.shape[perm[i]];
    return {TensorType{x.dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    const Tensor view = inputs[0].permute(resolve_perm(inputs[0].rank()));
    copy_strided(StridedOperand::of(y), StridedOperand::of(view), ctx.num_threads);
  }

 private:
  // perm checked against the input rank: a permutation of 0..rank-1 (negative entries
  // are not allowed by the spec).
  std::vector<int> resolve_perm(int rank) const {
    std::vector<int> perm(rank);
    if (!has_perm_) {
      std::iota(perm.rbegin(), perm.rend(), 0);
      return perm;
    }
    TERN_CHECK(static_cast<int>(perm_.size()) == rank, ShapeError,
               "{}: perm {} has {} entries, but the input has rank {}", where(), perm_,
               perm_.size(), rank);
    std::vector<bool> seen(rank, false);
    for (int i = 0; i < rank; ++i) {
      const int64_t p = perm_[i];
      TERN_CHECK(p >= 0 && p < rank && !seen[p], ShapeError,
                 "{}: perm {} is not a permutation of 0..{}", where(), perm_, rank - 1);
      seen[p] = true;
      perm[i] = static_cast<int>(p);
    }
    return perm;
  }

  bool has_perm_ = false;
  std::vector<int64_t> perm_;
};

}  // namespace

void register_transpose(OpRegistry& r) { r.add(make_schema<TransposeOp>("Transpose", 1, 1)); }

}  // namespace tern::ops
