// Where: y = condition ? X : Y elementwise, with multidirectional (numpy) broadcasting of
// all three inputs. Source: ONNX Where-16 (condition bool; X and Y of one dtype, any tern
// dtype; Where-9 is the same with fewer dtypes).
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// Where(condition, X, Y). Throws UnsupportedOpError for a non-bool condition,
/// InvalidArgument when X and Y differ in dtype and ShapeError when the three shapes do
/// not broadcast.
class WhereOp final : public Op {
 public:
  WhereOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kBool}, where(), 0, "condition");
    check_same_dtype(inputs[2].dtype, inputs[1].dtype, where(), 2, "Y", 1, "X");
    const Shape shapes[] = {inputs[0].shape, inputs[1].shape, inputs[2].shape};
    return {TensorType{inputs[1].dtype, broadcast_shapes(shapes, where())}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(inputs[0]),
                               StridedOperand::of(inputs[1]), StridedOperand::of(inputs[2])};
    const int es = static_cast<int>(dtype_size(y.dtype()));
    it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
      kernels::ref::select(n, es, reinterpret_cast<const bool*>(p[1]), s[1], p[2], s[2], p[3], s[3],
                           p[0]);
    });
  }
};

}  // namespace

void register_where(OpRegistry& r) { r.add(make_schema<WhereOp>("Where", 3, 3)); }

}  // namespace tern::ops
