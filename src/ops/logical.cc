// Logical ops on bool tensors: And, Or, Xor (multidirectional broadcasting) and Not.
// Sources: ONNX And-7, Or-7, Xor-7, Not-1. Before opset 7, And/Or/Xor broadcast only with
// broadcast = 1 (B's dims matching A's trailing dims, which numpy broadcasting covers; an
// explicit `axis` is not supported).
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::LogicalKind;

/// y = A op B for bool A and B; y bool of the broadcast shape. Throws UnsupportedOpError
/// for a non-bool input and ShapeError when A and B do not broadcast.
class LogicalOp final : public Op {
 public:
  LogicalOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const std::string& t = ctx.op_type;
    if (t == "And") {
      kind_ = LogicalKind::kAnd;
    } else if (t == "Or") {
      kind_ = LogicalKind::kOr;
    } else if (t == "Xor") {
      kind_ = LogicalKind::kXor;
    } else {
      TERN_THROW(UnsupportedOpError, "{}: not a logical op", where());
    }
    TERN_CHECK(!(ctx.opset < 7 && attrs.has("axis")), UnsupportedOpError,
               "{}: the legacy 'axis' attribute (opset {}) is not supported; only numpy-style "
               "trailing-dim broadcasting is",
               where(), ctx.opset);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kBool}, where(), 0, "A");
    check_dtype(inputs[1].dtype, {DType::kBool}, where(), 1, "B");
    return {TensorType{DType::kBool, broadcast_shape(inputs[0].shape, inputs[1].shape, where())}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(inputs[0]),
                               StridedOperand::of(inputs[1])};
    it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
      kernels::ref::logical(kind_, n, reinterpret_cast<const bool*>(p[1]), s[1],
                            reinterpret_cast<const bool*>(p[2]), s[2],
                            reinterpret_cast<bool*>(p[0]));
    });
  }

 private:
  LogicalKind kind_ = LogicalKind::kAnd;
};

/// y = !X for a bool X (any strides); throws UnsupportedOpError for another dtype.
class NotOp final : public Op {
 public:
  NotOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kBool}, where(), 0, "X");
    return {TensorType{DType::kBool, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(inputs[0])};
    it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
      kernels::ref::logical_not(n, reinterpret_cast<const bool*>(p[1]), s[1],
                                reinterpret_cast<bool*>(p[0]));
    });
  }
};

}  // namespace

void register_logical(OpRegistry& r) {
  for (const char* name : {"And", "Or", "Xor"}) r.add(make_schema<LogicalOp>(name, 2, 2));
  r.add(make_schema<NotOp>("Not", 1, 1));
}

}  // namespace tern::ops
