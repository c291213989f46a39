// eliminate-identity: removes nodes that return their input unchanged: Identity; Dropout
// in inference (no training_mode, or one known to be false; its mask unread); Reshape,
// Flatten, Squeeze and Unsqueeze whose output shape equals the input's; Transpose whose
// permutation keeps every dim of size > 1 in place order; Cast to the input's own dtype.
// Their readers read the input instead. When the removed node's output is a graph output,
// the input's producer is made to write that output directly (when nothing else reads it).
#include <algorithm>

#include "passes/pass.h"

namespace tern::passes {
namespace {

// True when `perm` moves no dim of size > 1 relative to another: the data order is kept.
bool keeps_data_order(const Shape& in, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t d : perm) {
    if (d < 0 || d >= static_cast<int64_t>(in.size())) return false;
    if (in[d] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

class EliminateIdentity final : public NodeRule {
 public:
  const char* name() const override { return "eliminate-identity"; }
  const char* summary() const override {
    return "remove Identity, inference Dropout and no-op Reshape/Transpose/Cast";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    const ir::Node& node = p.graph.nodes[n];
    if (!node.domain.empty() || node.inputs.empty() || node.inputs[0] < 0) return false;
    if (node.outputs.empty() || node.outputs[0] < 0) return false;
    const auto& in = p.types[node.inputs[0]];
    const auto& out = p.types[node.outputs[0]];
    if (!in || !out || !(*in == *out)) return false;
    const std::string& op = node.op_type;
    if (op == "Identity") return true;
    if (op == "Dropout") {
      const bool mask_read =
          node.outputs.size() > 1 && node.outputs[1] >= 0 &&
          (p.is_graph_output(node.outputs[1]) || !p.consumers(node.outputs[1]).empty());
      if (mask_read) return false;
      if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
        const Tensor& training = p.known[node.inputs[2]];
        if (!training.defined() || training.dtype() != DType::kBool || training.numel() != 1)
          return false;
        return training.to_int64_vector()[0] == 0;
      }
      return true;
    }
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Cast")
      return true;  // equal input and output types: nothing moves or converts
    if (op == "Transpose") {
      auto it = node.attrs.find("perm");
      if (it == node.attrs.end()) return in->shape.size() <= 1;  // default: reverse dims
      return keeps_data_order(in->shape, it->second.ints);
    }
    return false;
  }

  bool legal(const Program& p, int n) const override {
    const ir::Node& node = p.graph.nodes[n];
    const int in = node.inputs[0];
    const int out = node.outputs[0];
    if (p.layouts[in] != p.layouts[out]) return false;
    if (!p.is_graph_output(out)) return true;
    // The output is returned: let the input's producer write it, which needs an
    // intermediate input that only this node reads.
    return p.graph.values[in].producer >= 0 && !p.is_graph_output(in) &&
           p.consumers(in).size() == 1;
  }

  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    const ir::Node& node = p.graph.nodes[n];
    const int in = node.inputs[0];
    const int out = node.outputs[0];
    if (p.is_graph_output(out)) {
      ir::Node& producer = p.graph.nodes[p.graph.values[in].producer];
      std::replace(producer.outputs.begin(), producer.outputs.end(), in, out);
      p.graph.values[out].producer = p.graph.values[in].producer;
      p.graph.values[in].producer = -1;
    } else {
      p.replace_uses(out, in);
    }
    dead[n] = true;
  }
};

}  // namespace

const Pass& eliminate_identity_pass() {
  static const EliminateIdentity pass;
  return pass;
}

}  // namespace tern::passes
