// CumSum: running sums along one axis (ONNX CumSum-14; CumSum-11 before, same semantics).
// The axis is a scalar int32/int64 input (negative counts from the end); `exclusive`
// leaves out the element itself (the first sum is 0), `reverse` sums from the end.
// Dtypes: float32, float64, int32, int64 (integer sums wrap).
#include "kernels/reference/wrapping.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class CumSumOp final : public Op {
 public:
  CumSumOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    exclusive_ = attrs.get_int("exclusive", 0) != 0;
    reverse_ = attrs.get_int("reverse", 0) != 0;
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64},
                where(), 0, "x");
    check_dtype(inputs[1].dtype, {DType::kInt32, DType::kInt64}, where(), 1, "axis");
    TERN_CHECK(!inputs[0].shape.empty(), ShapeError, "{}: x must have rank >= 1", where());
    return {TensorType{inputs[0].dtype, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    const Tensor x = inputs[0].contiguous();
    const std::vector<int64_t> axis_v = int_values(inputs[1], where(), 1, "axis");
    TERN_CHECK(axis_v.size() == 1, InvalidArgument, "{}: axis must hold one value, got {}", where(),
               axis_v.size());
    const int axis = normalize_axis(axis_v[0], x.rank(), where());
    int64_t outer = 1, inner = 1;
    const int64_t n = x.dim(axis);
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    visit_dtype<float, double, int32_t, int64_t>(x.dtype(), where(), [&]<typename T>() {
      const T* src = x.data<T>();
      T* out = y.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          T acc = T{0};
          for (int64_t s = 0; s < n; ++s) {
            const int64_t k = reverse_ ? n - 1 - s : s;
            const int64_t off = (o * n + k) * inner + i;
            if (exclusive_) {
              out[off] = acc;
              acc = kernels::ref::wrapping_add(acc, src[off]);
            } else {
              acc = kernels::ref::wrapping_add(acc, src[off]);
              out[off] = acc;
            }
          }
        }
      }
    });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

}  // namespace

void register_cumsum(OpRegistry& r) { r.add(make_schema<CumSumOp>("CumSum", 2, 2)); }

}  // namespace tern::ops
