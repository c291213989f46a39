// Expand: broadcasts the input to the shape given by the int64 `shape` input, with
// multidirectional broadcasting (a 1 in `shape` keeps the input's dim; the output rank
// is the larger of the two). Any dtype. Source: ONNX Expand-13.
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ExpandOp final : public Op {
 public:
  ExpandOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Tensor& shape_t = require_value(inputs, 1);
    check_dtype(shape_t.dtype(), {DType::kInt64}, where(), 1, "shape");
    const Shape shape = int_values(shape_t, where(), 1, "shape");
    for (int64_t d : shape) {
      TERN_CHECK(d >= 0, ShapeError, "{}: shape {} has a negative dim", where(), shape_str(shape));
    }
    const Shape out = broadcast_shape(inputs[0].shape, shape, where());
    checked_numel(out, where());
    return {TensorType{inputs[0].dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    copy_strided(StridedOperand::of(y), StridedOperand::of(inputs[0]), ctx.num_threads);
  }
};

}  // namespace

void register_expand(OpRegistry& r) { r.add(make_schema<ExpandOp>("Expand", 2, 2)); }

}  // namespace tern::ops
