// fuse-epilogue (src/passes/fuse_epilogue.cc): each pattern real models use (Conv+Relu,
// Conv+bias Add, ResNet's Conv+Add+Relu, MobileNetV2's Conv+Clip and Conv+Add, every
// activation, SiLU, Gemm and MatMul), the structure after the pass and the results with
// and without it; and the must-not-fuse cases (a second reader, a graph output, stages
// out of order, Add(t, t), shapes that broadcast), left alone with the results unchanged;
// and the affine map after the activation (a ScaleShift of one scale and one shift).
#include <cmath>
#include <string>
#include <vector>

#include "pass_test_util.h"

namespace tern::test::fuse_epilogue_test {
namespace {

// Adds a Conv `name` reading `x` ([.., c, ..]) with m output channels, a k x k kernel,
// pads k/2, and a bias unless `bias` is false. Returns the node.
::onnx::NodeProto* conv(ModelBuilder& m, const std::string& name, const std::string& x,
                        const std::string& y, int64_t c, int64_t out, int64_t k = 3,
                        bool bias = true, int64_t group = 1, int64_t stride = 1) {
  m.initializer(name + ".w", {out, c / group, k, k},
                weights(out * (c / group) * k * k, static_cast<uint32_t>(name.size() * 7 + out)));
  std::vector<std::string> in = {x, name + ".w"};
  if (bias) {
    m.initializer(name + ".b", {out}, weights(out, static_cast<uint32_t>(out + 3)));
    in.push_back(name + ".b");
  }
  auto* n = m.node("Conv", in, {y}, name);
  set_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  set_ints(n, "strides", {stride, stride});
  if (group != 1) set_int(n, "group", group);
  return n;
}

// The program after fuse-epilogue (and the folding passes before it) only.
passes::Program fused(const ModelBuilder& model, const std::vector<ops::TensorType>& types) {
  return compile(model, types,
                 all_passes_except(
                     {"fold-constants", "eliminate-identity", "eliminate-dead", "fuse-epilogue"}));
}

// The nodes of `op_type` in execution order.
std::vector<const ir::Node*> nodes_of(const passes::Program& p, const std::string& op_type) {
  std::vector<const ir::Node*> out;
  for (int n : p.order())
    if (p.graph.nodes[n].op_type == op_type) out.push_back(&p.graph.nodes[n]);
  return out;
}

std::string str_attr(const ir::Node& n, const std::string& name) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? "" : it->second.s;
}
int64_t int_attr(const ir::Node& n, const std::string& name) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? 0 : it->second.i;
}
float float_attr(const ir::Node& n, const std::string& name) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? NAN : it->second.f;
}
// The name of the value at input i of n ("" when absent).
std::string input_name(const passes::Program& p, const ir::Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? p.graph.values[n.inputs[i]].name : "";
}

const ops::TensorType kX{DType::kFloat32, {1, 6, 7, 9}};
const Shape kShape = {1, 6, 7, 9};

std::vector<NamedTensor> feed_x(const Shape& shape = kShape, uint32_t seed = 1) {
  return {{"x", random_tensor(shape, seed, -2.0f, 2.0f)}};
}

// ---- patterns that fuse ----------------------------------------------------------------

TEST(FuseEpilogue, ConvRelu) {
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.output("y");
  conv(m, "conv", "x", "c", 6, 5);
  m.node("Relu", {"c"}, {"y"}, "relu");
  const passes::Program p = fused(m, {kX});
  EXPECT_EQ(count_ops(p, "Conv"), 0);
  EXPECT_EQ(count_ops(p, "Relu"), 0);
  ASSERT_EQ(count_ops(p, "FusedConv"), 1);
  const ir::Node& f = *nodes_of(p, "FusedConv")[0];
  EXPECT_EQ(f.domain, "tern");
  EXPECT_EQ(f.name, "conv");
  EXPECT_EQ(str_attr(f, "activation"), "Relu");
  EXPECT_EQ(input_name(p, f, 2), "conv.b");
  EXPECT_EQ(p.graph.values[f.outputs[0]].name, "y");
  EXPECT_EQ(f.attrs.at("pads").ints, (std::vector<int64_t>{1, 1, 1, 1}));  // Conv's kept
  expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
}

TEST(FuseEpilogue, ConvWithoutBiasThenBiasAddThenRelu) {
  // The bias constant as [1, M, 1, 1], [M, 1, 1] and a scalar, in either operand order,
  // onto a Conv without B and with B.
  const std::vector<Shape> shapes = {{1, 5, 1, 1}, {5, 1, 1}, {}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (bool conv_bias : {false, true}) {
      for (bool bias_first : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "bias shape " << shape_str(shapes[i]) << " conv B "
                                          << conv_bias << " bias first " << bias_first);
        ModelBuilder m;
        m.input("x", {1, 6, 7, 9});
        m.output("y");
        conv(m, "conv", "x", "c", 6, 5, 3, conv_bias);
        m.initializer("bias", shapes[i], weights(shape_numel(shapes[i]), 9));
        m.node("Add",
               bias_first ? std::vector<std::string>{"bias", "c"}
                          : std::vector<std::string>{"c", "bias"},
               {"a"}, "add");
        m.node("Relu", {"a"}, {"y"}, "relu");
        const passes::Program p = fused(m, {kX});
        EXPECT_EQ(count_ops(p, "Add"), 0);
        EXPECT_EQ(count_ops(p, "Relu"), 0);
        ASSERT_EQ(count_ops(p, "FusedConv"), 1);
        const ir::Node& f = *nodes_of(p, "FusedConv")[0];
        EXPECT_EQ(str_attr(f, "activation"), "Relu");
        ASSERT_GE(f.inputs.size(), 3u);
        const Tensor& b = p.known[f.inputs[2]];
        ASSERT_TRUE(b.defined());
        EXPECT_EQ(b.shape(), (Shape{5}));
        expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
      }
    }
  }
}

