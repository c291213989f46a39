// Ops that only change the shape: Reshape, Flatten, Squeeze, Unsqueeze. Each returns a
// view of its input that shares storage (returns_view()); a non-contiguous input is made
// contiguous first (the only copy). Any dtype.
// Sources: ONNX Reshape-14 (a 0 in `shape` copies the input dim unless allowzero = 1;
// one -1 is inferred), Flatten-13 (axis in [-r, r]), Squeeze-13 / Unsqueeze-13 (`axes`
// is an attribute before opset 13 and an input from 13).
#include <algorithm>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// Base for the view ops: run() computes the output shape as infer() does and returns
/// a reshaped view of the (contiguous) input.
class ViewOp : public Op {
 public:
  using Op::Op;
  bool returns_view() const override { return true; }
  bool reshapes_input() const override { return true; }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    if (outputs.empty()) return;
    const auto infer_in = infer_inputs_from(inputs);
    const Shape shape = infer(infer_in)[0].shape;
    const Tensor& x = inputs[0];
    // An empty tensor has nothing to share (and Tensor::is_contiguous() rejects some
    // zero-size strides); give it a fresh empty tensor.
    outputs[0] = x.numel() == 0 ? Tensor::empty(x.dtype(), shape) : x.contiguous().reshape(shape);
  }
};

class ReshapeOp final : public ViewOp {
 public:
  ReshapeOp(const Attrs& attrs, const OpContext& ctx) : ViewOp(ctx) {
    allow_zero_ = ctx.opset >= 14 && attrs.get_int("allowzero", 0) != 0;
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& data = inputs[0];
    const std::vector<int64_t> spec = int_values(require_value(inputs, 1), where(), 1, "shape");
    Shape out(spec.size());
    int infer_at = -1;
    bool has_zero = false;
    for (size_t i = 0; i < spec.size(); ++i) {
      const int64_t d = spec[i];
      if (d == -1) {
        TERN_CHECK(infer_at < 0, ShapeError, "{}: shape {} has more than one -1", where(),
                   shape_str(spec));
        infer_at = static_cast<int>(i);
        out[i] = 1;
      } else if (d == 0 && !allow_zero_) {
        TERN_CHECK(i < data.shape.size(), ShapeError,
                   "{}: shape {} has a 0 (copy the input dim) at index {}, but the input {} has "
                   "rank {}",
                   where(), shape_str(spec), i, shape_str(data.shape), data.shape.size());
        out[i] = data.shape[i];
      } else {
        TERN_CHECK(d >= 0, ShapeError, "{}: shape {} has an invalid dim {} (expected >= -1)",
                   where(), shape_str(spec), d);
        has_zero = has_zero || d == 0;
        out[i] = d;
      }
    }
    const int64_t numel = checked_numel(data.shape, where(), "input");
    if (infer_at >= 0) {
      TERN_CHECK(!has_zero, ShapeError,
                 "{}: shape {} has both -1 and a 0 with allowzero = 1 (expected at most one of "
                 "them)",
                 where(), shape_str(spec));
      const int64_t known = checked_numel(out, where(), "requested");
      TERN_CHECK(known != 0 && numel % known == 0, ShapeError,
                 "{}: cannot reshape the input of shape {} ({} elements) to {}: the -1 cannot be "
                 "inferred",
                 where(), shape_str(data.shape), numel, shape_str(spec));
      out[infer_at] = numel / known;
    }
    const int64_t out_numel = checked_numel(out, where());
    TERN_CHECK(out_numel == numel, ShapeError,
               "{}: cannot reshape the input of shape {} ({} elements) to {} ({} elements); "
               "expected equal element counts",
               where(), shape_str(data.shape), numel, shape_str(out), out_numel);
    return {TensorType{data.dtype, out}};
  }

 private:
  bool allow_zero_ = false;
};

class FlattenOp final : public ViewOp {
 public:
  FlattenOp(const Attrs& attrs, const OpContext& ctx) : ViewOp(ctx) {
    axis_ = attrs.get_int("axis", 1);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    const int axis = normalize_axis(axis_, static_cast<int>(x.shape.size()), where(), "axis", true);
    const Shape outer(x.shape.begin(), x.shape.begin() + axis);
    const Shape inner(x.shape.begin() + axis, x.shape.end());
    return {TensorType{
        x.dtype,
        {checked_numel(outer, where(), "leading"), checked_numel(inner, where(), "trailing")}}};
  }

 private:
  int64_t axis_ = 1;
};

class SqueezeOp final : public ViewOp {
 public:
  SqueezeOp(const Attrs& attrs, const OpContext& ctx) : ViewOp(ctx) {
    if (ctx.opset < 13) axes_attr_ = attrs.get_ints("axes", {});
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    const int rank = static_cast<int>(x.shape.size());
    std::vector<int64_t> axes = axes_attr_;
    if (context().opset >= 13 && has_input(inputs, 1)) {
      axes = int_values(require_value(inputs, 1), where(), 1, "axes");
    }
    // Absent or empty axes squeeze every size-1 dim (as ONNX Runtime does).
    std::vector<bool> drop(rank, false);
    if (!axes.empty()) {
      for (int a : normalize_axes(axes, rank, where())) {
        TERN_CHECK(x.shape[a] == 1, ShapeError,
                   "{}: cannot squeeze axis {} of the input of shape {}: expected size 1, but it "
                   "is {}",
                   where(), a, shape_str(x.shape), x.shape[a]);
        drop[a] = true;
      }
    } else {
      for (int d = 0; d < rank; ++d) drop[d] = x.shape[d] == 1;
    }
    Shape out;
    for (int d = 0; d < rank; ++d) {
      if (!drop[d]) out.push_back(x.shape[d]);
    }
    return {TensorType{x.dtype, out}};
  }

 private:
  std::vector<int64_t> axes_attr_;
};

class UnsqueezeOp final : public ViewOp {
 public:
  UnsqueezeOp(const Attrs& attrs, const OpContext& ctx) : ViewOp(ctx) {
    if (ctx.opset < 13) axes_attr_ = attrs.require_ints("axes");
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    std::vector<int64_t> axes = axes_attr_;
    if (context().opset >= 13) {
      TERN_CHECK(has_input(inputs, 1), ModelError, "{}: input 1 (axes) is required from opset 13",
                 where());
      axes = int_values(require_value(inputs, 1), where(), 1, "axes");
    }
    // Axes index the output, whose rank is the input's plus one per axis.
    const int out_rank = static_cast<int>(x.shape.size() + axes.size());
    std::vector<bool> is_new(out_rank, false);
    for (int a : normalize_axes(axes, out_rank, where())) is_new[a] = true;
    Shape out(out_rank);
    size_t next = 0;
    for (int d = 0; d < out_rank; ++d) out[d] = is_new[d] ? 1 : x.shape[next++];
    return {TensorType{x.dtype, out}};
  }

 private:
  std::vector<int64_t> axes_attr_;
};

}  // namespace

void register_reshape(OpRegistry& r) {
  r.add(make_schema<ReshapeOp>("Reshape", 2, 2));
  r.add(make_schema<FlattenOp>("Flatten", 1, 1));
  r.add(make_schema<SqueezeOp>("Squeeze", 1, 2));
  r.add(make_schema<UnsqueezeOp>("Unsqueeze", 1, 2));
}

}  // namespace tern::ops
