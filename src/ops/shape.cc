// Shape: the input's dims as a 1-D int64 tensor. From opset 15 the optional `start` and
// `end` attributes select dims [start, end) (negative values count from the end; both are
// clamped to [0, rank]). Any input dtype; the input's data is never read.
// Source: ONNX Shape-15 (Shape-13 before).
// Size: the input's element count as an int64 scalar (ONNX Size-13); any input dtype.
#include <algorithm>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ShapeOp final : public Op {
 public:
  ShapeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    if (ctx.opset >= 15) {
      start_ = attrs.get_int("start", 0);
      has_end_ = attrs.has("end");
      end_ = attrs.get_int("end", 0);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const auto [begin, end] = range(static_cast<int64_t>(inputs[0].shape.size()));
    return {TensorType{DType::kInt64, {end - begin}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    if (outputs[0].defined()) write_dims(inputs[0].shape(), outputs[0]);
  }

  // The result is known as soon as the input's shape is: the planner folds it.
  std::optional<std::vector<Tensor>> fold_from_types(
      std::span<const InferInput> inputs) const override {
    const TensorType type = infer(inputs)[0];
    Tensor y = Tensor::empty(type.dtype, type.shape);
    write_dims(inputs[0].shape, y);
    return std::vector<Tensor>{y};
  }

 private:
  void write_dims(const Shape& shape, Tensor& y) const {
    const auto [begin, end] = range(static_cast<int64_t>(shape.size()));
    int64_t* out = y.data<int64_t>();
    for (int64_t d = begin; d < end; ++d) out[d - begin] = shape[d];
  }

  // [begin, end) of the dims to report, clamped as Shape-15 says (empty when end <= start).
  std::pair<int64_t, int64_t> range(int64_t rank) const {
    int64_t begin = start_ < 0 ? start_ + rank : start_;
    int64_t end = has_end_ ? (end_ < 0 ? end_ + rank : end_) : rank;
    begin = std::clamp<int64_t>(begin, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    return {begin, std::max(begin, end)};
  }

  int64_t start_ = 0;
  bool has_end_ = false;
  int64_t end_ = 0;
};

/// Size: element count of the input, a rank-0 int64 tensor. Folded from the input type.
class SizeOp final : public Op {
 public:
  SizeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    (void)checked_numel(inputs[0].shape, where(), "input");
    return {TensorType{DType::kInt64, {}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    if (outputs[0].defined()) *outputs[0].data<int64_t>() = inputs[0].numel();
  }

  std::optional<std::vector<Tensor>> fold_from_types(
      std::span<const InferInput> inputs) const override {
    Tensor y = Tensor::empty(DType::kInt64, {});
    *y.data<int64_t>() = checked_numel(inputs[0].shape, where(), "input");
    return std::vector<Tensor>{y};
  }
};

}  // namespace

void register_shape(OpRegistry& r) {
  r.add(make_schema<ShapeOp>("Shape", 1, 1));
  r.add(make_schema<SizeOp>("Size", 1, 1));
}

}  // namespace tern::ops