TEST(FuseEpilogue, ResNetBasicBlockWithProjectionShortcut) {
  // x -> convA -> Relu -> convB --+
  // x -> convS -------------------+- Add -> Relu -> y    (both Add operand orders)
  for (bool main_first : {true, false}) {
    SCOPED_TRACE(main_first ? "Add(main, shortcut)" : "Add(shortcut, main)");
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "convA", "x", "a", 6, 8, 3, true, 1, 2);
    m.node("Relu", {"a"}, {"ar"}, "reluA");
    conv(m, "convB", "ar", "b", 8, 8);
    conv(m, "convS", "x", "s", 6, 8, 1, false, 1, 2);  // after convB in file order
    m.node("Add",
           main_first ? std::vector<std::string>{"b", "s"} : std::vector<std::string>{"s", "b"},
           {"sum"}, "add");
    m.node("Relu", {"sum"}, {"y"}, "relu");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Add"), 0);
    EXPECT_EQ(count_ops(p, "Relu"), 0);
    EXPECT_EQ(count_ops(p, "FusedConv"), 2);
    // The Conv the Add reads first absorbs it; the other one, whose output becomes the
    // residual, stays a Conv.
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    const ir::Node* with_z = nullptr;
    for (const ir::Node* f : nodes_of(p, "FusedConv")) {
      EXPECT_EQ(str_attr(*f, "activation"), "Relu");
      if (f->inputs.size() > 3 && f->inputs[3] >= 0) with_z = f;
    }
    ASSERT_NE(with_z, nullptr);
    // The fused node is whichever Conv the Add read first; the other one feeds Z.
    EXPECT_EQ(with_z->name, main_first ? "convB" : "convS");
    EXPECT_EQ(int_attr(*with_z, "residual_before_activation"), 1);
    // convB (8 -> 8, 3x3) runs winograd where 8 channels are a whole block or more (AVX2,
    // NEON): its transforms round sums several times the outputs (select-algorithm's
    // tolerance, against the plain Conv with every pass off).
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue", 1e-4);
  }
}

TEST(FuseEpilogue, MobileNetV2InvertedResidualWithClipAsInputsAndAttributes) {
  for (int opset : {13, 10}) {
    SCOPED_TRACE(::testing::Message() << "opset " << opset);
    ModelBuilder m(opset);
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    auto relu6 = [&](const std::string& in, const std::string& out, const std::string& name) {
      if (opset >= 11) {
        m.node("Clip", {in, "zero", "six"}, {out}, name);
      } else {
        auto* n = m.node("Clip", {in}, {out}, name);
        set_float(n, "min", 0.0f);
        set_float(n, "max", 6.0f);
      }
    };
    if (opset >= 11) {
      m.initializer("zero", {}, {0.0f});
      m.initializer("six", {}, {6.0f});
    }
    conv(m, "expand", "x", "e", 6, 12, 1);
    relu6("e", "er", "clip1");
    conv(m, "dw", "er", "d", 12, 12, 3, true, 12);
    relu6("d", "dr", "clip2");
    conv(m, "project", "dr", "pr", 12, 6, 1);
    m.node("Add", {"x", "pr"}, {"y"}, "add");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Clip"), 0);
    EXPECT_EQ(count_ops(p, "Add"), 0);
    ASSERT_EQ(count_ops(p, "FusedConv"), 3);
    const auto f = nodes_of(p, "FusedConv");
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(str_attr(*f[i], "activation"), "Clip");
      EXPECT_EQ(float_attr(*f[i], "activation_alpha"), 0.0f);
      EXPECT_EQ(float_attr(*f[i], "activation_beta"), 6.0f);
    }
    EXPECT_EQ(str_attr(*f[2], "activation"), "");
    EXPECT_EQ(input_name(p, *f[2], 3), "x");
    expect_pass_keeps_results(m, feed_x(kShape, 3), "fuse-epilogue");
  }
}

TEST(FuseEpilogue, EveryActivation) {
  struct Case {
    std::string op;
    std::string fused;  // the activation attribute
    std::vector<std::pair<std::string, float>> attrs;
  };
  const std::vector<Case> cases = {
      {"LeakyRelu", "LeakyRelu", {{"alpha", 0.2f}}},
      {"LeakyRelu", "LeakyRelu", {}},
      {"HardSigmoid", "HardSigmoid", {{"alpha", 0.25f}, {"beta", 0.4f}}},
      {"HardSwish", "HardSwish", {}},
      {"Sigmoid", "Sigmoid", {}},
      {"Clip", "Clip", {}},  // Clip-13 with min only (input below)
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    ModelBuilder m(14);
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 7);
    std::vector<std::string> in = {"c"};
    if (c.op == "Clip") {
      m.initializer("lo", {}, {-0.3f});
      in.push_back("lo");
    }
    auto* n = m.node(c.op, in, {"y"}, "act");
    for (const auto& [name, v] : c.attrs) set_float(n, name, v);
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, c.op), 0);
    ASSERT_EQ(count_ops(p, "FusedConv"), 1);
    const ir::Node& f = *nodes_of(p, "FusedConv")[0];
    EXPECT_EQ(str_attr(f, "activation"), c.fused);
    for (const auto& [name, v] : c.attrs)
      EXPECT_EQ(float_attr(f, name == "alpha" ? "activation_alpha" : "activation_beta"), v);
    if (c.op == "Clip") {
      EXPECT_EQ(float_attr(f, "activation_alpha"), -0.3f);
      EXPECT_TRUE(std::isinf(float_attr(f, "activation_beta")));
    }
    expect_pass_keeps_results(m, feed_x(kShape, 4), "fuse-epilogue");
  }
}

