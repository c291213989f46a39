// fuse-hard-swish: x * Clip(x + 3, 0, 6) / 6 (or * (1/6)), in either operand order, becomes
// one HardSwish, which fuse-epilogue then puts into the Conv before it; Clip bounds from
// inputs (opset 11+) or attributes (opset 10); left alone for other constants and when an
// intermediate has another reader. Results agree with the unfused ops within rounding.
#include "toy_model_util.h"

namespace tern::test::fuse_hard_swish_test {
namespace {

struct Case {
  int opset = 13;
  bool swapped = false;    // Add(3, x) and Mul(clip, x)
  bool mul_sixth = false;  // * (1/6) instead of / 6
  float add = 3.0f, hi = 6.0f, div = 6.0f;
  bool clip_returned = false;  // the Clip's output is a graph output too
  bool rank5_three = false;    // the 3 as a [1, 1, 1, 1, 1]: y has rank 5, x rank 4
};

ModelBuilder model(const Case& c) {
  ModelBuilder m(c.opset);
  m.input("x", {1, 3, 7, 6});
  m.output("y");
  if (c.clip_returned) m.output("k");
  m.initializer("w", {8, 3, 3, 3}, weights(8 * 27, 1));
  set_ints(m.node("Conv", {"x", "w"}, {"t"}, "conv"), "pads", {1, 1, 1, 1});
  m.initializer("three", c.rank5_three ? Shape{1, 1, 1, 1, 1} : Shape{}, {c.add});
  m.node(
      "Add",
      c.swapped ? std::vector<std::string>{"three", "t"} : std::vector<std::string>{"t", "three"},
      {"a"}, "add");
  if (c.opset >= 11) {
    m.initializer("zero", {}, {0.0f});
    m.initializer("six", {}, {c.hi});
    m.node("Clip", {"a", "zero", "six"}, {"k"}, "clip");
  } else {
    auto* clip = m.node("Clip", {"a"}, {"k"}, "clip");
    set_float(clip, "min", 0.0f);
    set_float(clip, "max", c.hi);
  }
  m.node("Mul", c.swapped ? std::vector<std::string>{"k", "t"} : std::vector<std::string>{"t", "k"},
         {"p"}, "mul");
  if (c.mul_sixth) {
    m.initializer("sixth", {}, {1.0f / 6.0f});
    m.node("Mul", {"p", "sixth"}, {"y"}, "scale");
  } else {
    m.initializer("div", {}, {c.div});
    m.node("Div", {"p", "div"}, {"y"}, "div");
  }
  return m;
}

passes::Program compile_case(const Case& c) {
  return compile(model(c), {ops::TensorType{DType::kFloat32, {1, 3, 7, 6}}});
}

void expect_same_results(const Case& c) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 7, 6}, 5, -4.0f, 4.0f)}};
  expect_pass_keeps_results(model(c), feeds, "fuse-hard-swish", 1e-5);
}

TEST(FuseHardSwish, WrittenOutHardSwishBecomesTheConvsActivation) {
  std::vector<Case> cases(4);
  cases[1].swapped = true;
  cases[2].mul_sixth = true;
  cases[3].opset = 10;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "case " << i);
    const passes::Program p = compile_case(cases[i]);
    for (const char* op : {"Add", "Clip", "Mul", "Div", "HardSwish"}) {
      EXPECT_EQ(count_ops(p, op), 0) << op;
    }
    EXPECT_EQ(count_ops(p, "FusedConv"), 1);
    expect_same_results(cases[i]);
  }
}

TEST(FuseHardSwish, OnlyThePassMakesTheHardSwish) {
  const passes::Program p = compile(model(Case{}), {ops::TensorType{DType::kFloat32, {1, 3, 7, 6}}},
                                    all_passes_except({"fuse-hard-swish"}));
  EXPECT_EQ(count_ops(p, "HardSwish"), 1);
  EXPECT_EQ(count_ops(p, "Clip"), 0);
}

TEST(FuseHardSwish, OtherConstantsOrASecondReaderLeaveTheOps) {
  std::vector<Case> cases(5);
  cases[0].add = 2.0f;
  cases[1].hi = 5.0f;
  cases[2].div = 7.0f;
  cases[3].clip_returned = true;
  cases[4].rank5_three = true;  // HardSwish(x) would lose the broadcast's extra dimension
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "case " << i);
    const passes::Program p = compile_case(cases[i]);
    EXPECT_EQ(count_ops(p, "HardSwish"), 0);
    EXPECT_EQ(count_ops(p, "Clip"), 1);
    expect_same_results(cases[i]);
  }
}

}  // namespace
}  // namespace tern::test::fuse_hard_swish_test
