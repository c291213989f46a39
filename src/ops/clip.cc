// Clip: y = min(max(x, min), max).
// Opset < 11 (ONNX Clip-6): `min` and `max` are float attributes, defaulting to the
// float range (numeric_limits<float>::lowest() / max(), so infinities are clipped to it).
// Opset >= 11 (Clip-11, Clip-12, Clip-13): optional scalar inputs 1 (min) and 2 (max) of
// the input's dtype; missing bounds are -inf / +inf for float (nothing is clipped) and the
// type's lowest / highest value for integers. When min > max every output is max
// (Clip-13). Dtypes: float32; int8, uint8, int32, int64 from opset 12.
#include <limits>

#include "kernels/reference/elementwise.h"
#include "ops/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ClipOp final : public Op {
 public:
  ClipOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    if (ctx.opset < 11) {
      min_attr_ = attrs.get_float("min", std::numeric_limits<float>::lowest());
      max_attr_ = attrs.get_float("max", std::numeric_limits<float>::max());
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    if (context().opset >= 12) {
      check_dtype(x.dtype,
                  {DType::kFloat32, DType::kInt8, DType::kUint8, DType::kInt32, DType::kInt64},
                  where(), 0, "input");
    } else {
      check_dtype(x.dtype, {DType::kFloat32}, where(), 0, "input");
    }
    if (context().opset < 11) {
      TERN_CHECK(inputs.size() == 1, ModelError,
                 "{}: opset {} takes min and max as attributes, but the node has {} inputs",
                 where(), context().opset, inputs.size());
    }
    for (size_t i = 1; i < inputs.size() && i <= 2; ++i) {
      if (!inputs[i].present) continue;
      const char* name = i == 1 ? "min" : "max";
      check_same_dtype(inputs[i].dtype, x.dtype, where(), static_cast<int>(i), name, 0, "input");
      TERN_CHECK(shape_numel(inputs[i].shape) == 1, ShapeError,
                 "{}: input {} ({}) must be a scalar, but got shape {}", where(), i, name,
                 shape_str(inputs[i].shape));
    }
    return {TensorType{x.dtype, x.shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    run_unary<float, int8_t, uint8_t, int32_t, int64_t>(
        inputs[0], outputs[0], where(), ctx.num_threads, [&]<typename T>() {
          T lo = std::numeric_limits<T>::lowest();
          T hi = std::numeric_limits<T>::max();
          if constexpr (std::is_same_v<T, float>) {
            lo = context().opset < 11 ? min_attr_ : -std::numeric_limits<float>::infinity();
            hi = context().opset < 11 ? max_attr_ : std::numeric_limits<float>::infinity();
          }
          if (has_input(inputs, 1)) lo = bound<T>(inputs[1]);
          if (has_input(inputs, 2)) hi = bound<T>(inputs[2]);
          return [lo, hi](int64_t n, const T* x, int64_t sx, T* y) {
            kernels::ref::clip<T>(n, x, sx, lo, hi, y);
          };
        });
  }

 private:
  // The value of a 1-element bound tensor (infer() checked dtype and size).
  template <typename T>
  T bound(const Tensor& t) const {
    TERN_CHECK(t.dtype() == dtype_of<T>() && t.numel() == 1, InvalidArgument,
               "{}: expected a 1-element {} bound, but got {} of shape {}", where(),
               dtype_name(dtype_of<T>()), dtype_name(t.dtype()), shape_str(t.shape()));
    return *t.data<T>();
  }

  float min_attr_ = 0.f;  ///< opset < 11 only
  float max_attr_ = 0.f;
};

}  // namespace

void register_clip(OpRegistry& r) { r.add(make_schema<ClipOp>("Clip", 1, 3)); }

}  // namespace tern::ops
