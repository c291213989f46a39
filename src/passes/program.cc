#include "passes/program.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "base/check.h"
#include "ops/execute.h"
#include "ops/registry.h"

namespace tern::passes {

std::vector<int> Program::consumers(int v) const {
  std::vector<int> out;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    const auto& in = graph.nodes[n].inputs;
    if (std::find(in.begin(), in.end(), v) != in.end()) out.push_back(n);
  }
  return out;
}

bool Program::is_graph_output(int v) const {
  return std::find(graph.outputs.begin(), graph.outputs.end(), v) != graph.outputs.end();
}

bool Program::is_graph_input(int v) const {
  return std::find(graph.inputs.begin(), graph.inputs.end(), v) != graph.inputs.end();
}

bool Program::runs_pass(const std::string& name) const {
  return std::find(disabled_passes.begin(), disabled_passes.end(), name) == disabled_passes.end();
}

int Program::add_value(const std::string& base, std::optional<ops::TensorType> type) {
  std::string name = base;
  for (int k = 1; graph.find_value(name) >= 0; ++k) name = fmt::format("{}_{}", base, k);
  ir::Value v;
  v.name = name;
  if (type) v.dtype = type->dtype;
  const int id = graph.add_value(std::move(v));
  types.resize(graph.values.size());
  known.resize(graph.values.size());
  layouts.resize(graph.values.size());
  buffers.resize(graph.values.size());
  types[id] = std::move(type);
  return id;
}

void Program::replace_uses(int from, int to) {
  for (ir::Node& node : graph.nodes) {
    for (int& in : node.inputs)
      if (in == from) in = to;
  }
}

void Program::erase_nodes(const std::vector<bool>& dead) {
  std::vector<ir::Node> kept;
  std::vector<std::unique_ptr<ops::Op>> kept_ops;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (n < dead.size() && dead[n]) continue;
    kept.push_back(std::move(graph.nodes[n]));
    if (n < ops.size()) kept_ops.push_back(std::move(ops[n]));
  }
  graph.nodes = std::move(kept);
  ops = std::move(kept_ops);
  for (ir::Value& v : graph.values) v.producer = -1;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    for (int out : graph.nodes[n].outputs)
      if (out >= 0) graph.values[out].producer = n;
  }
}

int64_t Program::weight_bytes() const {
  // By storage: a folded view of an initializer (Reshape of a constant) shares its bytes.
  std::set<const Storage*> seen;
  int64_t bytes = 0;
  for (const ir::Node& node : graph.nodes) {
    for (int in : node.inputs) {
      if (in < 0 || !graph.values[in].is_constant()) continue;
      const Tensor& t = graph.values[in].constant;
      if (seen.insert(t.storage().get()).second)
        bytes += static_cast<int64_t>(t.storage()->bytes());
    }
  }
  return bytes;
}

Program make_program(const ir::Graph& graph, const std::vector<ops::TensorType>& input_types,
                     const ops::ExecContext& ctx, int64_t max_tensor_bytes, int block) {
  Program p;
  p.graph = graph;
  p.input_types = input_types;
  p.ctx = ctx;
  p.max_tensor_bytes = max_tensor_bytes;
  p.block = block;
  analyze(p);
  return p;
}

std::vector<Tensor> evaluate_node(const Program& p, int n) {
  const ir::Node& node = p.graph.nodes[n];
  std::vector<Tensor> inputs(node.inputs.size());
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.inputs[k] >= 0) inputs[k] = p.known[node.inputs[k]];
  }
  std::vector<ops::TensorType> types;
  for (int out : node.outputs)
    types.push_back(out >= 0 && p.types[out] ? *p.types[out] : ops::TensorType{});
  return ops::run_node(*p.ops[n], inputs, &types, node.outputs, p.ctx, p.max_tensor_bytes);
}

