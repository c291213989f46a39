// select-algorithm: every FusedConv gets the kernel the heuristic picks for its layouts
// on this machine's SIMD target (NCHW input: direct-first; 1x1 stride 1 unpadded:
// pointwise; one filter per channel: depthwise; other k x k: direct) and "reference"
// where no fast kernel applies (a block that is not the target's vector width, groups
// that split a block); a preset choice the op can run is kept; results are unchanged.
#include "base/cpu.h"
#include "pass_test_util.h"

namespace tern::test {
namespace {

// x [1, 3, 13, 11] -> 3x3/2 conv (8) -> depthwise 3x3 -> 1x1 (12) -> 3x3 pad 1 (12)
// -> grouped 3x3 (4 groups of 3 channels) -> y.
ModelBuilder mixed_model() {
  ModelBuilder m;
  m.input("x", {1, 3, 13, 11});
  m.output("y");
  m.initializer("w1", {8, 3, 3, 3}, weights(216, 1));
  m.initializer("w2", {8, 1, 3, 3}, weights(72, 2));
  m.initializer("w3", {12, 8, 1, 1}, weights(96, 3));
  m.initializer("w4", {12, 12, 3, 3}, weights(1296, 4));
  m.initializer("w5", {12, 3, 3, 3}, weights(324, 5));
  auto* c1 = m.node("Conv", {"x", "w1"}, {"a"}, "first");
  set_ints(c1, "strides", {2, 2});
  set_ints(c1, "pads", {1, 1, 1, 1});
  auto* c2 = m.node("Conv", {"a", "w2"}, {"b"}, "dw");
  set_ints(c2, "pads", {1, 1, 1, 1});
  set_int(c2, "group", 8);
  m.node("Conv", {"b", "w3"}, {"c"}, "pw");
  auto* c4 = m.node("Conv", {"c", "w4"}, {"d"}, "kxk");
  set_ints(c4, "pads", {1, 1, 1, 1});
  auto* c5 = m.node("Conv", {"d", "w5"}, {"y"}, "grouped");
  set_int(c5, "group", 4);
  return m;
}

std::map<std::string, std::string> algorithms(const passes::Program& p) {
  std::map<std::string, std::string> out;
  for (const ir::Node& node : p.graph.nodes) {
    auto it = node.attrs.find("algorithm");
    if (node.op_type == "FusedConv") out[node.name] = it == node.attrs.end() ? "" : it->second.s;
  }
  return out;
}

TEST(SelectAlgorithm, EachConvGetsItsKernel) {
  const int c = simd_float_lanes();
  const passes::Program p = compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, c);
  const auto algo = algorithms(p);
  ASSERT_EQ(algo.size(), 5u);
  const bool fast = cpu_info().best_target != "SCALAR";
  EXPECT_EQ(algo.at("first"), fast ? "direct-first" : "reference");
  EXPECT_EQ(algo.at("dw"), fast ? "depthwise" : "reference");
  EXPECT_EQ(algo.at("pw"), fast ? "pointwise" : "reference");
  EXPECT_EQ(algo.at("kxk"), fast ? "direct" : "reference");
  // 3 output channels per group never fill a block of 4 or more.
  EXPECT_EQ(algo.at("grouped"), "reference");
}

TEST(SelectAlgorithm, ABlockThatIsNotTheVectorWidthRunsTheReference) {
  const int c = simd_float_lanes();
  for (int block : {4, 8, 16}) {
    if (block == c) continue;
    SCOPED_TRACE(::testing::Message() << "block " << block);
    const passes::Program p =
        compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, block);
    for (const auto& [name, algo] : algorithms(p)) EXPECT_EQ(algo, "reference") << name;
  }
}

TEST(SelectAlgorithm, OffLeavesNoAttributeAndTheOpChoosesTheSame) {
  const int c = simd_float_lanes();
  const passes::Program p =
      compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {"select-algorithm"}, c);
  for (const auto& [name, algo] : algorithms(p)) EXPECT_EQ(algo, "") << name;
  // The op's own choice (Op::algorithm) is what the pass would have recorded.
  const passes::Program q = compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, c);
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    const ir::Node& node = p.graph.nodes[n];
    if (node.op_type != "FusedConv") continue;
    std::vector<ops::TensorType> types;
    for (int in : node.inputs) types.push_back(in >= 0 ? *p.types[in] : ops::TensorType{});
    EXPECT_EQ(p.ops[n]->algorithm(types), algorithms(q).at(node.name)) << node.name;
  }
}

// All passes on (the fast kernels) against all passes off (plain Conv, the reference
// kernel) and against this pass off (the op's own choice).
TEST(SelectAlgorithm, KeepsResults) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 13, 11}, 9)}};
  expect_pass_keeps_results(mixed_model(), feeds, "select-algorithm");
}

}  // namespace
}  // namespace tern::test
