// fuse-epilogue: folds what follows a Conv, Gemm or MatMul into one fused node
// (tern.FusedConv, tern.FusedGemm, tern.FusedMatMul; epilogue in ops/epilogue.h), one
// following node per rewrite (through a Concat, into each of its producers at once), so
// chains fuse over the sweeps of the NodeRule:
//   - Add of a constant bias: Conv with a [M,1,1] / [1,M,1,1] / scalar constant (folded
//     into B); Gemm without C with a constant broadcastable to [M, N] (becomes C, beta 1);
//     MatMul with a constant that varies along the last dim only (becomes the bias [N]);
//   - an activation: Relu, Clip (min and max constant: attributes before opset 11, inputs
//     from 11), LeakyRelu, HardSigmoid, HardSwish, Sigmoid, and SiLU as Mul(x, Sigmoid(x));
//   - an activation (not SiLU) after a Concat of such producers' outputs: act(Concat(a,
//     b, c)) = Concat(act(a), act(b), act(c)), element by element, so every producer takes
//     the activation and the Concat writes the activation's output. RetinaFace's SSH
//     modules (three convs, Concat, Relu): the Relu was a pass over the Concat's output of
//     its own, 0.109 ms of RetinaFace 640's 15 at 1 thread;
//   - a residual Add of another tensor of the same type as the output (either operand
//     order), as in ResNet (Conv -> Add -> Relu) and MobileNetV2 (Conv -> Add);
//   - a tern.ScaleShift (plain layout; from fold-batch-norm) whose scale and shift are
//     constants with one value each in all channels, into a Conv's epilogue as its affine
//     map act(v) * scale + shift: PaddlePaddle's LearnableAffineBlock, a scalar Mul and
//     Add after the HardSwish of 14 of ppocr's convs (fold-batch-norm merges each pair
//     into a ScaleShift, and cannot fold it into the padded depthwise conv after it).
// Legal when:
//   - the fused node's current output t is read by the absorbed node only and is not a
//     graph output (sole_consumer(); for SiLU, t is read by exactly the Sigmoid and the
//     Mul, and the Sigmoid's output only by the Mul): t disappears, so no one else may
//     need it; through a Concat, its output is read by the activation only, and each of
//     its inputs by the Concat only (they now hold activated values);
//   - the absorbed node's output has t's type (no broadcast grows the result);
//   - the stages keep their order in the epilogue acc + bias [+ z] -> act -> affine
//     [+ z]: a bias only before any activation, affine map or residual, one activation,
//     and it must not follow a residual added after an activation nor an affine map; one
//     affine map, not after a residual added after the activation; one residual (added
//     before the activation when neither an activation nor an affine map is fused yet,
//     so that a following activation still fuses: act(acc + b + z));
//   - a residual z is not t itself (Add(t, t)) and is not computed from t (the fused node
//     reads z, so z must not depend on it: the graph stays a DAG; checked by walking the
//     consumers of t);
//   - an existing FusedConv is still plain (NCHW, OIHW; the layout passes run later) and
//     an existing Conv bias is a known constant (the new bias is computed at plan time).
// Every value stays float32 (Conv, Gemm and MatMul are float-only here). The fused node
// keeps the producer's name and writes the absorbed node's output value (through a
// Concat, the Concat writes it; its producers keep their outputs, now activated).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "ops/epilogue.h"
#include "ops/registry.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

using kernels::ref::Activation;
using kernels::ref::Epilogue;

enum class Family { kConv, kGemm, kMatMul };

// The fusable producer at node n: Conv, Gemm, MatMul or their fused forms (a FusedConv
// only while plain). nullopt otherwise.
std::optional<Family> family_of(const Program& p, int n) {
  if (n < 0) return std::nullopt;
  const ir::Node& node = p.graph.nodes[n];
  if (node.outputs.size() != 1 || node.outputs[0] < 0) return std::nullopt;
  const auto& t = p.types[node.outputs[0]];
  if (!t || t->dtype != DType::kFloat32) return std::nullopt;
  if (node.domain.empty()) {
    if (node.op_type == "Conv") return Family::kConv;
    if (node.op_type == "Gemm") return Family::kGemm;
    if (node.op_type == "MatMul") return Family::kMatMul;
    return std::nullopt;
  }
  if (node.domain != ops::kInternalDomain) return std::nullopt;
  if (node.op_type == "FusedConv") {
    auto attr_is = [&](const char* name, const char* plain) {
      auto it = node.attrs.find(name);
      return it == node.attrs.end() || it->second.s == plain;
    };
    if (attr_is("x_layout", "NCHW") && attr_is("y_layout", "NCHW") &&
        attr_is("weight_layout", "OIHW"))
      return Family::kConv;
    return std::nullopt;
  }
  if (node.op_type == "FusedGemm") return Family::kGemm;
  if (node.op_type == "FusedMatMul") return Family::kMatMul;
  return std::nullopt;
}

