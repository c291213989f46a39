// fold-batch-norm: removes per-channel affine nodes y = x * s[c] + t[c]: inference
// BatchNormalization (s = gamma / sqrt(var + epsilon), t = beta - mean * s), ScaleShift,
// and Mul, Div or Add of x and a float32 constant with one value per channel ([1, C, 1,
// 1], [C, 1, 1]) or one value in all (PaddlePaddle's exporter writes a scalar Mul and Add
// around every activation of ppocr's PP-LCNet: 62 of them). Each can be absorbed by a
// neighbouring linear op. In order of preference (ONNX Runtime's conv_bn_fusion does the
// first; the second is its mirror):
//
// 1. Into the Conv or Gemm that produces x (always exact up to rounding):
//      Conv: W'[m] = W[m] * s[m], B'[m] = B[m] * s[m] + t[m] (B = 0 when absent);
//      Gemm (BN over output columns j): the columns of B' (the rows of B with transB = 1)
//      scaled by s[j], and C'[i][j] = beta * C[i][j] * s[j] + t[j] (C = 0 when absent or
//      beta = 0) with beta set to 1. C' is [N] when C broadcasts over rows, else [M, N].
//    The Conv/Gemm then writes the BN's output. Legal when x has no other reader and is
//    not a graph output (sole_consumer: nothing else may see the un-normalized values), W
//    (Gemm: B) and the bias (B / C) when present are float32 constants.
// 2. Into the Conv that reads y:  conv(W, B, y) = conv(W', B', x) with
//      W'[m][cl][k] = W[m][cl][k] * s[c] and B'[m] = B[m] + sum_{cl,k} W[m][cl][k] * t[c],
//    where c = (m / (M / group)) * (C / group) + cl is the input channel that weight reads
//    (so groups and depthwise convs are handled). Legal when y is read by that Conv only, as
//    its data input X, and is not a graph output; W and B are float32 constants; and the
//    Conv reads no padding (every resolved pad, including auto_pad SAME, is 0) or t == 0:
//    the zeros padded around y are not the t-shifted zeros of x, so the bias term would be
//    wrong at the borders.
// 2b. Into the affine node that reads y (y read by it only, not a graph output): that node
//    becomes ScaleShift(x, s2 * s, s2 * t + t2), so a chain of them is one pass over
//    memory, which rules 1 and 2 may then fold.
// 3. Otherwise a BN becomes the internal op tern.ScaleShift(x, s, t) (ops/scale_shift.cc):
//    the same map with s and t computed once here instead of at every run, and an op the
//    layout pass can run in NCHWc. A Mul, Div or Add that no rule folds stays as it is.
//
// Which BN nodes are touched at all: the inference form (training_mode absent or 0, no
// output but Y), float32 input of rank >= 2, and scale, B, mean and var float32 constants
// of shape [C] (so spatial = 0 with per-activation statistics is left alone), with s and t
// finite in float32 (a zero variance with epsilon 0 keeps the BN kernel's inf / NaN).
// Mul, Div and Add: float32 x of rank >= 2 whose shape the output keeps (the constant
// broadcasts into x, never x into the constant), a Div only by the constant, and s and
// t finite in float32 (no division by 0 or by a value so small that 1 / v overflows).
// s and t are computed in double and the new weights rounded once to float32. The new
// weights are new constant values: a constant may be shared by other nodes (tied weights)
// or by other Programs compiled from the same graph, so it is never changed in place.
#include <cmath>
#include <optional>

#include "ops/attrs.h"
#include "ops/registry.h"
#include "ops/window.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

// A node of the form y = x * s[c] + t[c] (see the file comment): its data input x and map.
struct AffineNode {
  int x = -1;
  ChannelAffine a;
  bool batch_norm = false;  // rule 3 applies
};

// y = b(a(x)): the map of `a` followed by `b` (same channel count).
ChannelAffine then(const ChannelAffine& a, const ChannelAffine& b) {
  ChannelAffine both;
  for (size_t c = 0; c < a.s.size(); ++c) {
    both.s.push_back(b.s[c] * a.s[c]);
    both.t.push_back(b.s[c] * a.t[c] + b.t[c]);
  }
  return both;
}

