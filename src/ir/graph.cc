#include "ir/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <sstream>

#include "base/check.h"

namespace tern::ir {

const char* attribute_type_name(Attribute::Type type) {
  switch (type) {
    case Attribute::Type::kFloat: return "FLOAT";
    case Attribute::Type::kInt: return "INT";
    case Attribute::Type::kString: return "STRING";
    case Attribute::Type::kTensor: return "TENSOR";
    case Attribute::Type::kFloats: return "FLOATS";
    case Attribute::Type::kInts: return "INTS";
    case Attribute::Type::kStrings: return "STRINGS";
    case Attribute::Type::kGraph: return "GRAPH";
    case Attribute::Type::kOther: return "OTHER";
  }
  return "?";
}

std::string attribute_text(const Attribute& a) {
  using T = Attribute::Type;
  switch (a.type) {
    case T::kInt:
      return fmt::format("{}", a.i);
    case T::kFloat:
      return fmt::format("{}", a.f);
    case T::kString:
      return a.s;
    case T::kInts:
      return fmt::format("[{}]", fmt::join(a.ints, ","));
    case T::kFloats:
      return fmt::format("[{}]", fmt::join(a.floats, ","));
    case T::kStrings:
      return fmt::format("[{}]", fmt::join(a.strings, ","));
    default:
      return "?";
  }
}

int Graph::find_value(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int Graph::add_value(Value v) {
  TERN_CHECK(!v.name.empty(), ModelError, "a tensor has an empty name");
  TERN_CHECK(index_.find(v.name) == index_.end(), ModelError,
             "tensor '{}' is defined more than once", v.name);
  const int id = static_cast<int>(values.size());
  index_[v.name] = id;
  values.push_back(std::move(v));
  return id;
}

std::vector<int> Graph::topological_order() const {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    for (int in : nodes[i].inputs) {
      if (in < 0) continue;
      const int p = values[in].producer;
      if (p >= 0) {
        ++pending[i];
        consumers[p].push_back(i);
      }
    }
  }
  // Kahn's algorithm; a min-heap keeps file order among ready nodes (stable dumps).
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--pending[c] == 0) ready.push(c);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        TERN_THROW(ModelError, "the graph has a cycle through node '{}' ({}): a model must be a DAG",
                   nodes[i].name, nodes[i].op_type);
      }
    }
  }
  return order;
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const Value& v : values)
    if (v.is_constant()) n += v.constant.numel();
  return n;
}

void verify_graph(const Graph& g) {
  const int nv = static_cast<int>(g.values.size());
  std::vector<int> producers(nv, -1);
  std::vector<char> is_input(nv, 0);  // a table, not a search: hostile files list many inputs
  for (int in : g.inputs) {
    TERN_CHECK(in >= 0 && in < nv, ModelError, "graph input index {} out of range", in);
    is_input[in] = 1;
  }
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    const Node& node = g.nodes[i];
    for (int in : node.inputs) {
      TERN_CHECK(in >= -1 && in < nv, ModelError, "node '{}' ({}): input index {} out of range",
                 node.name, node.op_type, in);
      if (in < 0) continue;
      const Value& v = g.values[in];
      TERN_CHECK(v.producer >= 0 || v.is_constant() || is_input[in], ModelError,
                 "node '{}' ({}): input '{}' is not a graph input, an initializer or the "
                 "output of any node",
                 node.name, node.op_type, v.name);
    }
    for (int out : node.outputs) {
      if (out < 0) continue;
      TERN_CHECK(out < nv, ModelError, "node '{}': output index {} out of range", node.name, out);
      TERN_CHECK(producers[out] < 0, ModelError,
                 "tensor '{}' is written by two nodes: '{}' and '{}'", g.values[out].name,
                 g.nodes[producers[out]].name, node.name);
      TERN_CHECK(!g.values[out].is_constant(), ModelError,
                 "node '{}' ({}) writes '{}', which is also an initializer", node.name,
                 node.op_type, g.values[out].name);
      producers[out] = i;
    }
  }
  for (int out : g.outputs) {
    TERN_CHECK(out >= 0 && out < nv, ModelError, "graph output index {} out of range", out);
    const Value& v = g.values[out];
    TERN_CHECK(producers[out] >= 0 || v.is_constant() || is_input[out], ModelError,
               "graph output '{}' is not produced by any node", v.name);
  }
  for (int in : g.inputs) {
    TERN_CHECK(producers[in] < 0, ModelError, "graph input '{}' is also written by node '{}'",
               g.values[in].name, g.nodes[producers[in]].name);
  }
  g.topological_order();  // throws on a cycle
}

std::string dump_graph(const Graph& g) {
  std::ostringstream os;
  auto name = [&](int v) { return v < 0 ? std::string("<none>") : g.values[v].name; };
  for (int i : g.topological_order()) {
    const Node& n = g.nodes[i];
    os << n.name << ": " << n.op_type << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) os << (k ? ", " : "") << name(n.inputs[k]);
    os << ") -> ";
    for (size_t k = 0; k < n.outputs.size(); ++k) os << (k ? ", " : "") << name(n.outputs[k]);
    os << "\n";
  }
  return os.str();
}

}  // namespace tern::ir