using ops::kBiasInput;
using ops::kResidualInput;

int input_at(const ir::Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : -1;
}

// What the producer already fuses.
struct Stages {
  Epilogue epilogue;
  bool residual = false;
};

Stages stages_of(const ir::Node& node) {
  Stages s;
  if (node.domain.empty()) return s;  // plain Conv / Gemm / MatMul: nothing fused yet
  s.epilogue = ops::parse_epilogue(ops::Attrs(node.attrs, node.name));
  s.residual = input_at(node, kResidualInput) >= 0;
  return s;
}

// One possible absorption at node e.
struct Match {
  enum class Kind {
    kBias,
    kActivation,
    kResidual,
    kAffine,
    kConcatActivation
  } kind = Kind::kActivation;
  int producer = -1;  // the Conv / Gemm / MatMul (or fused) node; kConcatActivation: the Concat
  int t = -1;         // its output, read by e
  int other = -1;     // kBias: the constant; kResidual: z
  int sigmoid = -1;   // SiLU: the Sigmoid node between t and the Mul
  Family family = Family::kConv;
  Epilogue activation;  // kActivation, kConcatActivation: the activation and its parameters
  float scale = 1.0f;   // kAffine: the map
  float shift = 0.0f;
};

// The one value of every element of constant value v (float32, at least one element),
// or nullopt when v is not known at plan time or its elements differ in any bit (+0 and
// -0 differ: a shift of -0 keeps a -0 product's sign, +0 does not).
std::optional<float> uniform_constant(const Program& p, int v) {
  if (v < 0 || !p.known[v].defined() || p.known[v].dtype() != DType::kFloat32) return std::nullopt;
  const std::vector<float> values = p.known[v].to_float_vector();
  if (values.empty()) return std::nullopt;
  for (float x : values)
    if (std::bit_cast<uint32_t>(x) != std::bit_cast<uint32_t>(values[0])) return std::nullopt;
  return values[0];
}

// The constant per-channel (Conv) / per-column (MatMul) bias `c` for an output of shape
// `y`, or an empty vector when c varies along another dim or would grow y. `axis` is the
// dim the bias runs along (1 for Conv, rank - 1 for MatMul).
std::vector<float> bias_vector(const Tensor& c, const Shape& y, size_t axis) {
  const Shape& cs = c.shape();
  if (c.dtype() != DType::kFloat32 || cs.size() > y.size() || y.size() <= axis) return {};
  const size_t lead = y.size() - cs.size();
  int64_t along = 1;
  for (size_t i = 0; i < cs.size(); ++i) {
    const size_t d = lead + i;
    if (d == axis && (cs[i] == y[d] || cs[i] == 1)) {
      along = cs[i];
    } else if (cs[i] != 1) {
      return {};
    }
  }
  const std::vector<float> values = c.to_float_vector();
  std::vector<float> out(static_cast<size_t>(y[axis]));
  for (size_t m = 0; m < out.size(); ++m) out[m] = values[along == 1 ? 0 : m];
  return out;
}

// True when c broadcasts unidirectionally to the Gemm output [M, N] (Gemm's C rule).
bool gemm_bias_fits(const Tensor& c, const Shape& y) {
  const Shape& cs = c.shape();
  if (c.dtype() != DType::kFloat32 || cs.size() > 2) return false;
  for (size_t i = 0; i < cs.size(); ++i)
    if (cs[i] != 1 && cs[i] != y[2 - cs.size() + i]) return false;
  return true;
}