TEST(FuseEpilogue, SiluAsMulOfSigmoidInEitherOrder) {
  for (bool x_first : {true, false}) {
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 4);
    m.node("Sigmoid", {"c"}, {"s"}, "sigmoid");
    m.node("Mul", x_first ? std::vector<std::string>{"c", "s"} : std::vector<std::string>{"s", "c"},
           {"y"}, "mul");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Sigmoid"), 0);
    EXPECT_EQ(count_ops(p, "Mul"), 0);
    ASSERT_EQ(count_ops(p, "FusedConv"), 1);
    EXPECT_EQ(str_attr(*nodes_of(p, "FusedConv")[0], "activation"), "SiLU");
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

TEST(FuseEpilogue, ResidualAfterActivation) {
  // y = Relu(conv(x)) + z: the residual follows the activation.
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.input("z", {1, 6, 7, 9});
  m.output("y");
  conv(m, "conv", "x", "c", 6, 6);
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Add", {"z", "r"}, {"y"}, "add");
  const passes::Program p = fused(m, {kX, kX});
  EXPECT_EQ(count_ops(p, "Add") + count_ops(p, "Relu"), 0);
  ASSERT_EQ(count_ops(p, "FusedConv"), 1);
  const ir::Node& f = *nodes_of(p, "FusedConv")[0];
  EXPECT_EQ(str_attr(f, "activation"), "Relu");
  EXPECT_EQ(int_attr(f, "residual_before_activation"), 0);
  EXPECT_EQ(input_name(p, f, 3), "z");
  auto feeds = feed_x();
  feeds.push_back({"z", random_tensor(kShape, 5)});
  expect_pass_keeps_results(m, feeds, "fuse-epilogue");
}

TEST(FuseEpilogue, GemmBiasAndActivation) {
  // Flatten -> Gemm(transB, no C) -> Add([N]) -> Relu: one FusedGemm with C.
  ModelBuilder m;
  m.input("x", {3, 10});
  m.output("y");
  m.initializer("w", {4, 10}, weights(40, 1));
  m.initializer("bias", {4}, weights(4, 2));
  set_int(m.node("Gemm", {"x", "w"}, {"g"}, "fc"), "transB", 1);
  m.node("Add", {"g", "bias"}, {"a"}, "add");
  m.node("HardSwish", {"a"}, {"y"}, "act");
  const passes::Program p = fused(m, {{DType::kFloat32, {3, 10}}});
  EXPECT_EQ(count_ops(p, "Gemm") + count_ops(p, "Add") + count_ops(p, "HardSwish"), 0);
  ASSERT_EQ(count_ops(p, "FusedGemm"), 1);
  const ir::Node& f = *nodes_of(p, "FusedGemm")[0];
  EXPECT_EQ(input_name(p, f, 2), "bias");
  EXPECT_EQ(str_attr(f, "activation"), "HardSwish");
  expect_pass_keeps_results(m, {{"x", random_tensor({3, 10}, 6)}}, "fuse-epilogue");
}

TEST(FuseEpilogue, MatMulBiasActivationAndResidual) {
  // x [2, 3, 5] MatMul w [5, 7] -> Add(bias [1, 7]) -> Sigmoid -> Add(z) -> y.
  ModelBuilder m;
  m.input("x", {2, 3, 5});
  m.input("z", {2, 3, 7});
  m.output("y");
  m.initializer("w", {5, 7}, weights(35, 3));
  m.initializer("bias", {1, 7}, weights(7, 4));
  m.node("MatMul", {"x", "w"}, {"mm"}, "mm");
  m.node("Add", {"bias", "mm"}, {"a"}, "add_bias");
  m.node("Sigmoid", {"a"}, {"s"}, "sigmoid");
  m.node("Add", {"s", "z"}, {"y"}, "add_z");
  const passes::Program p = fused(m, {{DType::kFloat32, {2, 3, 5}}, {DType::kFloat32, {2, 3, 7}}});
  EXPECT_EQ(count_ops(p, "MatMul") + count_ops(p, "Add") + count_ops(p, "Sigmoid"), 0);
  ASSERT_EQ(count_ops(p, "FusedMatMul"), 1);
  const ir::Node& f = *nodes_of(p, "FusedMatMul")[0];
  EXPECT_EQ(p.known[f.inputs[2]].shape(), (Shape{7}));
  EXPECT_EQ(str_attr(f, "activation"), "Sigmoid");
  EXPECT_EQ(input_name(p, f, 3), "z");
  EXPECT_EQ(int_attr(f, "residual_before_activation"), 0);
  expect_pass_keeps_results(
      m, {{"x", random_tensor({2, 3, 5}, 7)}, {"z", random_tensor({2, 3, 7}, 8)}}, "fuse-epilogue");
}

// ---- must not fuse ---------------------------------------------------------------------

TEST(FuseEpilogue, ConvOutputThatIsAGraphOutputOrHasASecondReaderStays) {
  {  // The conv output is also returned.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("c");
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Relu", {"c"}, {"y"}, "relu");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    EXPECT_EQ(count_ops(p, "Relu"), 1);
    EXPECT_EQ(count_ops(p, "FusedConv"), 0);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // The conv output is read by Relu and Sigmoid.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y1");
    m.output("y2");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Relu", {"c"}, {"y1"}, "relu");
    m.node("Sigmoid", {"c"}, {"y2"}, "sigmoid");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    EXPECT_EQ(count_ops(p, "FusedConv"), 0);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // Conv -> Relu -> Add(const): the fused Relu's output feeds two nodes; Relu fuses,
     // the Adds do not.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y1");
    m.output("y2");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Relu", {"c"}, {"r"}, "relu");
    m.initializer("bias", {5, 1, 1}, weights(5, 1));
    m.node("Add", {"r", "bias"}, {"y1"}, "add1");
    m.node("Add", {"r", "bias"}, {"y2"}, "add2");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "FusedConv"), 1);
    EXPECT_EQ(count_ops(p, "Add"), 2);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

// RetinaFace's SSH module: convs of 2, 3 and 4 channels (no activation), Concat along the
// channels, then an activation; with a Relu and with a LeakyRelu (its alpha kept).
TEST(FuseEpilogue, ActivationAfterAConcatOfConvsGoesIntoEveryConv) {
  for (const char* act : {"Relu", "LeakyRelu"}) {
    SCOPED_TRACE(act);
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "a", "x", "ca", 6, 2);
    conv(m, "b", "x", "cb", 6, 3, 1);
    conv(m, "c", "x", "cc", 6, 4, 5, false);
    set_int(m.node("Concat", {"ca", "cb", "cc"}, {"cat"}, "concat"), "axis", 1);
    auto* a = m.node(act, {"cat"}, {"y"}, "act");
    if (std::string(act) == "LeakyRelu") set_float(a, "alpha", 0.25f);
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, act), 0);
    ASSERT_EQ(count_ops(p, "FusedConv"), 3);
    for (const ir::Node* f : nodes_of(p, "FusedConv")) {
      EXPECT_EQ(str_attr(*f, "activation"), act) << f->name;
      if (std::string(act) == "LeakyRelu") {
        EXPECT_EQ(float_attr(*f, "activation_alpha"), 0.25f) << f->name;
      }
    }
    ASSERT_EQ(count_ops(p, "Concat"), 1);
    EXPECT_EQ(p.graph.values[nodes_of(p, "Concat")[0]->outputs[0]].name, "y");
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

