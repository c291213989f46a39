// assign-layout: which nodes run in NCHWc, where Reorders go, and that the results are
// unchanged, for blocks c = 4, 8 and 16 (compiled programs run by a small executor here)
// and for this machine's block (through Session).
#include <set>

#include "base/cpu.h"
#include "ops/execute.h"
#include "ops/registry.h"
#include "pass_test_util.h"
#include "passes/pass.h"

namespace tern::test::assign_layout_test {
namespace {

constexpr int kBlocks[] = {4, 8, 16};
const std::string kPass = "assign-layout";

// Adds Conv `name` from `x` (cin channels) to `y` (cout channels), k x k, with bias.
::onnx::NodeProto* add_conv(ModelBuilder& m, const std::string& x, const std::string& y,
                            int64_t cin, int64_t cout, int64_t k, int64_t stride = 1,
                            int64_t group = 1) {
  std::vector<float> w(static_cast<size_t>(cout * (cin / group) * k * k));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.05f * static_cast<float>(static_cast<int>((i * 7 + cout) % 23) - 11) /
           static_cast<float>(k);
  std::vector<float> b(static_cast<size_t>(cout));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * static_cast<float>(i % 5) - 0.02f;
  m.initializer(y + "_w", {cout, cin / group, k, k}, w);
  m.initializer(y + "_b", {cout}, b);
  auto* n = m.node("Conv", {x, y + "_w", y + "_b"}, {y}, y);
  const int64_t pad = k / 2;
  set_ints(n, "pads", {pad, pad, pad, pad});
  set_ints(n, "strides", {stride, stride});
  if (group != 1) set_int(n, "group", group);
  return n;
}

const ir::Node* node_named(const passes::Program& p, const std::string& name) {
  for (const ir::Node& n : p.graph.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::string attr_s(const passes::Program& p, const std::string& node, const std::string& attr) {
  const ir::Node* n = node_named(p, node);
  if (!n || !n->attrs.count(attr)) return "<none>";
  return n->attrs.at(attr).s;
}

bool blocked(const passes::Program& p, const std::string& value) {
  const int v = p.graph.find_value(value);
  return v >= 0 && p.layouts[v].kind == LayoutKind::kNCHWc;
}

// The invariants of every program the pass leaves: graph outputs plain; no Reorder reads
// a graph input; every Reorder goes to NCHW and reads an NCHWc value; no NCHWc -> NCHW
// -> NCHWc pair; each NCHWc value is 5-D with lanes = block; one Reorder per value.
void check_invariants(const passes::Program& p) {
  for (int v : p.graph.outputs) EXPECT_NE(p.layouts[v].kind, LayoutKind::kNCHWc);
  std::set<int> reordered;
  for (const ir::Node& n : p.graph.nodes) {
    if (n.op_type != "Reorder") continue;
    EXPECT_EQ(n.domain, ops::kInternalDomain);
    const int in = n.inputs[0];
    EXPECT_FALSE(p.is_graph_input(in)) << n.name << " reorders the network input";
    EXPECT_EQ(n.attrs.at("to").s, "NCHW") << n.name;
    EXPECT_EQ(p.layouts[in].kind, LayoutKind::kNCHWc) << n.name;
    EXPECT_TRUE(reordered.insert(in).second) << "two reorders of one value at " << n.name;
    const int producer = p.graph.values[in].producer;
    if (producer >= 0) {
      EXPECT_NE(p.graph.nodes[producer].op_type, "Reorder") << n.name;
    }
    for (int m : p.consumers(n.outputs[0])) {
      const ir::Node& c = p.graph.nodes[m];
      EXPECT_FALSE(c.op_type == "Reorder") << "cancelling reorders at " << c.name;
      if (c.op_type == "FusedConv") {
        EXPECT_EQ(c.attrs.at("x_layout").s, "NCHW");
      }
    }
  }
  for (size_t v = 0; v < p.layouts.size(); ++v) {
    if (p.layouts[v].kind != LayoutKind::kNCHWc) continue;
    ASSERT_TRUE(p.types[v].has_value()) << p.graph.values[v].name;
    EXPECT_EQ(p.layouts[v].block, p.block);
    EXPECT_EQ(p.types[v]->shape.size(), 5u) << p.graph.values[v].name;
    EXPECT_EQ(p.types[v]->shape.back(), p.block) << p.graph.values[v].name;
  }
}

// Runs a compiled program node by node on `inputs` (graph input order); returns the
// graph outputs. Independent of runtime::Plan, so any block can be tried.
std::vector<Tensor> run_program(const passes::Program& p, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> values(p.graph.values.size());
  for (size_t v = 0; v < values.size(); ++v)
    if (p.graph.values[v].is_constant()) values[v] = p.graph.values[v].constant;
  for (size_t i = 0; i < inputs.size(); ++i) values[p.graph.inputs[i]] = inputs[i];
  for (int n : p.order()) {
    const ir::Node& node = p.graph.nodes[n];
    std::vector<Tensor> in;
    for (int v : node.inputs) in.push_back(v >= 0 ? values[v] : Tensor());
    std::vector<Tensor> out =
        ops::run_node(*p.ops[n], in, nullptr, node.outputs, p.ctx, p.max_tensor_bytes);
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) values[node.outputs[k]] = out[k];
  }
  std::vector<Tensor> outs;
  for (int v : p.graph.outputs) outs.push_back(values[v]);
  return outs;
}

void expect_tensors_near(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape()) << "output " << i;
    const std::vector<float> x = a[i].to_float_vector(), y = b[i].to_float_vector();
    for (size_t k = 0; k < x.size(); ++k)
      ASSERT_NEAR(x[k], y[k], tol * std::max(1.0, std::fabs(double(y[k]))))
          << "output " << i << " element " << k;
  }
}

// For c = 4, 8, 16: the program with only assign-layout, and with every pass, gives the
// results of the program with every pass off; the invariants hold. Then the same through
// Session with this machine's block.
void expect_same_results(const ModelBuilder& m, const std::vector<NamedTensor>& feeds) {
  std::vector<ops::TensorType> types;
  std::vector<Tensor> inputs;
  for (const NamedTensor& f : feeds) {
    types.push_back({f.tensor.dtype(), f.tensor.shape()});
    inputs.push_back(f.tensor);
  }
  const auto want = run_program(compile(m, types, passes::pass_names()), inputs);
  for (int c : kBlocks) {
    SCOPED_TRACE(fmt::format("block {}", c));
    const passes::Program only = compile(m, types, all_passes_except({kPass}), c);
    check_invariants(only);
    expect_tensors_near(run_program(only, inputs), want, 1e-5);
    const passes::Program all = compile(m, types, {}, c);
    check_invariants(all);
    expect_tensors_near(run_program(all, inputs), want, 1e-5);
  }
  expect_pass_keeps_results(m, feeds, kPass);
}

passes::Program only_layout(const ModelBuilder& m, const Shape& input, int c) {
  return compile(m, {{DType::kFloat32, input}}, all_passes_except({kPass}), c);
}

int reorders(const passes::Program& p) { return count_ops(p, "Reorder"); }

// x -> conv1 (3->13, 3x3) -> relu1 -> conv2 (13->6, 3x3 s2) -> relu2 -> y
ModelBuilder conv_chain() {
  ModelBuilder m;
  m.input("x", {1, 3, 11, 13});
  m.output("y", {1, 6, 6, 7});
  add_conv(m, "x", "c1", 3, 13, 3);
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  add_conv(m, "r1", "c2", 13, 6, 3, 2);
  m.node("Relu", {"c2"}, {"y"}, "relu2");
  return m;
}

TEST(AssignLayout, ConvChainRunsInNchwcWithOneReorderAtTheOutput) {
  for (int c : kBlocks) {
    SCOPED_TRACE(c);
    const passes::Program p = only_layout(conv_chain(), {1, 3, 11, 13}, c);
    check_invariants(p);
    EXPECT_EQ(count_ops(p, "Conv"), 0);
    EXPECT_EQ(count_ops(p, "FusedConv"), 2);
    // The first conv reads the network input directly; no reorder of the input.
    EXPECT_EQ(attr_s(p, "c1", "x_layout"), "NCHW");
    EXPECT_EQ(attr_s(p, "c1", "y_layout"), "NCHWc");
    EXPECT_EQ(attr_s(p, "c2", "x_layout"), "NCHWc");
    EXPECT_EQ(attr_s(p, "c2", "y_layout"), "NCHWc");
    EXPECT_EQ(node_named(p, "c1")->attrs.at("block").i, c);
    EXPECT_TRUE(blocked(p, "c1") && blocked(p, "r1") && blocked(p, "c2"));
    EXPECT_FALSE(blocked(p, "x") || blocked(p, "y"));
    EXPECT_EQ(p.types[p.graph.find_value("r1")]->shape, (Shape{1, (13 + c - 1) / c, 11, 13, c}));
    EXPECT_EQ(reorders(p), 1);
  }
  expect_same_results(conv_chain(), {{"x", random_tensor({1, 3, 11, 13}, 1)}});
}

TEST(AssignLayout, PassOffLeavesEverythingPlain) {
  const passes::Program p =
      compile(conv_chain(), {{DType::kFloat32, {1, 3, 11, 13}}}, passes::pass_names(), 8);
  EXPECT_EQ(count_ops(p, "Conv"), 2);
  EXPECT_EQ(reorders(p), 0);
  for (const Layout& l : p.layouts) EXPECT_NE(l.kind, LayoutKind::kNCHWc);
}

// A conv whose output only NCHW ops read writes NCHW itself: no reorder.
TEST(AssignLayout, ConvReadOnlyByPlainOpsWritesNchw) {
  ModelBuilder m;
  m.input("x", {1, 3, 9, 9});
  m.output("y", {1, 9, 9, 5});
  add_conv(m, "x", "c1", 3, 5, 3);
  auto* t = m.node("Transpose", {"c1"}, {"y"}, "transpose");
  set_ints(t, "perm", {0, 2, 3, 1});
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 9, 9}, c);
    check_invariants(p);
    EXPECT_EQ(attr_s(p, "c1", "y_layout"), "NCHW");
    EXPECT_FALSE(blocked(p, "c1"));
    EXPECT_EQ(reorders(p), 0);
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 9, 9}, 2)}});
}

