// in-place: an elementwise op (or activation) writes its result into the buffer of an
// input that nothing reads afterwards, instead of a new one (OneFlow's in-place
// decision, made once at plan time). Legal when the input has the output's dtype and
// shape (so element i is read before element i is written, and by no other index), is
// an intermediate written by a node that owns its buffer (not a view, constant or graph
// input), and is read by this node only. The output is then not allocated at all; the
// memory planner gives both values one buffer that lives until the output's last use.
#include <set>
#include <string>

#include "passes/pass.h"

namespace tern::passes {
namespace {

// Ops whose kernels compute out[i] from in[i] (and a broadcast of the other inputs) in
// one pass over the elements, so out may alias an input of the same shape.
bool elementwise(const ir::Node& node) {
  static const std::set<std::string> kOps = {
      // unary
      "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Exp", "Log", "Sqrt",
      "Neg", "Abs", "Sign", "Erf", "Elu", "Selu", "Celu", "Softplus", "Softsign", "ThresholdedRelu",
      "Reciprocal", "Floor", "Ceil", "Round", "Clip",
      // binary, with numpy broadcasting of the other input
      "Add", "Sub", "Mul", "Div", "Pow", "PRelu"};
  static const std::set<std::string> kInternal = {"ScaleShift"};
  return node.domain.empty() ? kOps.count(node.op_type) > 0 : kInternal.count(node.op_type) > 0;
}

class InPlace final : public Pass {
 public:
  const char* name() const override { return "in-place"; }
  const char* summary() const override {
    return "elementwise ops write into an input buffer that has no later use";
  }

  int run(Program& p) const override {
    int changes = 0;
    for (int n : p.order()) {
      const ir::Node& node = p.graph.nodes[n];
      if (!elementwise(node) || node.outputs.size() != 1 || node.outputs[0] < 0) continue;
      const int out = node.outputs[0];
      if (!p.types[out] || p.is_graph_output(out)) continue;
      for (int in : node.inputs) {
        if (!reusable(p, in, n, *p.types[out])) continue;
        p.buffers[out].kind = BufferAssignment::Kind::kInPlace;
        p.buffers[out].reuses = in;
        ++changes;
        break;
      }
    }
    return changes;
  }

 private:
  static bool reusable(const Program& p, int in, int n, const ops::TensorType& out_type) {
    if (in < 0 || !p.types[in] || !(*p.types[in] == out_type)) return false;
    const int producer = p.graph.values[in].producer;
    if (producer < 0 || p.is_graph_output(in)) return false;  // constant or graph input
    if (p.ops[producer]->returns_view()) return false;        // its buffer may be another value's
    if (p.buffers[in].kind == BufferAssignment::Kind::kView) return false;
    return p.consumers(in) == std::vector<int>{n};
  }
};

}  // namespace

const Pass& in_place_pass() {
  static const InPlace pass;
  return pass;
}

}  // namespace tern::passes
