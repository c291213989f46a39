#include "passes/pass.h"

#include <fmt/format.h>

namespace tern::passes {

int NodeRule::run(Program& p) const {
  int changes = 0;
  // Each sweep rewrites what it can; a rewrite can expose another match (a fused Conv
  // followed by an Add), so sweep until one changes nothing. Every rewrite removes at
  // least one node or changes one node's op, so the node count bounds the sweeps.
  for (size_t sweep = 0; sweep <= p.graph.nodes.size() + 1; ++sweep) {
    std::vector<bool> dead(p.graph.nodes.size(), false);
    int made = 0;
    for (int n : p.order()) {
      if (dead[n] || !applies_to(p, n) || !legal(p, n)) continue;
      rewrite(p, n, dead);
      ++made;
    }
    if (made == 0) break;
    changes += made;
    p.erase_nodes(dead);
    analyze(p);
  }
  return changes;
}

int sole_consumer(const Program& p, int v) {
  if (v < 0 || p.is_graph_output(v)) return -1;
  const std::vector<int> readers = p.consumers(v);
  return readers.size() == 1 ? readers[0] : -1;
}

std::string string_attr(const ir::Node& n, const char* name, const char* def) {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->second.type == ir::Attribute::Type::kString ? it->second.s
                                                                                 : def;
}

int64_t int_attr(const ir::Node& n, const char* name, int64_t def) {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->second.type == ir::Attribute::Type::kInt ? it->second.i : def;
}

std::string unique_node_name(const Program& p, const std::string& base) {
  auto taken = [&](const std::string& name) {
    for (const ir::Node& node : p.graph.nodes)
      if (node.name == name) return true;
    return false;
  };
  std::string name = base;
  for (int k = 1; taken(name); ++k) name = fmt::format("{}_{}", base, k);
  return name;
}

}  // namespace tern::passes