// A conv reading NCHW (here the network input) whose only reader is a 1x1 conv writing
// NCHW (a graph output) writes NCHW too, and the 1x1 conv reads it so (FusedConv's gemm
// algorithm); with a 3x3 reader, or a 1x1 one with stride 2, it writes NCHWc. With 3
// output channels (under half a block of 8 or 16) too: the conv runs as an implicit GEMM
// (stride 1), which keeps every lane busy whatever M is (plain_conv_kernel).
TEST(AssignLayout, ConvFeedingPlainPointwiseConvWritesNchw) {
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    const int64_t mid = variant == 3 ? 3 : 8;
    ModelBuilder m;
    m.input("x", {1, 3, 9, 9});
    add_conv(m, "x", "c1", 3, mid, 3);
    add_conv(m, "c1", "y", mid, 5, variant == 1 ? 3 : 1, variant == 2 ? 2 : 1);
    m.output("y");
    for (int c : kBlocks) {
      const passes::Program p = only_layout(m, {1, 3, 9, 9}, c);
      check_invariants(p);
      const bool plain = variant == 0 || variant == 3;
      EXPECT_EQ(attr_s(p, "c1", "y_layout"), plain ? "NCHW" : "NCHWc") << "block " << c;
      EXPECT_EQ(attr_s(p, "y", "x_layout"), plain ? "NCHW" : "NCHWc") << "block " << c;
      EXPECT_EQ(reorders(p), 0);
    }
    expect_same_results(m, {{"x", random_tensor({1, 3, 9, 9}, 15 + variant)}});
    if (variant != 0) continue;
    // Every pass with this machine's block: y runs as a GEMM, and c1 as an implicit one
    // where its 9-pixel rows fill the vectors better than its 8 channels fill blocks (16
    // lanes: 9/16 > 8/16; with NEON's 4, 9/12 < 8/8, and it keeps direct-first).
    const int64_t lanes = simd_float_lanes();
    const passes::Program all =
        compile(m, {{DType::kFloat32, {1, 3, 9, 9}}}, {}, static_cast<int>(lanes));
    const bool fast = cpu_info().best_target != "SCALAR";
    const char* c1 = passes::rows_fill_vectors_better(9, 8, lanes) ? "gemm"
                     : fast                                        ? "direct-first"
                                                                   : "reference";
    EXPECT_EQ(attr_s(all, "c1", "algorithm"), c1) << lanes << " lanes";
    EXPECT_EQ(attr_s(all, "y", "algorithm"), "gemm");
  }
}

