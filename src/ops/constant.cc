// Constant and ConstantOfShape.
// Constant (ONNX Constant-13): exactly one of the attributes `value` (a tensor),
// `value_float`, `value_floats`, `value_int`, `value_ints` (opset >= 12) gives the
// output; `sparse_value`, `value_string` and `value_strings` are UnsupportedOpError.
// The output is a view of the attribute's tensor (returns_view(); read-only).
// ConstantOfShape (ONNX ConstantOfShape-9): a tensor of the shape given by the int64
// input, filled with the 1-element `value` tensor (default float32 0).
#include <array>

#include "kernels/reference/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ConstantOp final : public Op {
 public:
  ConstantOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    static constexpr std::array<const char*, 8> kNames = {
        "value",      "value_float",  "value_floats", "value_int",
        "value_ints", "sparse_value", "value_string", "value_strings"};
    int count = 0;
    for (const char* n : kNames) count += attrs.has(n) ? 1 : 0;
    TERN_CHECK(count == 1, ModelError,
               "{}: expected exactly one of the attributes value, value_float, value_floats, "
               "value_int, value_ints, sparse_value, value_string, value_strings, but got {}",
               where(), count);
    for (const char* n : {"sparse_value", "value_string", "value_strings"}) {
      TERN_CHECK(!attrs.has(n), UnsupportedOpError,
                 "{}: attribute '{}' is not supported (supported: value, value_float, "
                 "value_floats, value_int, value_ints)",
                 where(), n);
    }
    if (attrs.has("value")) {
      value_ = attrs.require_tensor("value");
    } else if (attrs.has("value_float")) {
      value_ = Tensor::scalar_f32(attrs.require_float("value_float"));
    } else if (attrs.has("value_floats")) {
      const std::vector<float> v = attrs.get_floats("value_floats", {});
      value_ = Tensor::from_vector(v, {static_cast<int64_t>(v.size())});
    } else if (attrs.has("value_int")) {
      value_ = Tensor::scalar_i64(attrs.require_int("value_int"));
    } else {
      const std::vector<int64_t> v = attrs.get_ints("value_ints", {});
      value_ = Tensor::from_vector_i64(v, {static_cast<int64_t>(v.size())});
    }
    TERN_CHECK(value_.defined(), ModelError, "{}: attribute 'value' holds no tensor", where());
  }

  bool returns_view() const override { return true; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    (void)inputs;
    return {TensorType{value_.dtype(), value_.shape()}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)inputs;
    (void)ctx;
    if (!outputs.empty()) outputs[0] = value_;
  }

 private:
  Tensor value_;
};

class ConstantOfShapeOp final : public Op {
 public:
  ConstantOfShapeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    if (attrs.has("value")) {
      value_ = attrs.require_tensor("value");
      TERN_CHECK(value_.numel() == 1, ModelError,
                 "{}: attribute 'value' must hold one element, but has shape {}", where(),
                 shape_str(value_.shape()));
      value_ = value_.contiguous();
    } else {
      value_ = Tensor::scalar_f32(0.f);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Tensor& shape_t = require_value(inputs, 0);
    check_dtype(shape_t.dtype(), {DType::kInt64}, where(), 0, "input");
    const Shape shape = int_values(shape_t, where(), 0, "input");
    for (int64_t d : shape) {
      TERN_CHECK(d >= 0, ShapeError, "{}: shape {} has a negative dim", where(), shape_str(shape));
    }
    checked_numel(shape, where());
    return {TensorType{value_.dtype(), shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)inputs;
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    kernels::ref::fill(y.numel(), static_cast<int>(dtype_size(y.dtype())), value_.raw_data(),
                       y.raw_data());
  }

 private:
  Tensor value_;
};

}  // namespace

void register_constant(OpRegistry& r) {
  r.add(make_schema<ConstantOp>("Constant", 0, 0));
  r.add(make_schema<ConstantOfShapeOp>("ConstantOfShape", 1, 1));
}

}  // namespace tern::ops
