// pack-weights: re-lays-out constant weights once, at plan time, into the layout the
// kernel reads fastest (DESIGN.md: "Weights are packed once, at plan time"):
//   - tern.FusedConv with attribute block = c and a known constant W in ONNX OIHW layout
//     that reads or writes NCHWc (x_layout or y_layout "NCHWc"), or that reads and writes
//     NCHW and runs the direct kernel (plain_conv_kernel: at least c / 2 output channels,
//     whole blocks of them per group; not a conv that runs as a GEMM on its OIHW weights,
//     1x1 or an implicit GEMM), and not a conv from NCHWc with one group that the dot
//     kernel runs (kernels::dot_conv_preferred: few output channels, and not a conv
//     select-algorithm gives winograd with a block of output channels or more): W becomes
//     a new constant
//     kernels::ref::pack_conv_weights(W, c) ([ceil(M/c), C/g, kH, kW, c], output channels
//     blocked, zero padded), weight_layout = "packed", out_channels = M (the padding hides
//     M). The NCHWc kernel then loads the c output channels of one tap as one vector.
//   - The dot kernel's convs (kernels/dot, input channels along the vectors): a 1x1 conv
//     with stride 1 and no padding keeps its OIHW weights (each output channel's row is
//     contiguous); any other becomes kernels::ref::ohwi_conv_weights(W) ([M, kH, kW, C],
//     the channels of each tap contiguous), weight_layout = "OHWI". With tuning on
//     (`--tune`, Program::tuning), a conv dot_tunable admits (kernels::dot_conv_candidate
//     on the target's blocks, not covered by winograd; beyond the rule's dot convs, heads
//     only) is measured as dot and as pointwise or direct on packed weights
//     (passes/tune.h; a head fuse-transpose will make write NHWC writing NHWC) and takes
//     the layout of the faster, instead of dot_conv_preferred's rule, whose constants
//     were fitted on one machine each.
//   - Gemm / tern.FusedGemm with transB = 1 and a known constant B [N, K]: B becomes the
//     constant B^T [K, N] and transB = 0, so the kernel's inner loop runs along a
//     contiguous row of N outputs (y_row += a_ik * b_row) instead of a dot product per
//     output.
// Always legal: the new constant holds the same numbers in the layout the changed
// attribute tells the op to read, so every result is unchanged (the op's infer checks
// the packed shape). The old constant is left to the nodes that still read it (a weight
// shared with another node is packed once per layout and block). The packed bytes are
// added to p.memory.packed_weight_bytes.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <utility>

#include "base/cpu.h"
#include "kernels/dot/dot_conv.h"
#include "kernels/reference/fused_conv.h"
#include "kernels/winograd/winograd_conv.h"
#include "ops/attrs.h"
#include "ops/conv.h"
#include "ops/epilogue.h"
#include "ops/registry.h"
#include "passes/pass.h"
#include "passes/tune.h"

