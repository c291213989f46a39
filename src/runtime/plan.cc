#include "runtime/plan.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "base/cpu.h"
#include "ops/execute.h"

namespace tern::runtime {

using passes::BufferAssignment;

std::vector<LayerInfo> layers_of(const passes::Program& p) {
  std::vector<LayerInfo> layers;
  const ir::Graph& g = p.graph;
  for (int n : g.topological_order()) {
    const ir::Node& node = g.nodes[n];
    LayerInfo layer;
    layer.name = node.name;
    layer.op_type = node.op_type;
    std::vector<ops::TensorType> in_types, out_types;
    bool known = true;
    int64_t bytes = 0;
    auto add_bytes = [&](const ops::TensorType& t) {
      bytes += shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
    };
    for (int v : node.inputs) {
      if (v < 0) {
        in_types.emplace_back();  // an omitted input keeps its place: Op::macs reads by index
      } else if (p.types[v]) {
        in_types.push_back(*p.types[v]);
        add_bytes(in_types.back());
      } else {
        known = false;
      }
    }
    for (int v : node.outputs) {
      layer.outputs.push_back(v < 0 ? "" : g.values[v].name);
      if (v < 0) continue;
      layer.layouts.push_back(layout_name(p.layouts[v]));
      if (p.types[v]) {
        out_types.push_back(*p.types[v]);
        add_bytes(out_types.back());
      } else {
        known = false;
      }
    }
    if (known) {
      for (const auto& t : out_types) layer.output_shapes.push_back(t.shape);
      layer.macs = p.ops[n]->macs(in_types, out_types);
      layer.bytes = bytes;
      layer.workspace_bytes = p.ops[n]->workspace_bytes(in_types);
    }
    auto algorithm = node.attrs.find("algorithm");
    if (algorithm != node.attrs.end() && algorithm->second.type == ir::Attribute::Type::kString)
      layer.algorithm = algorithm->second.s;
    layers.push_back(std::move(layer));
  }
  return layers;
}

std::unique_ptr<Plan> build_plan(const ir::Graph& graph,
                                 const std::vector<ops::TensorType>& input_types,
                                 const ops::ExecContext& ctx, int64_t max_tensor_bytes,
                                 const passes::PipelineOptions& options) {
  auto plan = std::make_unique<Plan>();
  for (const auto& t : input_types) plan->input_shapes.push_back(t.shape);
  plan->program =
      passes::make_program(graph, input_types, ctx, max_tensor_bytes, simd_float_lanes());
  passes::Program& p = plan->program;
  passes::run_pipeline(p, options);

  const ir::Graph& g = p.graph;
  const std::vector<int> order = g.topological_order();
  const size_t nv = g.values.size();
  std::vector<int> last_reader(nv, -1);
  for (int n : order) {
    PlanStep step;
    step.node = n;
    std::vector<ops::TensorType> types;
    bool known = true;
    for (int v : g.nodes[n].outputs) {
      if (v < 0) {
        types.emplace_back();
      } else if (p.types[v]) {
        types.push_back(*p.types[v]);
      } else {
        known = false;
      }
    }
    if (known) step.output_types = std::move(types);
    for (int v : g.nodes[n].inputs)
      if (v >= 0) last_reader[v] = static_cast<int>(plan->steps.size());
    plan->steps.push_back(std::move(step));
  }
  // Values allocated per run are released after their last reader (arena values need no
  // release; a released in-place source lives on in the tensor that took it over).
  std::vector<bool> is_output(nv, false);
  for (int v : g.outputs) is_output[v] = true;
  for (size_t v = 0; v < nv; ++v) {
    if (last_reader[v] >= 0 && !is_output[v] && !g.values[v].is_constant() &&
        p.buffers[v].kind != BufferAssignment::Kind::kArena)
      plan->steps[last_reader[v]].release_after.push_back(static_cast<int>(v));
  }

  PlanInfo& info = plan->info;
  info.layers = layers_of(p);
  info.nodes_before = static_cast<int>(graph.nodes.size());
  info.nodes_after = static_cast<int>(g.nodes.size());
  info.arena_bytes = p.memory.arena_bytes;
  info.intermediate_bytes = p.memory.intermediate_bytes;
  info.arena_values = p.memory.arena_values;
  info.in_place_values = p.memory.in_place_values;
  info.slice_values = p.memory.slice_values;
  info.weight_bytes = p.weight_bytes();
  info.packed_weight_bytes = p.memory.packed_weight_bytes;
  // Winograd's extra memory: the layers that run its kernel (a workspace: not the
  // reference twin, which runs on a target of another vector width), and their
  // transformed weights, once per weight value.
  std::set<int> winograd_weights;
  for (const LayerInfo& l : info.layers) {
    if (l.algorithm != "winograd" || l.workspace_bytes == 0) continue;
    ++info.winograd_layers;
    info.winograd_workspace_bytes = std::max(info.winograd_workspace_bytes, l.workspace_bytes);
  }
  for (const ir::Node& node : g.nodes) {
    const int w = node.inputs.size() > 1 ? node.inputs[1] : -1;
    auto layout = node.attrs.find("weight_layout");
    if (w < 0 || layout == node.attrs.end() ||
        layout->second.type != ir::Attribute::Type::kString || layout->second.s != "winograd" ||
        !g.values[w].constant.defined() || !winograd_weights.insert(w).second)
      continue;
    info.winograd_weight_bytes += static_cast<int64_t>(g.values[w].constant.nbytes());
  }
  info.tuned_measured = p.tuning.measured;
  info.tuned_cached = p.tuning.cached;
  info.tune_cache = p.tuning.cache_path;
  info.tune_warning = p.tuning.warning;
  return plan;
}

namespace {

// Sets plan.fixed and the steps' bound calls (see Plan::fixed, PlanStep::bound).
void bind_plan(Plan& plan, int64_t epoch, const ops::ExecContext& ctx) {
  const passes::Program& p = plan.program;
  const ir::Graph& g = p.graph;
  if (p.memory.arena_bytes > 0 && !plan.arena) {
    plan.arena = Storage::allocate(static_cast<size_t>(p.memory.arena_bytes));
  }
  char* arena = plan.arena ? static_cast<char*>(plan.arena->data()) : nullptr;
  std::vector<Tensor>& fixed = plan.fixed;
  fixed.assign(g.values.size(), Tensor());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_constant()) fixed[v] = g.values[v].constant;
  for (PlanStep& step : plan.steps) {
    step.bound = {};  // a step bound for another target may not bind now
    const ir::Node& node = g.nodes[step.node];
    if (!step.output_types) continue;
    const ops::Op& op = *p.ops[step.node];
    if (op.reshapes_input() && node.outputs.size() == 1 && node.outputs[0] >= 0 &&
        !node.inputs.empty() && node.inputs[0] >= 0) {
      // A reshape of a fixed contiguous tensor: the same bytes under the output's shape,
      // fixed too, and nothing to run (a view step cost about 1 us per run, the 8 Reshapes
      // of UltraFace's heads 10 us).
      const Tensor& x = fixed[node.inputs[0]];
      const ops::TensorType& t = (*step.output_types)[0];
      if (x.defined() && x.is_contiguous() && x.dtype() == t.dtype &&
          x.numel() == shape_numel(t.shape) && x.numel() > 0) {
        fixed[node.outputs[0]] =
            Tensor::from_blob(const_cast<void*>(x.raw_data()), t.dtype, t.shape);
        step.bound = [](const ops::ExecContext&) {};
        continue;
      }
    }
    bool all_fixed = true;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int v = node.outputs[k];
      if (v < 0) continue;
      const BufferAssignment& b = p.buffers[v];
      const ops::TensorType& t = (*step.output_types)[k];
      if (b.kind == BufferAssignment::Kind::kArena) {
        fixed[v] = Tensor::from_blob(arena + b.offset, t.dtype, t.shape);
      } else if (b.kind == BufferAssignment::Kind::kSlice &&
                 p.buffers[b.reuses].kind == BufferAssignment::Kind::kArena) {
        fixed[v] =
            Tensor::from_blob(arena + p.buffers[b.reuses].offset + b.offset, t.dtype, t.shape);
      } else if (b.kind == BufferAssignment::Kind::kInPlace && fixed[b.reuses].defined() &&
                 !g.values[b.reuses].is_constant()) {
        fixed[v] = Tensor::from_blob(fixed[b.reuses].raw_data(), t.dtype, t.shape);
      } else {
        all_fixed = false;
      }
    }
    for (int v : node.inputs) all_fixed = all_fixed && (v < 0 || fixed[v].defined());
    if (!all_fixed) continue;
    std::vector<Tensor> in(node.inputs.size()), out(node.outputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] >= 0) in[k] = fixed[node.inputs[k]];
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) out[k] = fixed[node.outputs[k]];
    step.bound = ops::with_node_context(op, [&] { return op.bind(in, out, ctx); });
  }
  plan.bound = true;
  plan.bound_epoch = epoch;
}

}  // namespace