// The SSH shape on NCHWc (block 8): convs to 8, 8 and 16 channels, Concat, Relu, and a
// pointwise conv reading the result. With every pass, the convs write their activated
// outputs into the Concat's slices (concat-slices), so the Concat copies nothing.
TEST(FuseEpilogue, ActivationAfterAConcatOfNchwcConvsWritesIntoTheSlices) {
  ModelBuilder m;
  m.input("x", {1, 8, 10, 12});
  m.output("y");
  conv(m, "a", "x", "ca", 8, 8);
  conv(m, "b", "x", "cb", 8, 8, 5);
  conv(m, "c", "x", "cc", 8, 16, 1);
  set_int(m.node("Concat", {"ca", "cb", "cc"}, {"cat"}, "concat"), "axis", 1);
  m.node("Relu", {"cat"}, {"r"}, "relu");
  conv(m, "head", "r", "y", 32, 4, 1);
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 8, 10, 12}}});
  EXPECT_EQ(count_ops(p, "Relu"), 0);
  for (const ir::Node* f : nodes_of(p, "FusedConv")) {
    EXPECT_EQ(str_attr(*f, "activation"), f->name == "head" ? "" : "Relu") << f->name;
  }
  ASSERT_EQ(count_ops(p, "Concat"), 1);
  for (int v : nodes_of(p, "Concat")[0]->inputs) {
    EXPECT_EQ(p.buffers[v].kind, passes::BufferAssignment::Kind::kSlice) << p.graph.values[v].name;
  }
  expect_pass_keeps_results(m, {{"x", random_tensor({1, 8, 10, 12}, 3, -2.0f, 2.0f)}},
                            "fuse-epilogue");
}

