// flush-subnormal-weights (src/passes/flush_subnormal_weights.cc): the subnormal weights
// and biases of Conv, Gemm and MatMul become zeros of the same sign, every other number
// (FLT_MIN, zeros, normal values) keeps its bits; the original constant is left to the
// nodes that do not multiply by it; results stay within float rounding.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pass_test_util.h"

namespace tern::test::flush_subnormal_weights_test {
namespace {

const std::vector<std::string> kOnlyFlush = all_passes_except({"flush-subnormal-weights"});

const passes::Pass& flush_pass() {
  for (const passes::Pass* pass : passes::all_passes())
    if (std::string(pass->name()) == "flush-subnormal-weights") return *pass;
  throw std::runtime_error("no flush-subnormal-weights pass");
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// `n` weights in [-0.5, 0.5) with the number at every 5th position replaced by one of
// the awkward cases: subnormals of both signs (the smallest, the largest), FLT_MIN, -0.
std::vector<float> awkward_weights(int64_t n, uint32_t seed) {
  std::vector<float> v = weights(n, seed);
  const float cases[] = {std::numeric_limits<float>::denorm_min(),
                         -std::numeric_limits<float>::denorm_min(),
                         std::nextafter(FLT_MIN, 0.0f),
                         -1e-40f,
                         FLT_MIN,
                         -FLT_MIN,
                         -0.0f};
  for (int64_t i = 0, k = 0; i < n; i += 5, ++k) v[static_cast<size_t>(i)] = cases[k % 7];
  return v;
}

// The value that input `slot` of the node named `node` reads in `p`.
int input_of(const passes::Program& p, const std::string& node, size_t slot) {
  for (const ir::Node& n : p.graph.nodes)
    if (n.name == node) return n.inputs.at(slot);
  ADD_FAILURE() << "no node " << node;
  return -1;
}

// Expects `after` to be `before` with exactly its subnormal numbers zeroed (sign kept).
void expect_flushed(const Tensor& before, const Tensor& after) {
  const std::vector<float> a = before.to_float_vector(), b = after.to_float_vector();
  ASSERT_EQ(a.size(), b.size());
  int subnormal = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != 0.0f && std::fabs(a[i]) < FLT_MIN) {
      ++subnormal;
      EXPECT_EQ(bits(b[i]), bits(std::copysign(0.0f, a[i]))) << "element " << i;
    } else {
      EXPECT_EQ(bits(b[i]), bits(a[i])) << "element " << i;
    }
  }
  EXPECT_GT(subnormal, 0) << "the test's weights hold no subnormal";
}

// x [1, 6, 5, 4] -> Conv(w [4, 6, 3, 3], b, pads 1) -> c [1, 4, 5, 4]; c + b -> y: the Add
// reads the Conv's bias too (broadcast along W), and must keep its subnormals.
ModelBuilder conv_model() {
  ModelBuilder m;
  m.input("x", {1, 6, 5, 4});
  m.output("y");
  m.initializer("w", {4, 6, 3, 3}, awkward_weights(4 * 6 * 9, 1));
  m.initializer("b", {4}, {1e-39f, 0.25f, -3e-41f, FLT_MIN});
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  m.node("Add", {"c", "b"}, {"y"}, "add");
  return m;
}

TEST(FlushSubnormalWeights, ConvWeightsAndBiasAreFlushedAndTheOriginalsKept) {
  const ModelBuilder m = conv_model();
  const std::vector<ops::TensorType> types = {{DType::kFloat32, {1, 6, 5, 4}}};
  const passes::Program off = compile(m, types, passes::pass_names());
  const passes::Program on = compile(m, types, kOnlyFlush);
  for (size_t slot : {1u, 2u}) {
    const int before = input_of(off, "conv", slot), after = input_of(on, "conv", slot);
    ASSERT_NE(before, after) << "input " << slot << " was not replaced";
    expect_flushed(off.known[before], on.known[after]);
    // The original constant keeps its subnormals (it may be shared with another graph):
    // element 0 of both is one.
    const float first = on.known[before].to_float_vector()[0];
    EXPECT_TRUE(first != 0.0f && std::fabs(first) < FLT_MIN) << slot;
    EXPECT_EQ(bits(first), bits(off.known[before].to_float_vector()[0])) << slot;
  }
  // The Add does not multiply: it keeps reading the original bias, subnormals and all.
  const int add_b = input_of(on, "add", 1);
  EXPECT_EQ(add_b, input_of(off, "conv", 2));
  EXPECT_EQ(bits(on.known[add_b].to_float_vector()[0]), bits(1e-39f));
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 6, 5, 4}, 3)}};
  expect_pass_keeps_results(m, feeds, "flush-subnormal-weights", 1e-6);
}

