// Range: the 1-D sequence start, start + delta, ... up to (excluding) limit, of
// max(ceil((limit - start) / delta), 0) elements (ONNX Range-11). start, limit and delta
// are scalars of one dtype: float32, float64, int16, int32 or int64. delta == 0 is an
// InvalidArgument; the output length depends on the input values. Integer ranges are
// computed exactly (count in __int128, elements with wrapping arithmetic, which is exact
// because every element is in range); a count above 2^50 is a ShapeError.
#include <cmath>
#include <type_traits>

#include "kernels/reference/wrapping.h"
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
      if constexpr (std::is_floating_point_v<T>) {
        // start + i * delta, as ONNX's reference computes it (no accumulated rounding).
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = start + static_cast<T>(i) * delta;
      } else {
        // Each element lies between start and limit, so the wrapped result is exact.
        using kernels::ref::wrapping_add;
        using kernels::ref::wrapping_mul;
        for (int64_t i = 0; i < y.numel(); ++i) {
          out[i] = wrapping_add(start, wrapping_mul(static_cast<T>(i), delta));
        }
      }
    });
  }

 private:
  template <typename T>
  static T first(const Tensor& t) {
    return *t.contiguous().data<T>();
  }

  // The element count max(ceil((limit - start) / delta), 0); ShapeError above 2^50.
  template <typename T>
  int64_t count(const Tensor& start_t, const Tensor& limit_t, const Tensor& delta_t) const {
    constexpr int64_t kMaxCount = int64_t{1} << 50;
    if constexpr (std::is_floating_point_v<T>) {
      const double start = static_cast<double>(first<T>(start_t));
      const double limit = static_cast<double>(first<T>(limit_t));
      const double delta = static_cast<double>(first<T>(delta_t));
      TERN_CHECK(delta != 0, InvalidArgument, "{}: delta must not be 0", where());
      const double n = std::ceil((limit - start) / delta);
      TERN_CHECK(!(n > static_cast<double>(kMaxCount)), ShapeError,
                 "{}: the range has too many elements ({}), at most 2^50 supported", where(), n);
      return n > 0 ? static_cast<int64_t>(n) : 0;
    } else {
      // Exact: the difference of two int64 values fits in __int128.
      const __int128 start = first<T>(start_t);
      const __int128 limit = first<T>(limit_t);
      const __int128 delta = first<T>(delta_t);
      TERN_CHECK(delta != 0, InvalidArgument, "{}: delta must not be 0", where());
      const __int128 span = limit - start;
      if (span == 0 || (span > 0) != (delta > 0)) return 0;
      // ceil(span / delta) with span and delta of the same sign.
      const __int128 n = delta > 0 ? (span + delta - 1) / delta : (span + delta + 1) / delta;
      TERN_CHECK(n <= kMaxCount, ShapeError,
                 "{}: the range has too many elements ({}), at most 2^50 supported", where(),
                 static_cast<double>(n));
      return static_cast<int64_t>(n);
    }
  }
};

}  // namespace

void register_range(OpRegistry& r) { r.add(make_schema<RangeOp>("Range", 3, 3)); }

}  // namespace tern::ops