// A stride-1 conv reading an NCHW tensor of at least 8 channels (behind NCHW-only ops)
// whose output rows fill vectors better than its channels fill blocks (16 pixels a row, 5
// channels) writes NCHW and runs as an implicit GEMM when every reader would read NCHW
// anyway: a GlobalAveragePool and a Mul by a per-channel constant, which stays NCHW
// (variant 0: no reorder), or a stride-1 conv (4). It writes NCHWc when a conv that does
// not run as a GEMM (stride 2) reads it (1), from 7 channels (a network's image: the
// first-layer kernel writes NCHWc for the convs after it, 2), when its channels fill the
// blocks at least as well (16 channels, 9-pixel rows, 3), when a Relu, which runs on
// NCHWc, reads it (5), and in a squeeze-and-excitation block (6: the Mul by the pool's
// per-channel result and the Add after it run on the blocks, PerChannelBinaryOpsRunInNchwc).
// Its 5 channels leave padded lanes, so a Sigmoid gate (7: f(0) = 0.5) and a Div by the
// pool (8: 0 / 0) keep those ops in NCHW, and it writes NCHW again.
TEST(AssignLayout, StrideOneConvOnPlainInputWritesNchw) {
  for (int variant = 0; variant < 9; ++variant) {
    SCOPED_TRACE(variant);
    const int64_t cin = variant == 2 ? 7 : 8, cout = variant == 3 ? 16 : 5;
    const int64_t width = variant == 3 ? 9 : 16;
    const Shape xs = {1, cin, 9, width};
    ModelBuilder m;
    m.input("x", {1, cin, 9, width});
    add_conv(m, "x", "c1", cin, cout, 3);
    if (variant == 1 || variant == 4) {
      add_conv(m, "c1", "y", cout, 6, 3, variant == 1 ? 2 : 1);
    } else if (variant == 5) {
      m.node("Relu", {"c1"}, {"y"}, "relu");
    } else if (variant == 0) {
      m.initializer("scale", {1, cout, 1, 1}, {0.5f, -1.0f, 2.0f, 0.25f, 3.0f});
      m.node("GlobalAveragePool", {"c1"}, {"g"}, "gpool");
      m.node("Mul", {"c1", "scale"}, {"y"}, "mul");
      m.output("g");
    } else if (variant == 7) {
      m.node("GlobalAveragePool", {"c1"}, {"g"}, "gpool");
      add_conv(m, "g", "s", cout, cout, 1);
      m.node("Sigmoid", {"s"}, {"gate"}, "sigmoid");
      m.node("Mul", {"c1", "gate"}, {"y"}, "mul");
    } else if (variant == 8) {
      m.node("GlobalAveragePool", {"c1"}, {"g"}, "gpool");
      m.node("Div", {"c1", "g"}, {"y"}, "div");
    } else {
      m.node("GlobalAveragePool", {"c1"}, {"g"}, "gpool");
      m.node("Mul", {"c1", "g"}, {variant == 6 ? "s" : "y"}, "mul");
      if (variant == 6) m.node("Add", {"c1", "s"}, {"y"}, "add");
    }
    m.output("y");
    for (int c : kBlocks) {
      const passes::Program p = only_layout(m, xs, c);
      check_invariants(p);
      const bool plain = variant == 0 || variant == 4 || variant >= 7;
      EXPECT_EQ(attr_s(p, "c1", "y_layout"), plain ? "NCHW" : "NCHWc") << "block " << c;
      EXPECT_EQ(blocked(p, "c1"), !plain) << "block " << c;
      // NCHWc: the graph output is reordered: the Relu's (5), the Mul's by the pool
      // (2, 3: it runs on the blocks, as the SE block's Mul and Add in 6).
      const int want = plain || variant == 1 ? 0 : 1;
      EXPECT_EQ(reorders(p), want) << "block " << c;
    }
    expect_same_results(m, {{"x", random_tensor(xs, 25 + variant)}});
    if (variant != 0 && variant != 4) continue;
    const passes::Program all =
        compile(m, {{DType::kFloat32, xs}}, {}, static_cast<int>(simd_float_lanes()));
    EXPECT_EQ(attr_s(all, "c1", "algorithm"), "gemm");
    if (variant == 4) {
      EXPECT_EQ(attr_s(all, "y", "algorithm"), "gemm");
    }
  }
}

