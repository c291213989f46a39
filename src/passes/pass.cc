#include "passes/pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/attrs.h"
#include "ops/epilogue.h"
#include "ops/registry.h"

namespace tern::passes {

int NodeRule::run(Program& p) const {
  int changes = 0;
  // Each sweep rewrites what it can; a rewrite can expose another match (a fused Conv
  // followed by an Add), so sweep until one changes nothing. Every rewrite removes at
  // least one node or changes one node's op, so the node count bounds the sweeps.
  for (size_t sweep = 0; sweep <= p.graph.nodes.size() + 1; ++sweep) {
    std::vector<bool> dead(p.graph.nodes.size(), false);
    int made = 0;
    for (int n : p.order()) {
      if (dead[n] || !applies_to(p, n) || !legal(p, n)) continue;
      rewrite(p, n, dead);
      ++made;
    }
    if (made == 0) break;
    changes += made;
    p.erase_nodes(dead);
    analyze(p);
  }
  return changes;
}

int sole_consumer(const Program& p, int v) {
  if (v < 0 || p.is_graph_output(v)) return -1;
  const std::vector<int> readers = p.consumers(v);
  return readers.size() == 1 ? readers[0] : -1;
}

std::string string_attr(const ir::Node& n, const char* name, const char* def) {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->second.type == ir::Attribute::Type::kString ? it->second.s
                                                                                 : def;
}

int64_t int_attr(const ir::Node& n, const char* name, int64_t def) {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->second.type == ir::Attribute::Type::kInt ? it->second.i : def;
}

bool pointwise_one_group(const ir::Node& conv, const Shape& w) {
  if (int_attr(conv, "group", 1) != 1) return false;
  for (size_t i = 2; i < w.size(); ++i) {
    if (w[i] != 1) return false;
  }
  for (const char* name : {"strides", "pads"}) {
    auto it = conv.attrs.find(name);
    if (it == conv.attrs.end()) continue;
    const int64_t want = name[0] == 's' ? 1 : 0;
    for (int64_t v : it->second.ints) {
      if (v != want) return false;
    }
  }
  return true;
}

bool gemm_window(const ir::Node& conv, const Shape& w) {
  if (pointwise_one_group(conv, w)) return true;
  if (int_attr(conv, "group", 1) != 1 || w.size() != 4) return false;
  auto it = conv.attrs.find("strides");
  return it == conv.attrs.end() || std::all_of(it->second.ints.begin(), it->second.ints.end(),
                                               [](int64_t s) { return s == 1; });
}

bool read_by_nhwc_transpose(const Program& p, int v) {
  const int m = sole_consumer(p, v);
  if (m < 0) return false;
  const ir::Node& t = p.graph.nodes[m];
  if (t.op_type != "Transpose" || !t.domain.empty()) return false;
  auto perm = t.attrs.find("perm");
  return perm != t.attrs.end() && perm->second.ints == std::vector<int64_t>{0, 2, 3, 1};
}

bool conv_writes_nhwc(const Program& p, int n) {
  const ir::Node& conv = p.graph.nodes[n];
  if (conv.domain != ops::kInternalDomain || conv.op_type != "FusedConv") return false;
  if (conv.outputs.size() != 1 || conv.outputs[0] < 0) return false;
  const int y = conv.outputs[0];
  if (!read_by_nhwc_transpose(p, y) || !p.types[y] || p.types[y]->shape.size() != 4) return false;
  if (string_attr(conv, "y_layout", "NCHW") != "NCHW") return false;
  if (conv.inputs.size() > ops::kResidualInput && conv.inputs[ops::kResidualInput] >= 0) {
    return false;
  }
  if (string_attr(conv, "weight_layout", "OIHW") == "winograd") return false;
  const std::string algorithm = string_attr(conv, "algorithm", "");
  if (algorithm == "depthwise" || algorithm == "gemm") return false;
  const int64_t groups = int_attr(conv, "group", 1);
  return groups == 1 || groups != p.types[y]->shape[1];
}

bool rows_fill_vectors_better(int64_t width, int64_t channels, int64_t block) {
  const int64_t width_vectors = (width + block - 1) / block;
  const int64_t channel_blocks = (channels + block - 1) / block;
  return width * channel_blocks > channels * width_vectors;
}

PlainConvKernel plain_conv_kernel(const Program& p, const ir::Node& conv, const Shape& w,
                                  int64_t block) {
  const int y = conv.outputs.empty() ? -1 : conv.outputs[0];
  if (gemm_window(conv, w) && !read_by_nhwc_transpose(p, y)) {
    // A k x k conv (an implicit GEMM) only where its output rows fill the vectors better
    // than its channels fill blocks: a 512 -> 512 conv at 7 x 7 keeps the direct kernel.
    const bool known = y >= 0 && p.types[y] && p.types[y]->shape.size() == 4;
    if (pointwise_one_group(conv, w) || !known ||
        rows_fill_vectors_better(p.types[y]->shape[3], w[0], block)) {
      return PlainConvKernel::kGemm;
    }
  }
  const int64_t groups = int_attr(conv, "group", 1);
  if (2 * w[0] < block || (groups > 1 && (w[0] / groups) % block != 0)) {
    return PlainConvKernel::kReference;
  }
  return PlainConvKernel::kDirect;
}

void set_int_attr(ir::Node& n, const char* name, int64_t v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInt;
  a.i = v;
  n.attrs[name] = std::move(a);
}

void set_ints_attr(ir::Node& n, const char* name, std::vector<int64_t> v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInts;
  a.ints = std::move(v);
  n.attrs[name] = std::move(a);
}

void set_string_attr(ir::Node& n, const char* name, std::string v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kString;
  a.s = std::move(v);
  n.attrs[name] = std::move(a);
}

std::string unique_node_name(const Program& p, const std::string& base) {
  auto taken = [&](const std::string& name) {
    for (const ir::Node& node : p.graph.nodes)
      if (node.name == name) return true;
    return false;
  };
  std::string name = base;
  for (int k = 1; taken(name); ++k) name = fmt::format("{}_{}", base, k);
  return name;
}

bool ChannelAffine::shift_is_zero() const {
  for (double v : t)
    if (v != 0.0) return false;
  return true;
}

namespace {

bool in_float_range(double v) {
  return std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max();
}

}  // namespace

bool ChannelAffine::finite_in_float() const {
  for (size_t c = 0; c < s.size(); ++c)
    if (!in_float_range(s[c]) || !in_float_range(t[c])) return false;
  return true;
}

const Tensor* float_constant(const Program& p, int v) {
  if (v < 0 || !p.graph.values[v].is_constant()) return nullptr;
  const Tensor& t = p.graph.values[v].constant;
  return t.dtype() == DType::kFloat32 ? &t : nullptr;
}

int add_constant(Program& p, const std::string& base, const std::vector<float>& values,
                 const Shape& shape) {
  const int v = p.add_value(base, ops::TensorType{DType::kFloat32, shape});
  p.graph.values[v].constant = Tensor::from_vector(values, shape);
  return v;
}

std::optional<std::vector<double>> per_channel_constant(const Program& p, int v, const Shape& x) {
  const Tensor* t = float_constant(p, v);
  if (!t || x.size() < 2) return std::nullopt;
  const std::vector<float> values = t->to_float_vector();
  const Shape& s = t->shape();
  const int64_t channels = x[1];
  if (values.size() == 1 && s.size() <= x.size()) {
    return std::vector<double>(static_cast<size_t>(channels), values[0]);
  }
  // [1, C, 1, ...] (x's rank) or [C, 1, ...] (one less): C at x's dim 1.
  const size_t lead = s.size() == x.size() ? 1 : s.size() + 1 == x.size() ? 0 : s.size();
  if (lead == s.size() || (lead == 1 && s[0] != 1) || s[lead] != channels) return std::nullopt;
  for (size_t d = lead + 1; d < s.size(); ++d)
    if (s[d] != 1) return std::nullopt;
  return std::vector<double>(values.begin(), values.end());
}

void take_output(Program& p, int n, int from, int to) {
  for (int& out : p.graph.nodes[n].outputs)
    if (out == from) out = to;
  p.graph.values[to].producer = n;
  p.graph.values[from].producer = -1;
}

std::optional<ChannelAffine> batch_norm_affine(const Program& p, int n) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.op_type != "BatchNormalization" || !node.domain.empty()) return std::nullopt;
  if (node.inputs.size() != 5 || node.outputs.empty() || node.outputs[0] < 0) return std::nullopt;
  for (size_t k = 1; k < node.outputs.size(); ++k)
    if (node.outputs[k] >= 0) return std::nullopt;
  const ops::Attrs attrs(node.attrs, fmt::format("BatchNormalization '{}'", node.name));
  if (p.graph.opset >= 14 && attrs.get_int("training_mode", 0) != 0) return std::nullopt;
  const int x = node.inputs[0];
  if (x < 0 || !p.types[x] || p.types[x]->dtype != DType::kFloat32) return std::nullopt;
  const Shape& xs = p.types[x]->shape;
  if (xs.size() < 2) return std::nullopt;
  const int64_t channels = xs[1];
  std::vector<float> stats[4];  // gamma, beta, mean, var
  for (int k = 0; k < 4; ++k) {
    const Tensor* t = float_constant(p, node.inputs[k + 1]);
    if (!t || t->shape() != Shape{channels}) return std::nullopt;
    stats[k] = t->to_float_vector();
  }
  const double eps = attrs.get_float("epsilon", 1e-5f);
  ChannelAffine a;
  a.s.resize(channels);
  a.t.resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a.s[c] = stats[0][c] / std::sqrt(static_cast<double>(stats[3][c]) + eps);
    a.t[c] = stats[1][c] - stats[2][c] * a.s[c];
  }
  if (!a.finite_in_float()) return std::nullopt;
  return a;
}

}  // namespace tern::passes
