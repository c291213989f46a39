// fuse-transpose: a FusedConv whose NCHW output is read only by a Transpose with perm
// (0, 2, 3, 1) writes that Transpose's NHWC output itself (y_layout "NHWC"), and the
// Transpose goes. The detection heads of RetinaFace, UltraFace and FD-1MB end in
// Conv -> Transpose(0, 2, 3, 1) -> Reshape: from the kernels' NCHWc accumulators, one
// output block of one pixel is a contiguous run of NHWC channels (one store), where NCHW
// scatters it over M planes and the Transpose then copies the whole tensor again. ONNX
// Runtime does the same by reordering its NCHWc output straight to NHWC.
//
// Legal where conv_writes_nhwc (pass.h) holds for the conv: its output 4-D NCHW, read by
// the Transpose only and not a graph output, no residual input, and a kernel that writes
// NHWC (not winograd, depthwise or gemm: those write NCHW or NCHWc only; the direct,
// pointwise and dot kernels and the reference write NHWC). pack-weights measures a head
// it will fuse writing NHWC through the same check.
#include "ops/registry.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

class FuseTranspose final : public NodeRule {
 public:
  const char* name() const override { return "fuse-transpose"; }
  const char* summary() const override {
    return "a conv followed by Transpose(0, 2, 3, 1) writes NHWC itself";
  }

 protected:
  bool applies_to(const Program& p, int n) const override {
    const ir::Node& node = p.graph.nodes[n];
    if (node.op_type != "Transpose" || !node.domain.empty() || node.inputs.size() != 1) return false;
    if (node.inputs[0] < 0 || node.outputs.size() != 1 || node.outputs[0] < 0) return false;
    auto it = node.attrs.find("perm");
    if (it == node.attrs.end() || it->second.ints != std::vector<int64_t>{0, 2, 3, 1}) return false;
    const int producer = p.graph.values[node.inputs[0]].producer;
    if (producer < 0) return false;
    const ir::Node& conv = p.graph.nodes[producer];
    return conv.domain == ops::kInternalDomain && conv.op_type == "FusedConv";
  }

  bool legal(const Program& p, int n) const override {
    const ir::Node& node = p.graph.nodes[n];
    const int t = node.inputs[0];
    return sole_consumer(p, t) == n && conv_writes_nhwc(p, p.graph.values[t].producer);
  }

  void rewrite(Program& p, int n, std::vector<bool>& dead) const override {
    const ir::Node& node = p.graph.nodes[n];
    const int t = node.inputs[0], out = node.outputs[0];
    const int producer = p.graph.values[t].producer;
    ir::Node& conv = p.graph.nodes[producer];
    set_string_attr(conv, "y_layout", "NHWC");
    conv.outputs[0] = out;
    p.graph.values[out].producer = producer;
    p.graph.values[t].producer = -1;
    dead[n] = true;
  }
};

}  // namespace

const Pass& fuse_transpose_pass() {
  static const FuseTranspose pass;
  return pass;
}

}  // namespace tern::passes