// Through a Concat too: MatMul producers, a Clip whose bounds are inputs, and a producer
// that adds a residual (before the activation, which follows it).
TEST(FuseEpilogue, ActivationAfterAConcatOfMatMulsOrAResidualConv) {
  {  // MatMul -> Concat(last axis) -> Clip(min, max inputs).
    ModelBuilder m;
    m.input("x", {3, 6});
    m.output("y");
    m.initializer("w1", {6, 3}, weights(18, 1));
    m.initializer("w2", {6, 5}, weights(30, 2));
    m.initializer("lo", {}, {-0.25f});
    m.initializer("hi", {}, {0.5f});
    m.node("MatMul", {"x", "w1"}, {"m1"}, "mm1");
    m.node("MatMul", {"x", "w2"}, {"m2"}, "mm2");
    set_int(m.node("Concat", {"m1", "m2"}, {"cat"}, "concat"), "axis", 1);
    m.node("Clip", {"cat", "lo", "hi"}, {"y"}, "clip");
    const passes::Program p = fused(m, {{DType::kFloat32, {3, 6}}});
    EXPECT_EQ(count_ops(p, "Clip"), 0);
    ASSERT_EQ(count_ops(p, "FusedMatMul"), 2);
    for (const ir::Node* f : nodes_of(p, "FusedMatMul")) {
      EXPECT_EQ(str_attr(*f, "activation"), "Clip") << f->name;
      EXPECT_EQ(float_attr(*f, "activation_alpha"), -0.25f) << f->name;
      EXPECT_EQ(float_attr(*f, "activation_beta"), 0.5f) << f->name;
    }
    expect_pass_keeps_results(m, {{"x", random_tensor({3, 6}, 4)}}, "fuse-epilogue");
  }
  {  // Conv -> Add(x) (a residual) and a Conv -> Concat -> Relu: relu(conv + b + x).
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "a", "x", "ca", 6, 6);
    m.node("Add", {"ca", "x"}, {"ra"}, "residual");
    conv(m, "b", "x", "cb", 6, 3);
    set_int(m.node("Concat", {"ra", "cb"}, {"cat"}, "concat"), "axis", 1);
    m.node("Relu", {"cat"}, {"y"}, "relu");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Relu") + count_ops(p, "Add"), 0);
    ASSERT_EQ(count_ops(p, "FusedConv"), 2);
    for (const ir::Node* f : nodes_of(p, "FusedConv")) {
      EXPECT_EQ(str_attr(*f, "activation"), "Relu") << f->name;
      EXPECT_EQ(input_name(p, *f, 3), f->name == "a" ? "x" : "") << f->name;
      if (f->name == "a") {
        EXPECT_EQ(int_attr(*f, "residual_before_activation"), 1);
      }
    }
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

// The activation stays after the Concat when one of its inputs is not a fusable
// producer's (a graph input, a MaxPool), is read by another node too, or is a conv that
// has an activation already; or when the Concat's output is a graph output too or has
// another reader.
TEST(FuseEpilogue, ActivationAfterAConcatStaysUnlessEveryInputCanTakeIt) {
  enum Case { kGraphInput, kPool, kSecondReader, kActivated, kConcatOutput, kConcatReadTwice };
  for (Case c : {kGraphInput, kPool, kSecondReader, kActivated, kConcatOutput, kConcatReadTwice}) {
    SCOPED_TRACE(static_cast<int>(c));
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "a", "x", "ca", 6, 2);
    std::string second = "cb";
    if (c == kGraphInput) {
      second = "x";
    } else if (c == kPool) {
      auto* pool = m.node("MaxPool", {"x"}, {"cb"}, "pool");
      set_ints(pool, "kernel_shape", {3, 3});
      set_ints(pool, "pads", {1, 1, 1, 1});
    } else if (c == kActivated) {
      conv(m, "b", "x", "b0", 6, 3);
      m.node("Relu", {"b0"}, {"cb"}, "relu_b");
    } else {
      conv(m, "b", "x", "cb", 6, 3);
    }
    if (c == kSecondReader) {
      m.output("z");
      m.node("Sigmoid", {"cb"}, {"z"}, "sigmoid");
    }
    set_int(m.node("Concat", {"ca", second}, {"cat"}, "concat"), "axis", 1);
    if (c == kConcatOutput) {
      m.output("cat");
    } else if (c == kConcatReadTwice) {
      m.output("z");
      m.node("Sigmoid", {"cat"}, {"z"}, "sigmoid");
    }
    m.node("Relu", {"cat"}, {"y"}, "relu");
    const passes::Program p = fused(m, {kX});
    ASSERT_EQ(count_ops(p, "Concat"), 1);
    EXPECT_EQ(p.graph.values[nodes_of(p, "Concat")[0]->outputs[0]].name, "cat");
    EXPECT_EQ(count_ops(p, "Relu"), 1);
    // Only conv b of kActivated fused an activation (its own Relu, before the Concat).
    int activated = 0;
    for (const ir::Node* f : nodes_of(p, "FusedConv"))
      activated += str_attr(*f, "activation") == "Relu";
    EXPECT_EQ(activated, c == kActivated ? 1 : 0);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

TEST(FuseEpilogue, StagesOutOfOrderStay) {
  {  // A bias after the activation is not a bias of the epilogue.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Relu", {"c"}, {"r"}, "relu");
    m.initializer("bias", {1, 5, 1, 1}, weights(5, 1));
    m.node("Add", {"r", "bias"}, {"y"}, "add");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "FusedConv"), 1);
    EXPECT_EQ(count_ops(p, "Add"), 1);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // Two activations: only the first fuses.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Relu", {"c"}, {"r"}, "relu");
    m.node("Sigmoid", {"r"}, {"y"}, "sigmoid");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Relu"), 0);
    EXPECT_EQ(count_ops(p, "Sigmoid"), 1);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // Relu -> Add(z) -> Relu: the residual after the first activation fuses; the
     // second activation would follow it and does not.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.input("z", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 6);
    m.node("Relu", {"c"}, {"r"}, "relu1");
    m.node("Add", {"r", "z"}, {"a"}, "add");
    m.node("Relu", {"a"}, {"y"}, "relu2");
    const passes::Program p = fused(m, {kX, kX});
    EXPECT_EQ(count_ops(p, "Add"), 0);
    EXPECT_EQ(count_ops(p, "Relu"), 1);
    auto feeds = feed_x();
    feeds.push_back({"z", random_tensor(kShape, 9)});
    expect_pass_keeps_results(m, feeds, "fuse-epilogue");
  }
  {  // Two residual Adds: only the first fuses.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.input("z", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 6);
    m.node("Add", {"c", "z"}, {"a"}, "add1");
    m.node("Add", {"a", "x"}, {"y"}, "add2");
    const passes::Program p = fused(m, {kX, kX});
    EXPECT_EQ(count_ops(p, "Add"), 1);
    auto feeds = feed_x();
    feeds.push_back({"z", random_tensor(kShape, 9)});
    expect_pass_keeps_results(m, feeds, "fuse-epilogue");
  }
}

