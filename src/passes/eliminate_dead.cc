// eliminate-dead: removes nodes none of whose outputs is needed: not a graph output and
// not read by a node that is itself needed (left behind by folding, fusion and identity
// elimination, or unused in the model file itself). Ops are pure, so an unread result is
// never needed. One backward sweep over the execution order decides every node (a dead
// chain of any length goes at once), so the cost is linear in the graph's size.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class EliminateDead final : public Pass {
 public:
  const char* name() const override { return "eliminate-dead"; }
  const char* summary() const override { return "remove nodes whose outputs nothing needs"; }

  int run(Program& p) const override {
    const ir::Graph& g = p.graph;
    std::vector<bool> needed_value(g.values.size(), false);
    for (int v : g.outputs) needed_value[v] = true;
    const std::vector<int> order = p.order();
    std::vector<bool> dead(g.nodes.size(), false);
    int removed = 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ir::Node& node = g.nodes[*it];
      bool needed = false;  // where to try: every node; legal: no output is needed
      for (int out : node.outputs) needed = needed || (out >= 0 && needed_value[out]);
      if (!needed) {
        dead[*it] = true;
        ++removed;
        continue;
      }
      for (int in : node.inputs)
        if (in >= 0) needed_value[in] = true;
    }
    if (removed > 0) {
      p.erase_nodes(dead);
      analyze(p);
    }
    return removed;
  }
};

}  // namespace

const Pass& eliminate_dead_pass() {
  static const EliminateDead pass;
  return pass;
}

}  // namespace tern::passes
