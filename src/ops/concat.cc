// Concat: joins 1..N inputs of equal rank and dtype along `axis` (negative counts from the
// end); every other dim must match. Any dtype; inputs may be strided and may have size 0
// along the axis. Source: ONNX Concat-13.
#include <utility>
#include <vector>

#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ConcatOp final : public Op {
 public:
  ConcatOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.require_int("axis");
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(!inputs.empty() && inputs[0].present, ModelError, "{}: expected at least one input",
               where());
    const InferInput& first = inputs[0];
    const int rank = static_cast<int>(first.shape.size());
    TERN_CHECK(rank > 0, ShapeError, "{}: cannot concatenate scalars (input 0 has rank 0)",
               where());
    const int axis = normalize_axis(axis_, rank, where());
    Shape out = first.shape;
    out[axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InferInput& in = inputs[i];
      TERN_CHECK(in.present, ModelError, "{}: input {} is missing", where(), i);
      check_same_dtype(in.dtype, first.dtype, where(), static_cast<int>(i), "inputs", 0, "inputs");
      bool fits = static_cast<int>(in.shape.size()) == rank;
      for (int d = 0; fits && d < rank; ++d) fits = d == axis || in.shape[d] == first.shape[d];
      TERN_CHECK(fits, ShapeError,
                 "{}: input {} of shape {} does not fit input 0 of shape {} (expected the same "
                 "rank and equal dims except on axis {})",
                 where(), i, shape_str(in.shape), shape_str(first.shape), axis);
      out[axis] = checked_add(out[axis], in.shape[axis], where(), "output dim {}", axis);
    }
    return {TensorType{first.dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    if (!outputs[0].defined()) return;
    // The inputs not already in place, copied in one parallel region (copy_strided_parts:
    // thread t copies the same fraction of every input, the pixels it wrote).
    const std::vector<Part> parts = parts_to_copy(inputs, outputs[0]);
    std::vector<StridedOperand> dst_ops, src_ops;
    for (const Part& part : parts) {
      dst_ops.push_back(StridedOperand::of(part.dst));
      src_ops.push_back(StridedOperand::of(*part.x));
    }
    copy_strided_parts(dst_ops, src_ops, ctx.num_threads);
  }

  // A plan whose inputs all sit in their slices of y (concat-slices) copies nothing: a
  // call that does nothing (run() still cost about 2 us to find that out, UltraFace's
  // score Concat of 4 inputs); otherwise run() each time.
  BoundRun bind(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                const ExecContext&) const override {
    if (!outputs[0].defined() || !parts_to_copy(inputs, outputs[0]).empty()) return {};
    return [](const ExecContext&) {};
  }

 private:
  // An input to copy and its slice of y.
  struct Part {
    const Tensor* x;
    Tensor dst;
  };

  // The inputs that are not already in their slices of y, which the plan may have had
  // their producers write into (concat-slices); empty inputs need nothing.
  std::vector<Part> parts_to_copy(std::span<const Tensor> inputs, Tensor& y) const {
    const int axis = normalize_axis(axis_, y.rank(), where());
    std::vector<Part> parts;
    int64_t offset = 0;
    for (const Tensor& x : inputs) {
      const int64_t len = x.dim(axis);
      if (len == 0) continue;
      Tensor dst = y.slice(axis, offset, offset + len);
      offset += len;
      if (dst.raw_data() == x.raw_data() && dst.is_contiguous() && x.is_contiguous()) continue;
      parts.push_back(Part{&x, std::move(dst)});
    }
    return parts;
  }

  int64_t axis_ = 0;
};

}  // namespace

void register_concat(OpRegistry& r) { r.add(make_schema<ConcatOp>("Concat", 1, 1 << 16)); }

}  // namespace tern::ops