TEST(FuseEpilogue, AddOfTheOutputToItselfStays) {
  // Add(t, t): t has one reader, but the residual would be the fused node's own output.
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.output("y");
  conv(m, "conv", "x", "c", 6, 5);
  m.node("Add", {"c", "c"}, {"y"}, "double");
  const passes::Program p = fused(m, {kX});
  EXPECT_EQ(count_ops(p, "Add"), 1);
  EXPECT_EQ(count_ops(p, "Conv"), 1);
  expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
}

TEST(FuseEpilogue, BroadcastingAddsStay) {
  {  // A run-time per-channel tensor: not a constant bias, not of the output's shape.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.input("b", {1, 5, 1, 1});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Add", {"c", "b"}, {"y"}, "add");
    const passes::Program p = fused(m, {kX, {DType::kFloat32, {1, 5, 1, 1}}});
    EXPECT_EQ(count_ops(p, "Add"), 1);
    auto feeds = feed_x();
    feeds.push_back({"b", random_tensor({1, 5, 1, 1}, 2)});
    expect_pass_keeps_results(m, feeds, "fuse-epilogue");
  }
  {  // A constant that varies along W: neither a bias nor of the output's shape.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.initializer("k", {1, 1, 1, 9}, weights(9, 3));
    m.node("Add", {"c", "k"}, {"y"}, "add");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Add"), 1);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // An Add that grows the output ([1,5,7,9] + [2,5,7,9]).
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.input("z", {2, 5, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Add", {"c", "z"}, {"y"}, "add");
    const passes::Program p = fused(m, {kX, {DType::kFloat32, {2, 5, 7, 9}}});
    EXPECT_EQ(count_ops(p, "Add"), 1);
    auto feeds = feed_x();
    feeds.push_back({"z", random_tensor({2, 5, 7, 9}, 2)});
    expect_pass_keeps_results(m, feeds, "fuse-epilogue");
  }
}

TEST(FuseEpilogue, SiluWhoseInputsHaveOtherReadersStays) {
  {  // The conv output is also read by a third node.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    m.output("y2");
    conv(m, "conv", "x", "c", 6, 4);
    m.node("Sigmoid", {"c"}, {"s"}, "sigmoid");
    m.node("Mul", {"c", "s"}, {"y"}, "mul");
    m.node("Relu", {"c"}, {"y2"}, "relu");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    EXPECT_EQ(count_ops(p, "Mul"), 1);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // The Sigmoid's output is also returned.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.output("y");
    m.output("s");
    conv(m, "conv", "x", "c", 6, 4);
    m.node("Sigmoid", {"c"}, {"s"}, "sigmoid");
    m.node("Mul", {"s", "c"}, {"y"}, "mul");
    const passes::Program p = fused(m, {kX});
    EXPECT_EQ(count_ops(p, "Mul"), 1);
    EXPECT_EQ(count_ops(p, "Sigmoid"), 1);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // Mul(t, Sigmoid(u)) with u another tensor: not SiLU.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.input("u", {1, 4, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 4);
    m.node("Sigmoid", {"u"}, {"s"}, "sigmoid");
    m.node("Mul", {"c", "s"}, {"y"}, "mul");
    const passes::Program p = fused(m, {kX, {DType::kFloat32, {1, 4, 7, 9}}});
    EXPECT_EQ(count_ops(p, "Mul"), 1);
    auto feeds = feed_x();
    feeds.push_back({"u", random_tensor({1, 4, 7, 9}, 3)});
    expect_pass_keeps_results(m, feeds, "fuse-epilogue");
  }
}

TEST(FuseEpilogue, ClipWithARunTimeBoundStays) {
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.input("hi", {});
  m.output("y");
  conv(m, "conv", "x", "c", 6, 5);
  m.initializer("lo", {}, {0.0f});
  m.node("Clip", {"c", "lo", "hi"}, {"y"}, "clip");
  const passes::Program p = fused(m, {kX, {DType::kFloat32, {}}});
  EXPECT_EQ(count_ops(p, "Clip"), 1);
  EXPECT_EQ(count_ops(p, "Conv"), 1);
  auto feeds = feed_x();
  feeds.push_back({"hi", Tensor::scalar_f32(0.7f)});
  expect_pass_keeps_results(m, feeds, "fuse-epilogue");
}

TEST(FuseEpilogue, GemmBiasOfEveryBroadcastShape) {
  // [M, 1], [1, N], [M, N] and a scalar all broadcast to Gemm's [M, N] and become C.
  for (const Shape& shape : {Shape{3, 1}, Shape{1, 4}, Shape{3, 4}, Shape{}}) {
    SCOPED_TRACE(shape_str(shape));
    ModelBuilder m;
    m.input("x", {3, 10});
    m.output("y");
    m.initializer("w", {10, 4}, weights(40, 1));
    m.initializer("bias", shape, weights(shape_numel(shape), 2));
    m.node("Gemm", {"x", "w"}, {"g"}, "fc");
    m.node("Add", {"bias", "g"}, {"y"}, "add");
    const passes::Program p = fused(m, {{DType::kFloat32, {3, 10}}});
    EXPECT_EQ(count_ops(p, "Add"), 0);
    ASSERT_EQ(count_ops(p, "FusedGemm"), 1);
    EXPECT_EQ(input_name(p, *nodes_of(p, "FusedGemm")[0], 2), "bias");
    expect_pass_keeps_results(m, {{"x", random_tensor({3, 10}, 6)}}, "fuse-epilogue");
  }
}

TEST(FuseEpilogue, GemmWithCThenConstantAddStays) {
  // Gemm already has C: the Add stays (and so does the Relu after it).
  ModelBuilder m;
  m.input("x", {3, 10});
  m.output("y");
  m.initializer("w", {10, 4}, weights(40, 1));
  m.initializer("c", {4}, weights(4, 2));
  m.initializer("bias", {4}, weights(4, 3));
  m.node("Gemm", {"x", "w", "c"}, {"g"}, "fc");
  m.node("Add", {"g", "bias"}, {"a"}, "add");
  m.node("Relu", {"a"}, {"y"}, "relu");
  const passes::Program p = fused(m, {{DType::kFloat32, {3, 10}}});
  EXPECT_EQ(count_ops(p, "Gemm"), 1);
  EXPECT_EQ(count_ops(p, "Add"), 1);
  EXPECT_EQ(count_ops(p, "Relu"), 1);
  expect_pass_keeps_results(m, {{"x", random_tensor({3, 10}, 6)}}, "fuse-epilogue");
}

// ---- the affine map after the activation (ppocr's LearnableAffineBlock) -----------------

// The program after fold-batch-norm (which merges a scalar Mul and Add into a ScaleShift)
// and fuse-epilogue.
passes::Program fused_affine(const ModelBuilder& model, const std::vector<ops::TensorType>& types) {
  return compile(model, types,
                 all_passes_except({"fold-constants", "eliminate-identity", "eliminate-dead",
                                    "fold-batch-norm", "fuse-epilogue"}));
}

// Adds Mul(x, scale) -> Add(shift) -> y (Mul(scale, x) when `scale_first`), the
// constants of shape `shape`.
void affine_tail(ModelBuilder& m, const std::string& x, const Shape& shape,
                 const std::vector<float>& scale, const std::vector<float>& shift,
                 bool scale_first = false) {
  m.initializer("scale", shape, scale);
  m.initializer("shift", shape, shift);
  m.node("Mul",
         scale_first ? std::vector<std::string>{"scale", x} : std::vector<std::string>{x, "scale"},
         {"s"}, "mul");
  m.node("Add", {"s", "shift"}, {"y"}, "add");
}

// Conv -> `act` -> Mul(scale) -> Add(shift) -> y, the constants of shape `shape`.
ModelBuilder affine_model(const std::string& act, const Shape& shape,
                          const std::vector<float>& scale, const std::vector<float>& shift) {
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.output("y");
  conv(m, "conv", "x", "c", 6, 5);
  m.node(act, {"c"}, {"r"}, "act");
  affine_tail(m, "r", shape, scale, shift, true);
  return m;
}

TEST(FuseEpilogue, ScalarAffineAfterTheActivation) {
  for (const std::string act : {"HardSwish", "Relu", "Sigmoid"}) {
    SCOPED_TRACE(act);
    const ModelBuilder m = affine_model(act, {1}, {-1.25f}, {0.375f});
    const passes::Program p = fused_affine(m, {kX});
    EXPECT_EQ(count_ops(p, "Mul") + count_ops(p, "Add") + count_ops(p, "ScaleShift"), 0);
    ASSERT_EQ(count_ops(p, "FusedConv"), 1);
    const ir::Node& f = *nodes_of(p, "FusedConv")[0];
    EXPECT_EQ(str_attr(f, "activation"), act);
    EXPECT_EQ(float_attr(f, "affine_scale"), -1.25f);
    EXPECT_EQ(float_attr(f, "affine_shift"), 0.375f);
    EXPECT_EQ(p.graph.values[f.outputs[0]].name, "y");
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

TEST(FuseEpilogue, ResidualAfterTheAffineMap) {
  // Relu -> Mul -> Add(shift) -> Add(z): y = Relu(conv) * s + t + z.
  ModelBuilder m = affine_model("Relu", {}, {0.5f}, {-2.0f});
  m.graph().mutable_output(0)->set_name("y2");
  m.input("z", {1, 5, 7, 9});
  m.node("Add", {"z", "y"}, {"y2"}, "residual");
  const passes::Program p = fused_affine(m, {kX, {DType::kFloat32, {1, 5, 7, 9}}});
  EXPECT_EQ(count_ops(p, "Add") + count_ops(p, "ScaleShift"), 0);
  ASSERT_EQ(count_ops(p, "FusedConv"), 1);
  const ir::Node& f = *nodes_of(p, "FusedConv")[0];
  EXPECT_EQ(float_attr(f, "affine_scale"), 0.5f);
  EXPECT_EQ(int_attr(f, "residual_before_activation"), 0);
  EXPECT_EQ(input_name(p, f, 3), "z");
  auto feeds = feed_x();
  feeds.push_back({"z", random_tensor({1, 5, 7, 9}, 5)});
  expect_pass_keeps_results(m, feeds, "fuse-epilogue");
}

TEST(FuseEpilogue, AffineAfterAResidualBeforeTheActivation) {
  // Conv -> Add(z) -> Relu -> Mul -> Add: y = Relu(conv + z) * s + t.
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.input("z", {1, 5, 7, 9});
  m.output("y");
  conv(m, "conv", "x", "c", 6, 5);
  m.node("Add", {"c", "z"}, {"a"}, "residual");
  m.node("Relu", {"a"}, {"r"}, "relu");
  affine_tail(m, "r", {}, {0.75f}, {-0.5f});
  const passes::Program p = fused_affine(m, {kX, {DType::kFloat32, {1, 5, 7, 9}}});
  EXPECT_EQ(count_ops(p, "Add") + count_ops(p, "Relu") + count_ops(p, "ScaleShift"), 0);
  ASSERT_EQ(count_ops(p, "FusedConv"), 1);
  const ir::Node& f = *nodes_of(p, "FusedConv")[0];
  EXPECT_EQ(int_attr(f, "residual_before_activation"), 1);
  EXPECT_EQ(float_attr(f, "affine_scale"), 0.75f);
  EXPECT_EQ(float_attr(f, "affine_shift"), -0.5f);
  auto feeds = feed_x();
  feeds.push_back({"z", random_tensor({1, 5, 7, 9}, 7)});
  expect_pass_keeps_results(m, feeds, "fuse-epilogue");
}

TEST(FuseEpilogue, AffineWithoutActivation) {
  // Weights given at run time: fold-batch-norm cannot fold the Mul and Add into them, and
  // they become the epilogue's map with no activation.
  ModelBuilder m;
  m.input("x", {1, 6, 7, 9});
  m.input("w", {5, 6, 3, 3});
  m.output("y");
  set_ints(m.node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  affine_tail(m, "c", {1}, {-2.0f}, {0.125f});
  const ops::TensorType w{DType::kFloat32, {5, 6, 3, 3}};
  const passes::Program p = fused_affine(m, {kX, w});
  EXPECT_EQ(count_ops(p, "Mul") + count_ops(p, "Add") + count_ops(p, "ScaleShift"), 0);
  ASSERT_EQ(count_ops(p, "FusedConv"), 1);
  const ir::Node& f = *nodes_of(p, "FusedConv")[0];
  EXPECT_EQ(str_attr(f, "activation"), "");
  EXPECT_EQ(float_attr(f, "affine_scale"), -2.0f);
  auto feeds = feed_x();
  feeds.push_back({"w", random_tensor({5, 6, 3, 3}, 8)});
  expect_pass_keeps_results(m, feeds, "fuse-epilogue");
}

TEST(FuseEpilogue, AffineMapsThatStay) {
  {  // One scale per channel: the epilogue holds one scale and one shift.
    const ModelBuilder m = affine_model("Relu", {1, 5, 1, 1}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f},
                                        {0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
    const passes::Program p = fused_affine(m, {kX});
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    EXPECT_EQ(str_attr(*nodes_of(p, "FusedConv")[0], "activation"), "Relu");
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
  {  // Relu -> Add(z) -> Mul -> Add: the residual after the activation came first.
    ModelBuilder m;
    m.input("x", {1, 6, 7, 9});
    m.input("z", {1, 5, 7, 9});
    m.output("y");
    conv(m, "conv", "x", "c", 6, 5);
    m.node("Relu", {"c"}, {"r"}, "relu");
    m.node("Add", {"r", "z"}, {"a"}, "residual");
    affine_tail(m, "a", {}, {3.0f}, {1.0f});
    const passes::Program p = fused_affine(m, {kX, {DType::kFloat32, {1, 5, 7, 9}}});
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    const ir::Node& f = *nodes_of(p, "FusedConv")[0];
    EXPECT_EQ(input_name(p, f, 3), "z");
    EXPECT_EQ(f.attrs.count("affine_scale"), 0u);
    auto feeds = feed_x();
    feeds.push_back({"z", random_tensor({1, 5, 7, 9}, 6)});
    expect_pass_keeps_results(m, feeds, "fuse-epilogue");
  }
  {  // After a Gemm: only a Conv's epilogue takes the map.
    ModelBuilder m;
    m.input("x", {3, 10});
    m.output("y");
    m.initializer("w", {4, 10}, weights(40, 1));
    set_int(m.node("Gemm", {"x", "w"}, {"g"}, "fc"), "transB", 1);
    m.node("Relu", {"g"}, {"r"}, "relu");
    affine_tail(m, "r", {}, {3.0f}, {1.0f});
    const passes::Program p = fused_affine(m, {{DType::kFloat32, {3, 10}}});
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    ASSERT_EQ(count_ops(p, "FusedGemm"), 1);
    EXPECT_EQ(nodes_of(p, "FusedGemm")[0]->attrs.count("affine_scale"), 0u);
    expect_pass_keeps_results(m, {{"x", random_tensor({3, 10}, 6)}}, "fuse-epilogue");
  }
  {  // Relu -> Mul -> Add -> Relu: an activation after the affine map stays.
    ModelBuilder m = affine_model("Relu", {1}, {-1.0f}, {0.25f});
    m.graph().mutable_output(0)->set_name("y2");
    m.node("Relu", {"y"}, {"y2"}, "relu2");
    const passes::Program p = fused_affine(m, {kX});
    EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
    EXPECT_EQ(count_ops(p, "Relu"), 1);
    expect_pass_keeps_results(m, feed_x(), "fuse-epilogue");
  }
}

}  // namespace
}  // namespace tern::test::fuse_epilogue_test
