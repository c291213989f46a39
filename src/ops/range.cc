// Range: the 1-D sequence start, start + delta, ... up to (excluding) limit, of
// max(ceil((limit - start) / delta), 0) elements (ONNX Range-11). start, limit and delta
// are scalars of one dtype: float32, float64, int16, int32 or int64. delta == 0 is an
// InvalidArgument; the output length depends on the input values.
#include <cmath>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class RangeOp final : public Op {
 public:
  RangeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs,
                 {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64},
                 where(), {"start", "limit", "delta"});
    for (int i = 0; i < 3; ++i) {
      check_same_dtype(inputs[i].dtype, inputs[0].dtype, where(), i, "start/limit/delta", 0,
                       "start");
      TERN_CHECK(checked_numel(inputs[i].shape, where(), "input") == 1, ShapeError,
                 "{}: input {} must be a scalar, got shape {}", where(), i,
                 shape_str(inputs[i].shape));
    }
    int64_t n = 0;
    visit_dtype<float, double, int16_t, int32_t, int64_t>(
        inputs[0].dtype, where(), [&]<typename T>() {
          n = count<T>(require_value(inputs, 0), require_value(inputs, 1),
                       require_value(inputs, 2));
        });
    return {TensorType{inputs[0].dtype, {n}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    visit_dtype<float, double, int16_t, int32_t, int64_t>(y.dtype(), where(), [&]<typename T>() {
      const T start = first<T>(inputs[0]);
      const T delta = first<T>(inputs[2]);
      T* out = y.data<T>();
      // start + i * delta, as ONNX's reference computes it (no accumulated rounding).
      for (int64_t i = 0; i < y.numel(); ++i) {
        out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      }
    });
  }

 private:
  template <typename T>
  static T first(const Tensor& t) {
    return *t.contiguous().data<T>();
  }

  template <typename T>
  int64_t count(const Tensor& start_t, const Tensor& limit_t, const Tensor& delta_t) const {
    const double start = static_cast<double>(first<T>(start_t));
    const double limit = static_cast<double>(first<T>(limit_t));
    const double delta = static_cast<double>(first<T>(delta_t));
    TERN_CHECK(delta != 0, InvalidArgument, "{}: delta must not be 0", where());
    const double n = std::ceil((limit - start) / delta);
    TERN_CHECK(!(n > 1e15), ShapeError, "{}: the range has too many elements ({})", where(), n);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
};

}  // namespace

void register_range(OpRegistry& r) { r.add(make_schema<RangeOp>("Range", 3, 3)); }

}  // namespace tern::ops