// A stride-1 conv on an 8-channel NCHW input whose residual Z (after fuse-epilogue) is
// NCHWc, written by a first-layer conv, keeps writing NCHWc: Z is read in Y's layout, and
// writing NCHW would add a reorder of Z.
TEST(AssignLayout, StrideOneConvWithBlockedResidualWritesNchwc) {
  ModelBuilder m;
  m.input("x", {1, 8, 9, 16});
  m.input("x2", {1, 3, 18, 32});
  add_conv(m, "x2", "c0", 3, 5, 3, 2);
  add_conv(m, "x", "c1", 8, 5, 3);
  m.node("Add", {"c1", "c0"}, {"s"}, "add");
  m.node("GlobalAveragePool", {"s"}, {"g"}, "gpool");
  m.node("Mul", {"s", "g"}, {"y"}, "mul");
  m.output("y");
  const std::vector<ops::TensorType> types = {{DType::kFloat32, {1, 8, 9, 16}},
                                              {DType::kFloat32, {1, 3, 18, 32}}};
  for (int c : kBlocks) {
    const passes::Program p = compile(m, types, all_passes_except({"fuse-epilogue", kPass}), c);
    check_invariants(p);
    const ir::Node* c1 = node_named(p, "c1");
    ASSERT_NE(c1, nullptr);
    ASSERT_EQ(c1->inputs.size(), 4u) << "the Add became c1's residual";
    EXPECT_EQ(attr_s(p, "c1", "y_layout"), "NCHWc") << "block " << c;
    EXPECT_EQ(attr_s(p, "c0", "y_layout"), "NCHWc") << "block " << c;
  }
  expect_same_results(
      m, {{"x", random_tensor({1, 8, 9, 16}, 31)}, {"x2", random_tensor({1, 3, 18, 32}, 32)}});
}

// conv -> MaxPool 3x3 s2 p1 -> conv -> AveragePool 2x2 s2 (ceil, count pads) -> y
TEST(AssignLayout, PoolingBetweenConvsRunsAs3DPoolOnTheBlocks) {
  ModelBuilder m;
  m.input("x", {1, 3, 15, 13});
  m.output("y");
  add_conv(m, "x", "c1", 3, 12, 3);
  auto* mp = m.node("MaxPool", {"c1"}, {"p1"}, "maxpool");
  set_ints(mp, "kernel_shape", {3, 3});
  set_ints(mp, "strides", {2, 2});
  set_ints(mp, "pads", {1, 1, 1, 1});
  add_conv(m, "p1", "c2", 12, 7, 3);
  auto* ap = m.node("AveragePool", {"c2"}, {"y"}, "avgpool");
  set_ints(ap, "kernel_shape", {2, 2});
  set_ints(ap, "strides", {2, 2});
  set_ints(ap, "pads", {0, 0, 1, 1});
  set_int(ap, "ceil_mode", 1);
  set_int(ap, "count_include_pad", 1);
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 15, 13}, c);
    check_invariants(p);
    EXPECT_TRUE(blocked(p, "p1"));
    EXPECT_EQ(node_named(p, "maxpool")->attrs.at("kernel_shape").ints,
              (std::vector<int64_t>{3, 3, 1}));
    EXPECT_EQ(node_named(p, "maxpool")->attrs.at("pads").ints,
              (std::vector<int64_t>{1, 1, 0, 1, 1, 0}));
    EXPECT_EQ(node_named(p, "avgpool")->attrs.at("strides").ints, (std::vector<int64_t>{2, 2, 1}));
    EXPECT_EQ(attr_s(p, "c2", "x_layout"), "NCHWc");
    EXPECT_EQ(reorders(p), 1);  // before the output y
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 15, 13}, 3)}});
}