void analyze(Program& p) {
  const ir::Graph& g = p.graph;
  const size_t nv = g.values.size();
  p.types.assign(nv, std::nullopt);
  p.known.assign(nv, Tensor());
  p.layouts.resize(nv);
  p.buffers.resize(nv);
  for (size_t v = 0; v < nv; ++v) {
    const ir::Value& value = g.values[v];
    if (value.is_constant()) {
      p.known[v] = value.constant;
      p.types[v] = ops::TensorType{value.constant.dtype(), value.constant.shape()};
    }
  }
  for (size_t i = 0; i < g.inputs.size() && i < p.input_types.size(); ++i)
    p.types[g.inputs[i]] = p.input_types[i];

  const auto& registry = ops::OpRegistry::global();
  p.ops.clear();
  p.ops.resize(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ir::Node& node = g.nodes[n];
    const ops::OpSchema* schema = registry.find(node.domain, node.op_type);
    TERN_CHECK(schema != nullptr, UnsupportedOpError,
               "node '{}' uses op '{}' (opset {}), which tern does not support", node.name,
               node.op_type, g.opset);
    ops::OpContext ctx{node.name, node.op_type, g.opset, static_cast<int>(node.outputs.size())};
    ops::Attrs attrs(node.attrs, fmt::format("{} '{}'", node.op_type, node.name));
    p.ops[n] = schema->create(attrs, ctx);
  }

  for (int n : g.topological_order()) {
    const ir::Node& node = g.nodes[n];
    const ops::Op& op = *p.ops[n];
    bool types_known = true;
    bool all_known = true;
    std::vector<ops::InferInput> infer_in(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int v = node.inputs[k];
      if (v < 0) continue;
      if (!p.types[v]) {
        types_known = false;
        break;
      }
      infer_in[k].present = true;
      infer_in[k].dtype = p.types[v]->dtype;
      infer_in[k].shape = p.types[v]->shape;
      infer_in[k].value = p.known[v].defined() ? &p.known[v] : nullptr;
      all_known = all_known && p.known[v].defined();
    }
    if (!types_known) continue;
    std::optional<std::vector<ops::TensorType>> out_types;
    try {
      out_types = ops::with_node_context(op, [&] { return op.infer(infer_in); });
    } catch (const ops::ValueNotKnown&) {
      continue;  // resolved at run time
    }
    for (size_t k = 0; k < node.outputs.size() && k < out_types->size(); ++k) {
      if (node.outputs[k] < 0) continue;
      // Checked here, before the memory plan reserves anything: a model cannot make
      // tern allocate without bound (the same limit run_node applies at run time).
      const ops::TensorType& t = (*out_types)[k];
      const int64_t n = shape_numel(t.shape);
      TERN_CHECK(n <= p.max_tensor_bytes / static_cast<int64_t>(dtype_size(t.dtype)), ShapeError,
                 "{}: output {} of shape {} ({}) would take {} bytes, over the limit of {} "
                 "(SessionOptions.max_tensor_bytes)",
                 op.where(), k, shape_str(t.shape), dtype_name(t.dtype),
                 static_cast<double>(n) * dtype_size(t.dtype), p.max_tensor_bytes);
      p.types[node.outputs[k]] = t;
    }
    std::optional<std::vector<Tensor>> values;
    if (all_known) {
      values = evaluate_node(p, n);
    } else {
      values = ops::with_node_context(op, [&] { return op.fold_from_types(infer_in); });
    }
    if (!values) continue;
    for (size_t k = 0; k < node.outputs.size() && k < values->size(); ++k) {
      if (node.outputs[k] >= 0) p.known[node.outputs[k]] = (*values)[k];
    }
  }
}

