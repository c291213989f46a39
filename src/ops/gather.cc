// Gather: picks entries of `data` along `axis` (negative counts from the end) at int32 or
// int64 `indices` (negative indices count from the end). Output shape:
// data.shape[:axis] + indices.shape + data.shape[axis+1:]. Any data dtype. An index
// outside [-d, d - 1] is an InvalidArgument naming the node. Source: ONNX Gather-13.
#include "kernels/reference/gather.h"

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class GatherOp final : public Op {
 public:
  GatherOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { axis_ = attrs.get_int("axis", 0); }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& data = inputs[0];
    const InferInput& indices = inputs[1];
    check_dtype(indices.dtype, {DType::kInt32, DType::kInt64}, where(), 1, "indices");
    const int rank = static_cast<int>(data.shape.size());
    TERN_CHECK(rank >= 1, ShapeError, "{}: data must have rank >= 1, but got a scalar", where());
    const int axis = normalize_axis(axis_, rank, where());
    Shape out(data.shape.begin(), data.shape.begin() + axis);
    out.insert(out.end(), indices.shape.begin(), indices.shape.end());
    out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
    return {TensorType{data.dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor data = inputs[0].contiguous();
    const Tensor indices = inputs[1].contiguous();
    const int axis = normalize_axis(axis_, data.rank(), where());
    kernels::ref::GatherParams p;
    p.axis_size = data.dim(axis);
    p.num_indices = indices.numel();
    p.elem_size = static_cast<int>(dtype_size(data.dtype()));
    for (int d = 0; d < axis; ++d) p.outer *= data.dim(d);
    for (int d = axis + 1; d < data.rank(); ++d) p.inner *= data.dim(d);
    visit_dtype<int32_t, int64_t>(indices.dtype(), where(), [&]<typename TI>() {
      const TI* idx = indices.data<TI>();
      for (int64_t j = 0; j < p.num_indices; ++j) {
        const int64_t k = static_cast<int64_t>(idx[j]);
        TERN_CHECK(k >= -p.axis_size && k < p.axis_size, InvalidArgument,
                   "{}: index {} (indices element {}) is out of range for axis {} of size {} "
                   "(expected {}..{})",
                   where(), k, j, axis, p.axis_size, -p.axis_size, p.axis_size - 1);
      }
      if (y.numel() > 0) kernels::ref::gather<TI>(p, data.raw_data(), idx, y.raw_data());
    });
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

void register_gather(OpRegistry& r) { r.add(make_schema<GatherOp>("Gather", 2, 2)); }

}  // namespace tern::ops