// Residual: a = relu(conv1(x)); y = conv3(relu(conv2(a) + a)).
TEST(AssignLayout, ResidualAddRunsInNchwc) {
  ModelBuilder m;
  m.input("x", {1, 3, 10, 7});
  m.output("y");
  add_conv(m, "x", "c1", 3, 10, 3);
  m.node("Relu", {"c1"}, {"a"}, "relu1");
  add_conv(m, "a", "c2", 10, 10, 1);
  m.node("Add", {"c2", "a"}, {"s"}, "add");
  m.node("Relu", {"s"}, {"r"}, "relu2");
  add_conv(m, "r", "y", 10, 4, 3);
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 10, 7}, c);
    check_invariants(p);
    EXPECT_TRUE(blocked(p, "s") && blocked(p, "r"));
    EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
    EXPECT_EQ(attr_s(p, "y", "y_layout"), "NCHW");  // returned: written plain directly
    EXPECT_EQ(reorders(p), 0);
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 10, 7}, 4)}});
}

// Concat of two convs: channel counts `ca`, `cb`.
ModelBuilder concat_model(int64_t ca, int64_t cb, int64_t axis = 1) {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 9});
  m.output("y");
  add_conv(m, "x", "a", 3, ca, 3);
  add_conv(m, "x", "b", 3, cb, 1);
  auto* cat = m.node("Concat", {"a", "b"}, {"cat"}, "concat");
  set_int(cat, "axis", axis);
  add_conv(m, "cat", "y", ca + cb, 5, 3);
  return m;
}

TEST(AssignLayout, ConcatOfWholeBlocksRunsInNchwc) {
  for (int c : kBlocks) {
    const ModelBuilder m = concat_model(c, 2 * c, -3);
    const passes::Program p = only_layout(m, {1, 3, 8, 9}, c);
    check_invariants(p);
    EXPECT_TRUE(blocked(p, "cat"));
    EXPECT_EQ(node_named(p, "concat")->attrs.at("axis").i, 1);
    EXPECT_FALSE(node_named(p, "concat")->attrs.count("channels"));  // whole blocks: slices
    EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
    EXPECT_EQ(reorders(p), 0);
    expect_same_results(m, {{"x", random_tensor({1, 3, 8, 9}, 5)}});
  }
}

// Channel counts that do not fill the blocks (5 + 6): the Concat still runs on the blocks,
// moving each input's channels to their lanes (attributes block and channels), and the
// conv after it reads NCHWc; concat-slices leaves it alone (with every pass).
TEST(AssignLayout, ConcatOfPartialBlocksRunsInNchwc) {
  const ModelBuilder m = concat_model(5, 6);
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 8, 9}, c);
    check_invariants(p);
    EXPECT_TRUE(blocked(p, "cat"));
    const ir::Node* cat = node_named(p, "concat");
    EXPECT_EQ(cat->attrs.at("axis").i, 1);
    EXPECT_EQ(cat->attrs.at("block").i, c);
    EXPECT_EQ(cat->attrs.at("channels").ints, (std::vector<int64_t>{5, 6}));
    EXPECT_EQ(attr_s(p, "a", "y_layout"), "NCHWc");
    EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
    EXPECT_EQ(reorders(p), 0);
    const passes::Program all = compile(m, {{DType::kFloat32, {1, 3, 8, 9}}}, {}, c);
    for (const char* v : {"a", "b"}) {
      EXPECT_NE(all.buffers[all.graph.find_value(v)].kind, passes::BufferAssignment::Kind::kSlice)
          << v;
    }
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 8, 9}, 6)}});
}

// Mixed: one input of the concat is also read by a blocked Relu: one reorder for it.
TEST(AssignLayout, OneReorderPerValueSharedByItsPlainConsumers) {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 9});
  m.output("y");
  m.output("z");
  add_conv(m, "x", "a", 3, 6, 3);
  m.node("Relu", {"a"}, {"ra"}, "relu");
  auto* cat = m.node("Concat", {"ra", "x"}, {"cat"}, "concat");
  set_int(cat, "axis", 1);
  m.node("Sigmoid", {"ra"}, {"sig"}, "sigmoid");  // 6 channels: padded lanes: stays NCHW
  m.node("Mul", {"cat", "cat"}, {"y"}, "mul");
  m.node("Add", {"sig", "sig"}, {"z"}, "add");
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 8, 9}, c);
    check_invariants(p);
    EXPECT_TRUE(blocked(p, "ra"));
    EXPECT_FALSE(blocked(p, "sig") || blocked(p, "cat"));
    EXPECT_EQ(reorders(p), 1);
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 8, 9}, 7)}});
}

// conv -> Resize (scales or sizes) -> conv.
ModelBuilder resize_model(const std::string& mode, bool sizes, int64_t channels) {
  ModelBuilder m;
  m.input("x", {1, 3, 5, 6});
  m.output("y");
  add_conv(m, "x", "a", 3, channels, 3);
  m.initializer("roi", {0}, {});
  if (sizes) {
    m.initializer("scales", {0}, {});
    auto* t = m.graph().add_initializer();
    t->set_name("sizes");
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(4);
    for (int64_t v : {1L, channels, 9L, 13L}) t->add_int64_data(v);
    auto* r = m.node("Resize", {"a", "roi", "scales", "sizes"}, {"up"}, "resize");
    set_string(r, "mode", mode);
    set_string(r, "coordinate_transformation_mode", "align_corners");
  } else {
    m.initializer("scales", {4}, {1, 1, 2, 2});
    auto* r = m.node("Resize", {"a", "roi", "scales"}, {"up"}, "resize");
    set_string(r, "mode", mode);
    set_string(r, "nearest_mode", "floor");
    set_string(r, "coordinate_transformation_mode", "asymmetric");
  }
  add_conv(m, "up", "y", channels, 4, 3);
  return m;
}

