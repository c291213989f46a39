#include "runtime/plan.h"

#include <algorithm>

namespace tern::runtime {

namespace {

// String elements are objects (std::string), not bytes: only ops that handle them as such
// (or read only the shape) may see them; the others would copy them bytewise.
bool takes_strings(const std::string& op_type) {
  return op_type == "Cast" || op_type == "CastLike" || op_type == "Identity" ||
         op_type == "Constant" || op_type == "Shape" || op_type == "Size";
}

void check_string_support(const ops::Op& op, const std::vector<Tensor>& inputs,
                          const std::vector<ops::TensorType>& outputs) {
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

std::vector<Tensor> run_node(const ops::Op& op, const std::vector<Tensor>& inputs,
                             const std::vector<ops::TensorType>* types,
                             const std::vector<int>& output_values, const ops::ExecContext& ctx,
                             int64_t max_tensor_bytes) {
  const int num_outputs = static_cast<int>(output_values.size());
  return with_node_context(op, [&] {
    std::vector<ops::TensorType> inferred;
    if (types == nullptr) {
      std::vector<ops::InferInput> infer_in = ops::infer_inputs_from(inputs);
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
      const ops::TensorType& t = (*types)[k];
      const int64_t n = shape_numel(t.shape);
      TERN_CHECK(n <= max_tensor_bytes / static_cast<int64_t>(dtype_size(t.dtype)), ShapeError,
                 "{}: output {} of shape {} ({}) would take {} bytes, over the limit of {} "
                 "(SessionOptions.max_tensor_bytes)",
                 op.where(), k, shape_str(t.shape), dtype_name(t.dtype),
                 static_cast<double>(n) * dtype_size(t.dtype), max_tensor_bytes);
      if (!op.returns_view()) outputs[k] = Tensor::empty(t.dtype, t.shape);
    }
    op.run(inputs, outputs, ctx);
    return outputs;
  });
}

std::unique_ptr<Plan> build_plan(const ir::Graph& graph,
                                 const std::vector<std::unique_ptr<ops::Op>>& ops,
                                 const std::vector<int>& order,
                                 const std::vector<ops::TensorType>& input_types,
                                 const ops::ExecContext& ctx, int64_t max_tensor_bytes) {
  auto plan = std::make_unique<Plan>();
  const size_t nv = graph.values.size();
  plan->constants.resize(nv);
  std::vector<std::optional<ops::TensorType>> types(nv);

  for (size_t v = 0; v < nv; ++v) {
    const ir::Value& value = graph.values[v];
    if (value.is_constant()) {
      plan->constants[v] = value.constant;
      types[v] = ops::TensorType{value.constant.dtype(), value.constant.shape()};
    }
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    plan->input_shapes.push_back(input_types[i].shape);
    types[graph.inputs[i]] = input_types[i];
  }

  std::vector<bool> is_output(nv, false);
  for (int v : graph.outputs) is_output[v] = true;

  for (int n : order) {
    const ir::Node& node = graph.nodes[n];
    const ops::Op& op = *ops[n];
    LayerInfo layer;
    layer.name = node.name;
    layer.op_type = node.op_type;
    for (int out : node.outputs) layer.outputs.push_back(out < 0 ? "" : graph.values[out].name);

    // Gather what is known about the inputs.
    bool types_known = true;
    bool all_constant = true;
    std::vector<ops::InferInput> infer_in(node.inputs.size());
    std::vector<ops::TensorType> in_types;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int v = node.inputs[k];
      if (v < 0) continue;
      if (!types[v]) {
        types_known = false;
        break;
      }
      infer_in[k].present = true;
      infer_in[k].dtype = types[v]->dtype;
      infer_in[k].shape = types[v]->shape;
      infer_in[k].value = plan->constants[v].defined() ? &plan->constants[v] : nullptr;
      all_constant = all_constant && plan->constants[v].defined();
      in_types.push_back(*types[v]);
    }

    std::optional<std::vector<ops::TensorType>> out_types;
    if (types_known) {
      try {
        out_types = with_node_context(op, [&] { return op.infer(infer_in); });
      } catch (const ops::ValueNotKnown&) {
        out_types.reset();  // resolved at run time
      }
    }

    std::optional<std::vector<Tensor>> from_types;
    if (out_types && !all_constant) {
      from_types = with_node_context(op, [&] { return op.fold_from_types(infer_in); });
    }
    if (from_types) {
      // The outputs depend only on input shapes (Shape): constants for this plan.
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const int v = node.outputs[k];
        if (v < 0) continue;
        plan->constants[v] = (*from_types)[k];
        types[v] = (*out_types)[k];
      }
      layer.constant = true;
    } else if (out_types && all_constant) {
      // Every input is known: evaluate now; the outputs become constants.
      std::vector<Tensor> inputs(node.inputs.size());
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        if (node.inputs[k] >= 0) inputs[k] = plan->constants[node.inputs[k]];
      }
      std::vector<Tensor> outputs =
          run_node(op, inputs, &*out_types, node.outputs, ctx, max_tensor_bytes);
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const int v = node.outputs[k];
        if (v < 0) continue;
        plan->constants[v] = outputs[k];
        types[v] = (*out_types)[k];
      }
      layer.constant = true;
    } else {
      PlanStep step;
      step.node = n;
      if (out_types) {
        step.output_types = out_types;
        for (size_t k = 0; k < node.outputs.size(); ++k) {
          if (node.outputs[k] >= 0) types[node.outputs[k]] = (*out_types)[k];
        }
      }
      plan->steps.push_back(std::move(step));
    }
    if (out_types) {
      for (size_t k = 0; k < node.outputs.size() && k < out_types->size(); ++k) {
        layer.output_shapes.push_back((*out_types)[k].shape);
      }
      layer.macs = op.macs(in_types, *out_types);
    }
    plan->layers.push_back(std::move(layer));
  }

  // Liveness: release each intermediate after the last step that reads it.
  std::vector<int> last_reader(nv, -1);
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    for (int v : graph.nodes[plan->steps[s].node].inputs) {
      if (v >= 0) last_reader[v] = static_cast<int>(s);
    }
  }
  for (size_t v = 0; v < nv; ++v) {
    if (last_reader[v] >= 0 && !is_output[v] && !plan->constants[v].defined()) {
      plan->steps[last_reader[v]].release_after.push_back(static_cast<int>(v));
    }
  }
  return plan;
}

}  // namespace tern::runtime