TEST(FlushSubnormalWeights, GemmAndMatMulConstantsAreFlushed) {
  ModelBuilder m;
  m.input("a", {3, 8});
  m.output("y");
  m.initializer("bt", {5, 8}, awkward_weights(40, 4));
  m.initializer("c", {5}, {0.5f, -2e-39f, 0.0f, 1.0f, 7e-45f});
  auto* gemm = m.node("Gemm", {"a", "bt", "c"}, {"g"}, "gemm");
  set_int(gemm, "transB", 1);
  m.initializer("k", {5, 6}, awkward_weights(30, 5));
  m.node("MatMul", {"g", "k"}, {"y"}, "matmul");
  const std::vector<ops::TensorType> types = {{DType::kFloat32, {3, 8}}};
  const passes::Program off = compile(m, types, passes::pass_names());
  const passes::Program on = compile(m, types, kOnlyFlush);
  for (const auto& [node, slot] :
       std::vector<std::pair<std::string, size_t>>{{"gemm", 1}, {"gemm", 2}, {"matmul", 1}}) {
    const int before = input_of(off, node, slot), after = input_of(on, node, slot);
    ASSERT_NE(before, after) << node << " input " << slot;
    expect_flushed(off.known[before], on.known[after]);
  }
  expect_pass_keeps_results(m, {{"a", random_tensor({3, 8}, 6)}}, "flush-subnormal-weights", 1e-6);
}

TEST(FlushSubnormalWeights, NormalWeightsAreLeftAlone) {
  ModelBuilder m;
  m.input("x", {1, 3, 4, 4});
  m.output("y");
  std::vector<float> w = weights(2 * 3, 7);
  w[0] = FLT_MIN;  // the smallest normal number stays
  w[1] = 0.0f;
  m.initializer("w", {2, 3, 1, 1}, w);
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  passes::Program p = compile(m, {{DType::kFloat32, {1, 3, 4, 4}}}, passes::pass_names());
  const int before = input_of(p, "conv", 1);
  const size_t values = p.graph.values.size();
  EXPECT_EQ(flush_pass().run(p), 0);
  EXPECT_EQ(input_of(p, "conv", 1), before);
  EXPECT_EQ(p.graph.values.size(), values);  // no new constant
}

TEST(FlushSubnormalWeights, ASharedWeightIsFlushedOnce) {
  // Two Convs of one weight (tied weights): one flushed copy, read by both.
  ModelBuilder m;
  m.input("x", {1, 4, 3, 3});
  m.output("y");
  m.initializer("w", {4, 4, 1, 1}, awkward_weights(16, 8));
  m.node("Conv", {"x", "w"}, {"a"}, "conv_a");
  m.node("Conv", {"a", "w"}, {"y"}, "conv_b");
  passes::Program p = compile(m, {{DType::kFloat32, {1, 4, 3, 3}}}, passes::pass_names());
  const int before = input_of(p, "conv_a", 1);
  const size_t values = p.graph.values.size();
  EXPECT_EQ(flush_pass().run(p), 2);
  const int after = input_of(p, "conv_a", 1);
  EXPECT_NE(after, before);
  EXPECT_EQ(input_of(p, "conv_b", 1), after);
  EXPECT_EQ(p.graph.values.size(), values + 1);
  expect_flushed(p.known[before], p.known[after]);
}

// With every pass on, the fused ops (FusedConv from Conv + Relu, FusedGemm from Gemm +
// Relu, FusedMatMul from MatMul + Add) and the packed copies of their weights hold no
// subnormal: the pass runs on the fused nodes, before pack-weights.
TEST(FlushSubnormalWeights, FusedAndPackedWeightsHoldNoSubnormal) {
  ModelBuilder m;
  m.input("x", {1, 8, 6, 6});
  m.input("a", {3, 8});
  m.output("y");
  m.output("z");
  m.initializer("w", {16, 8, 1, 1}, awkward_weights(16 * 8, 9));
  m.initializer("b", {16}, awkward_weights(16, 10));
  m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  m.node("Relu", {"c"}, {"y"}, "relu");
  m.initializer("bt", {5, 8}, awkward_weights(40, 11));
  m.initializer("gc", {5}, awkward_weights(5, 12));
  auto* gemm = m.node("Gemm", {"a", "bt", "gc"}, {"g"}, "gemm");
  set_int(gemm, "transB", 1);
  m.node("Relu", {"g"}, {"gr"}, "gemm_relu");
  m.initializer("k", {5, 6}, awkward_weights(30, 13));
  m.initializer("kb", {6}, awkward_weights(6, 14));
  m.node("MatMul", {"gr", "k"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "kb"}, {"z"}, "matmul_bias");
  const passes::Program p =
      compile(m, {{DType::kFloat32, {1, 8, 6, 6}}, {DType::kFloat32, {3, 8}}});
  int fused = 0;
  for (const ir::Node& n : p.graph.nodes) {
    if (n.domain.empty()) continue;
    if (n.op_type != "FusedConv" && n.op_type != "FusedGemm" && n.op_type != "FusedMatMul") {
      continue;
    }
    ++fused;
    for (int v : n.inputs) {
      if (v < 0 || !p.known[v].defined() || p.known[v].dtype() != DType::kFloat32) continue;
      if (!p.graph.values[v].is_constant()) continue;
      for (float x : p.known[v].to_float_vector()) {
        EXPECT_FALSE(x != 0.0f && std::fabs(x) < FLT_MIN)
            << n.op_type << " " << n.name << " reads a subnormal in " << p.graph.values[v].name;
      }
    }
  }
  EXPECT_EQ(fused, 3);
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 8, 6, 6}, 15)},
                                          {"a", random_tensor({3, 8}, 16)}};
  expect_pass_keeps_results(m, feeds, "flush-subnormal-weights", 1e-6);
}

}  // namespace
}  // namespace tern::test::flush_subnormal_weights_test