std::optional<AffineNode> affine_node(const Program& p, int n) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.outputs.size() != 1 || node.outputs[0] < 0) return std::nullopt;
  AffineNode an;
  if (node.op_type == "BatchNormalization" && node.domain.empty()) {
    const std::optional<ChannelAffine> a = batch_norm_affine(p, n);
    if (!a) return std::nullopt;
    an.x = node.inputs[0];
    an.a = *a;
    an.batch_norm = true;
    return an;
  }
  if (node.op_type == "ScaleShift" && node.domain == ops::kInternalDomain) {
    if (int_attr(node, "block", 0) != 0 || node.inputs.size() != 3) return std::nullopt;
    const Tensor* s = float_constant(p, node.inputs[1]);
    const Tensor* t = float_constant(p, node.inputs[2]);
    if (!s || !t) return std::nullopt;
    an.x = node.inputs[0];
    const std::vector<float> sv = s->to_float_vector(), tv = t->to_float_vector();
    an.a.s.assign(sv.begin(), sv.end());
    an.a.t.assign(tv.begin(), tv.end());
    return an;
  }
  const bool mul = node.op_type == "Mul", div = node.op_type == "Div", add = node.op_type == "Add";
  if (!(mul || div || add) || !node.domain.empty() || node.inputs.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const int x = node.inputs[i], k = node.inputs[1 - i];
    if (x < 0 || float_constant(p, x) || (div && i != 0)) continue;
    if (!p.types[x] || p.types[x]->dtype != DType::kFloat32 || p.types[x]->shape.size() < 2) {
      continue;
    }
    const int y = node.outputs[0];
    if (!p.types[y] || p.types[y]->shape != p.types[x]->shape) continue;
    const int64_t channels = p.types[x]->shape[1];
    const std::optional<std::vector<double>> v = per_channel_constant(p, k, p.types[x]->shape);
    if (!v) continue;
    an.x = x;
    an.a.s.assign(channels, 1.0);
    an.a.t.assign(channels, 0.0);
    for (int64_t c = 0; c < channels; ++c) {
      if (add) an.a.t[c] = (*v)[c];
      if (mul) an.a.s[c] = (*v)[c];
      if (div) an.a.s[c] = 1.0 / (*v)[c];
    }
    if (!an.a.finite_in_float()) return std::nullopt;
    return an;
  }
  return std::nullopt;
}

// True when Conv node `n` has float32 constant weights W (rank >= 3) and bias B (if any).
bool conv_weights_constant(const Program& p, int n) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.inputs.size() < 2) return false;
  const Tensor* w = float_constant(p, node.inputs[1]);
  if (!w || w->rank() < 3) return false;
  if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
    const Tensor* b = float_constant(p, node.inputs[2]);
    if (!b || b->shape() != Shape{w->dim(0)}) return false;
  }
  return true;
}

// The node (Conv or Gemm) that writes x, the data input of affine node `bn`, when the map
// can fold into it (rule 1); -1 otherwise.
int foldable_producer(const Program& p, int bn, int x) {
  const int n = p.graph.values[x].producer;
  if (n < 0 || sole_consumer(p, x) != bn) return -1;
  const ir::Node& node = p.graph.nodes[n];
  if (!node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] != x) return -1;
  const int64_t channels = p.types[x]->shape[1];
  if (node.op_type == "Conv") {
    if (!conv_weights_constant(p, n)) return -1;
    return float_constant(p, node.inputs[1])->dim(0) == channels ? n : -1;
  }
  if (node.op_type == "Gemm") {
    if (p.types[x]->shape.size() != 2 || node.inputs.size() < 2) return -1;
    const Tensor* b = float_constant(p, node.inputs[1]);
    if (!b || b->rank() != 2) return -1;
    const bool has_c = node.inputs.size() > 2 && node.inputs[2] >= 0;
    if (has_c &&
        (!float_constant(p, node.inputs[2]) || float_constant(p, node.inputs[2])->rank() > 2))
      return -1;
    return n;
  }
  return -1;
}