// The activation node e as an epilogue activation, or nullopt when it is not one tern
// fuses (or Clip's bounds are not known at plan time).
std::optional<Epilogue> activation_of(const Program& p, const ir::Node& e) {
  Epilogue a;
  const ops::Attrs attrs(e.attrs, e.name);
  const std::string& op = e.op_type;
  if (op == "Relu") {
    a.activation = Activation::kRelu;
  } else if (op == "LeakyRelu") {
    a.activation = Activation::kLeakyRelu;
    a.alpha = attrs.get_float("alpha", 0.01f);
  } else if (op == "HardSigmoid") {
    a.activation = Activation::kHardSigmoid;
    a.alpha = attrs.get_float("alpha", 0.2f);
    a.beta = attrs.get_float("beta", 0.5f);
  } else if (op == "HardSwish") {
    a.activation = Activation::kHardSwish;
  } else if (op == "Sigmoid") {
    a.activation = Activation::kSigmoid;
  } else if (op == "Clip") {
    a.activation = Activation::kClip;
    if (p.graph.opset < 11) {  // Clip-6: attributes, default the float range
      a.alpha = attrs.get_float("min", std::numeric_limits<float>::lowest());
      a.beta = attrs.get_float("max", std::numeric_limits<float>::max());
    } else {  // Clip-11+: optional scalar inputs, missing = unbounded
      a.alpha = -std::numeric_limits<float>::infinity();
      a.beta = std::numeric_limits<float>::infinity();
      for (size_t i = 1; i <= 2; ++i) {
        const int v = input_at(e, i);
        if (v < 0) continue;
        const Tensor& bound = p.known[v];
        if (!bound.defined() || bound.dtype() != DType::kFloat32 || bound.numel() != 1)
          return std::nullopt;
        (i == 1 ? a.alpha : a.beta) = bound.to_float_vector()[0];
      }
    }
  } else {
    return std::nullopt;
  }
  return a;
}

// The structural candidates at node e (cheap: op types and producers only).
std::vector<Match> candidates(const Program& p, int e) {
  std::vector<Match> out;
  const ir::Node& node = p.graph.nodes[e];
  auto producer_of = [&](int v) { return v < 0 ? -1 : p.graph.values[v].producer; };
  if (node.domain == ops::kInternalDomain && node.op_type == "ScaleShift" &&
      node.inputs.size() == 3 && node.outputs.size() == 1 && node.outputs[0] >= 0) {
    const ops::Attrs attrs(node.attrs, node.name);
    const auto scale = uniform_constant(p, node.inputs[1]);
    const auto shift = uniform_constant(p, node.inputs[2]);
    Match m;
    m.kind = Match::Kind::kAffine;
    m.t = node.inputs[0];
    m.producer = producer_of(m.t);
    const auto family = family_of(p, m.producer);
    if (attrs.get_int("block", 0) == 0 && scale && shift && family == Family::kConv) {
      m.family = *family;
      m.scale = *scale;
      m.shift = *shift;
      out.push_back(m);
    }
    return out;
  }
  if (!node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] < 0) return out;
  if (node.inputs.empty()) return out;

  if ((node.op_type == "Add" || node.op_type == "Mul") && node.inputs.size() == 2) {
    for (int k = 0; k < 2; ++k) {
      Match m;
      m.t = node.inputs[k];
      m.other = node.inputs[1 - k];
      m.producer = producer_of(m.t);
      const auto family = family_of(p, m.producer);
      if (!family || m.other < 0) continue;
      m.family = *family;
      if (node.op_type == "Add") {
        m.kind = Match::Kind::kResidual;
        if (p.known[m.other].defined() && p.types[m.t]) {
          // A constant of the bias's shape is a bias; of the output's shape, a residual.
          const Shape& y = p.types[m.t]->shape;
          const Tensor& c = p.known[m.other];
          const bool bias = m.family == Family::kConv     ? !bias_vector(c, y, 1).empty()
                            : m.family == Family::kMatMul ? !bias_vector(c, y, y.size() - 1).empty()
                                                          : gemm_bias_fits(c, y);
          if (bias) m.kind = Match::Kind::kBias;
        }
        out.push_back(m);
      } else {  // Mul(t, Sigmoid(t)): SiLU
        const int s = producer_of(m.other);
        if (s < 0) continue;
        const ir::Node& sig = p.graph.nodes[s];
        if (!sig.domain.empty() || sig.op_type != "Sigmoid" || sig.inputs.size() != 1 ||
            sig.inputs[0] != m.t)
          continue;
        m.kind = Match::Kind::kActivation;
        m.sigmoid = s;
        m.activation.activation = Activation::kSilu;
        out.push_back(m);
      }
    }
    return out;
  }

  Match m;
  m.t = node.inputs[0];
  m.producer = producer_of(m.t);
  const auto act = activation_of(p, node);
  if (!act) return out;
  m.activation = *act;
  if (m.producer >= 0 && p.graph.nodes[m.producer].domain.empty() &&
      p.graph.nodes[m.producer].op_type == "Concat") {
    m.kind = Match::Kind::kConcatActivation;
    out.push_back(m);
    return out;
  }
  const auto family = family_of(p, m.producer);
  if (!family) return out;
  m.family = *family;
  m.kind = Match::Kind::kActivation;
  out.push_back(m);
  return out;
}