namespace tern::passes {
namespace {

// B^T of a 2-D float32 tensor, contiguous.
Tensor transpose2d(const Tensor& b) {
  const Tensor src = b.contiguous();
  const int64_t rows = src.dim(0), cols = src.dim(1);
  Tensor t = Tensor::empty(DType::kFloat32, {cols, rows});
  const float* s = src.data<float>();
  float* d = t.data<float>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) d[j * rows + i] = s[i * cols + j];
  return t;
}

// The geometry of FusedConv `conv` (weights `w`, OIHW) when it reads a known NCHWc input
// [N, ceil(C/c), H, W, c]; nullopt otherwise, or when its attributes or shapes are bad
// (the op reports that when the plan is built).
std::optional<kernels::ref::ConvParams> nchwc_conv_geometry(const Program& p, const ir::Node& conv,
                                                            const Shape& w) {
  if (string_attr(conv, "x_layout", "NCHW") != "NCHWc" || conv.inputs.empty()) return {};
  const int x = conv.inputs[0];
  if (x < 0 || !p.types[x] || p.types[x]->shape.size() != 5) return {};
  const Shape& xs = p.types[x]->shape;
  const int64_t group = int_attr(conv, "group", 1);
  try {
    const ops::Attrs attrs(conv.attrs, conv.name);
    return ops::conv_params(ops::parse_window_attrs(attrs, false), group,
                            {xs[0], w[1] * group, xs[2], xs[3]}, w, conv.name);
  } catch (const Error&) {
    return {};
  }
}

// Whether select-algorithm gives FusedConv `conv` (geometry `c`) winograd once its weights
// are packed with `block` (kernels::winograd_conv_preferred, as FusedConv's algorithm()),
// where the dot kernel would also take it: such a conv keeps that path if it has a whole
// block of output channels (the dot kernel's rule was measured against direct only). With
// fewer, the dot kernel's lanes run full and winograd's GEMM's do not: UltraFace slim-320's
// last 3x3 head (256 -> 12 at 4x5) took 0.011 to 0.012 ms by dot, 0.020 to 0.025 by
// winograd (`tern bench --per-layer`, one thread, Zen 4). Such heads write NCHW, which
// winograd_conv_preferred refuses under 16 channels anyway; into NCHWc (no model has one)
// this keeps the dot kernel these convs had before winograd took 8 channels, unmeasured.
bool winograd_preferred(const ir::Node& conv, const kernels::ref::ConvParams& c, int64_t block) {
  if (c.out_channels < block) return false;
  kernels::ref::FusedConvParams f;
  f.conv = c;
  f.x_block = block;
  f.y_block = string_attr(conv, "y_layout", "NCHW") == "NCHWc" ? block : 1;
  f.w_block = block;
  return kernels::winograd_conv_preferred(f);
}

// Whether --tune measures FusedConv `conv` (geometry `c`) as dot against the kernel with
// output channels along the vectors, instead of following kernels::dot_conv_preferred
// (kernels::dot_conv_candidate is the necessary condition; this narrows it): `block` is
// the target's lanes (so that both kernels run, not a fallback), and winograd does not
// cover its packed weights (a 3x3 stride-1 conv: there the rule decides, and
// select-algorithm then tunes direct against winograd, so that each conv is measured by
// one pass only). Beyond the rule's own choices, only detection heads (an output the
// graph returns or an NHWC Transpose reads): a dot conv leaves fuse-conv-chain's bands,
// which a layer timed alone does not show.
bool dot_tunable(const Program& p, const ir::Node& conv, const kernels::ref::ConvParams& c,
                 int64_t block) {
  if (!p.tuning.enabled || block != simd_float_lanes() || conv.outputs.empty() ||
      !kernels::dot_conv_candidate(c, block)) {
    return false;
  }
  for (int in : conv.inputs)
    if (in >= 0 && !p.types[in]) return false;
  kernels::ref::FusedConvParams f;
  f.conv = c;
  f.x_block = block;
  f.y_block = string_attr(conv, "y_layout", "NCHW") == "NCHWc" ? block : 1;
  f.w_block = block;
  if (kernels::winograd_conv_supported(f)) return false;
  const int y = conv.outputs[0];
  return kernels::dot_conv_preferred(c, block) || p.is_graph_output(y) ||
         read_by_nhwc_transpose(p, y);
}

// --tune on conv `n`, which dot_tunable admits: whether the dot kernel measures faster
// than "pointwise" or "direct" on packed weights, each run on its weights' layout
// (passes/tune.h; the choice cached). A head that fuse-transpose will make write NHWC
// (nhwc_context) is measured writing NHWC, and cached under that context: into
// NCHW the dot kernel stores each output alone, and UltraFace's 128 -> 8 heads took 1.30 and 1.35
// times the pointwise kernel's time there, 0.67 and 0.93 into NHWC (`tern inspect
// --tune`, Zen 4, AVX-512).
bool tune_dot(Program& p, int n, const kernels::ref::ConvParams& c, int64_t block) {
  const ir::Node& conv = p.graph.nodes[n];
  std::vector<ops::TensorType> types;
  for (int in : conv.inputs) types.push_back(in >= 0 ? *p.types[in] : ops::TensorType{});
  const bool pointwise = kernels::ref::pointwise_window(c);
  // Its later passes change no attribute conv_writes_nhwc reads here: select-algorithm
  // sets no winograd, depthwise or gemm on a conv from NCHWc with one group that winograd
  // does not cover (dot_tunable), so fuse-transpose decides as this does.
  const std::string context = nhwc_context(p, n);
  const bool nhwc = !context.empty();
  auto setup = [&](const std::string& algorithm, ir::Node& node, std::vector<Tensor>& inputs) {
    if (nhwc) set_string_attr(node, "y_layout", "NHWC");  // as fuse-transpose will
    const Tensor w = inputs[1];
    if (algorithm == "dot") {
      if (pointwise) return;  // OIHW rows
      inputs[1] = kernels::ref::ohwi_conv_weights(w);
      set_string_attr(node, "weight_layout", "OHWI");
      return;
    }
    inputs[1] = kernels::ref::pack_conv_weights(w, static_cast<int>(block));
    set_string_attr(node, "weight_layout", "packed");
    set_int_attr(node, "out_channels", w.dim(0));
  };
  return tune_algorithm(p, n, types, {"dot", pointwise ? "pointwise" : "direct"}, setup, context) ==
         "dot";
}

// pack()'s keys for the layouts that are not blocks.
constexpr int64_t kTranspose = -1;
constexpr int64_t kOhwi = -2;

class PackWeights final : public Pass {
 public:
  const char* name() const override { return "pack-weights"; }
  const char* summary() const override {
    return "re-lay-out constant weights for the kernels at plan time";
  }

