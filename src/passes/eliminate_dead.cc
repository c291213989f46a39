// eliminate-dead: removes nodes none of whose outputs is read by another node or returned
// by the graph (left behind by folding, fusion and identity elimination, or unused in the
// model file itself). Ops are pure, so an unread result is never needed.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class EliminateDead final : public NodeRule {
 public:
  const char* name() const override { return "eliminate-dead"; }
  const char* summary() const override { return "remove nodes whose outputs nothing reads"; }

 protected:
  bool applies_to(const Program& p, int n) const override {
    for (int out : p.graph.nodes[n].outputs) {
      if (out >= 0 && (p.is_graph_output(out) || !p.consumers(out).empty())) return false;
    }
    return true;
  }
  bool legal(const Program& p, int n) const override {
    (void)p;
    (void)n;
    return true;  // no tern op has a side effect
  }
  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    (void)p;
    dead[n] = true;
  }
};

}  // namespace

const Pass& eliminate_dead_pass() {
  static const EliminateDead pass;
  return pass;
}

}  // namespace tern::passes
