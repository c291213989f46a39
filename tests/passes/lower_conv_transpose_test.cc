// lower-conv-transpose: a 2-D ConvTranspose with kernel == stride (no padding, dilation
// or groups) becomes a 1x1 Conv and a DepthToSpace, absorbing the per-channel Add, Mul
// and BatchNormalization after it and moving one pointwise activation before the
// DepthToSpace; results stay within float rounding of the ConvTranspose kernel's.
// Strides 2 and 3, with and without a bias; kept for other windows (padding, kernel !=
// stride, groups, output_padding, dilation); absorption stops at a value read twice.
#include "toy_model_util.h"

namespace tern::test::lower_conv_transpose_test {
namespace {

struct Case {
  int64_t s = 2;             // kernel and stride
  int64_t kernel = 0;        // kernel when it differs from the stride (0: = s)
  bool bias = true;          // ConvTranspose's B input
  bool tail = true;          // Add of a [1, M, 1, 1] bias, BatchNormalization, Mul by 0.5
  std::string act = "Relu";  // then this op ("" for none)
  std::vector<int64_t> pads, output_padding, dilations;
  int64_t group = 1;
  bool tail_read_twice = false;  // the Add's output is also a graph output
};

constexpr int64_t kC = 6, kM = 4, kH = 5, kW = 7;

ModelBuilder model(const Case& c) {
  ModelBuilder m(13);
  m.input("x", {1, kC, kH, kW});
  m.output("y");
  const int64_t k = c.kernel > 0 ? c.kernel : c.s;
  m.initializer("w", {kC, kM / c.group, k, k}, weights(kC * kM / c.group * k * k, 1));
  std::vector<std::string> in = {"x", "w"};
  if (c.bias) {
    m.initializer("b", {kM}, weights(kM, 2));
    in.push_back("b");
  }
  auto* ct = m.node("ConvTranspose", in, {"t"}, "up");
  set_ints(ct, "kernel_shape", {k, k});
  set_ints(ct, "strides", {c.s, c.s});
  if (!c.pads.empty()) set_ints(ct, "pads", c.pads);
  if (!c.output_padding.empty()) set_ints(ct, "output_padding", c.output_padding);
  if (!c.dilations.empty()) set_ints(ct, "dilations", c.dilations);
  if (c.group != 1) set_int(ct, "group", c.group);
  std::string last = "t";
  if (c.tail) {
    m.initializer("shift", {1, kM, 1, 1}, weights(kM, 3));
    m.node("Add", {"t", "shift"}, {"a"}, "add");
    if (c.tail_read_twice) m.output("a");
    std::vector<float> var = weights(kM, 7);
    for (float& v : var) v = v + 1.0f;  // positive variances
    m.initializer("gamma", {kM}, weights(kM, 4));
    m.initializer("beta", {kM}, weights(kM, 5));
    m.initializer("mean", {kM}, weights(kM, 6));
    m.initializer("var", {kM}, var);
    m.node("BatchNormalization", {"a", "gamma", "beta", "mean", "var"}, {"n"}, "bn");
    m.initializer("half", {}, {0.5f});
    m.node("Mul", {"half", "n"}, {"h"}, "scale");
    last = "h";
  }
  if (!c.act.empty()) {
    m.node(c.act, {last}, {"y"}, "act");
  } else {
    m.node("Identity", {last}, {"y"}, "id");
  }
  return m;
}

passes::Program compile_case(const Case& c) {
  return compile(model(c), {ops::TensorType{DType::kFloat32, {1, kC, kH, kW}}});
}

void expect_same_results(const Case& c) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, kC, kH, kW}, 9)}};
  expect_pass_keeps_results(model(c), feeds, "lower-conv-transpose");
  const auto one = run_model(model(c), feeds);
  const auto two = run_model(model(c), feeds, {}, 2);
  expect_outputs_near(one, two, 0.0);
}

TEST(LowerConvTranspose, DecoderBecomesOneFusedConvAndADepthToSpace) {
  const Case c;
  const passes::Program p = compile_case(c);
  EXPECT_EQ(count_ops(p, "ConvTranspose"), 0);
  EXPECT_EQ(count_ops(p, "DepthToSpace"), 1);
  EXPECT_EQ(count_ops(p, "FusedConv"), 1);
  // The bias Add, the BatchNormalization, the Mul and the Relu are all in the conv.
  for (const char* op : {"Add", "BatchNormalization", "ScaleShift", "Mul", "Relu"}) {
    EXPECT_EQ(count_ops(p, op), 0) << op;
  }
  EXPECT_EQ(producer_op(p, "y"), "DepthToSpace");
  expect_same_results(c);
}

TEST(LowerConvTranspose, StrideThreeWithoutBiasAndASigmoid) {
  Case c;
  c.s = 3;
  c.bias = false;
  c.act = "Sigmoid";
  const passes::Program p = compile_case(c);
  EXPECT_EQ(count_ops(p, "ConvTranspose"), 0);
  EXPECT_EQ(p.types[value_id(p, "y")]->shape, (Shape{1, kM, kH * 3, kW * 3}));
  expect_same_results(c);
  c.tail = false;
  c.act = "";
  expect_same_results(c);
}

TEST(LowerConvTranspose, OtherWindowsKeepTheConvTranspose) {
  std::vector<Case> cases(5);
  cases[0].pads = {1, 1, 1, 1};
  cases[0].kernel = 4;  // a 4x4 stride-2 upsampling with padding
  cases[1].kernel = 3;
  cases[2].group = 2;
  cases[3].output_padding = {1, 1};
  cases[3].s = 3;
  cases[4].dilations = {2, 2};
  cases[4].s = 3;
  cases[4].kernel = 2;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "case " << i);
    const passes::Program p = compile_case(cases[i]);
    EXPECT_EQ(count_ops(p, "ConvTranspose"), 1);
    EXPECT_EQ(count_ops(p, "DepthToSpace"), 0);
    expect_same_results(cases[i]);
  }
}

TEST(LowerConvTranspose, AbsorbingStopsAtAValueReadTwice) {
  Case c;
  c.tail_read_twice = true;  // "a", the Add's output, is returned too
  const passes::Program p = compile_case(c);
  EXPECT_EQ(count_ops(p, "ConvTranspose"), 0);
  // The Add is absorbed (its output, the graph output "a", comes from the DepthToSpace);
  // the BatchNormalization that also reads "a" is not.
  EXPECT_EQ(producer_op(p, "a"), "DepthToSpace");
  EXPECT_EQ(count_ops(p, "BatchNormalization") + count_ops(p, "ScaleShift"), 1);
  expect_same_results(c);
}

TEST(LowerConvTranspose, OffKeepsTheConvTranspose) {
  const passes::Program p = compile(
      model(Case{}), {ops::TensorType{DType::kFloat32, {1, kC, kH, kW}}}, {"lower-conv-transpose"});
  EXPECT_EQ(count_ops(p, "ConvTranspose"), 1);
}

}  // namespace
}  // namespace tern::test::lower_conv_transpose_test
