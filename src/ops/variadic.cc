// Variadic elementwise ops over 1..N inputs with multidirectional broadcasting: Max, Min,
// Sum. Sources: ONNX Max-13, Min-13 (float32; int32/int64 from opset 12; a NaN in any
// input gives NaN), Sum-13 (float32). The output is folded pairwise: y = x0 op x1, then
// y = y op xk, each step one pass of the broadcast iterator.
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::BinaryKind;

class VariadicOp final : public Op {
 public:
  VariadicOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    (void)attrs;
    if (ctx.op_type == "Max") {
      kind_ = BinaryKind::kMax;
    } else if (ctx.op_type == "Min") {
      kind_ = BinaryKind::kMin;
    } else if (ctx.op_type == "Sum") {
      kind_ = BinaryKind::kAdd;
    } else {
      TERN_THROW(UnsupportedOpError, "{}: not a variadic op", where());
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(!inputs.empty(), ModelError, "{}: expected at least one input", where());
    const DType t = inputs[0].dtype;
    if (kind_ != BinaryKind::kAdd && context().opset >= 12) {
      check_dtype(t, {DType::kFloat32, DType::kInt32, DType::kInt64}, where(), 0, "data_0");
    } else {
      check_dtype(t, {DType::kFloat32}, where(), 0, "data_0");
    }
    std::vector<Shape> shapes;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TERN_CHECK(inputs[i].present, ModelError, "{}: input {} is missing", where(), i);
      check_same_dtype(inputs[i].dtype, t, where(), static_cast<int>(i), "data", 0, "data_0");
      shapes.push_back(inputs[i].shape);
    }
    return {TensorType{t, broadcast_shapes(shapes, where())}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    if (inputs.size() == 1) {
      const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(inputs[0])};
      const int es = static_cast<int>(dtype_size(y.dtype()));
      it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
        kernels::ref::copy(n, es, p[1], s[1], p[0], s[0]);
      });
      return;
    }
    visit_dtype<float, int32_t, int64_t>(y.dtype(), where(), [&]<typename T>() {
      for (size_t k = 1; k < inputs.size(); ++k) {
        // Step 1 reads x0 and x1; later steps read y itself (same strides, in place).
        const Tensor& lhs = k == 1 ? inputs[0] : y;
        const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(lhs),
                                   StridedOperand::of(inputs[k])};
        it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
          kernels::ref::binary<T>(kind_, n, reinterpret_cast<const T*>(p[1]), s[1],
                                  reinterpret_cast<const T*>(p[2]), s[2],
                                  reinterpret_cast<T*>(p[0]));
        });
      }
    });
  }

 private:
  BinaryKind kind_ = BinaryKind::kAdd;
};

}  // namespace

void register_variadic(OpRegistry& r) {
  for (const char* name : {"Max", "Min", "Sum"}) {
    r.add(make_schema<VariadicOp>(name, 1, 1 << 16));
  }
}

}  // namespace tern::ops
