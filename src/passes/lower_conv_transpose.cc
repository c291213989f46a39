// lower-conv-transpose: a 2-D ConvTranspose whose kernel equals its stride s (no padding,
// no dilation, one group: the upsampling decoders of ppocr and U-Nets) writes each input
// pixel's s x s output block from that pixel alone:
//   y[m, i*s + a, j*s + b] = B[m] + sum_c x[c, i, j] * W[c, m, a, b].
// That is a 1x1 Conv with M * s * s output channels followed by DepthToSpace (ONNX
// DepthToSpace, mode DCR: channel (a*s + b) * M + m of the Conv goes to output channel m,
// offset (a, b)):
//   Conv W'[(a*s + b)*M + m, c, 0, 0] = W[c, m, a, b],  B'[(a*s + b)*M + m] = B[m].
// The Conv runs the SIMD pointwise/direct kernels (the ConvTranspose kernel is scalar:
// ppocr's 24 -> 24 decoder at 64x96 took 2.5 ms, 11.5 GFLOP/s), and DepthToSpace is one
// copy. Before DepthToSpace, which only moves elements, the rewrite absorbs what follows
// the ConvTranspose as long as each value has that one reader:
//   - Add or Mul of a float32 constant that is one value per channel ([1, M, 1, 1], [M, 1,
//     1]) or one value in all ([], [1], [1, 1, 1, 1]), and an inference BatchNormalization:
//     folded into W' and B' (in double, rounded once);
//   - then one unary elementwise op (Relu, Sigmoid, ...) that commutes with any element
//     permutation: moved before the DepthToSpace, where fuse-epilogue makes it the Conv's
//     activation.
// ppocr's decoder (ConvTranspose, Add bias, BatchNormalization, Relu) becomes one
// FusedConv and a DepthToSpace.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ops/attrs.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

// Elementwise ops of one input whose output element i depends on input element i only,
// with their attributes (any attributes: they do not refer to positions).
bool is_pointwise_unary(const ir::Node& n) {
  static const char* const kOps[] = {"Relu", "Sigmoid",     "Tanh",      "LeakyRelu", "Elu",
                                     "Selu", "HardSigmoid", "HardSwish", "Softplus",  "Abs",
                                     "Neg",  "Exp",         "Celu",      "Mish",      "Softsign"};
  if (!n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) return false;
  return std::find(std::begin(kOps), std::end(kOps), n.op_type) != std::end(kOps);
}

// The block size s when node `n` is a ConvTranspose this pass lowers; nullopt otherwise.
std::optional<int64_t> lowerable(const Program& p, int n) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.op_type != "ConvTranspose" || !node.domain.empty()) return std::nullopt;
  if (node.inputs.size() < 2 || node.outputs.size() != 1 || node.outputs[0] < 0) {
    return std::nullopt;
  }
  const Tensor* w = float_constant(p, node.inputs[1]);
  const int x = node.inputs[0], y = node.outputs[0];
  if (!w || w->rank() != 4 || x < 0 || !p.types[x] || !p.types[y]) return std::nullopt;
  const int64_t s = w->dim(2);
  if (s < 1 || w->dim(3) != s) return std::nullopt;
  if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
    const Tensor* b = float_constant(p, node.inputs[2]);
    if (!b || b->shape() != Shape{w->dim(1)}) return std::nullopt;
  }
  try {
    const ops::Attrs a(node.attrs, fmt::format("ConvTranspose '{}'", node.name));
    const auto all = [](const std::vector<int64_t>& v, int64_t want) {
      return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == want; });
    };
    if (a.get_int("group", 1) != 1) return std::nullopt;
    if (a.get_ints("strides", {1, 1}) != std::vector<int64_t>{s, s}) return std::nullopt;
    if (!all(a.get_ints("dilations", {}), 1) || !all(a.get_ints("pads", {}), 0)) {
      return std::nullopt;
    }
    if (!all(a.get_ints("output_padding", {}), 0)) return std::nullopt;
    const std::string pad = a.get_string("auto_pad", "NOTSET");
    if (pad != "NOTSET" && pad != "VALID") return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // analyze() accepted the node; stay safe anyway
  }
  // What the equivalence needs, whatever the attributes say (output_shape included).
  const Shape& xs = p.types[x]->shape;
  const Shape& ys = p.types[y]->shape;
  const Shape want = xs.size() == 4 ? Shape{xs[0], w->dim(1), xs[2] * s, xs[3] * s} : Shape{};
  if (p.types[x]->dtype != DType::kFloat32 || xs.size() != 4 || xs[1] != w->dim(0) || ys != want) {
    return std::nullopt;
  }
  return s;
}