// True when Conv node `n`, reading input of shape `x`, pads nothing (every resolved pad,
// auto_pad included, is 0).
bool conv_reads_no_padding(const Program& p, int n, const Shape& x) {
  const ir::Node& node = p.graph.nodes[n];
  const std::string where = fmt::format("Conv '{}'", node.name);
  try {
    const ops::Attrs attrs(node.attrs, where);
    const ops::WindowAttrs w = ops::parse_window_attrs(attrs, false);
    const Shape& kernel = float_constant(p, node.inputs[1])->shape();
    const int spatial = static_cast<int>(x.size()) - 2;
    if (spatial < 1 || kernel.size() != x.size()) return false;
    for (int i = 0; i < spatial; ++i) {
      const ops::WindowExtent e =
          ops::resolve_window(x[2 + i], kernel[2 + i], w.stride(i), w.dilation(i), w.pad_begin(i),
                              w.pad_end(i, spatial), w.auto_pad, false, where);
      if (e.pad_begin != 0 || e.pad_end != 0) return false;
    }
    return true;
  } catch (const Error&) {
    return false;  // analyze() accepted the node; stay safe anyway
  }
}

// The Conv that reads affine node `bn`'s output, when the map can fold into it (rule 2);
// -1 otherwise.
int foldable_consumer(const Program& p, int bn, const ChannelAffine& a) {
  const int y = p.graph.nodes[bn].outputs[0];
  const int n = sole_consumer(p, y);
  if (n < 0) return -1;
  const ir::Node& node = p.graph.nodes[n];
  if (node.op_type != "Conv" || !node.domain.empty() || node.inputs[0] != y) return -1;
  if (!conv_weights_constant(p, n) || !p.types[y]) return -1;
  if (node.outputs.empty() || node.outputs[0] < 0 || !p.types[node.outputs[0]]) return -1;
  if (!a.shift_is_zero() && !conv_reads_no_padding(p, n, p.types[y]->shape)) return -1;
  return n;
}

// Rule 1 for a Conv: scale output channel m of W and the bias by s[m], add t[m].
void fold_into_producer_conv(Program& p, int conv, int bn, const ChannelAffine& a) {
  ir::Node& node = p.graph.nodes[conv];
  const Tensor& w = *float_constant(p, node.inputs[1]);
  const int64_t m_count = w.dim(0);
  const int64_t per = w.numel() / std::max<int64_t>(1, m_count);
  std::vector<float> wv = w.to_float_vector();
  for (int64_t m = 0; m < m_count; ++m)
    for (int64_t j = 0; j < per; ++j)
      wv[m * per + j] = static_cast<float>(wv[m * per + j] * a.s[m]);
  std::vector<float> bias(m_count, 0.0f);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
  if (has_bias) bias = float_constant(p, node.inputs[2])->to_float_vector();
  for (int64_t m = 0; m < m_count; ++m) bias[m] = static_cast<float>(bias[m] * a.s[m] + a.t[m]);
  const Shape w_shape = w.shape();  // add_constant grows graph.values, into which `w` points
  const std::string w_name = p.graph.values[node.inputs[1]].name;
  const int w_new = add_constant(p, fmt::format("{}_bn", w_name), wv, w_shape);
  const int b_new = add_constant(p, fmt::format("{}_bn_bias", node.name), bias, {m_count});
  ir::Node& conv_node = p.graph.nodes[conv];
  conv_node.inputs.resize(3, -1);
  conv_node.inputs[1] = w_new;
  conv_node.inputs[2] = b_new;
  take_output(p, conv, conv_node.outputs[0], p.graph.nodes[bn].outputs[0]);
}