void verify_program(const Program& p,
                    const std::vector<std::optional<ops::TensorType>>& output_types,
                    const std::string& pass) {
  try {
    ir::verify_graph(p.graph);
  } catch (const Error& e) {
    TERN_THROW(Error, "after pass '{}': the graph is malformed: {}", pass, e.what());
  }
  TERN_CHECK(p.ops.size() == p.graph.nodes.size(), Error,
             "after pass '{}': {} ops for {} nodes (analyze() was not run)", pass, p.ops.size(),
             p.graph.nodes.size());
  TERN_CHECK(p.types.size() == p.graph.values.size(), Error,
             "after pass '{}': types cover {} of {} values", pass, p.types.size(),
             p.graph.values.size());
  TERN_CHECK(output_types.size() == p.graph.outputs.size(), Error,
             "after pass '{}': the graph has {} outputs, it had {}", pass, p.graph.outputs.size(),
             output_types.size());
  for (size_t i = 0; i < output_types.size(); ++i) {
    const int v = p.graph.outputs[i];
    const auto& now = p.types[v];
    const auto& before = output_types[i];
    TERN_CHECK(now.has_value() == before.has_value() && (!now || *now == *before), Error,
               "after pass '{}': graph output '{}' changed type from {} to {}", pass,
               p.graph.values[v].name,
               before ? fmt::format("{} {}", shape_str(before->shape), dtype_name(before->dtype))
                      : std::string("unknown"),
               now ? fmt::format("{} {}", shape_str(now->shape), dtype_name(now->dtype))
                   : std::string("unknown"));
    TERN_CHECK(p.layouts[v].kind != LayoutKind::kNCHWc, Error,
               "after pass '{}': graph output '{}' is left in {}", pass, p.graph.values[v].name,
               layout_name(p.layouts[v]));
  }
}

namespace {

std::string type_text(const Program& p, int v) {
  if (v < 0) return "-";
  const auto& t = p.types[v];
  std::string s = t ? shape_str(t->shape) : "?";
  if (p.layouts[v].kind == LayoutKind::kNCHWc)
    s = fmt::format("{} {}", s, layout_name(p.layouts[v]));
  return s;
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string dump_program(const Program& p) {
  std::ostringstream os;
  const ir::Graph& g = p.graph;
  auto name = [&](int v) { return v < 0 ? std::string("<none>") : g.values[v].name; };
  for (int n : g.topological_order()) {
    const ir::Node& node = g.nodes[n];
    os << "  " << node.name << ": " << node.domain << (node.domain.empty() ? "" : ".")
       << node.op_type << "(";
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int v = node.inputs[k];
      os << (k ? ", " : "") << name(v);
      if (v >= 0 && g.values[v].is_constant()) os << "*";
    }
    os << ") -> ";
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int v = node.outputs[k];
      os << (k ? ", " : "") << name(v) << " " << type_text(p, v);
      if (v < 0 || static_cast<size_t>(v) >= p.buffers.size()) continue;
      const BufferAssignment& b = p.buffers[v];
      if (b.kind == BufferAssignment::Kind::kArena) os << " @arena+" << b.offset;
      if (b.kind == BufferAssignment::Kind::kInPlace)
        os << " (in place of " << name(b.reuses) << ")";
      if (b.kind == BufferAssignment::Kind::kSlice)
        os << " (slice of " << name(b.reuses) << " +" << b.offset << ")";
    }
    os << "\n";
  }
  return os.str();
}

std::string program_dot(const Program& p) {
  const ir::Graph& g = p.graph;
  std::ostringstream os;
  os << "digraph tern_plan {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  for (int v : g.inputs)
    os << "  v" << v << " [shape=ellipse, label=\"" << dot_escape(g.values[v].name) << "\\n"
       << dot_escape(type_text(p, v)) << "\"];\n";
  for (int v : g.outputs)
    os << "  v" << v << " [shape=ellipse, label=\"" << dot_escape(g.values[v].name) << "\\n"
       << dot_escape(type_text(p, v)) << "\"];\n";
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ir::Node& node = g.nodes[n];
    os << "  n" << n << " [label=\"" << dot_escape(node.op_type) << "\\n"
       << dot_escape(node.name) << "\"];\n";
  }
  auto source = [&](int v) {
    const int producer = g.values[v].producer;
    return producer >= 0 ? fmt::format("n{}", producer) : fmt::format("v{}", v);
  };
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int v : g.nodes[n].inputs) {
      if (v < 0 || g.values[v].is_constant()) continue;
      os << "  " << source(v) << " -> n" << n << " [label=\"" << dot_escape(type_text(p, v))
         << "\"];\n";
    }
  }
  for (int v : g.outputs) {
    if (g.values[v].producer >= 0) os << "  n" << g.values[v].producer << " -> v" << v << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace tern::passes
