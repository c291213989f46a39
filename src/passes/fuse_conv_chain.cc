// fuse-conv-chain: consecutive FusedConvs whose intermediate tensors are too large for
// the L2 cache become one tern.ConvChain, which computes them in bands of rows so that
// each intermediate only ever exists as a few rows in cache (ops/conv_chain.cc: layer
// fusion). UltraFace's and FD-1MB's first four layers at 120 x 160 (a first conv, a
// depthwise, a pointwise and a stride-2 depthwise conv) become one chain, as do
// MobileNetV2's expansions at 112 x 112 and 56 x 56.
//
// A chain grows from a FusedConv along its output while that output is at least
// kChainMinBytes per image, is read by the next FusedConv only, as its X (not also as
// its residual Z), and is no graph output, and while bands of
// ops::kConvChainMinBandRows rows fit in L2 (ops::conv_chain_grow_bytes; the op's bands
// then take half of L2, or 2 rows within all of it, and may be lower), or bands of 1 row
// where the output has ops::kConvChainSpillBytes or more: each stride-2 layer doubles
// the rows a band needs of every layer before it. Every layer runs the direct or the depthwise
// kernel (its "algorithm": direct-first, pointwise, direct or depthwise), writes NCHWc (the last
// one NCHWc or NCHW), has output rows that each read an input row (ops::conv_rows_read_input), and
// has no residual but the last. Legal because the chain computes every layer with the same kernel
// on the same inputs, band by band; the kernels may split a band's rows into other tiles than the
// whole image's, so results agree to float rounding.
#include <fmt/format.h>

#include <algorithm>

#include "ops/conv_chain.h"
#include "ops/epilogue.h"
#include "ops/fused_conv.h"
#include "ops/registry.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

// Bytes per image an intermediate must have to be kept in bands: 1 MiB, the L2 of the
// smaller development machines (Zen 5; the Xeon's is 2 MiB, Cortex-A72's 1 MiB shared by
// 4 cores). Below it, the tensor stays in L2 between the two layers anyway.
constexpr int64_t kChainMinBytes = 1024 * 1024;

constexpr size_t kMaxChainLayers = ops::kConvChainMaxLayers;

using ops::kResidualInput;  // FusedConv: X W B Z

class FuseConvChain final : public Pass {
 public:
  const char* name() const override { return "fuse-conv-chain"; }
  const char* summary() const override {
    return "convs with intermediates larger than L2 run together in bands of rows";
  }

  int run(Program& p) const override {
    std::vector<bool> dead(p.graph.nodes.size(), false);
    std::vector<bool> taken(p.graph.nodes.size(), false);
    int changes = 0;
    for (int n : p.order()) {
      if (taken[n] || !layer(p, n) || residual(p.graph.nodes[n])) continue;
      std::vector<int> chain = {n};
      std::vector<kernels::ref::FusedConvParams> params = {conv_params(p, n)};
      if (!ops::conv_rows_read_input(params[0].conv)) continue;
      while (chain.size() < kMaxChainLayers) {
        const ir::Node& last = p.graph.nodes[chain.back()];
        if (residual(last)) break;
        const int v = last.outputs[0];
        const int next = sole_consumer(p, v);
        if (next < 0 || !large(p, v) || taken[next] || !layer(p, next)) break;
        const ir::Node& node = p.graph.nodes[next];
        // v must be the next layer's X only (not also its residual Z).
        if (node.inputs[0] != v || std::count(node.inputs.begin(), node.inputs.end(), v) != 1) {
          break;
        }
        if (string_attr(node, "x_layout", "NCHW") != "NCHWc") break;
        if (string_attr(last, "y_layout", "NCHW") != "NCHWc") break;
        // Bands of kConvChainMinBandRows rows (1 past kConvChainSpillBytes) must fit: each
        // layer adds its window's rows to the band of every layer before it.
        params.push_back(conv_params(p, next));
        if (!ops::conv_rows_read_input(params.back().conv)) break;
        std::vector<int64_t> rows(params.size());
        const int64_t min_rows =
            bytes(p, v) >= ops::kConvChainSpillBytes ? 1 : ops::kConvChainMinBandRows;
        if (ops::conv_chain_band_rows(params, min_rows, rows) > ops::conv_chain_grow_bytes()) {
          break;
        }
        chain.push_back(next);
      }
      if (chain.size() < 2) continue;
      for (int m : chain) taken[m] = true;
      p.graph.nodes[chain[0]] = chain_node(p, chain);
      for (size_t i = 1; i < chain.size(); ++i) dead[chain[i]] = true;
      ++changes;
    }
    if (changes > 0) {
      p.erase_nodes(dead);
      analyze(p);
    }
    return changes;
  }