// Whether producer f's epilogue can take an activation after what it fuses already.
bool takes_activation(const ir::Node& f) {
  const Stages s = stages_of(f);
  const bool residual_after = s.residual && !s.epilogue.residual_before_activation;
  return s.epilogue.activation == Activation::kNone && !s.epilogue.affine && !residual_after;
}

// The producers of Concat node c's inputs (each once), or nullopt unless every input is
// the output of a fusable producer (family_of) that only c reads and that can take an
// activation.
std::optional<std::set<int>> concat_producers(const Program& p, int c) {
  std::set<int> producers;
  for (int v : p.graph.nodes[c].inputs) {
    if (v < 0) return std::nullopt;
    const int f = p.graph.values[v].producer;
    if (!family_of(p, f) || sole_consumer(p, v) != c || !takes_activation(p.graph.nodes[f]))
      return std::nullopt;
    producers.insert(f);
  }
  if (producers.empty()) return std::nullopt;
  return producers;
}

// True when value `target` is computed from value `from` (a path of nodes from a reader
// of `from` to the producer of `target`), or is `from` itself.
bool depends_on(const Program& p, int target, int from) {
  std::set<int> seen;
  std::vector<int> work = {from};
  while (!work.empty()) {
    const int v = work.back();
    work.pop_back();
    if (v == target) return true;
    if (!seen.insert(v).second) continue;
    for (int n : p.consumers(v))
      for (int out : p.graph.nodes[n].outputs)
        if (out >= 0) work.push_back(out);
  }
  return false;
}

bool is_legal(const Program& p, int e, const Match& m) {
  const ir::Node& node = p.graph.nodes[e];
  const ir::Node& f = p.graph.nodes[m.producer];
  const int out = node.outputs[0];
  if (!p.types[m.t] || !p.types[out] || !(*p.types[out] == *p.types[m.t])) return false;
  if (m.kind == Match::Kind::kConcatActivation) {
    return sole_consumer(p, m.t) == e && concat_producers(p, m.producer).has_value();
  }
  // t must disappear: read by e only (SiLU: by the Sigmoid and e), not a graph output.
  if (m.sigmoid >= 0) {
    const std::vector<int> readers = p.consumers(m.t);
    const std::set<int> set(readers.begin(), readers.end());
    if (p.is_graph_output(m.t) || set != std::set<int>{m.sigmoid, e}) return false;
    if (sole_consumer(p, p.graph.nodes[m.sigmoid].outputs[0]) != e) return false;
  } else if (sole_consumer(p, m.t) != e) {
    return false;
  }
  const Stages s = stages_of(f);
  const bool has_activation = s.epilogue.activation != Activation::kNone;
  const bool residual_after = s.residual && !s.epilogue.residual_before_activation;
  switch (m.kind) {
    case Match::Kind::kBias:
      if (has_activation || s.epilogue.affine || s.residual) return false;
      if (m.family == Family::kConv) {
        const int b = input_at(f, kBiasInput);
        return b < 0 || p.known[b].defined();
      }
      if (m.family == Family::kGemm) return input_at(f, kBiasInput) < 0;
      {
        const int b = input_at(f, kBiasInput);  // FusedMatMul's bias
        return b < 0 || p.known[b].defined();
      }
    case Match::Kind::kActivation:
      return takes_activation(f);
    case Match::Kind::kConcatActivation:
      return false;  // decided above
    case Match::Kind::kAffine:
      return !s.epilogue.affine && !residual_after;
    case Match::Kind::kResidual:
      if (s.residual || m.other == m.t || !p.types[m.other]) return false;
      if (!(*p.types[m.other] == *p.types[m.t])) return false;
      return !depends_on(p, m.other, m.t);
  }
  return false;
}

// A new constant value holding `t`, named after `base`.
int add_tensor_constant(Program& p, const std::string& base, const Tensor& t) {
  const int v = p.add_value(base, ops::TensorType{t.dtype(), t.shape()});
  p.graph.values[v].constant = t;
  p.known[v] = t;
  return v;
}