TEST(AssignLayout, ResizeRunsOnTheBlocksWithNewConstants) {
  for (bool sizes : {false, true}) {
    for (const char* mode : {"nearest", "linear"}) {
      SCOPED_TRACE(fmt::format("{} sizes={}", mode, sizes));
      const ModelBuilder m = resize_model(mode, sizes, 11);
      for (int c : kBlocks) {
        const passes::Program p = only_layout(m, {1, 3, 5, 6}, c);
        check_invariants(p);
        EXPECT_TRUE(blocked(p, "up"));
        EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
        EXPECT_EQ(reorders(p), 0);
        // The model's constant is untouched; the node reads a new 5-value one.
        const ir::Node* r = node_named(p, "resize");
        const int k = sizes ? 3 : 2;
        EXPECT_NE(p.graph.values[r->inputs[k]].name, sizes ? "sizes" : "scales");
        EXPECT_EQ(p.known[r->inputs[k]].numel(), 5);
        const int original = p.graph.find_value(sizes ? "sizes" : "scales");
        EXPECT_EQ(p.graph.values[original].constant.numel(), 4);
      }
      expect_same_results(m, {{"x", random_tensor({1, 3, 5, 6}, 8)}});
    }
  }
}

TEST(AssignLayout, CubicResizeStaysNchw) {
  const ModelBuilder m = resize_model("cubic", false, 8);
  const passes::Program p = only_layout(m, {1, 3, 5, 6}, 8);
  check_invariants(p);
  EXPECT_FALSE(blocked(p, "up"));
  EXPECT_EQ(attr_s(p, "a", "y_layout"), "NCHW");
  expect_same_results(m, {{"x", random_tensor({1, 3, 5, 6}, 9)}});
}

// conv -> relu -> GlobalAveragePool -> Flatten -> Gemm -> y
TEST(AssignLayout, GlobalPoolThenFlattenGemm) {
  for (const char* pool : {"GlobalAveragePool", "GlobalMaxPool"}) {
    ModelBuilder m;
    m.input("x", {2, 3, 7, 6});
    m.output("y");
    add_conv(m, "x", "a", 3, 10, 3);
    m.node("Relu", {"a"}, {"r"}, "relu");
    m.node(pool, {"r"}, {"g"}, "gpool");
    m.node("Flatten", {"g"}, {"f"}, "flatten");
    std::vector<float> w(10 * 4);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    m.initializer("gw", {10, 4}, w);
    m.node("Gemm", {"f", "gw"}, {"y"}, "gemm");
    for (int c : kBlocks) {
      const passes::Program p = only_layout(m, {2, 3, 7, 6}, c);
      check_invariants(p);
      EXPECT_TRUE(blocked(p, "g"));
      EXPECT_EQ(node_named(p, "gpool")->op_type,
                std::string(pool) == "GlobalMaxPool" ? "MaxPool" : "AveragePool");
      EXPECT_EQ(p.types[p.graph.find_value("g")]->shape, (Shape{2, (10 + c - 1) / c, 1, 1, c}));
      EXPECT_EQ(reorders(p), 1);  // before Flatten
    }
    expect_same_results(m, {{"x", random_tensor({2, 3, 7, 6}, 10)}});
  }
}

// Elementwise ops on a partial block (6 channels) with f(0) != 0 stay NCHW; on whole
// blocks (16 channels) they run in NCHWc.
ModelBuilder elementwise_model(int64_t channels) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 5});
  m.output("y");
  add_conv(m, "x", "a", 3, channels, 3);
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.node("Sigmoid", {"r"}, {"s"}, "sigmoid");
  m.node("Mul", {"r", "s"}, {"silu"}, "mul");  // SiLU
  m.initializer("half", {}, {0.5f});
  m.node("Add", {"silu", "half"}, {"shifted"}, "add_half");
  m.initializer("zero", {}, {0.0f});
  m.initializer("six", {}, {6.0f});
  m.node("Clip", {"shifted", "zero", "six"}, {"clipped"}, "clip");
  m.node("HardSigmoid", {"clipped"}, {"hs"}, "hardsigmoid");
  m.node("Div", {"hs", "six"}, {"d"}, "div_six");
  add_conv(m, "d", "y", channels, 4, 1);
  return m;
}

