// merge-sibling-convs: 1x1 Convs that read the same input with the same strides and pads,
// each followed by the same Transpose, become one Conv over their weights stacked along
// the output channels, one Transpose and a Split of its output along the channel axis.
// The detection heads of RetinaFace (class, box and landmark: 4, 8 and 20 output channels
// of one 64-channel feature map per level) end in Conv -> Transpose(0, 2, 3, 1) ->
// Reshape: narrower than a SIMD block (16 floats on AVX-512), each used a quarter to two
// thirds of the lanes and read the feature map once; merged, the 32 channels fill two
// blocks and the map is read once. fuse-transpose then makes the merged conv write NHWC,
// so the Split cuts contiguous rows of the NHWC output. Each output channel is the same
// sum as before (only the kernel's tiling, and so the rounding, may differ).
//
// 1x1 only: merged 3x3 heads (UltraFace's 6 + 12 channels, FD-1MB's 12 + 6 + 30) would
// reach winograd's channel threshold, whose kernel cannot write NHWC, so the Transpose
// would stay a copy of its own.
//
// Matched at the first Conv (in execution order) of a group; legal when every member:
// is an ONNX Conv with a 1x1 kernel, group 1 and explicit padding (auto_pad NOTSET),
// the same strides, pads and dilations (missing = the ONNX defaults), reading the same X
// as its first input; has float32 constant weights (and bias, when present) and a known
// float32 output of rank 4 that is read only by a Transpose (and is not a graph output)
// whose perm keeps the batch axis first and is the same for all. At least two members.
#include <algorithm>

#include "passes/pass.h"

