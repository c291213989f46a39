// Variadic elementwise ops over 1..N inputs with multidirectional broadcasting: Max, Min,
// Sum, Mean. Sources: ONNX Max-13, Min-13 (float32, float64, float16, bfloat16; every
// integer type from opset 12; a NaN in any input gives NaN), Sum-13 and Mean-13 (float32,
// float64, float16, bfloat16). The output is folded pairwise: y = x0 op x1, then
// y = y op xk, each step one pass of the broadcast iterator; Mean then divides the sum by
// the number of inputs. Half types compute each step in float and round once per step.
#include "base/dtype_dispatch.h"
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/elementwise.h"
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
    } else if (ctx.op_type == "Mean") {
      kind_ = BinaryKind::kAdd;
      mean_ = true;
    } else {
      TERN_THROW(UnsupportedOpError, "{}: not a variadic op", where());
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(!inputs.empty(), ModelError, "{}: expected at least one input", where());
    const DType t = inputs[0].dtype;
    if (kind_ != BinaryKind::kAdd && context().opset >= 12) {
      check_dtype(t,
                  {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                   DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUint8,
                   DType::kUint16, DType::kUint32, DType::kUint64},
                  where(), 0, "data_0");
    } else {
      check_dtype(t, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}, where(),
                  0, "data_0");
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
      copy_strided(StridedOperand::of(y), StridedOperand::of(inputs[0]), ctx.num_threads);
      return;
    }
    visit_dtype<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                uint16_t, uint32_t, uint64_t>(y.dtype(), where(), [&]<typename T>() {
      for (size_t k = 1; k < inputs.size(); ++k) {
        // Step 1 reads x0 and x1; later steps read y itself (same strides, in place).
        const Tensor& lhs = k == 1 ? inputs[0] : y;
        const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(lhs),
                                   StridedOperand::of(inputs[k])};
        it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
          binary_run<T>(kind_, n, reinterpret_cast<const T*>(p[1]), s[1],
                        reinterpret_cast<const T*>(p[2]), s[2], reinterpret_cast<T*>(p[0]));
        });
      }
      if constexpr (!is_integer_element_v<T>) {
        if (mean_) divide_by_count<T>(y, static_cast<double>(inputs.size()), ctx.num_threads);
      }
    });
  }

 private:
  // y /= count, in place: y op= (a broadcast tensor holding count) through the same kernel.
  template <typename T>
  void divide_by_count(Tensor& y, double count, int num_threads) const {
    const T c = to_element<T>(count);
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(y)};
    it.parallel_for_each(num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
      binary_run<T>(BinaryKind::kDiv, n, reinterpret_cast<const T*>(p[1]), s[1], &c, 0,
                    reinterpret_cast<T*>(p[0]));
    });
  }

  template <typename T>
  static T to_element(double v) {
    T out{};
    kernels::ref::cast(1, DType::kFloat64, &v, 1, dtype_of<T>(), &out);
    return out;
  }

  BinaryKind kind_ = BinaryKind::kAdd;
  bool mean_ = false;
};

}  // namespace

void register_variadic(OpRegistry& r) {
  for (const char* name : {"Max", "Min", "Sum", "Mean"}) {
    r.add(make_schema<VariadicOp>(name, 1, 1 << 16));
  }
}

}  // namespace tern::ops