TEST(AssignLayout, ElementwiseOpsKeepPaddedLanesZero) {
  for (int c : kBlocks) {
    // 6 channels: Sigmoid (0 -> 0.5), Add 0.5 and HardSigmoid map 0 to non-zero.
    const passes::Program p = only_layout(elementwise_model(6), {1, 3, 6, 5}, c);
    check_invariants(p);
    EXPECT_TRUE(blocked(p, "a") && blocked(p, "r"));  // Relu keeps zero lanes
    EXPECT_FALSE(blocked(p, "s"));
    EXPECT_FALSE(blocked(p, "silu"));  // one input is NCHW
    EXPECT_FALSE(blocked(p, "shifted") || blocked(p, "hs"));
    EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHW");
    EXPECT_EQ(reorders(p), 1);  // r, for the Sigmoid and the Mul
    // 16 channels: no padded lanes, everything between the convs runs in NCHWc.
    const passes::Program q = only_layout(elementwise_model(16), {1, 3, 6, 5}, c);
    check_invariants(q);
    for (const char* v : {"a", "r", "s", "silu", "shifted", "clipped", "hs", "d"})
      EXPECT_TRUE(blocked(q, v)) << v;
    EXPECT_EQ(reorders(q), 0);
  }
  expect_same_results(elementwise_model(6), {{"x", random_tensor({1, 3, 6, 5}, 11)}});
  expect_same_results(elementwise_model(16), {{"x", random_tensor({1, 3, 6, 5}, 12)}});
}

TEST(AssignLayout, ZeroKeepingOpsConvertOnPartialBlocks) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 5});
  m.output("y");
  add_conv(m, "x", "a", 3, 5, 3);
  m.initializer("zero", {}, {0.0f});
  m.initializer("six", {}, {6.0f});
  m.initializer("three", {1}, {3.0f});
  m.node("Clip", {"a", "zero", "six"}, {"r6"}, "clip");
  m.node("LeakyRelu", {"r6"}, {"l"}, "leaky");
  m.node("HardSwish", {"l"}, {"h"}, "hardswish");
  m.node("Mul", {"h", "three"}, {"t"}, "mul3");
  m.node("Div", {"t", "six"}, {"d"}, "div6");
  m.node("Max", {"d", "zero", "a"}, {"mx"}, "max");
  add_conv(m, "mx", "y", 5, 4, 3);
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 6, 5}, c);
    check_invariants(p);
    for (const char* v : {"r6", "l", "h", "t", "d", "mx"}) EXPECT_TRUE(blocked(p, v)) << v;
    EXPECT_EQ(reorders(p), 0);
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 6, 5}, 13)}});
}

// A blocked value that the graph returns and a conv reads: the reorder writes the
// output; the conv reads the blocked version.
TEST(AssignLayout, ReturnedBlockedValueIsReorderedOnce) {
  ModelBuilder m;
  m.input("x", {1, 3, 7, 7});
  m.output("r");
  m.output("y");
  add_conv(m, "x", "a", 3, 9, 3);
  m.node("Relu", {"a"}, {"r"}, "relu");
  add_conv(m, "r", "y", 9, 2, 3);
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 7, 7}, c);
    check_invariants(p);
    EXPECT_FALSE(blocked(p, "r"));
    EXPECT_EQ(reorders(p), 1);
    EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
    EXPECT_EQ(p.types[p.graph.find_value("r")]->shape, (Shape{1, 9, 7, 7}));
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 7, 7}, 14)}});
}

// Grouped and depthwise convs, and a batch of 2.
TEST(AssignLayout, DepthwiseAndGroupedConvs) {
  ModelBuilder m;
  m.input("x", {2, 3, 9, 8});
  m.output("y");
  add_conv(m, "x", "a", 3, 12, 3, 2);
  add_conv(m, "a", "dw", 12, 12, 3, 1, 12);
  add_conv(m, "dw", "g", 12, 6, 1, 1, 3);
  m.node("Relu", {"g"}, {"y"}, "relu");
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {2, 3, 9, 8}, c);
    check_invariants(p);
    EXPECT_EQ(attr_s(p, "dw", "x_layout"), "NCHWc");
    EXPECT_EQ(attr_s(p, "g", "x_layout"), "NCHWc");
    EXPECT_EQ(reorders(p), 1);
  }
  expect_same_results(m, {{"x", random_tensor({2, 3, 9, 8}, 15)}});
}

// Must not convert: a 1-D conv, a conv whose weights arrive at run time, and ops on
// their (plain) outputs.
TEST(AssignLayout, LeavesNonImageAndRuntimeWeightConvsAlone) {
  ModelBuilder m;
  m.input("x", {1, 3, 10});
  m.input("w", {4, 3, 3, 3});
  m.input("x2", {1, 3, 6, 6});
  m.output("y");
  m.output("z");
  std::vector<float> w1(4 * 3 * 3, 0.1f);
  m.initializer("w1", {4, 3, 3}, w1);
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1d");
  m.node("Relu", {"c1"}, {"y"}, "relu1d");
  m.node("Conv", {"x2", "w"}, {"c2"}, "conv_rt");
  m.node("Relu", {"c2"}, {"z"}, "relu_rt");
  const passes::Program p = compile(m,
                                    {{DType::kFloat32, {1, 3, 10}},
                                     {DType::kFloat32, {4, 3, 3, 3}},
                                     {DType::kFloat32, {1, 3, 6, 6}}},
                                    all_passes_except({kPass}), 8);
  check_invariants(p);
  EXPECT_EQ(count_ops(p, "Conv"), 2);
  EXPECT_EQ(count_ops(p, "FusedConv"), 0);
  EXPECT_EQ(reorders(p), 0);
  expect_same_results(m, {{"x", random_tensor({1, 3, 10}, 16)},
                          {"w", random_tensor({4, 3, 3, 3}, 17)},
                          {"x2", random_tensor({1, 3, 6, 6}, 18)}});
}

