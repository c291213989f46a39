// The pipeline itself: names, switching passes off, verification.
#include "pass_test_util.h"

namespace tern::test::pipeline_test {
namespace {

// x -> Conv -> Relu -> Identity -> y, with a Shape/Gather/Reshape chain to fold.
ModelBuilder small_model() {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 8});
  m.output("y", {1, 4, 8, 8});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  m.initializer("w", {4, 3, 3, 3}, w);
  m.initializer("b", {4}, {0.1f, -0.2f, 0.3f, -0.4f});
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Shape", {"r"}, {"s"}, "shape");
  m.node("Reshape", {"r", "s"}, {"t"}, "reshape");
  m.node("Identity", {"t"}, {"y"}, "identity");
  return m;
}

TEST(Pipeline, NamesAreUniqueAndOrdered) {
  const std::vector<std::string> names = passes::pass_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "fold-constants");
  EXPECT_EQ(names.back(), "plan-memory");
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(pass_names(), names);  // the public list is the pipeline's
}

TEST(Pipeline, UnknownPassNameListsTheValidOnes) {
  try {
    compile(small_model(), {{DType::kFloat32, {1, 3, 8, 8}}}, {"fuse-everything"});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'fuse-everything'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fold-constants"), std::string::npos) << e.what();
  }
  const std::string bytes = small_model().bytes();
  SessionOptions options;
  options.disabled_passes = {"no-such-pass"};
  EXPECT_THROW(Session::from_memory(bytes.data(), bytes.size(), options), InvalidArgument);
}

TEST(Pipeline, AllPassesOffRunsTheModelAsLoaded) {
  const passes::Program p =
      compile(small_model(), {{DType::kFloat32, {1, 3, 8, 8}}}, passes::pass_names());
  EXPECT_EQ(p.graph.nodes.size(), 5u);
  const passes::Program q = compile(small_model(), {{DType::kFloat32, {1, 3, 8, 8}}});
  EXPECT_LT(q.graph.nodes.size(), 5u);
}

TEST(Pipeline, EachPassOffKeepsTheResults) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 8, 8}, 1)}};
  for (const std::string& pass : passes::pass_names()) {
    SCOPED_TRACE(pass);
    expect_pass_keeps_results(small_model(), feeds, pass);
  }
}

TEST(Pipeline, VerificationCatchesAChangedOutput) {
  passes::Program p = compile(small_model(), {{DType::kFloat32, {1, 3, 8, 8}}});
  std::vector<std::optional<ops::TensorType>> types;
  for (int v : p.graph.outputs) types.push_back(p.types[v]);
  EXPECT_NO_THROW(passes::verify_program(p, types, "test"));
  types[0]->shape = {1, 4, 8, 9};
  try {
    passes::verify_program(p, types, "test");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'test'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tern::test::pipeline_test
