// Slice: numpy-style start:end:step along chosen axes. Opset < 10 (ONNX Slice-1): starts,
// ends and axes are attributes, steps are 1. Opset >= 10 (Slice-10, Slice-13): inputs
// starts, ends, optional axes, optional steps (int32 or int64), negative steps allowed.
// Per axis of size d: negative starts/ends get d added; then start is clamped to [0, d]
// (step > 0) or [0, d - 1] (step < 0), end to [0, d] (step > 0) or [-1, d - 1] (step < 0).
// Any dtype; the output is a contiguous copy.
#include <algorithm>
#include <limits>

#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// The resolved slice of one input dim.
struct DimSlice {
  int64_t start = 0;
  int64_t step = 1;
  int64_t size = 0;  ///< output dim
};

class SliceOp final : public Op {
 public:
  SliceOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    if (ctx.opset < 10) {
      starts_attr_ = attrs.require_ints("starts");
      ends_attr_ = attrs.require_ints("ends");
      has_axes_attr_ = attrs.has("axes");
      axes_attr_ = attrs.get_ints("axes", {});
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const std::vector<DimSlice> dims = resolve(inputs);
    Shape out(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) out[d] = dims[d].size;
    return {TensorType{inputs[0].dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    const Tensor& x = inputs[0];
    const std::vector<DimSlice> dims = resolve(infer_inputs_from(inputs));
    // A strided (possibly reversed) view of x: element 0 at the starts, strides scaled by
    // the steps. Tensor::slice only does positive steps, so build the operand directly.
    Shape shape(dims.size());
    Shape strides(dims.size());
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      shape[d] = dims[d].size;
      // A dim of size <= 1 never steps (and a huge step must not overflow).
      strides[d] = dims[d].size > 1 ? x.strides()[d] * dims[d].step : 0;
      if (dims[d].size > 0) offset += dims[d].start * x.strides()[d];
    }
    const int es = static_cast<int>(dtype_size(x.dtype()));
    StridedOperand src;
    src.data = const_cast<char*>(static_cast<const char*>(x.raw_data())) + offset * es;
    src.shape = shape;
    src.strides = strides;
    src.elem_size = es;
    copy_strided(StridedOperand::of(y), src, ctx.num_threads);
  }

 private:
  std::vector<DimSlice> resolve(std::span<const InferInput> inputs) const {
    const Shape& in = inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    std::vector<int64_t> starts = starts_attr_;
    std::vector<int64_t> ends = ends_attr_;
    std::vector<int64_t> axes = axes_attr_;
    std::vector<int64_t> steps;
    bool has_axes = has_axes_attr_;
    if (context().opset >= 10) {
      starts = int_values(require_value(inputs, 1), where(), 1, "starts");
      ends = int_values(require_value(inputs, 2), where(), 2, "ends");
      has_axes = has_input(inputs, 3);
      if (has_axes) axes = int_values(require_value(inputs, 3), where(), 3, "axes");
      if (has_input(inputs, 4)) steps = int_values(require_value(inputs, 4), where(), 4, "steps");
    }
    if (!has_axes) {
      axes.resize(starts.size());
      for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    TERN_CHECK(ends.size() == starts.size() && axes.size() == starts.size() &&
                   steps.size() == starts.size(),
               ShapeError,
               "{}: starts, ends, axes and steps must have equal lengths, but got {}, {}, {} and "
               "{}",
               where(), starts.size(), ends.size(), axes.size(), steps.size());
    std::vector<DimSlice> dims(rank);
    for (int d = 0; d < rank; ++d) dims[d].size = in[d];
    const std::vector<int> resolved = normalize_axes(axes, rank, where());
    for (size_t i = 0; i < resolved.size(); ++i) {
      const int a = resolved[i];
      const int64_t d = in[a];
      const int64_t step = steps[i];
      TERN_CHECK(step != 0, InvalidArgument, "{}: steps[{}] is 0 (expected a nonzero step)",
                 where(), i);
      if (d == 0) {
        dims[a] = DimSlice{0, step, 0};
        continue;
      }
      int64_t start = starts[i];
      int64_t end = ends[i];
      // Adding d cannot overflow: start/end are negative here, d >= 0.
      if (start < 0) start += d;
      if (end < 0) end += d;
      int64_t size;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, d);
        end = std::clamp<int64_t>(end, 0, d);
        size = end > start ? (end - start - 1) / step + 1 : 0;
      } else {
        start = std::clamp<int64_t>(start, 0, d - 1);
        end = std::clamp<int64_t>(end, -1, d - 1);
        const int64_t mag = step == std::numeric_limits<int64_t>::min()
                                ? std::numeric_limits<int64_t>::max()
                                : -step;
        size = start > end ? (start - end - 1) / mag + 1 : 0;
      }
      dims[a] = DimSlice{start, step, size};
    }
    return dims;
  }

  std::vector<int64_t> starts_attr_;
  std::vector<int64_t> ends_attr_;
  bool has_axes_attr_ = false;
  std::vector<int64_t> axes_attr_;
};

}  // namespace

void register_slice(OpRegistry& r) { r.add(make_schema<SliceOp>("Slice", 1, 5)); }

}  // namespace tern::ops