std::vector<Tensor> execute(Plan& plan, const std::vector<const Tensor*>& inputs,
                            const ops::ExecContext& ctx, int64_t max_tensor_bytes,
                            StepClock* clock) {
  const passes::Program& p = plan.program;
  const ir::Graph& g = p.graph;
  const int64_t epoch = simd_target_epoch();
  if (!plan.bound || plan.bound_epoch != epoch) bind_plan(plan, epoch, ctx);
  const std::vector<Tensor>& fixed = plan.fixed;
  // Tensors of this run only (graph inputs, values allocated per run); the rest are fixed.
  std::vector<Tensor> values(g.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) values[g.inputs[i]] = *inputs[i];
  const auto value = [&](int v) -> const Tensor& {
    return fixed[v].defined() ? fixed[v] : values[v];
  };

  std::unordered_set<const Storage*> fresh;  // storages allocated by this run
  if (clock) {
    clock->start.resize(plan.steps.size());
    clock->end.resize(plan.steps.size());
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (step.bound) {
      if (clock) clock->start[i] = std::chrono::steady_clock::now();
      ops::with_node_context(*p.ops[step.node], [&] { step.bound(ctx); });
      if (clock) clock->end[i] = std::chrono::steady_clock::now();
      continue;
    }
    const ir::Node& node = g.nodes[step.node];
    std::vector<Tensor> in(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (node.inputs[k] >= 0) in[k] = value(node.inputs[k]);
    }
    // Outputs the memory plan placed: views of the arena, or the input taken over.
    std::vector<Tensor> prealloc(node.outputs.size());
    if (step.output_types) {
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const int v = node.outputs[k];
        if (v < 0) continue;
        if (fixed[v].defined()) {
          prealloc[k] = fixed[v];
        } else if (p.buffers[v].kind == BufferAssignment::Kind::kInPlace) {
          prealloc[k] = value(p.buffers[v].reuses);
        }
      }
    }
    if (clock) clock->start[i] = std::chrono::steady_clock::now();
    std::vector<Tensor> out =
        ops::run_node(*p.ops[step.node], in, step.output_types ? &*step.output_types : nullptr,
                      node.outputs, ctx, max_tensor_bytes, prealloc);
    if (clock) clock->end[i] = std::chrono::steady_clock::now();
    const bool view_op = p.ops[step.node]->returns_view();
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int v = node.outputs[k];
      if (v < 0 || fixed[v].defined()) continue;
      // run_node allocated this output now (not a plan buffer, not an op's own tensor).
      if (!view_op && !prealloc[k].defined() && out[k].defined())
        fresh.insert(out[k].storage().get());
      values[v] = std::move(out[k]);
    }
    for (int v : step.release_after) values[v] = Tensor();
  }

  // The caller owns what run() returns, so an output is returned as it is only when its
  // storage was allocated by this run and no other output uses it; anything else (the
  // caller's inputs, constants, a tensor an op keeps such as Constant's value, the arena,
  // a second view of one buffer) is copied.
  std::vector<Tensor> result;
  for (int v : g.outputs) {
    Tensor t = value(v);
    if (!fresh.count(t.storage().get()) || !t.is_contiguous()) t = t.clone();
    fresh.erase(t.storage().get());
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace tern::runtime
