// pack-weights: re-lays-out constant weights once, at plan time, into the layout the
// kernel reads fastest (DESIGN.md: "Weights are packed once, at plan time"):
//   - tern.FusedConv with attribute block = c and a known constant W in ONNX OIHW layout
//     that reads or writes NCHWc (x_layout or y_layout "NCHWc"), or that reads and writes
//     NCHW and runs the direct kernel (plain_conv_kernel: at least c / 2 output channels,
//     whole blocks of them per group; not a conv that runs as a GEMM on its OIHW weights,
//     1x1 or an implicit GEMM), and not a 1x1 conv from NCHWc that the dot kernel runs on
//     its OIHW rows (kernels::dot_conv_preferred: few output channels): W becomes a new constant
//     kernels::ref::pack_conv_weights(W, c)
//     ([ceil(M/c), C/g, kH, kW, c], output channels blocked, zero padded), weight_layout
//     = "packed", out_channels = M (the padding hides M). The NCHWc kernel then loads the
//     c output channels of one tap as one vector.
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
#include <utility>

#include "kernels/dot/dot_conv.h"
#include "kernels/reference/fused_conv.h"
#include "ops/registry.h"
#include "passes/pass.h"

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

class PackWeights final : public Pass {
 public:
  const char* name() const override { return "pack-weights"; }
  const char* summary() const override {
    return "re-lay-out constant weights for the kernels at plan time";
  }

  int run(Program& p) const override {
    int changes = 0;
    // (original value, block or -1 for a transpose) -> packed value.
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
        // A 1x1 conv from NCHWc to few output channels (a detection head): the dot kernel
        // reads the OIHW rows, input channels along its vectors (kernels/dot).
        if (string_attr(node, "x_layout", "NCHW") == "NCHWc" && pointwise_one_group(node, ws) &&
            kernels::dot_conv_preferred(ws[1], ws[0], block)) {
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
        node.inputs[1] = pack(w, -1, fmt::format("{}_transposed", base), transpose2d);
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