// Rule 1 for a Gemm: scale output column j (B's column, or row with transB) by s[j];
// fold beta * C and t into a new C, beta = 1.
void fold_into_producer_gemm(Program& p, int gemm, int bn, const ChannelAffine& a) {
  const ir::Node& node = p.graph.nodes[gemm];
  const ops::Attrs attrs(node.attrs, fmt::format("Gemm '{}'", node.name));
  const bool trans_b = attrs.get_int("transB", 0) != 0;
  const double beta = attrs.get_float("beta", 1.0f);
  const Shape& y = p.types[node.outputs[0]]->shape;  // [M, N]
  const int64_t rows = y[0], cols = y[1];

  const Tensor& b = *float_constant(p, node.inputs[1]);
  std::vector<float> bv = b.to_float_vector();
  const int64_t b_rows = b.dim(0), b_cols = b.dim(1);
  for (int64_t r = 0; r < b_rows; ++r)
    for (int64_t k = 0; k < b_cols; ++k) {
      const double s = a.s[trans_b ? r : k];
      bv[r * b_cols + k] = static_cast<float>(bv[r * b_cols + k] * s);
    }

  // C broadcasts to [M, N]: rank 0 or 1 ([N] or [1]), or [1 or M, 1 or N].
  const bool has_c = node.inputs.size() > 2 && node.inputs[2] >= 0 && beta != 0.0;
  std::vector<float> cv;
  Shape c_shape = {cols};
  int64_t c_rows = 1, c_cols = 1;
  if (has_c) {
    const Tensor& c = *float_constant(p, node.inputs[2]);
    cv = c.to_float_vector();
    c_rows = c.rank() == 2 ? c.dim(0) : 1;
    c_cols = c.rank() >= 1 ? c.dim(-1) : 1;
  }
  const int64_t out_rows = c_rows == 1 ? 1 : rows;
  if (out_rows != 1) c_shape = {rows, cols};
  std::vector<float> c_new(out_rows * cols);
  for (int64_t i = 0; i < out_rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double c = has_c ? cv[i * c_cols + (c_cols == 1 ? 0 : j)] : 0.0;
      c_new[i * cols + j] = static_cast<float>(beta * c * a.s[j] + a.t[j]);
    }

  // Copy before add_constant: it grows graph.values, into which `b` points.
  const Shape b_shape = b.shape();
  const std::string b_name = p.graph.values[node.inputs[1]].name;
  const std::string gemm_name = node.name;
  const int b_new = add_constant(p, fmt::format("{}_bn", b_name), bv, b_shape);
  const int c_id = add_constant(p, fmt::format("{}_bn_bias", gemm_name), c_new, c_shape);
  ir::Node& g = p.graph.nodes[gemm];
  g.inputs.resize(3, -1);
  g.inputs[1] = b_new;
  g.inputs[2] = c_id;
  ir::Attribute one;
  one.type = ir::Attribute::Type::kFloat;
  one.f = 1.0f;
  g.attrs["beta"] = one;
  take_output(p, gemm, g.outputs[0], p.graph.nodes[bn].outputs[0]);
}

// Rule 2: the Conv reads x instead of y = x * s + t.
void fold_into_consumer_conv(Program& p, int conv, int x, const ChannelAffine& a) {
  const ir::Node& node = p.graph.nodes[conv];
  const ops::Attrs attrs(node.attrs, fmt::format("Conv '{}'", node.name));
  const int64_t group = attrs.get_int("group", 1);
  const Tensor& w = *float_constant(p, node.inputs[1]);
  const int64_t m_count = w.dim(0);
  const int64_t c_per_group = w.dim(1);
  const int64_t m_per_group = m_count / group;
  const int64_t taps = w.numel() / std::max<int64_t>(1, m_count * c_per_group);
  const std::vector<float> wv = w.to_float_vector();
  std::vector<float> w_new(wv.size());
  std::vector<double> bias(m_count, 0.0);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
  if (has_bias) {
    const std::vector<float> bv = float_constant(p, node.inputs[2])->to_float_vector();
    for (int64_t m = 0; m < m_count; ++m) bias[m] = bv[m];
  }
  for (int64_t m = 0; m < m_count; ++m) {
    const int64_t first_channel = (m / m_per_group) * c_per_group;
    for (int64_t cl = 0; cl < c_per_group; ++cl) {
      const int64_t c = first_channel + cl;
      const int64_t base = (m * c_per_group + cl) * taps;
      for (int64_t k = 0; k < taps; ++k) {
        w_new[base + k] = static_cast<float>(wv[base + k] * a.s[c]);
        bias[m] += wv[base + k] * a.t[c];
      }
    }
  }
  std::vector<float> b_new(bias.begin(), bias.end());
  const Shape w_shape = w.shape();  // add_constant grows graph.values, into which `w` points
  const std::string w_name = p.graph.values[node.inputs[1]].name;
  const std::string conv_name = node.name;
  const int w_id = add_constant(p, fmt::format("{}_bn", w_name), w_new, w_shape);
  const int b_id = add_constant(p, fmt::format("{}_bn_bias", conv_name), b_new, {m_count});
  ir::Node& c = p.graph.nodes[conv];
  c.inputs.resize(3, -1);
  c.inputs[0] = x;
  c.inputs[1] = w_id;
  c.inputs[2] = b_id;
}