void set_input(ir::Node& node, size_t i, int v) {
  if (node.inputs.size() <= i) node.inputs.resize(i + 1, -1);
  node.inputs[i] = v;
}

class FuseEpilogue final : public NodeRule {
 public:
  const char* name() const override { return "fuse-epilogue"; }
  const char* summary() const override {
    return "fuse bias, activation (also one after a Concat of them) and residual Add into "
           "Conv/Gemm/MatMul, and a ScaleShift of one scale and shift into a Conv";
  }

 protected:
  bool applies_to(const Program& p, int n) const override { return !candidates(p, n).empty(); }

  bool legal(const Program& p, int n) const override {
    for (const Match& m : candidates(p, n))
      if (is_legal(p, n, m)) return true;
    return false;
  }

  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    Match m;
    for (const Match& c : candidates(p, n)) {
      if (is_legal(p, n, c)) {
        m = c;
        break;
      }
    }
    const int out = p.graph.nodes[n].outputs[0];
    if (m.kind == Match::Kind::kConcatActivation) {
      // Each producer activates its part of the Concat.
      const std::set<int> producers = concat_producers(p, m.producer).value();
      for (int f : producers) absorb(p, m, f);
    } else {
      absorb(p, m, m.producer);
    }
    // The producer (through a Concat: the Concat) now writes e's output; t is left without
    // producer or reader.
    p.graph.nodes[m.producer].outputs[0] = out;
    p.graph.values[out].producer = m.producer;
    p.graph.values[m.t].producer = -1;
    dead[n] = true;
    if (m.sigmoid >= 0) dead[m.sigmoid] = true;
  }

 private:
  // Adds m's stage to the epilogue of fusable producer node `producer` (made a fused node
  // if it is still a plain Conv, Gemm or MatMul).
  static void absorb(Program& p, const Match& m, int producer) {
    const Family family = *family_of(p, producer);
    ir::Node& f = p.graph.nodes[producer];
    Stages s = stages_of(f);
    if (f.domain.empty()) {
      f.domain = ops::kInternalDomain;
      f.op_type = family == Family::kConv   ? "FusedConv"
                  : family == Family::kGemm ? "FusedGemm"
                                            : "FusedMatMul";
    }
    switch (m.kind) {
      case Match::Kind::kBias:
        fold_bias(p, m, f);
        break;
      case Match::Kind::kActivation:
      case Match::Kind::kConcatActivation:
        s.epilogue.activation = m.activation.activation;
        s.epilogue.alpha = m.activation.alpha;
        s.epilogue.beta = m.activation.beta;
        break;
      case Match::Kind::kResidual:
        // With no activation (nor affine map) yet, add z before it, so a following
        // activation still fuses.
        s.epilogue.residual_before_activation = !s.epilogue.maps_values();
        set_input(f, kResidualInput, m.other);
        break;
      case Match::Kind::kAffine:
        s.epilogue.affine = true;
        s.epilogue.scale = m.scale;
        s.epilogue.shift = m.shift;
        break;
    }
    if (m.kind != Match::Kind::kResidual && !s.residual)
      s.epilogue.residual_before_activation = false;
    ops::write_epilogue(s.epilogue, f.attrs);
  }

  // Folds the constant m.other into f's bias input.
  static void fold_bias(Program& p, const Match& m, ir::Node& f) {
    const Tensor c = p.known[m.other];  // copies: add_tensor_constant() resizes p.known, p.types
    const Shape y = p.types[m.t]->shape;
    if (m.family == Family::kGemm) {  // C = the constant, as given (it broadcasts)
      set_input(f, kBiasInput, m.other);
      ir::Attribute beta;
      beta.type = ir::Attribute::Type::kFloat;
      beta.f = 1.0f;
      f.attrs["beta"] = beta;
      return;
    }
    std::vector<float> bias = bias_vector(c, y, m.family == Family::kConv ? 1 : y.size() - 1);
    const int old = input_at(f, kBiasInput);
    if (old >= 0) {
      const std::vector<float> b = p.known[old].to_float_vector();
      for (size_t i = 0; i < bias.size(); ++i) bias[i] = b[i] + bias[i];
    }
    const int64_t size = static_cast<int64_t>(bias.size());
    set_input(f, kBiasInput,
              add_tensor_constant(p, f.name + "_bias", Tensor::from_vector(bias, {size})));
  }
};

}  // namespace

const Pass& fuse_epilogue_pass() {
  static const FuseEpilogue pass;
  return pass;
}

}  // namespace tern::passes
