// select-algorithm: records, for every node whose op chooses between kernels (today
// tern.FusedConv: "direct-first", "pointwise", "depthwise", "direct", "winograd", "gemm",
// "dot" or "reference"), the kernel it will run as the node's "algorithm" attribute, so
// `tern inspect` and `tern bench --per-layer` show the choice and the op follows it. The
// choice is the op's own heuristic (Op::algorithm) for the physical shapes and the SIMD
// target of this plan; a node that already names an algorithm the op can run (set by hand
// or by a tuning cache) keeps it.
// Winograd needs its own weights: a FusedConv chosen for "winograd" whose packed weights
// are a known constant gets them transformed here (kernels::ref::
// winograd_transform_weights, 36 values per 3x3 filter instead of 9: the extra bytes are
// added to p.memory.packed_weight_bytes, and the packed weights no other node reads are
// dropped) and weight_layout = "winograd"; without known weights it is recorded as
// "direct".
// With tuning on (Program::tuning, `--tune`), a node whose op offers several candidates
// (Op::algorithm_candidates: FusedConv's "direct" and "winograd") gets the one that
// measures fastest on this machine (passes/tune.h), from the tune cache when it is known;
// a head fuse-transpose will make write NHWC has direct timed writing NHWC (nhwc_context).
// (Whether a conv runs the dot kernel is measured earlier, by pack-weights, which lays its
// weights out for the winner.)
// Always legal: every algorithm computes the same function (the tests check each kernel
// against the reference), so results change by float rounding only.
#include <fmt/format.h>

#include <map>

#include "kernels/reference/winograd.h"
#include "passes/pass.h"
#include "passes/tune.h"

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
    std::map<int, int> transformed;  // packed weight value -> winograd weight value
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
      std::string algo = p.ops[n]->algorithm(inputs);
      if (algo.empty()) continue;
      if (p.tuning.enabled) {
        const std::vector<std::string> candidates = p.ops[n]->algorithm_candidates(inputs);
        if (candidates.size() > 1) {
          // A head fuse-transpose will make write NHWC: direct is timed writing NHWC, as it
          // will run; winograd, which cannot, writes NCHW and keeps the Transpose, whose copy
          // of the (small) head output is not timed.
          const std::string context = nhwc_context(p, n);
          auto setup = [&context](const std::string& algorithm, ir::Node& copy,
                                  std::vector<Tensor>& in) {
            if (!context.empty() && algorithm != "winograd") {
              set_string_attr(copy, "y_layout", "NHWC");
            }
            setup_candidate(algorithm, copy, in);
          };
          algo = tune_algorithm(p, n, inputs, candidates, setup, context);
        }
      }
      if (algo == "winograd" && !use_winograd_weights(p, node, transformed)) algo = "direct";
      auto it = node.attrs.find("algorithm");
      if (it != node.attrs.end() && it->second.s == algo) continue;
      set_string_attr(node, "algorithm", algo);
      ++changes;
    }
    // The packed 3x3 weights that only winograd nodes read are dropped, bytes and all.
    for (const auto& [old, winograd] : transformed) {
      bool read = false;
      for (const ir::Node& node : p.graph.nodes)
        for (int in : node.inputs) read = read || in == old;
      if (read) continue;
      p.memory.packed_weight_bytes -= static_cast<int64_t>(p.known[old].nbytes());
      p.graph.values[old].constant = Tensor();
      p.known[old] = Tensor();
    }
    if (changes > 0) analyze(p);
    return changes;
  }

 private:
  // A node copy and its inputs for a tuning run of `algorithm`: winograd reads the
  // transformed weights.
  static void setup_candidate(const std::string& algorithm, ir::Node& node,
                              std::vector<Tensor>& inputs) {
    if (algorithm != "winograd" || inputs.size() < 2 || !inputs[1].defined()) return;
    inputs[1] = kernels::ref::winograd_transform_weights(inputs[1]);
    set_string_attr(node, "weight_layout", "winograd");
  }

  // Points `node` (a FusedConv with packed weights) at the winograd transform of its
  // weights, made once per weight value; false when the weights are not a known constant.
  static bool use_winograd_weights(Program& p, ir::Node& node, std::map<int, int>& transformed) {
    const int w = node.inputs[1];
    auto layout = node.attrs.find("weight_layout");
    if (layout != node.attrs.end() && layout->second.s == "winograd") return true;
    if (w < 0 || !p.known[w].defined()) return false;
    auto it = transformed.find(w);
    if (it == transformed.end()) {
      const Tensor u = kernels::ref::winograd_transform_weights(p.known[w]);
      const std::string base = p.graph.values[w].name;
      const int v = p.add_value(fmt::format("{}_winograd", base), ops::TensorType{u.dtype(), u.shape()});
      p.graph.values[v].constant = u;
      p.known[v] = u;
      p.memory.packed_weight_bytes += static_cast<int64_t>(u.nbytes());
      it = transformed.emplace(w, v).first;
    }
    node.inputs[1] = it->second;
    set_string_attr(node, "weight_layout", "winograd");
    return true;
  }
};

}  // namespace

const Pass& select_algorithm_pass() {
  static const SelectAlgorithm pass;
  return pass;
}

}  // namespace tern::passes
