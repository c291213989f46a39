// fold-constants: a node whose outputs are all known once the input shapes are bound
// becomes constants. analyze() has already evaluated such nodes (initializers, Constant,
// Shape of a static shape, and everything computed only from those: the Shape -> Gather
// -> Unsqueeze -> Concat -> Cast chains PyTorch exports feed to Reshape and Resize), so
// this pass only stores the values and removes the nodes: none of it runs per inference.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class FoldConstants final : public NodeRule {
 public:
  const char* name() const override { return "fold-constants"; }
  const char* summary() const override {
    return "replace nodes computed only from constants and input shapes by their values";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    const ir::Node& node = p.graph.nodes[n];
    bool any = false;
    for (int out : node.outputs) {
      if (out < 0) continue;
      if (!p.known[out].defined()) return false;
      any = true;
    }
    return any;
  }
  // A known value is exact: it is what the node computes on every run. Graph outputs may
  // be folded too (the executor returns a copy of a constant output).
  bool legal(const Program& p, int n) const override {
    (void)p;
    (void)n;
    return true;
  }
  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    for (int out : p.graph.nodes[n].outputs) {
      if (out < 0) continue;
      p.graph.values[out].constant = p.known[out];
      p.graph.values[out].producer = -1;
    }
    dead[n] = true;
  }
};

}  // namespace

const Pass& fold_constants_pass() {
  static const FoldConstants pass;
  return pass;
}

}  // namespace tern::passes
