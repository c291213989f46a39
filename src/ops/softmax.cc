// Softmax, LogSoftmax and Hardmax (ONNX Softmax-1/11/13, LogSoftmax-1/11/13,
// Hardmax-1/11/13), float32. Before opset 13 all three coerce X to 2-D at `axis` (default
// 1); from 13 they work along `axis` only (default -1).
// Kernel: kernels/reference/softmax.h.
#include "kernels/reference/softmax.h"

#include "ops/op_args.h"
#include "kernels/softmax/softmax.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// Softmax / LogSoftmax of X (any rank >= 1), output of the same shape.
///   opset < 13: X is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] (axis
///               default 1) and each row is normalized;
///   opset >= 13: normalized along `axis` only (default -1).
/// axis may be negative (counts from the end); ShapeError when outside [-rank, rank - 1]
/// (opset < 13 also accepts axis == rank, an empty coerced row set, as the spec's
/// [-r, r] range).
class SoftmaxOp : public Op {
 public:
  SoftmaxOp(const Attrs& a, const OpContext& ctx, bool log, bool hard = false)
      : Op(ctx), axis_(a.get_int("axis", ctx.opset >= 13 ? -1 : 1)), log_(log), hard_(hard) {}

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "input");
    resolve_axis(inputs[0].shape);
    return {TensorType{DType::kFloat32, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const Shape& s = x.shape();
    const int axis = resolve_axis(s);
    int64_t outer = 1, axis_len = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= s[d];
    if (ctx_.opset < 13) {
      for (size_t d = axis; d < s.size(); ++d) axis_len *= s[d];
    } else {
      axis_len = s[axis];
      for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
    }
    if (axis_len == 0 || inner == 0) return;
    const float* xd = x.data<float>();
    float* yd = outputs[0].data<float>();
    // One kernel call per thread: a detection head's [1, 4420, 2] softmax has 4420 rows of
    // 2, where a call per row cost as much as the row.
    parallel_ranges(outer, ctx.num_threads, [&](int64_t begin, int64_t end) {
      if (hard_) {
        kernels::ref::f32_hardmax(xd, yd, begin, end, axis_len, inner);
      } else {
        kernels::f32_softmax(xd, yd, begin, end, axis_len, inner, log_);
      }
    });
  }

 private:
  // opset < 13 also accepts axis == rank (the spec's [-r, r] for the 2-D coercion).
  int resolve_axis(const Shape& s) const {
    TERN_CHECK(!s.empty(), ShapeError, "{}: expected an input of rank >= 1, but got a scalar",
               where());
    return normalize_axis(axis_, static_cast<int>(s.size()), where(), "axis", ctx_.opset < 13);
  }

  int64_t axis_;
  bool log_;
  bool hard_;
};

class SoftmaxPlainOp final : public SoftmaxOp {
 public:
  SoftmaxPlainOp(const Attrs& a, const OpContext& ctx) : SoftmaxOp(a, ctx, false) {}
};

class LogSoftmaxOp final : public SoftmaxOp {
 public:
  LogSoftmaxOp(const Attrs& a, const OpContext& ctx) : SoftmaxOp(a, ctx, true) {}
};

/// Hardmax: 1 at the first maximum of each row (same rows as Softmax), 0 elsewhere.
class HardmaxOp final : public SoftmaxOp {
 public:
  HardmaxOp(const Attrs& a, const OpContext& ctx) : SoftmaxOp(a, ctx, false, true) {}
};

}  // namespace

void register_softmax(OpRegistry& r) {
  r.add(make_schema<SoftmaxPlainOp>("Softmax", 1, 1));
  r.add(make_schema<LogSoftmaxOp>("LogSoftmax", 1, 1));
  r.add(make_schema<HardmaxOp>("Hardmax", 1, 1));
}

}  // namespace tern::ops
