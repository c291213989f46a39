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

namespace tern::test {
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

// x [1, 6, 5, 5] -> Conv(w [4, 6, 3, 3], b, pads 1) -> c; c + w2 -> y, where the Add reads
// a constant that the Conv's bias also is (so it is shared with an op that must keep it).
ModelBuilder conv_model() {
  ModelBuilder m;
  m.input("x", {1, 6, 5, 5});
  m.output("y");
  m.initializer("w", {4, 6, 3, 3}, awkward_weights(4 * 6 * 9, 1));
  m.initializer("b", {4}, {1e-39f, 0.25f, -3e-41f, FLT_MIN});
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  m.initializer("b4", {4, 1, 1}, {1e-39f, 0.25f, -3e-41f, FLT_MIN});
  m.node("Add", {"c", "b4"}, {"y"}, "add");
  return m;
}

TEST(FlushSubnormalWeights, ConvWeightsAndBiasAreFlushedAndTheOriginalsKept) {
  const ModelBuilder m = conv_model();
  const std::vector<ops::TensorType> types = {{DType::kFloat32, {1, 6, 5, 5}}};
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
  // The Add does not multiply: it keeps its subnormal constant.
  const int add_b = input_of(on, "add", 1);
  EXPECT_EQ(add_b, input_of(off, "add", 1));
  EXPECT_EQ(bits(on.known[add_b].to_float_vector()[0]), bits(1e-39f));
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 6, 5, 5}, 3)}};
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

}  // namespace
}  // namespace tern::test
