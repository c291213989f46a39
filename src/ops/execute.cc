#include "ops/execute.h"

namespace tern::ops {

namespace {

// String elements are objects (std::string), not bytes: only ops that handle them as such
// (or read only the shape) may see them; the others would copy them bytewise.
bool takes_strings(const std::string& op_type) {
  return op_type == "Cast" || op_type == "CastLike" || op_type == "Identity" ||
         op_type == "Constant" || op_type == "Shape" || op_type == "Size";
}

void check_string_support(const Op& op, const std::vector<Tensor>& inputs,
                          const std::vector<TensorType>& outputs) {
  if (takes_strings(op.context().op_type)) return;
  bool strings = false;
  for (const Tensor& t : inputs) strings = strings || (t.defined() && t.dtype() == DType::kString);
  for (const auto& t : outputs) strings = strings || t.dtype == DType::kString;
  TERN_CHECK(!strings, UnsupportedOpError,
             "{}: string tensors are supported only by Cast, CastLike, Identity, Constant, "
             "Shape and Size",
             op.where());
}

}  // namespace

std::vector<Tensor> run_node(const Op& op, const std::vector<Tensor>& inputs,
                             const std::vector<TensorType>* types,
                             const std::vector<int>& output_values, const ExecContext& ctx,
                             int64_t max_tensor_bytes, std::span<const Tensor> preallocated) {
  const int num_outputs = static_cast<int>(output_values.size());
  return with_node_context(op, [&] {
    std::vector<TensorType> inferred;
    if (types == nullptr) {
      std::vector<InferInput> infer_in = infer_inputs_from(inputs);
      inferred = op.infer(infer_in);
      types = &inferred;
    }
    check_string_support(op, inputs, *types);
    TERN_CHECK(static_cast<int>(types->size()) >= num_outputs, Error,
               "{}: inference gave {} outputs, the node has {}", op.where(), types->size(),
               num_outputs);
    std::vector<Tensor> outputs(num_outputs);
    for (int k = 0; k < num_outputs; ++k) {
      if (output_values[k] < 0) continue;
      const TensorType& t = (*types)[k];
      const int64_t n = shape_numel(t.shape);
      TERN_CHECK(n <= max_tensor_bytes / static_cast<int64_t>(dtype_size(t.dtype)), ShapeError,
                 "{}: output {} of shape {} ({}) would take {} bytes, over the limit of {} "
                 "(SessionOptions.max_tensor_bytes)",
                 op.where(), k, shape_str(t.shape), dtype_name(t.dtype),
                 static_cast<double>(n) * dtype_size(t.dtype), max_tensor_bytes);
      if (k < static_cast<int>(preallocated.size()) && preallocated[k].defined()) {
        TERN_CHECK(preallocated[k].shape() == t.shape && preallocated[k].dtype() == t.dtype, Error,
                   "{}: output {} was planned as {} {}, but the op makes {} {}", op.where(), k,
                   dtype_name(preallocated[k].dtype()), shape_str(preallocated[k].shape()),
                   dtype_name(t.dtype), shape_str(t.shape));
        outputs[k] = preallocated[k];
        continue;
      }
      if (!op.returns_view()) outputs[k] = Tensor::empty(t.dtype, t.shape);
    }
    op.run(inputs, outputs, ctx);
    return outputs;
  });
}

}  // namespace tern::ops