namespace tern::passes {
namespace {

// Attribute `name` of 2-D conv `n` as ints, or `def` when it has none.
std::vector<int64_t> ints_or(const ir::Node& n, const char* name, std::vector<int64_t> def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.ints;
}

// The geometry two merged 2-D Convs must share, missing attributes as the ONNX defaults.
bool same_geometry(const ir::Node& a, const ir::Node& b) {
  return ints_or(a, "strides", {1, 1}) == ints_or(b, "strides", {1, 1}) &&
         ints_or(a, "pads", {0, 0, 0, 0}) == ints_or(b, "pads", {0, 0, 0, 0}) &&
         ints_or(a, "dilations", {1, 1}) == ints_or(b, "dilations", {1, 1});
}

// The Transpose reading Conv `n`'s output when `n` may join a group, else -1.
int mergeable(const Program& p, int n) {
  const ir::Node& conv = p.graph.nodes[n];
  if (conv.op_type != "Conv" || !conv.domain.empty()) return -1;
  if (conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs.size() != 1) return -1;
  if (conv.inputs[0] < 0 || conv.outputs[0] < 0) return -1;
  if (int_attr(conv, "group", 1) != 1 || string_attr(conv, "auto_pad", "NOTSET") != "NOTSET") {
    return -1;
  }
  const Tensor* w = float_constant(p, conv.inputs[1]);
  if (!w || w->rank() != 4 || w->dim(2) != 1 || w->dim(3) != 1) return -1;
  if (ints_or(conv, "kernel_shape", {1, 1}) != std::vector<int64_t>{1, 1}) return -1;
  if (conv.inputs.size() == 3 && conv.inputs[2] >= 0) {
    const Tensor* b = float_constant(p, conv.inputs[2]);
    if (!b || b->rank() != 1 || b->dim(0) != w->dim(0)) return -1;
  }
  const int y = conv.outputs[0];
  if (!p.types[y] || p.types[y]->dtype != DType::kFloat32 || p.types[y]->shape.size() != 4) {
    return -1;
  }
  const int t = sole_consumer(p, y);
  if (t < 0) return -1;
  const ir::Node& tr = p.graph.nodes[t];
  if (tr.op_type != "Transpose" || !tr.domain.empty() || tr.inputs.size() != 1) return -1;
  if (tr.outputs.size() != 1 || tr.outputs[0] < 0) return -1;
  auto perm = tr.attrs.find("perm");
  if (perm == tr.attrs.end() || perm->second.ints.size() != 4 || perm->second.ints[0] != 0) {
    return -1;
  }
  return t;
}

// The group whose first member is Conv `n`: its members in execution order (n first),
// or fewer than two when `n` starts none.
std::vector<int> group_at(const Program& p, int n) {
  std::vector<int> group;
  const int t = mergeable(p, n);
  if (t < 0) return group;
  const ir::Node& conv = p.graph.nodes[n];
  const Tensor& w = *float_constant(p, conv.inputs[1]);
  const std::vector<int64_t>& perm = p.graph.nodes[t].attrs.at("perm").ints;
  const std::vector<int> order = p.order();
  std::vector<int> rank(p.graph.nodes.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<int>(i);
  for (int m : p.consumers(conv.inputs[0])) {
    if (std::find(group.begin(), group.end(), m) != group.end()) continue;
    const int tm = mergeable(p, m);
    if (tm < 0 || p.graph.nodes[m].inputs[0] != conv.inputs[0]) continue;
    const ir::Node& other = p.graph.nodes[m];
    const Tensor& wm = *float_constant(p, other.inputs[1]);
    if (wm.dim(1) != w.dim(1)) continue;
    if (!same_geometry(conv, other) || p.graph.nodes[tm].attrs.at("perm").ints != perm) continue;
    if (rank[m] < rank[n]) return {};  // n is not the group's first
    group.push_back(m);
  }
  std::sort(group.begin(), group.end(), [&](int a, int b) { return rank[a] < rank[b]; });
  return group;
}

class MergeSiblingConvs final : public NodeRule {
 public:
  const char* name() const override { return "merge-sibling-convs"; }
  const char* summary() const override {
    return "1x1 Convs of one input, each followed by the same Transpose, become one Conv, "
           "one Transpose and a Split";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    return p.graph.nodes[n].op_type == "Conv" && p.graph.nodes[n].domain.empty();
  }
  bool legal(const Program& p, int n) const override { return group_at(p, n).size() >= 2; }

  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    const std::vector<int> group = group_at(p, n);
    std::vector<float> w, b;
    std::vector<int64_t> sizes;
    std::vector<int> outs;  // the Transposes' outputs, which the Split writes
    int t = -1;             // n's Transpose, which the merged conv keeps
    Shape ws;
    for (int m : group) {
      const ir::Node& conv = p.graph.nodes[m];
      const Tensor& wm = *float_constant(p, conv.inputs[1]);
      const std::vector<float> wv = wm.to_float_vector();
      w.insert(w.end(), wv.begin(), wv.end());
      const int64_t count = wm.dim(0);
      if (conv.inputs.size() == 3 && conv.inputs[2] >= 0) {
        const std::vector<float> bv = float_constant(p, conv.inputs[2])->to_float_vector();
        b.insert(b.end(), bv.begin(), bv.end());
      } else {
        b.insert(b.end(), static_cast<size_t>(count), 0.0f);
      }
      ws = wm.shape();
      sizes.push_back(count);
      const int tm = sole_consumer(p, conv.outputs[0]);
      outs.push_back(p.graph.nodes[tm].outputs[0]);
      p.graph.values[conv.outputs[0]].producer = -1;
      if (m == n) {
        t = tm;
      } else {
        dead[m] = dead[tm] = true;
      }
    }
    const int64_t total = static_cast<int64_t>(b.size());
    ws[0] = total;
    // The merged node is named after all of its members ("a+b+c"), so that profiles and
    // `tern inspect` show what it computes.
    std::string name = p.graph.nodes[n].name;
    for (size_t i = 1; i < group.size(); ++i) name += "+" + p.graph.nodes[group[i]].name;
    p.graph.nodes[n].name = unique_node_name(p, name);
    const int w_id = add_constant(p, fmt::format("{}_merged_w", name), w, ws);
    const int b_id = add_constant(p, fmt::format("{}_merged_b", name), b, {total});
    const int y = p.add_value(fmt::format("{}_merged", name), std::nullopt);
    const int yt = p.add_value(fmt::format("{}_merged_transposed", name), std::nullopt);

    ir::Node& conv = p.graph.nodes[n];
    conv.inputs = {conv.inputs[0], w_id, b_id};
    conv.outputs = {y};
    p.graph.values[y].producer = n;
    ir::Node& tr = p.graph.nodes[t];
    tr.inputs = {y};
    tr.outputs = {yt};
    p.graph.values[yt].producer = t;
    const std::vector<int64_t>& perm = tr.attrs.at("perm").ints;
    const int64_t axis = std::find(perm.begin(), perm.end(), int64_t{1}) - perm.begin();

    ir::Node split;
    split.name = unique_node_name(p, fmt::format("{}_split", name));
    split.op_type = "Split";
    split.inputs = {yt};
    set_int_attr(split, "axis", axis);
    if (p.graph.opset >= 13) {
      const int s = p.add_value(fmt::format("{}_split_sizes", name),
                                ops::TensorType{DType::kInt64, {static_cast<int64_t>(sizes.size())}});
      p.graph.values[s].constant =
          Tensor::from_vector_i64(sizes, {static_cast<int64_t>(sizes.size())});
      split.inputs.push_back(s);
    } else {
      set_ints_attr(split, "split", sizes);
    }
    split.outputs = outs;
    const int index = static_cast<int>(p.graph.nodes.size());
    for (int o : outs) p.graph.values[o].producer = index;
    p.graph.nodes.push_back(std::move(split));
    dead.resize(p.graph.nodes.size(), false);
  }
};

}  // namespace

const Pass& merge_sibling_convs_pass() {
  static const MergeSiblingConvs pass;
  return pass;
}

}  // namespace tern::passes
