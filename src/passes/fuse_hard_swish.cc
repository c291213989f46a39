// fuse-hard-swish: HardSwish written out as elementwise ops, as PaddlePaddle's exporter
// (ppocr's PP-LCNet backbone: 24 of them) and older PyTorch exports do,
//   y = x * Clip(x + 3, 0, 6) / 6     (or the Mul by 1/6 instead of the Div),
// becomes one HardSwish(x) (ONNX HardSwish: x * max(0, min(1, x / 6 + 1/2))), which
// fuse-epilogue then makes the activation of the Conv before it. Four memory passes
// (Add, Clip, Mul, Div) become none. The two forms round differently (by at most a few
// units in the last place), like any fusion that reorders float arithmetic.
//
// Matched at the Div (or final Mul): its other operand is the scalar constant 6 (1/6);
// its input is Mul(x, c) (either order) where c = Clip(a, 0, 6) (bounds as constant
// inputs, or attributes before opset 11) and a = Add(x, 3) (either order); a, c and the
// Mul's output are each read by the next op only (and are not graph outputs); the output
// has x's shape (scalar constants of higher rank would broadcast x). x may have other
// readers.
#include <cmath>
#include <optional>

#include "ops/attrs.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

// The single float value of known scalar (one-element) float32 value `v`, or nullopt.
std::optional<float> scalar_value(const Program& p, int v) {
  if (v < 0 || !p.known[v].defined() || p.known[v].dtype() != DType::kFloat32 ||
      p.known[v].numel() != 1) {
    return std::nullopt;
  }
  return p.known[v].to_float_vector()[0];
}

// The input of binary node `n` (op `op`) that is not the scalar constant `k`, or -1.
int other_than(const Program& p, int n, const char* op, float k) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.op_type != op || !node.domain.empty() || node.inputs.size() != 2) return -1;
  for (int i = 0; i < 2; ++i) {
    const std::optional<float> c = scalar_value(p, node.inputs[1 - i]);
    if (c && *c == k && node.inputs[i] >= 0) return node.inputs[i];
  }
  return -1;
}

// The node writing `v` when `v` is read by `reader` only; -1 otherwise.
int sole_producer_for(const Program& p, int v, int reader) {
  if (v < 0 || sole_consumer(p, v) != reader) return -1;
  return p.graph.values[v].producer;
}

// Clip node `n`'s bounds when they are known.
bool clips_to(const Program& p, int n, float lo, float hi) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.op_type != "Clip" || !node.domain.empty() || node.inputs.empty()) return false;
  if (p.graph.opset < 11) {
    const ops::Attrs a(node.attrs, node.name);
    return a.get_float("min", -INFINITY) == lo && a.get_float("max", INFINITY) == hi;
  }
  if (node.inputs.size() < 3) return false;
  const std::optional<float> min = scalar_value(p, node.inputs[1]);
  const std::optional<float> max = scalar_value(p, node.inputs[2]);
  return min && max && *min == lo && *max == hi;
}

// The x of a decomposed HardSwish ending at node `n`, with the nodes to remove; nullopt
// when `n` does not end one.
struct HardSwishMatch {
  int x = -1;
  int mul = -1, clip = -1, add = -1;
};
std::optional<HardSwishMatch> match(const Program& p, int n) {
  const ir::Node& last = p.graph.nodes[n];
  if (last.outputs.size() != 1 || last.outputs[0] < 0) return std::nullopt;
  int product = other_than(p, n, "Div", 6.0f);
  if (product < 0) product = other_than(p, n, "Mul", 1.0f / 6.0f);
  HardSwishMatch m;
  m.mul = sole_producer_for(p, product, n);
  if (m.mul < 0) return std::nullopt;
  const ir::Node& mul = p.graph.nodes[m.mul];
  if (mul.op_type != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const int x = mul.inputs[i], c = mul.inputs[1 - i];
    m.clip = sole_producer_for(p, c, m.mul);
    if (m.clip < 0 || !clips_to(p, m.clip, 0.0f, 6.0f)) continue;
    m.add = sole_producer_for(p, p.graph.nodes[m.clip].inputs[0], m.clip);
    if (m.add < 0 || other_than(p, m.add, "Add", 3.0f) != x || x < 0) continue;
    // HardSwish(x) has x's shape: a constant of higher rank would have broadcast x.
    const int y = last.outputs[0];
    if (!p.types[x] || !p.types[y] || p.types[x]->shape != p.types[y]->shape) continue;
    m.x = x;
    return m;
  }
  return std::nullopt;
}

class FuseHardSwish final : public NodeRule {
 public:
  const char* name() const override { return "fuse-hard-swish"; }
  const char* summary() const override {
    return "x * Clip(x + 3, 0, 6) / 6 written out as elementwise ops becomes one HardSwish";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    const std::string& op = p.graph.nodes[n].op_type;
    return (op == "Div" || op == "Mul") && p.graph.nodes[n].domain.empty();
  }
  bool legal(const Program& p, int n) const override { return match(p, n).has_value(); }
  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    const HardSwishMatch m = *match(p, n);
    ir::Node& node = p.graph.nodes[n];
    node.op_type = "HardSwish";
    node.attrs.clear();
    node.inputs = {m.x};
    dead[m.mul] = dead[m.clip] = dead[m.add] = true;
  }
};

}  // namespace

const Pass& fuse_hard_swish_pass() {
  static const FuseHardSwish pass;
  return pass;
}

}  // namespace tern::passes