  int run(Program& p) const override {
    int changes = 0;
    // (original value, block, or kTranspose or kOhwi) -> packed value.
    std::map<std::pair<int, int64_t>, int> packed;
    auto pack = [&](int w, int64_t key, const std::string& base, auto&& make) {
      auto it = packed.find({w, key});
      if (it != packed.end()) return it->second;
      const Tensor t = make(p.known[w]);
      const int v = p.add_value(base, ops::TensorType{t.dtype(), t.shape()});
      p.graph.values[v].constant = t;
      p.known[v] = t;
      p.memory.packed_weight_bytes += static_cast<int64_t>(t.nbytes());
      packed[{w, key}] = v;
      return v;
    };

    for (int n : p.order()) {
      ir::Node& node = p.graph.nodes[n];
      if (node.inputs.size() < 2) continue;
      const int w = node.inputs[1];
      if (w < 0 || !p.known[w].defined() || p.known[w].dtype() != DType::kFloat32) continue;
      const Shape ws = p.known[w].shape();  // a copy: add_value() resizes p.known
      const std::string base = p.graph.values[w].name;
      const bool internal = node.domain == ops::kInternalDomain;

      const bool blocked = string_attr(node, "y_layout", "NCHW") == "NCHWc" ||
                           string_attr(node, "x_layout", "NCHW") == "NCHWc";
      if (internal && node.op_type == "FusedConv" &&
          string_attr(node, "weight_layout", "OIHW") == "OIHW" && ws.size() == 4) {
        const int64_t block = int_attr(node, "block", 0);
        if (block < 1) continue;  // the op would reject the node anyway
        // NCHW in and out (a conv between two NCHW-only ops, as in ppocr's head): packed
        // too where the SIMD direct kernel runs it instead of the scalar reference (30 of
        // ppocr's 77 ms); the GEMM kernel reads OIHW weights, and the plain reference
        // (f32_conv_nchw) is faster on them (plain_conv_kernel).
        if (!blocked && plain_conv_kernel(p, node, ws, block) != PlainConvKernel::kDirect) {
          continue;
        }
        // A conv from NCHWc to few output channels (a detection head): the dot kernel
        // takes dot products along the input channels (kernels/dot), on the OIHW rows of a
        // 1x1 conv and on OHWI weights (channels innermost per tap) of a k x k one.
        const std::optional<kernels::ref::ConvParams> geometry = nchwc_conv_geometry(p, node, ws);
        const bool dot_possible = geometry && !winograd_preferred(node, *geometry, block);
        bool dot = dot_possible && kernels::dot_conv_preferred(*geometry, block);
        if (dot_possible && dot_tunable(p, node, *geometry, block)) {
          dot = tune_dot(p, n, *geometry, block);
        }
        if (dot) {
          if (pointwise_one_group(node, ws)) continue;
          node.inputs[1] =
              pack(w, kOhwi, fmt::format("{}_ohwi", base), kernels::ref::ohwi_conv_weights);
          set_string_attr(node, "weight_layout", "OHWI");
          ++changes;
          continue;
        }
        node.inputs[1] =
            pack(w, block, fmt::format("{}_packed{}", base, block), [&](const Tensor& t) {
              return kernels::ref::pack_conv_weights(t, static_cast<int>(block));
            });
        set_string_attr(node, "weight_layout", "packed");
        set_int_attr(node, "out_channels", ws[0]);
        ++changes;
      } else if (((node.domain.empty() && node.op_type == "Gemm") ||
                  (internal && node.op_type == "FusedGemm")) &&
                 int_attr(node, "transB", 0) == 1 && ws.size() == 2) {
        node.inputs[1] = pack(w, kTranspose, fmt::format("{}_transposed", base), transpose2d);
        set_int_attr(node, "transB", 0);
        ++changes;
      }
    }
    if (changes > 0) analyze(p);
    return changes;
  }
};

}  // namespace

const Pass& pack_weights_pass() {
  static const PackWeights pass;
  return pass;
}

}  // namespace tern::passes