// Rules 2b and 3: node `bn` becomes ScaleShift(x, s, t) (same name, same output).
void make_scale_shift(Program& p, int bn, int x, const ChannelAffine& a) {
  const std::vector<float> s(a.s.begin(), a.s.end());
  const std::vector<float> t(a.t.begin(), a.t.end());
  const int64_t channels = static_cast<int64_t>(s.size());
  const std::string name = p.graph.nodes[bn].name;
  const int s_id = add_constant(p, fmt::format("{}_scale", name), s, {channels});
  const int t_id = add_constant(p, fmt::format("{}_shift", name), t, {channels});
  ir::Node& node = p.graph.nodes[bn];
  node.op_type = "ScaleShift";
  node.domain = ops::kInternalDomain;
  node.inputs = {x, s_id, t_id};
  node.attrs.clear();
}

// The affine node that reads affine node `n`'s output y (rule 2b), when y has no other
// reader; -1 otherwise.
int mergeable_consumer(const Program& p, int n) {
  const int y = p.graph.nodes[n].outputs[0];
  const int m = sole_consumer(p, y);
  if (m < 0) return -1;
  const std::optional<AffineNode> next = affine_node(p, m);
  if (!next || next->x != y) return -1;
  const ChannelAffine a = affine_node(p, n)->a;
  return next->a.s.size() == a.s.size() && then(a, next->a).finite_in_float() ? m : -1;
}

class FoldBatchNorm final : public NodeRule {
 public:
  const char* name() const override { return "fold-batch-norm"; }
  const char* summary() const override {
    return "fold BatchNormalization and per-channel Mul/Div/Add into the Conv/Gemm before or "
           "the Conv after them, merge chains of them, else make a BN a ScaleShift";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    const std::string& op = p.graph.nodes[n].op_type;
    return op == "BatchNormalization" || op == "ScaleShift" || op == "Mul" || op == "Div" ||
           op == "Add";
  }
  // Rule 3 is always legal for an inference BN with constant statistics; the other nodes
  // only when a rule folds them away.
  bool legal(const Program& p, int n) const override {
    const std::optional<AffineNode> an = affine_node(p, n);
    if (!an) return false;
    return an->batch_norm || foldable_producer(p, n, an->x) >= 0 ||
           foldable_consumer(p, n, an->a) >= 0 || mergeable_consumer(p, n) >= 0;
  }
  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    const AffineNode an = *affine_node(p, n);
    const ChannelAffine& a = an.a;
    const int producer = foldable_producer(p, n, an.x);
    if (producer >= 0) {
      if (p.graph.nodes[producer].op_type == "Conv") {
        fold_into_producer_conv(p, producer, n, a);
      } else {
        fold_into_producer_gemm(p, producer, n, a);
      }
      dead[n] = true;
      return;
    }
    const int consumer = foldable_consumer(p, n, a);
    if (consumer >= 0) {
      fold_into_consumer_conv(p, consumer, an.x, a);
      dead[n] = true;
      return;
    }
    const int next = mergeable_consumer(p, n);
    if (next >= 0) {
      make_scale_shift(p, next, an.x, then(a, affine_node(p, next)->a));
      dead[n] = true;
      return;
    }
    make_scale_shift(p, n, an.x, a);
  }
};

}  // namespace

const Pass& fold_batch_norm_pass() {
  static const FoldBatchNorm pass;
  return pass;
}

}  // namespace tern::passes