 private:
  // A FusedConv that runs the direct or the depthwise kernel, with one output whose
  // type is known, written NCHWc or NCHW.
  static bool layer(const Program& p, int n) {
    const ir::Node& node = p.graph.nodes[n];
    if (node.domain != ops::kInternalDomain || node.op_type != "FusedConv") return false;
    if (!ops::conv_chain_band_algorithm(string_attr(node, "algorithm", ""))) return false;
    if (string_attr(node, "y_layout", "NCHW") == "NHWC") return false;
    if (node.outputs.size() != 1 || node.outputs[0] < 0 || !p.types[node.outputs[0]]) return false;
    if (node.inputs.size() < 2 || node.inputs[0] < 0 || node.inputs[1] < 0) return false;
    return p.types[node.inputs[0]] && p.types[node.inputs[1]];
  }

  // FusedConv node n's kernel parameters (its X and W types are known: layer()).
  static kernels::ref::FusedConvParams conv_params(const Program& p, int n) {
    const ir::Node& node = p.graph.nodes[n];
    return ops::fused_conv_layer(*p.ops[n], p.types[node.inputs[0]]->shape,
                                 p.types[node.inputs[1]]->shape)
        .params;
  }

  static bool residual(const ir::Node& node) {
    return node.inputs.size() > kResidualInput && node.inputs[kResidualInput] >= 0;
  }

  // Bytes per image of value v (whose type is known); 0 for a scalar or an empty batch.
  static int64_t bytes(const Program& p, int v) {
    const ops::TensorType& t = *p.types[v];
    if (t.shape.empty() || t.shape[0] < 1) return 0;
    return shape_numel(t.shape) / t.shape[0] * static_cast<int64_t>(dtype_size(t.dtype));
  }

  // Whether value v has at least kChainMinBytes per image.
  static bool large(const Program& p, int v) { return bytes(p, v) >= kChainMinBytes; }

  // The ConvChain node of FusedConv nodes `chain`: X, each layer's W and B, the last
  // one's Z; each layer's attributes under "<i>.", its name in "names".
  static ir::Node chain_node(const Program& p, const std::vector<int>& chain) {
    ir::Node c;
    c.op_type = "ConvChain";
    c.domain = ops::kInternalDomain;
    std::vector<std::string> names, algorithms;
    c.inputs.push_back(p.graph.nodes[chain[0]].inputs[0]);
    for (size_t i = 0; i < chain.size(); ++i) {
      const ir::Node& node = p.graph.nodes[chain[i]];
      c.inputs.push_back(node.inputs[1]);
      c.inputs.push_back(node.inputs.size() > 2 ? node.inputs[2] : -1);
      for (const auto& [key, value] : node.attrs) c.attrs[fmt::format("{}.{}", i, key)] = value;
      names.push_back(node.name);
      algorithms.push_back(string_attr(node, "algorithm", ""));
    }
    const ir::Node& last = p.graph.nodes[chain.back()];
    if (residual(last)) c.inputs.push_back(last.inputs[kResidualInput]);
    c.outputs = last.outputs;
    // "Conv_0+Conv_3+Conv_6", or the first and last names where that is long.
    std::string name = fmt::format("{}", fmt::join(names, "+"));
    if (name.size() > 64) name = names.front() + "+...+" + names.back();
    c.name = unique_node_name(p, name);
    set_int_attr(c, "layers", static_cast<int64_t>(chain.size()));
    ir::Attribute list;
    list.type = ir::Attribute::Type::kStrings;
    list.strings = names;
    c.attrs["names"] = list;
    set_string_attr(c, "algorithm", fmt::format("{}", fmt::join(algorithms, ">")));
    return c;
  }
};

}  // namespace

const Pass& fuse_conv_chain_pass() {
  static const FuseConvChain pass;
  return pass;
}

}  // namespace tern::passes
