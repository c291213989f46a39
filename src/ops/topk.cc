// TopK: the k largest (largest = 1) or smallest elements along `axis` (default -1) and
// their int64 indices, in sorted order (ONNX TopK-11; TopK-10 takes k as an input and is
// always largest/sorted; TopK-1 takes k as an attribute). Equal values keep the lower
// index first; NaN counts as larger than every number. sorted = 0 is computed sorted too
// (any order is allowed). Dtypes: float32, float64, int32, int64. k must be in
// [0, dim(axis)], else ShapeError. The selection is kernels::ref::topk.
#include "kernels/reference/topk.h"

#include <vector>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class TopKOp final : public Op {
 public:
  TopKOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.get_int("axis", -1);
    if (ctx.opset < 10) k_attr_ = attrs.require_int("k");
    if (ctx.opset >= 11) largest_ = attrs.get_int("largest", 1) != 0;
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    check_dtype(x.dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, where(),
                0, "X");
    const int axis = normalize_axis(axis_, static_cast<int>(x.shape.size()), where());
    const int64_t k = k_of(inputs);
    TERN_CHECK(k >= 0 && k <= x.shape[axis], ShapeError,
               "{}: k = {} must be in 0..{} (the size of axis {})", where(), k, x.shape[axis],
               axis);
    Shape out = x.shape;
    out[axis] = k;
    return {TensorType{x.dtype, out}, TensorType{DType::kInt64, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    const Tensor x = inputs[0].contiguous();
    const int axis = normalize_axis(axis_, x.rank(), where());
    const int64_t k = k_of(infer_inputs_from(inputs));
    int64_t outer = 1, inner = 1;
    const int64_t n = x.dim(axis);
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    Tensor values = outputs[0];
    Tensor indices = outputs.size() > 1 ? outputs[1] : Tensor();
    TERN_CHECK(k >= 0 && k <= n, ShapeError, "{}: k = {} must be in 0..{}", where(), k, n);
    if (k == 0) return;
    kernels::ref::TopKParams p;
    p.outer = outer;
    p.n = n;
    p.inner = inner;
    p.k = k;
    p.largest = largest_;
    std::vector<int64_t> scratch(static_cast<size_t>(n));
    visit_dtype<float, double, int32_t, int64_t>(x.dtype(), where(), [&]<typename T>() {
      kernels::ref::topk<T>(p, x.data<T>(), scratch.data(),
                            values.defined() ? values.data<T>() : nullptr,
                            indices.defined() ? indices.data<int64_t>() : nullptr);
    });
  }

 private:
  int64_t k_of(std::span<const InferInput> inputs) const {
    if (ctx_.opset < 10) return k_attr_;
    const std::vector<int64_t> k = int_values(require_value(inputs, 1), where(), 1, "K");
    TERN_CHECK(k.size() == 1, InvalidArgument, "{}: K must hold one value, got {}", where(),
               k.size());
    return k[0];
  }

  int64_t axis_ = -1;
  int64_t k_attr_ = 0;
  bool largest_ = true;
};

}  // namespace

void register_topk(OpRegistry& r) { r.add(make_schema<TopKOp>("TopK", 1, 2, 1, 2)); }

}  // namespace tern::ops
