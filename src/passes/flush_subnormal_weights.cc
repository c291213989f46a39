// flush-subnormal-weights: the subnormal numbers (0 < |v| < 2^-126, FLT_MIN) among the
// float32 constant inputs of the ops that multiply by them (weights and biases of Conv,
// ConvTranspose, Gemm, MatMul, tern.FusedConv, tern.FusedGemm and tern.FusedMatMul)
// become zeros of the same sign.
//
// Why: on x86 a multiply or FMA with a subnormal operand takes a microcode assist (about
// a hundred cycles) unless MXCSR's denormals-are-zero mode is set, and tern leaves the
// caller's floating-point modes as they are. Trained models carry such weights: ppocr's
// squeeze-and-excitation convs hold 1579 of them (p2o.Conv.22: 850 of 9216), and that
// 192 -> 48 conv on one pixel took 26 us in conv_bench, 1.0 us with them zeroed (1.7 us
// with MXCSR's denormals-are-zero set instead).
//
// Effect on results: a product w * x with |w| < 2^-126 is below 2^-126 * |x|, so an
// output changes by less than 2^-126 times the sum of the |inputs| it reads: below the
// float32 rounding of any output larger than 2^-102 times that sum. One exception: an
// infinite input times such a weight was +-inf and is now 0 * inf = NaN. ncnn flushes
// subnormals by default (its DAZ/FTZ modes); here only the constants are touched, so the
// activations keep IEEE arithmetic.
//
// The flushed tensor is a new constant value: a constant may be shared by other nodes or
// by other Programs compiled from the same graph, so it is never changed in place. It runs
// after fold-batch-norm and merge-sibling-convs (the weights are final) and before
// pack-weights (which copies them into the kernels' layouts).
#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

// The ops whose constant inputs are multiplied (or added, the bias) into every output.
bool multiplies_constants(const ir::Node& n) {
  const std::string& op = n.op_type;
  if (n.domain.empty())
    return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
  return n.domain == ops::kInternalDomain &&
         (op == "FusedConv" || op == "FusedGemm" || op == "FusedMatMul");
}

bool is_subnormal(float v) { return v != 0.0f && std::fabs(v) < FLT_MIN; }

class FlushSubnormalWeights final : public Pass {
 public:
  const char* name() const override { return "flush-subnormal-weights"; }
  const char* summary() const override {
    return "subnormal weights and biases set to zero (x86 FMAs on them take microcode assists)";
  }

  int run(Program& p) const override {
    int changes = 0;
    std::map<int, int> flushed;  // constant value -> its flushed copy
    for (int n : p.order()) {
      if (!multiplies_constants(p.graph.nodes[n])) continue;
      for (size_t i = 0; i < p.graph.nodes[n].inputs.size(); ++i) {
        const int v = p.graph.nodes[n].inputs[i];
        const Tensor* constant = float_constant(p, v);
        if (constant == nullptr) continue;
        auto it = flushed.find(v);
        if (it == flushed.end()) {
          std::vector<float> values = constant->to_float_vector();
          int64_t subnormal = 0;
          for (float& x : values) {
            if (!is_subnormal(x)) continue;
            x = std::copysign(0.0f, x);
            ++subnormal;
          }
          const Shape shape = constant->shape();  // add_constant grows graph.values
          const int nv = subnormal == 0
                             ? v
                             : add_constant(p, fmt::format("{}_flushed", p.graph.values[v].name),
                                            values, shape);
          it = flushed.emplace(v, nv).first;
        }
        if (it->second == v) continue;
        p.graph.nodes[n].inputs[i] = it->second;
        ++changes;
      }
    }
    if (changes > 0) analyze(p);
    return changes;
  }
};

}  // namespace

const Pass& flush_subnormal_weights_pass() {
  static const FlushSubnormalWeights pass;
  return pass;
}

}  // namespace tern::passes