// A Mul that broadcasts a [1, 1, H, W] plane over channels must not run on blocks
// (the blocked shapes would not broadcast the same way).
TEST(AssignLayout, BroadcastingBinaryStaysNchw) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 6});
  m.output("y");
  add_conv(m, "x", "a", 3, 8, 3);
  add_conv(m, "x", "b", 3, 1, 3);
  m.node("Mul", {"a", "b"}, {"ab"}, "mul");
  add_conv(m, "ab", "y", 8, 2, 3);
  for (int c : kBlocks) {
    const passes::Program p = only_layout(m, {1, 3, 6, 6}, c);
    check_invariants(p);
    EXPECT_FALSE(blocked(p, "ab"));
    EXPECT_EQ(reorders(p), 0);
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 6, 6}, 19)}});
}

// A squeeze-and-excitation block (ppocr's neck): the gate, one value per channel
// ([1, C, 1, 1], from a global pool and two 1x1 convs), scales the map (Mul), whose sum
// with the map (Add) and difference with the gate (Sub, the gate first) follow. Each
// operand is blocked, so the ops run on the blocks ([1, Cb, 1, 1, c] broadcast over [1,
// Cb, H, W, c]; padded lanes stay 0) and the 3x3 conv after them reads NCHWc: 6 channels
// (padded lanes in every block) and 16.
ModelBuilder squeeze_excitation_model(int64_t ch) {
  ModelBuilder m;
  m.input("x", {1, 3, 7, 9});
  m.output("y");
  add_conv(m, "x", "a", 3, ch, 3);
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.node("GlobalAveragePool", {"r"}, {"g"}, "pool");
  add_conv(m, "g", "s1", ch, 3, 1);
  m.node("Relu", {"s1"}, {"s1r"}, "relu_s1");
  add_conv(m, "s1r", "s2", 3, ch, 1);
  m.initializer("zero", {}, {0.0f});
  m.initializer("one", {}, {1.0f});
  m.node("Clip", {"s2", "zero", "one"}, {"gate"}, "gate");
  m.node("Mul", {"r", "gate"}, {"scaled"}, "mul");
  m.node("Add", {"scaled", "r"}, {"sum"}, "add");
  m.node("Sub", {"gate", "sum"}, {"diff"}, "sub");
  add_conv(m, "diff", "y", ch, 4, 3);
  return m;
}

TEST(AssignLayout, PerChannelBinaryOpsRunInNchwc) {
  for (const int64_t ch : {6, 16}) {
    for (int c : kBlocks) {
      SCOPED_TRACE(fmt::format("{} channels, block {}", ch, c));
      const passes::Program p = only_layout(squeeze_excitation_model(ch), {1, 3, 7, 9}, c);
      check_invariants(p);
      for (const char* v : {"g", "gate", "scaled", "sum", "diff"}) EXPECT_TRUE(blocked(p, v)) << v;
      EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
      EXPECT_EQ(reorders(p), 0);
    }
    expect_same_results(squeeze_excitation_model(ch), {{"x", random_tensor({1, 3, 7, 9}, 23)}});
  }
}

// conv -> relu -> BatchNormalization -> padded conv: fold-batch-norm leaves a
// tern.ScaleShift (the BN cannot fold through the Relu or into a padded conv), which
// then runs in NCHWc.
TEST(AssignLayout, ScaleShiftRunsInNchwc) {
  ModelBuilder m;
  m.input("x", {1, 3, 7, 6});
  m.output("y");
  add_conv(m, "x", "a", 3, 6, 3);
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.initializer("gamma", {6}, {1.0f, 0.5f, 2.0f, -1.0f, 0.25f, 1.5f});
  m.initializer("beta", {6}, {0.1f, -0.2f, 0.3f, 0.0f, 0.5f, -0.4f});
  m.initializer("mean", {6}, {0.2f, 0.1f, -0.1f, 0.3f, 0.0f, 0.05f});
  m.initializer("var", {6}, {1.0f, 2.0f, 0.5f, 0.25f, 1.5f, 3.0f});
  m.node("BatchNormalization", {"r", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
  add_conv(m, "bn", "y", 6, 4, 3);
  for (int c : kBlocks) {
    const passes::Program p = compile(m, {{DType::kFloat32, {1, 3, 7, 6}}},
                                      all_passes_except({kPass, "fold-batch-norm"}), c);
    check_invariants(p);
    ASSERT_EQ(count_ops(p, "ScaleShift"), 1);
    EXPECT_TRUE(blocked(p, "bn"));
    const ir::Node* ss = p.graph.values[p.graph.find_value("bn")].producer >= 0
                             ? &p.graph.nodes[p.graph.values[p.graph.find_value("bn")].producer]
                             : nullptr;
    ASSERT_NE(ss, nullptr);
    EXPECT_EQ(ss->op_type, "ScaleShift");
    EXPECT_EQ(ss->attrs.at("block").i, c);
    EXPECT_EQ(ss->attrs.at("channels").i, 6);
    EXPECT_EQ(attr_s(p, "y", "x_layout"), "NCHWc");
    EXPECT_EQ(reorders(p), 0);
  }
  expect_same_results(m, {{"x", random_tensor({1, 3, 7, 6}, 20)}});
}

}  // namespace
}  // namespace tern::test::assign_layout_test
