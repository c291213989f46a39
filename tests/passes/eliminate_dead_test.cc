// eliminate-dead: nodes whose outputs nothing reads and the graph does not return go;
// everything that contributes to a graph output stays.
#include "toy_model_util.h"

namespace tern::test::eliminate_dead_test {
namespace {

const std::vector<std::string> kOnlyDead = all_passes_except({"eliminate-dead"});

bool has_node(const passes::Program& p, const std::string& name) {
  return std::any_of(p.graph.nodes.begin(), p.graph.nodes.end(),
                     [&](const ir::Node& n) { return n.name == name; });
}

TEST(EliminateDead, UnreadNodeIsRemoved) {
  ModelBuilder m(13);
  m.input("x", {2, 3});
  m.output("y", {2, 3});
  m.node("Neg", {"x"}, {"y"}, "neg");
  m.node("Sigmoid", {"x"}, {"unused"}, "sigmoid");
  const passes::Program off = compile(m, {{DType::kFloat32, {2, 3}}}, passes::pass_names());
  EXPECT_EQ(off.graph.nodes.size(), 2u);
  const passes::Program p = compile(m, {{DType::kFloat32, {2, 3}}}, kOnlyDead);
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_TRUE(has_node(p, "neg"));
  EXPECT_EQ(p.graph.inputs.size(), 1u);  // the graph input stays, though one reader went
  expect_pass_keeps_results(m, {{"x", random_tensor({2, 3}, 1)}}, "eliminate-dead", 0.0);
}

TEST(EliminateDead, DeadChainsAreRemoved) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 4, 4});
  m.output("y", {1, 2, 4, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  // A dead chain with a fan-out and a join: every node of it goes.
  m.node("Exp", {"x"}, {"d1"}, "dead_exp");
  m.node("Neg", {"d1"}, {"d2"}, "dead_neg");
  m.node("Abs", {"d1"}, {"d3"}, "dead_abs");
  m.node("Add", {"d2", "d3"}, {"d4"}, "dead_add");
  m.node("Sigmoid", {"d4"}, {"d5"}, "dead_sigmoid");
  // A dead branch hanging off the live path.
  m.node("Tanh", {"y"}, {"d6"}, "dead_tanh");
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 2, 4, 4}}}, kOnlyDead);
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_TRUE(has_node(p, "relu"));
  expect_pass_keeps_results(m, {{"x", random_tensor({1, 2, 4, 4}, 2)}}, "eliminate-dead", 0.0);
}

TEST(EliminateDead, GraphOutputsAndTheirInputsAreKept) {
  ModelBuilder m(13);
  m.input("x", {6, 4});
  m.output("y", {6, 4});
  m.output("first", {3, 4});
  m.output("z", {6, 4});
  m.node("Neg", {"x"}, {"a"}, "neg");
  m.node("Exp", {"a"}, {"y"}, "exp");
  // A multi-output node with one output returned and one unread: kept.
  int64_initializer(m, "split", {2}, {3, 3});
  m.node("Split", {"a", "split"}, {"first", "second"}, "split");
  // A graph output nothing else reads, from a node whose input is itself returned.
  m.node("Abs", {"y"}, {"z"}, "abs");
  const passes::Program off = compile(m, {{DType::kFloat32, {6, 4}}}, passes::pass_names());
  const passes::Program p = compile(m, {{DType::kFloat32, {6, 4}}}, kOnlyDead);
  EXPECT_EQ(p.graph.nodes.size(), off.graph.nodes.size());
  for (const char* name : {"neg", "exp", "split", "abs"}) EXPECT_TRUE(has_node(p, name)) << name;
  expect_pass_keeps_results(m, {{"x", random_tensor({6, 4}, 3)}}, "eliminate-dead", 0.0);
}

TEST(EliminateDead, UnreadOutputOfALiveNodeIsHarmless) {
  // TopK's indices unread: the node stays for its values.
  ModelBuilder m(13);
  m.input("x", {2, 5});
  m.output("v", {2, 3});
  int64_initializer(m, "k", {1}, {3});
  m.node("Neg", {"x"}, {"a"}, "neg");
  m.node("TopK", {"a", "k"}, {"v", "i"}, "topk");
  const passes::Program p = compile(m, {{DType::kFloat32, {2, 5}}}, kOnlyDead);
  EXPECT_EQ(p.graph.nodes.size(), 2u);
  expect_pass_keeps_results(m, {{"x", random_tensor({2, 5}, 4)}}, "eliminate-dead", 0.0);
}

// The passes before it leave dead nodes behind; with every pass on none remains.
TEST(EliminateDead, CleansUpAfterTheOtherPasses) {
  ModelBuilder m(13);
  m.input("x", {1, 3, 4, 4});
  m.output("y", {1, 48});
  m.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  m.node("Shape", {"s"}, {"shape"}, "shape");
  int64_initializer(m, "idx", {}, {0});
  m.node("Gather", {"shape", "idx"}, {"n"}, "gather");
  int64_initializer(m, "ax", {1}, {0});
  m.node("Unsqueeze", {"n", "ax"}, {"n1"}, "unsqueeze");
  int64_initializer(m, "rest", {1}, {-1});
  set_int(m.node("Concat", {"n1", "rest"}, {"target"}, "concat"), "axis", 0);
  m.node("Reshape", {"s", "target"}, {"y"}, "reshape");
  m.node("Exp", {"s"}, {"unused"}, "exp_unused");
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 3, 4, 4}}});
  EXPECT_FALSE(has_node(p, "exp_unused"));
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    for (int out : p.graph.nodes[n].outputs) {
      if (out < 0) continue;
      EXPECT_TRUE(p.is_graph_output(out) || !p.consumers(out).empty())
          << p.graph.nodes[n].name << " is dead";
    }
  }
  expect_pass_keeps_results(m, {{"x", random_tensor({1, 3, 4, 4}, 5)}}, "eliminate-dead", 0.0);
}

}  // namespace
}  // namespace tern::test::eliminate_dead_test

namespace tern::test::eliminate_dead_test {
namespace {

// A long unread chain goes in one backward sweep: the pass is linear in the graph's size
// (a sweep per node would take minutes here; the bound is generous for slow builds).
TEST(EliminateDead, LongUnreadChainGoesInOneSweep) {
  ModelBuilder m(13);
  m.input("x", {4});
  m.output("y", {4});
  m.node("Neg", {"x"}, {"y"}, "neg");
  std::string prev = "x";
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    const std::string out = fmt::format("d{}", i);
    m.node("Relu", {prev}, {out}, fmt::format("relu{}", i));
    prev = out;
  }
  const std::string bytes = m.bytes();
  ir::Graph graph = onnx::load_model(bytes.data(), bytes.size(), onnx::LoadLimits{});
  passes::Program p = passes::make_program(graph, {{DType::kFloat32, {4}}}, ops::ExecContext{1},
                                           int64_t{1} << 31, 8);
  EXPECT_EQ(passes::all_passes()[2]->name(), std::string("eliminate-dead"));
  EXPECT_EQ(passes::all_passes()[2]->run(p), n);
  EXPECT_EQ(p.graph.nodes.size(), 1u);
}

}  // namespace
}  // namespace tern::test::eliminate_dead_test
