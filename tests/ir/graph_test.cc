// ir::Graph: topological order, verify_graph's structural checks, dump_graph.
#include <gtest/gtest.h>

#include "ir/graph.h"

namespace tern::ir {
namespace {

// Builds  x -> A -> a -> B -> b,  with `a` also read by C -> c (nodes in file order given).
class GraphTest : public ::testing::Test {
 protected:
  int value(const std::string& name) {
    Value v;
    v.name = name;
    return g.add_value(v);
  }
  int node(const std::string& name, std::vector<int> in, std::vector<int> out) {
    Node n;
    n.name = name;
    n.op_type = "Relu";
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    const int id = static_cast<int>(g.nodes.size());
    for (int o : n.outputs) g.values[o].producer = id;
    g.nodes.push_back(n);
    return id;
  }
  Graph g;
};

TEST_F(GraphTest, TopologicalOrderPutsProducersFirst) {
  const int x = value("x"), a = value("a"), b = value("b"), c = value("c");
  g.inputs = {x};
  node("B", {a}, {b});  // file order: consumers before producer
  node("C", {a}, {c});
  node("A", {x}, {a});
  g.outputs = {b, c};
  EXPECT_EQ(g.topological_order(), (std::vector<int>{2, 0, 1}));
  EXPECT_NO_THROW(verify_graph(g));
  EXPECT_EQ(dump_graph(g), "A: Relu(x) -> a\nB: Relu(a) -> b\nC: Relu(a) -> c\n");
}

TEST_F(GraphTest, CycleIsAModelErrorNamingANode) {
  const int a = value("a"), b = value("b");
  node("first", {b}, {a});
  node("second", {a}, {b});
  g.outputs = {b};
  try {
    g.topological_order();
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("cycle through node 'first'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(verify_graph(g), ModelError);
}

TEST_F(GraphTest, UndefinedInputIsAModelError) {
  const int x = value("x"), ghost = value("ghost"), y = value("y");
  g.inputs = {x};
  node("add", {x, ghost}, {y});
  g.outputs = {y};
  try {
    verify_graph(g);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'ghost'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 'add'"), std::string::npos) << e.what();
  }
}

TEST_F(GraphTest, TwoProducersIsAModelError) {
  const int x = value("x"), y = value("y");
  g.inputs = {x};
  node("one", {x}, {y});
  node("two", {x}, {y});
  g.outputs = {y};
  try {
    verify_graph(g);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("written by two nodes"), std::string::npos) << e.what();
  }
}

TEST_F(GraphTest, UnproducedOutputIsAModelError) {
  const int x = value("x"), y = value("y");
  g.inputs = {x};
  g.outputs = {y};
  EXPECT_THROW(verify_graph(g), ModelError);
}

TEST_F(GraphTest, OmittedOptionalInputIsFine) {
  const int x = value("x"), y = value("y");
  g.inputs = {x};
  node("clip", {x, -1, -1}, {y});
  g.outputs = {y};
  EXPECT_NO_THROW(verify_graph(g));
}

TEST_F(GraphTest, DuplicateValueNameIsAModelError) {
  value("x");
  Value v;
  v.name = "x";
  EXPECT_THROW(g.add_value(v), ModelError);
  EXPECT_EQ(g.find_value("x"), 0);
  EXPECT_EQ(g.find_value("nope"), -1);
}

TEST_F(GraphTest, ParameterCountSumsConstants) {
  Value w;
  w.name = "w";
  w.constant = Tensor::zeros(DType::kFloat32, {4, 3, 3, 3});
  g.add_value(w);
  Value b;
  b.name = "b";
  b.constant = Tensor::zeros(DType::kFloat32, {4});
  g.add_value(b);
  value("x");
  EXPECT_EQ(g.parameter_count(), 4 * 27 + 4);
}

}  // namespace
}  // namespace tern::ir
