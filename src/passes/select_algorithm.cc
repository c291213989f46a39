// select-algorithm: records, for every node whose op chooses between kernels (today
// tern.FusedConv: "direct-first", "pointwise", "depthwise", "direct" or "reference"),
// the kernel it will run as the node's "algorithm" attribute, so `tern inspect` and
// `tern bench --per-layer` show the choice and the op follows it. The choice is the op's
// own heuristic (Op::algorithm) for the physical shapes and the SIMD target of this plan;
// a node that already names an algorithm the op can run (set by hand or by a tuning
// cache) keeps it. Always legal: every algorithm computes the same function (the tests
// check each kernel against the reference), so results change by float rounding only.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class SelectAlgorithm final : public Pass {
 public:
  const char* name() const override { return "select-algorithm"; }
  const char* summary() const override {
    return "choose each conv's kernel (direct, pointwise, depthwise, ...) for this plan";
  }

  int run(Program& p) const override {
    int changes = 0;
    for (int n : p.order()) {
      ir::Node& node = p.graph.nodes[n];
      std::vector<ops::TensorType> inputs;
      bool typed = true;
      for (int in : node.inputs) {
        if (in >= 0 && !p.types[in]) {
          typed = false;  // a run-time shape: the op chooses when it runs
          break;
        }
        inputs.push_back(in >= 0 ? *p.types[in] : ops::TensorType{});
      }
      if (!typed) continue;
      const std::string algo = p.ops[n]->algorithm(inputs);
      if (algo.empty()) continue;
      auto it = node.attrs.find("algorithm");
      if (it != node.attrs.end() && it->second.s == algo) continue;
      ir::Attribute a;
      a.type = ir::Attribute::Type::kString;
      a.s = algo;
      node.attrs["algorithm"] = a;
      ++changes;
    }
    if (changes > 0) analyze(p);
    return changes;
  }
};

}  // namespace

const Pass& select_algorithm_pass() {
  static const SelectAlgorithm pass;
  return pass;
}

}  // namespace tern::passes
