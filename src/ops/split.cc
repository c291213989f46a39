// Split: cuts the input along `axis` into parts of the sizes in `split` (an attribute
// before opset 13, an optional int64 input from 13), or into equal parts, one per node
// output, when `split` is absent (the axis size must then divide evenly). Any dtype.
// Source: ONNX Split-13 (Split-2 / Split-11 for the attribute form).
#include <numeric>
#include <vector>

#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class SplitOp final : public Op {
 public:
  SplitOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.get_int("axis", 0);
    if (ctx.opset < 13) {
      has_split_attr_ = attrs.has("split");
      split_attr_ = attrs.get_ints("split", {});
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    const int rank = static_cast<int>(x.shape.size());
    const int axis = normalize_axis(axis_, rank, where());
    const int64_t dim = x.shape[axis];
    std::vector<int64_t> sizes = split_attr_;
    bool given = has_split_attr_;
    if (context().opset >= 13 && has_input(inputs, 1)) {
      sizes = int_values(require_value(inputs, 1), where(), 1, "split");
      given = true;
    }
    if (given) {
      int64_t total = 0;
      for (int64_t s : sizes) {
        TERN_CHECK(s >= 0, ShapeError, "{}: split {} has a negative size", where(),
                   shape_str(sizes));
        total = checked_add(total, s, where(), "the sum of split {}", shape_str(sizes));
      }
      TERN_CHECK(total == dim, ShapeError,
                 "{}: split {} sums to {}, but axis {} of the input of shape {} has size {}",
                 where(), shape_str(sizes), total, axis, shape_str(x.shape), dim);
      const int n = context().num_outputs;
      TERN_CHECK(n == 0 || static_cast<size_t>(n) == sizes.size(), ModelError,
                 "{}: split {} has {} parts, but the node has {} outputs", where(),
                 shape_str(sizes), sizes.size(), n);
    } else {
      const int n = context().num_outputs;
      TERN_CHECK(n > 0, ModelError, "{}: an equal split needs at least one output", where());
      TERN_CHECK(dim % n == 0, ShapeError,
                 "{}: cannot split axis {} of size {} (input shape {}) into {} equal parts",
                 where(), axis, dim, shape_str(x.shape), n);
      sizes.assign(n, dim / n);
    }
    std::vector<TensorType> out;
    for (int64_t s : sizes) {
      Shape shape = x.shape;
      shape[axis] = s;
      out.push_back(TensorType{x.dtype, shape});
    }
    return out;
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor& x = inputs[0];
    const int axis = normalize_axis(axis_, x.rank(), where());
    const std::vector<TensorType> types = infer(infer_inputs_from(inputs));
    // Every part in one parallel region (copy_strided_parts: same pixels per thread).
    std::vector<Tensor> srcs;
    std::vector<StridedOperand> src_ops, dst_ops;
    srcs.reserve(types.size());
    int64_t offset = 0;
    for (size_t k = 0; k < types.size(); ++k) {
      const int64_t len = types[k].shape[axis];
      if (k < outputs.size() && outputs[k].defined() && len > 0) {
        srcs.push_back(x.slice(axis, offset, offset + len));
        src_ops.push_back(StridedOperand::of(srcs.back()));
        dst_ops.push_back(StridedOperand::of(outputs[k]));
      }
      offset += len;
    }
    copy_strided_parts(dst_ops, src_ops, ctx.num_threads);
  }

 private:
  int64_t axis_ = 0;
  bool has_split_attr_ = false;
  std::vector<int64_t> split_attr_;
};

}  // namespace

void register_split(OpRegistry& r) { r.add(make_schema<SplitOp>("Split", 1, 2, 1, 1 << 16)); }

}  // namespace tern::ops