// y = x * s + t of node `n` applied to value `v` of `channels` channels, when `n` is an
// Add or Mul of v and a per-channel constant (per_channel_constant) or an inference
// BatchNormalization of v.
std::optional<ChannelAffine> absorbable(const Program& p, int n, int v, int64_t channels) {
  const ir::Node& node = p.graph.nodes[n];
  if (!node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] < 0) {
    return std::nullopt;
  }
  if (node.op_type == "BatchNormalization") {
    if (node.inputs.empty() || node.inputs[0] != v) return std::nullopt;
    return batch_norm_affine(p, n);
  }
  if ((node.op_type != "Add" && node.op_type != "Mul") || node.inputs.size() != 2) {
    return std::nullopt;
  }
  const int other = node.inputs[0] == v ? node.inputs[1] : node.inputs[0];
  if (node.inputs[0] != v && node.inputs[1] != v) return std::nullopt;
  if (other == v) return std::nullopt;
  // The output must keep v's shape (a constant of higher rank would broadcast it).
  if (!p.types[node.outputs[0]] || p.types[node.outputs[0]]->shape != p.types[v]->shape) {
    return std::nullopt;
  }
  const std::optional<std::vector<double>> k = per_channel_constant(p, other, p.types[v]->shape);
  if (!k) return std::nullopt;
  ChannelAffine a;
  a.s = node.op_type == "Mul" ? *k : std::vector<double>(channels, 1.0);
  a.t = node.op_type == "Add" ? *k : std::vector<double>(channels, 0.0);
  return a;
}

class LowerConvTranspose final : public NodeRule {
 public:
  const char* name() const override { return "lower-conv-transpose"; }
  const char* summary() const override {
    return "ConvTranspose with kernel == stride becomes a 1x1 Conv (absorbing the bias, "
           "scale and BatchNormalization after it) and a DepthToSpace";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    return p.graph.nodes[n].op_type == "ConvTranspose";
  }
  bool legal(const Program& p, int n) const override { return lowerable(p, n).has_value(); }

  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    const int64_t s = *lowerable(p, n);
    const Tensor& w = *float_constant(p, p.graph.nodes[n].inputs[1]);
    const int64_t c_count = w.dim(0), m_count = w.dim(1), taps = s * s;
    const std::vector<float> wv = w.to_float_vector();
    std::vector<double> scale(m_count, 1.0), bias(m_count, 0.0);
    const ir::Node& ct = p.graph.nodes[n];
    if (ct.inputs.size() > 2 && ct.inputs[2] >= 0) {
      const std::vector<float> b = float_constant(p, ct.inputs[2])->to_float_vector();
      std::copy(b.begin(), b.end(), bias.begin());
    }
    // The per-channel affine ops after it, then one pointwise activation.
    int last = ct.outputs[0];  // the value the DepthToSpace will write
    for (int next = sole_consumer(p, last); next >= 0; next = sole_consumer(p, last)) {
      const std::optional<ChannelAffine> a = absorbable(p, next, last, m_count);
      if (!a) break;
      for (int64_t m = 0; m < m_count; ++m) {
        scale[m] *= a->s[m];
        bias[m] = bias[m] * a->s[m] + a->t[m];
      }
      dead[next] = true;
      last = p.graph.nodes[next].outputs[0];
    }
    const int act = sole_consumer(p, last);
    const bool move_act = act >= 0 && is_pointwise_unary(p.graph.nodes[act]);

    std::vector<float> w_new(taps * m_count * c_count), b_new(taps * m_count);
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t m = 0; m < m_count; ++m) {
        const int64_t o = t * m_count + m;
        b_new[o] = static_cast<float>(bias[m]);
        for (int64_t c = 0; c < c_count; ++c) {
          w_new[o * c_count + c] = static_cast<float>(wv[(c * m_count + m) * taps + t] * scale[m]);
        }
      }
    }
    const std::string name = p.graph.nodes[n].name;
    const int w_id =
        add_constant(p, fmt::format("{}_1x1", name), w_new, {taps * m_count, c_count, 1, 1});
    const int b_id = add_constant(p, fmt::format("{}_1x1_bias", name), b_new, {taps * m_count});
    const int z = p.add_value(fmt::format("{}_blocks", name), std::nullopt);

    ir::Node& conv = p.graph.nodes[n];
    const int old_out = conv.outputs[0];
    conv.op_type = "Conv";
    conv.attrs.clear();
    set_ints_attr(conv, "kernel_shape", {1, 1});
    conv.inputs = {conv.inputs[0], w_id, b_id};
    conv.outputs = {z};
    p.graph.values[z].producer = n;
    if (old_out != last) p.graph.values[old_out].producer = -1;

    int d2s_in = z;
    if (move_act) {
      // The activation reads the Conv's blocks and the DepthToSpace writes its output.
      const int a_out = p.graph.nodes[act].outputs[0];
      const int moved = p.add_value(fmt::format("{}_act", name), std::nullopt);
      ir::Node& a = p.graph.nodes[act];
      a.inputs = {z};
      a.outputs = {moved};
      p.graph.values[moved].producer = act;
      d2s_in = moved;
      last = a_out;
    }
    ir::Node d2s;
    d2s.name = unique_node_name(p, fmt::format("{}_depth_to_space", name));
    d2s.op_type = "DepthToSpace";
    d2s.inputs = {d2s_in};
    d2s.outputs = {last};
    set_int_attr(d2s, "blocksize", s);
    p.graph.values[last].producer = static_cast<int>(p.graph.nodes.size());
    p.graph.nodes.push_back(std::move(d2s));
    dead.resize(p.graph.nodes.size(), false);
  }
};

}  // namespace

const Pass& lower_conv_transpose_pass() {
  static const LowerConvTranspose pass;
  return pass;
}

}  // namespace tern::passes
