// pack-weights (src/passes/pack_weights.cc): NCHWc FusedConv weights packed to
// [ceil(M/c), C/g, kH, kW, c] (c = 4, 8, 16, M not a multiple of c) and Gemm's transB
// weights stored transposed; the structure after the pass, the packed byte count, and
// the results before and after it; the nodes it must leave alone.

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "kernels/dot/dot_conv.h"
#include "kernels/ref_test_util.h"
#include "kernels/reference/fused_conv.h"
#include "pass_test_util.h"
#include "support/test_env.h"

namespace tern::test::pack_weights_test {
namespace {

const passes::Pass& pack_pass() {
  for (const passes::Pass* pass : passes::all_passes())
    if (std::string(pass->name()) == "pack-weights") return *pass;
  throw std::runtime_error("no pack-weights pass");
}

ir::Attribute str(const std::string& s) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kString;
  a.s = s;
  return a;
}
ir::Attribute num(int64_t i) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInt;
  a.i = i;
  return a;
}

// Runs node n of `p` on the known values and the graph inputs in `feeds` (by value index).
Tensor run_node(const passes::Program& p, int n, const std::map<int, Tensor>& feeds) {
  const ir::Node& node = p.graph.nodes[n];
  std::vector<Tensor> in(node.inputs.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const int v = node.inputs[k];
    if (v < 0) continue;
    in[k] = feeds.count(v) ? feeds.at(v) : p.known[v];
  }
  const ops::TensorType& t = *p.types[node.outputs[0]];
  std::vector<Tensor> out = {Tensor::empty(t.dtype, t.shape)};
  p.ops[n]->run(in, out, ops::ExecContext{1});
  return out[0];
}

// x [1, 5, 7, 6] -> Conv(w [7, 5, 3, 3], b, pads 1) -> y; with every pass
// off, then the Conv made a FusedConv with the given layouts by hand (what assign-layout
// does), re-analyzed.
passes::Program conv_program(int64_t block, const std::string& y_layout, bool w_constant = true,
                             int64_t stride = 1) {
  ModelBuilder m;
  m.input("x", {1, 5, 7, 6});
  if (!w_constant) m.input("w", {7, 5, 3, 3});
  m.output("y");
  if (w_constant) m.initializer("w", {7, 5, 3, 3}, weights(7 * 5 * 9, 1));
  m.initializer("b", {7}, weights(7, 2));
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_ints(conv, "strides", {stride, stride});
  std::vector<ops::TensorType> types = {{DType::kFloat32, {1, 5, 7, 6}}};
  if (!w_constant) types.push_back({DType::kFloat32, {7, 5, 3, 3}});
  passes::Program p = compile(m, types, passes::pass_names(), static_cast<int>(block));
  ir::Node& node = p.graph.nodes[0];
  node.domain = "tern";
  node.op_type = "FusedConv";
  node.attrs["y_layout"] = str(y_layout);
  node.attrs["block"] = num(block);
  node.attrs["activation"] = str("Relu");
  // The reference kernel reads OIHW and packed weights in the same order, so packing
  // must not change a single bit (the fast kernels sum in another order; their own tests
  // check them against this one).
  node.attrs["algorithm"] = str("reference");
  passes::analyze(p);
  return p;
}

TEST(PackWeights, NchwcFusedConvWeightsArePackedAndGiveTheSameResults) {
  for (int64_t block : {4, 8, 16}) {
    SCOPED_TRACE(::testing::Message() << "block " << block);
    passes::Program p = conv_program(block, "NCHWc");
    const int x = p.graph.inputs[0];
    const std::map<int, Tensor> feeds = {{x, random_tensor({1, 5, 7, 6}, 3)}};
    const Tensor before = run_node(p, 0, feeds);
    const Tensor oihw = p.known[p.graph.nodes[0].inputs[1]];

    EXPECT_EQ(pack_pass().run(p), 1);
    const ir::Node& node = p.graph.nodes[0];
    EXPECT_EQ(node.attrs.at("weight_layout").s, "packed");
    EXPECT_EQ(node.attrs.at("out_channels").i, 7);
    const Tensor& w = p.known[node.inputs[1]];
    const int64_t blocks = (7 + block - 1) / block;
    EXPECT_EQ(w.shape(), (Shape{blocks, 5, 3, 3, block}));
    EXPECT_TRUE(p.graph.values[node.inputs[1]].is_constant());
    EXPECT_EQ(w.to_float_vector(),
              kernels::ref::pack_conv_weights(oihw, static_cast<int>(block)).to_float_vector());
    EXPECT_EQ(p.memory.packed_weight_bytes, blocks * 5 * 9 * block * 4);
    // Same sums in the same order: equal bit for bit.
    EXPECT_EQ(run_node(p, 0, feeds).to_float_vector(), before.to_float_vector());
    // Packed once: a second run changes nothing.
    EXPECT_EQ(pack_pass().run(p), 0);
  }
}

TEST(PackWeights, WideNchwConvWeightsArePacked) {
  // x and y NCHW (a conv between two NCHW-only ops), stride 2 (stride 1 runs as an
  // implicit GEMM on OIHW weights), 7 output channels in blocks of 8: at least half a
  // block, so packed for the direct kernel.
  passes::Program p = conv_program(8, "NCHW", true, 2);
  const std::map<int, Tensor> feeds = {{p.graph.inputs[0], random_tensor({1, 5, 7, 6}, 4)}};
  const Tensor before = run_node(p, 0, feeds);
  EXPECT_EQ(pack_pass().run(p), 1);
  const ir::Node& node = p.graph.nodes[0];
  EXPECT_EQ(node.attrs.at("weight_layout").s, "packed");
  EXPECT_EQ(p.known[node.inputs[1]].shape(), (Shape{1, 5, 3, 3, 8}));
  // The reference kernel reads packed weights through another loop than OIHW ones (one
  // channel at a time), so the 45 products of an output may be summed in another order:
  // equal within their roundings (45 * 2^-24 of the sum of |products| < 45 here).
  test::expect_near_all(run_node(p, 0, feeds).to_float_vector(), before.to_float_vector(),
                        45 * 45 * 0x1p-24f);
}

TEST(PackWeights, GroupedConvWeightsArePacked) {
  // Depthwise, stride 2, M = 6 in blocks of 4.
  ModelBuilder m;
  m.input("x", {1, 6, 5, 5});
  m.output("y");
  m.initializer("w", {6, 1, 3, 3}, weights(54, 4));
  auto* conv = m.node("Conv", {"x", "w"}, {"y"}, "dw");
  set_int(conv, "group", 6);
  set_ints(conv, "strides", {2, 2});
  passes::Program q = compile(m, {{DType::kFloat32, {1, 6, 5, 5}}}, passes::pass_names(), 4);
  ir::Node& node = q.graph.nodes[0];
  node.domain = "tern";
  node.op_type = "FusedConv";
  node.attrs["y_layout"] = str("NCHWc");
  node.attrs["block"] = num(4);
  passes::analyze(q);
  const std::map<int, Tensor> feeds = {{q.graph.inputs[0], random_tensor({1, 6, 5, 5}, 5)}};
  const Tensor before = run_node(q, 0, feeds);
  EXPECT_EQ(pack_pass().run(q), 1);
  EXPECT_EQ(q.known[q.graph.nodes[0].inputs[1]].shape(), (Shape{2, 1, 3, 3, 4}));
  EXPECT_EQ(run_node(q, 0, feeds).to_float_vector(), before.to_float_vector());
}

TEST(PackWeights, LeavesNarrowNchwConvsAndRunTimeWeightsAlone) {
  {  // x and y NCHW with 7 output channels in blocks of 16: under half a block, OIHW stays.
    passes::Program p = conv_program(16, "NCHW");
    const int w = p.graph.nodes[0].inputs[1];
    EXPECT_EQ(pack_pass().run(p), 0);
    EXPECT_EQ(p.graph.nodes[0].inputs[1], w);
    EXPECT_EQ(p.graph.nodes[0].attrs.count("weight_layout"), 0u);
    EXPECT_EQ(p.memory.packed_weight_bytes, 0);
  }
  // x and y NCHW, 16 output channels in blocks of 8: a 1x1 conv with stride 1 stays OIHW
  // (FusedConv runs it as a GEMM on W [M, C]); with stride 2, or read by a
  // Transpose(0, 2, 3, 1) (which fuse-transpose folds into it: NHWC, written by the
  // direct kernel), it is packed. A 3x3 one with stride 1 and padding stays OIHW (an
  // implicit GEMM) with 5 output channels, whose 6-pixel rows fill more of a block than
  // the channels do (variant 3), and is packed with 16, which fill whole blocks (4).
  for (int variant = 0; variant < 5; ++variant) {
    const int64_t stride = variant == 1 ? 2 : 1;
    const bool transposed = variant == 2;
    const int64_t k = variant >= 3 ? 3 : 1, out = variant == 3 ? 5 : 16;
    ModelBuilder m;
    m.input("x", {1, 5, 7, 6});
    m.output("y");
    m.initializer("w", {out, 5, k, k}, weights(out * 5 * k * k, 6));
    auto* conv = m.node("Conv", {"x", "w"}, {transposed ? "c" : "y"}, "pw");
    set_ints(conv, "strides", {stride, stride});
    if (k == 3) set_ints(conv, "pads", {1, 1, 1, 1});
    if (transposed) set_ints(m.node("Transpose", {"c"}, {"y"}, "t"), "perm", {0, 2, 3, 1});
    passes::Program q = compile(m, {{DType::kFloat32, {1, 5, 7, 6}}}, passes::pass_names(), 8);
    ir::Node& node = q.graph.nodes[0];
    node.domain = "tern";
    node.op_type = "FusedConv";
    node.attrs["block"] = num(8);
    passes::analyze(q);
    const bool gemm = variant == 0 || variant == 3;
    EXPECT_EQ(pack_pass().run(q), gemm ? 0 : 1) << "variant " << variant;
    EXPECT_EQ(q.graph.nodes[0].attrs.count("weight_layout"), gemm ? 0u : 1u);
  }
  {  // W is a graph input: not known at plan time.
    passes::Program p = conv_program(8, "NCHWc", false);
    EXPECT_EQ(pack_pass().run(p), 0);
    EXPECT_EQ(p.graph.nodes[0].attrs.count("weight_layout"), 0u);
  }
  {  // A plain Conv is never packed (its kernel reads OIHW).
    ModelBuilder m;
    m.input("x", {1, 5, 7, 6});
    m.output("y");
    m.initializer("w", {7, 5, 3, 3}, weights(315, 1));
    m.node("Conv", {"x", "w"}, {"y"}, "conv");
    passes::Program p = compile(m, {{DType::kFloat32, {1, 5, 7, 6}}}, passes::pass_names());
    EXPECT_EQ(pack_pass().run(p), 0);
  }
}

// x [3, 10] -> Gemm(w [4, 10], transB 1) and a second Gemm sharing w -> Relu.
ModelBuilder gemm_model(bool trans_b) {
  ModelBuilder m;
  m.input("x", {3, 10});
  m.output("y1");
  m.output("y2");
  m.initializer("w", trans_b ? std::vector<int64_t>{4, 10} : std::vector<int64_t>{10, 4},
                weights(40, 7));
  m.initializer("c", {4}, weights(4, 8));
  set_int(m.node("Gemm", {"x", "w", "c"}, {"g1"}, "fc1"), "transB", trans_b ? 1 : 0);
  auto* g2 = m.node("Gemm", {"x", "w"}, {"y2"}, "fc2");
  set_int(g2, "transB", trans_b ? 1 : 0);
  set_float(g2, "alpha", 0.5f);
  m.node("Relu", {"g1"}, {"y1"}, "relu");
  return m;
}

TEST(PackWeights, GemmTransBWeightsAreStoredTransposedOnce) {
  const ModelBuilder m = gemm_model(true);
  const passes::Program p = compile(m, {{DType::kFloat32, {3, 10}}});
  ASSERT_EQ(count_ops(p, "FusedGemm"), 1);  // fc1 + Relu
  ASSERT_EQ(count_ops(p, "Gemm"), 1);       // fc2
  int w = -1;
  for (const ir::Node& node : p.graph.nodes) {
    if (node.op_type != "Gemm" && node.op_type != "FusedGemm") continue;
    EXPECT_EQ(node.attrs.at("transB").i, 0) << node.name;
    EXPECT_EQ(p.known[node.inputs[1]].shape(), (Shape{10, 4})) << node.name;
    if (w >= 0) {
      EXPECT_EQ(node.inputs[1], w) << "the shared weight is transposed once";
    }
    w = node.inputs[1];
  }
  EXPECT_EQ(p.memory.packed_weight_bytes, 40 * 4);
  expect_pass_keeps_results(m, {{"x", random_tensor({3, 10}, 9)}}, "pack-weights");
}

TEST(PackWeights, GemmWithoutTransBIsLeftAlone) {
  const ModelBuilder m = gemm_model(false);
  const passes::Program p = compile(m, {{DType::kFloat32, {3, 10}}});
  EXPECT_EQ(p.memory.packed_weight_bytes, 0);
  for (const ir::Node& node : p.graph.nodes)
    if (node.op_type == "Gemm" || node.op_type == "FusedGemm") {
      EXPECT_EQ(p.graph.values[node.inputs[1]].name, "w");
    }
  expect_pass_keeps_results(m, {{"x", random_tensor({3, 10}, 9)}}, "pack-weights");
}

}  // namespace
}  // namespace tern::test::pack_weights_test

namespace tern::test::pack_weights_test {
namespace {

// Convs from NCHWc to few channels (detection heads, then NHWC) run the dot kernel where
// it is expected faster (kernels::dot_conv_preferred: blocks of 8 and 16): on a 4 x 5 map, a
// 1x1 128 -> 4 head keeps its OIHW weights, a 3x3 128 -> 6 head (padding 1) gets OHWI
// ones [6, 3, 3, 128]; with blocks of 4 their weights are packed for the pointwise
// and direct kernels. A 3x3 128 -> 20 head, which the cost rule alone would give the dot
// kernel, keeps winograd where select-algorithm prefers it (the rule was measured
// against direct only); a 3x3 128 -> 12 conv into a 1x1 conv (NCHWc between them) runs
// the dot kernel with blocks of 16, which winograd would take too (fewer output channels
// than a block), and winograd with blocks of 8 (a whole block: winograd_preferred).
TEST(PackWeights, NarrowConvsOnNchwcKeepOihwOrGetOhwiWeightsForTheDotKernel) {
  ModelBuilder m;
  m.input("x", {1, 3, 4, 5});
  m.output("y");
  m.output("y3");
  m.output("y20");
  m.output("y12");
  m.initializer("w1", {128, 3, 3, 3}, weights(128 * 27, 1));
  m.initializer("w20", {20, 128, 3, 3}, weights(20 * 128 * 9, 4));
  m.initializer("w2", {4, 128, 1, 1}, weights(512, 2));
  m.initializer("w3", {6, 128, 3, 3}, weights(6 * 128 * 9, 3));
  m.initializer("w12", {12, 128, 3, 3}, weights(12 * 128 * 9, 6));
  m.initializer("w12b", {4, 12, 1, 1}, weights(48, 7));
  auto* c1 = m.node("Conv", {"x", "w1"}, {"a"}, "c1");
  set_ints(c1, "pads", {1, 1, 1, 1});
  m.node("Relu", {"a"}, {"ar"}, "r1");
  m.node("Conv", {"ar", "w2"}, {"h"}, "head");
  set_ints(m.node("Transpose", {"h"}, {"y"}, "nhwc"), "perm", {0, 2, 3, 1});
  set_ints(m.node("Conv", {"ar", "w3"}, {"h3"}, "head3"), "pads", {1, 1, 1, 1});
  set_ints(m.node("Transpose", {"h3"}, {"y3"}, "nhwc3"), "perm", {0, 2, 3, 1});
  set_ints(m.node("Conv", {"ar", "w20"}, {"y20"}, "head20"), "pads", {1, 1, 1, 1});
  set_ints(m.node("Conv", {"ar", "w12"}, {"h12"}, "head12"), "pads", {1, 1, 1, 1});
  m.node("Conv", {"h12", "w12b"}, {"y12"}, "after12");
  for (int block : {4, 8, 16}) {
    SCOPED_TRACE(::testing::Message() << "block " << block);
    const passes::Program p = compile(m, {{DType::kFloat32, {1, 3, 4, 5}}}, {}, block);
    const ir::Node* head = nullptr;
    const ir::Node* head3 = nullptr;
    const ir::Node* head20 = nullptr;
    const ir::Node* head12 = nullptr;
    for (const ir::Node& node : p.graph.nodes) {
      if (node.name == "head12") head12 = &node;
      if (node.name == "head") head = &node;
      if (node.name == "head3") head3 = &node;
      if (node.name == "head20") head20 = &node;
    }
    ASSERT_NE(head20, nullptr);
    ASSERT_NE(head12, nullptr);
    ASSERT_NE(head, nullptr);
    ASSERT_NE(head3, nullptr);
    ASSERT_EQ(head->attrs.at("x_layout").s, "NCHWc");
    ASSERT_EQ(head3->attrs.at("x_layout").s, "NCHWc");
    const bool dot = block >= 8;
    EXPECT_EQ(head->attrs.at("weight_layout").s, dot ? "OIHW" : "packed");
    EXPECT_EQ(head3->attrs.at("weight_layout").s, dot ? "OHWI" : "packed");
    EXPECT_EQ(p.known[head->inputs[1]].rank(), dot ? 4 : 5);
    const Shape packed3 = {(6 + block - 1) / block, 128, 3, 3, block};
    EXPECT_EQ(p.known[head3->inputs[1]].shape(), dot ? Shape({6, 3, 3, 128}) : packed3);
    if (dot && block == simd_float_lanes()) {
      EXPECT_EQ(head->attrs.at("algorithm").s, "dot");
      EXPECT_EQ(head3->attrs.at("algorithm").s, "dot");
      EXPECT_EQ(head20->attrs.at("weight_layout").s, "winograd");
      EXPECT_EQ(head20->attrs.at("algorithm").s, "winograd");
      EXPECT_EQ(head12->attrs.at("y_layout").s, "NCHWc");
      // 12 channels: less than a block of 16 (dot), a whole block of 8 (winograd).
      const std::string algorithm12 = block == 16 ? "dot" : "winograd";
      EXPECT_EQ(head12->attrs.at("weight_layout").s, block == 16 ? "OHWI" : "winograd");
      EXPECT_EQ(head12->attrs.at("algorithm").s, algorithm12);
    }
  }
  // head20 runs winograd with every pass on (its transforms round 1152-term sums
  // differently): the select-algorithm test's tolerance.
  expect_pass_keeps_results(m, {{"x", random_tensor({1, 3, 4, 5}, 5)}}, "pack-weights", 1e-4);
}

// --tune (passes/tune.h) on two heads on NCHWc, dot candidates on blocks of 8 and 16
// lanes: a 1x1 128 -> 4 one and a 3x3 stride-2 128 -> 6 one (which winograd does not
// cover). pack-weights measures each as dot and as pointwise or direct on packed weights,
// caches the faster, and lays the weights out for it (OIHW or OHWI for dot, packed for the
// others); with the cache's answers edited to each, a later compile follows them and the
// results stay the reference's.
TEST(PackWeights, TuneMeasuresTheDotKernelAgainstTheOthersOnHeads) {
  const int block = simd_float_lanes();
  if (block < 8) GTEST_SKIP() << "no dot kernel on blocks of " << block;
  ModelBuilder m;
  m.input("x", {1, 3, 6, 7});
  m.output("y");
  m.output("y3");
  m.initializer("w1", {128, 3, 3, 3}, weights(128 * 27, 1));
  m.initializer("w2", {4, 128, 1, 1}, weights(512, 2));
  m.initializer("w3", {6, 128, 3, 3}, weights(6 * 128 * 9, 3));
  set_ints(m.node("Conv", {"x", "w1"}, {"a"}, "c1"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"a"}, {"ar"}, "r1");
  m.node("Conv", {"ar", "w2"}, {"h"}, "head");
  set_ints(m.node("Transpose", {"h"}, {"y"}, "nhwc"), "perm", {0, 2, 3, 1});
  auto* c3 = m.node("Conv", {"ar", "w3"}, {"h3"}, "head3");
  set_ints(c3, "pads", {1, 1, 1, 1});
  set_ints(c3, "strides", {2, 2});
  set_ints(m.node("Transpose", {"h3"}, {"y3"}, "nhwc3"), "perm", {0, 2, 3, 1});
  const test::ScratchDir dir("tune_dot");
  const std::string cache = dir.file("tune.json");
  auto compile_tuned = [&] {
    return compile(m, {{DType::kFloat32, {1, 3, 6, 7}}}, {}, block, cache);
  };
  auto algorithms = [](const passes::Program& p) {
    std::map<std::string, const ir::Node*> out;
    for (const ir::Node& node : p.graph.nodes) out[node.name] = &node;
    return out;
  };
  // The head of a cache entry, by its OIHW weights' shape in the key.
  auto head_of = [](const std::string& key) {
    return key.find("[4, 128, 1, 1]") != std::string::npos ? "head" : "head3";
  };

  const passes::Program p = compile_tuned();
  std::ifstream in(cache);
  nlohmann::json file = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(file.is_discarded());
  ASSERT_EQ(file["entries"].size(), 2u);  // the heads: c1 has no candidates
  EXPECT_EQ(p.tuning.measured, 2);
  const auto nodes = algorithms(p);
  for (auto& [key, entry] : file["entries"].items()) {
    SCOPED_TRACE(key);
    const std::string head = head_of(key), other = head == "head" ? "pointwise" : "direct";
    ASSERT_TRUE(entry["ms"].contains("dot") && entry["ms"].contains(other));
    const std::string choice = entry["algorithm"];
    EXPECT_EQ(choice,
              entry["ms"]["dot"].get<double>() <= entry["ms"][other].get<double>() ? "dot" : other);
    EXPECT_EQ(nodes.at(head)->attrs.at("algorithm").s, choice);
  }

  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 6, 7}, 3)}};
  const std::vector<NamedTensor> plain = run_model(m, feeds, passes::pass_names());
  for (const bool dot : {true, false}) {
    SCOPED_TRACE(dot ? "dot" : "packed");
    for (auto& [key, entry] : file["entries"].items()) {
      entry["algorithm"] = dot                                   ? "dot"
                           : head_of(key) == std::string("head") ? "pointwise"
                                                                 : "direct";
    }
    std::ofstream(cache) << file.dump(2);
    const passes::Program q = compile_tuned();
    EXPECT_EQ(q.tuning.measured, 0);
    EXPECT_EQ(q.tuning.cached, 2);
    const auto qn = algorithms(q);
    EXPECT_EQ(qn.at("head")->attrs.at("algorithm").s, dot ? "dot" : "pointwise");
    EXPECT_EQ(qn.at("head")->attrs.at("weight_layout").s, dot ? "OIHW" : "packed");
    EXPECT_EQ(qn.at("head3")->attrs.at("algorithm").s, dot ? "dot" : "direct");
    EXPECT_EQ(qn.at("head3")->attrs.at("weight_layout").s, dot ? "OHWI" : "packed");
    EXPECT_EQ(q.known[qn.at("head3")->inputs[1]].shape(),
              dot ? Shape({6, 3, 3, 128}) : Shape({1, 128, 3, 3, block}));
    expect_outputs_near(tuned_session(m, cache).run(feeds), plain, 1e-4);
  }
}

// --tune on heads in every position a head takes: pack-weights measures a head that
// fuse-transpose will make write NHWC writing NHWC, and caches it under that context
// (tune_key's "y_layout=NHWC"), so an answer measured into NCHW is never reused for it;
// heads that keep NCHW (a graph output, a residual, a second reader, fuse-transpose off)
// are measured and cached without it. 1x1 heads from 128 channels to 4, 5, 6 and 7,
// told apart by their weights' shapes in the keys.
TEST(PackWeights, TuneMeasuresEachHeadInTheLayoutItWillWrite) {
  const int block = simd_float_lanes();
  if (block < 8) GTEST_SKIP() << "no dot kernel on blocks of " << block;
  ModelBuilder m;
  m.input("x", {1, 3, 6, 7});
  m.input("z", {1, 6, 6, 7});
  for (const char* y : {"y4", "y5", "y6", "y7", "y7r"}) m.output(y);
  m.initializer("w1", {128, 3, 3, 3}, weights(128 * 27, 1));
  for (int64_t k : {4, 5, 6, 7}) {
    m.initializer("w" + std::to_string(k) + "h", {k, 128, 1, 1}, weights(k * 128, k));
  }
  set_ints(m.node("Conv", {"x", "w1"}, {"a"}, "c1"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"a"}, {"ar"}, "r1");
  m.node("Conv", {"ar", "w4h"}, {"h4"}, "head4");  // read by its NHWC Transpose only
  set_ints(m.node("Transpose", {"h4"}, {"y4"}, "t4"), "perm", {0, 2, 3, 1});
  m.node("Conv", {"ar", "w5h"}, {"y5"}, "head5");  // a graph output
  m.node("Conv", {"ar", "w6h"}, {"h6"}, "head6");  // a residual, then the Transpose
  m.node("Add", {"h6", "z"}, {"s6"}, "add6");
  set_ints(m.node("Transpose", {"s6"}, {"y6"}, "t6"), "perm", {0, 2, 3, 1});
  m.node("Conv", {"ar", "w7h"}, {"h7"}, "head7");  // a second reader
  set_ints(m.node("Transpose", {"h7"}, {"y7"}, "t7"), "perm", {0, 2, 3, 1});
  m.node("Relu", {"h7"}, {"y7r"}, "r7");
  const std::vector<ops::TensorType> types = {{DType::kFloat32, {1, 3, 6, 7}},
                                              {DType::kFloat32, {1, 6, 6, 7}}};
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 6, 7}, 3)},
                                          {"z", random_tensor({1, 6, 6, 7}, 4)}};
  const std::vector<NamedTensor> plain = run_model(m, feeds, passes::pass_names());
  for (const bool fuse : {true, false}) {
    SCOPED_TRACE(fuse ? "fuse-transpose on" : "fuse-transpose off");
    const test::ScratchDir dir("tune_nhwc");
    const std::string cache = dir.file("tune.json");
    const std::vector<std::string> off = off_unless(fuse, "fuse-transpose");
    const passes::Program p = compile(m, types, off, block, cache);
    std::map<std::string, const ir::Node*> nodes;
    for (const ir::Node& node : p.graph.nodes) nodes[node.name] = &node;
    ASSERT_TRUE(nodes.count("head6"));
    EXPECT_EQ(nodes.at("head6")->inputs.size(), 4u) << "the Add is head6's residual";
    std::ifstream in(cache);
    const nlohmann::json file = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(file.is_discarded());
    std::map<std::string, std::string> key_of;  // head -> its cache key
    for (const auto& [key, entry] : file["entries"].items()) {
      for (int64_t k : {4, 5, 6, 7}) {
        if (key.find(fmt::format("[{}, 128, 1, 1]", k)) != std::string::npos) {
          key_of[fmt::format("head{}", k)] = key;
        }
      }
    }
    // Measured whatever the rule says: heads read by a Transpose or returned (head7 only
    // where the rule gives it dot: its second reader makes it no head).
    for (const char* head : {"head5", "head6"}) EXPECT_TRUE(key_of.count(head)) << head;
    EXPECT_EQ(key_of.count("head4"), 1u) << "the rule gives 128 -> 4 dot on 8 and 16 lanes";
    for (const auto& [head, key] : key_of) {
      const bool nhwc = fuse && head == "head4";
      EXPECT_EQ(key.ends_with("|y_layout=NHWC"), nhwc) << head << ": " << key;
      EXPECT_EQ(nodes.at(head)->attrs.at("y_layout").s == "NHWC", nhwc) << head;
    }
    expect_outputs_near(tuned_session(m, cache, off).run(feeds), plain, 1e-4);
  }
}

// Through the whole pipeline: every FusedConv that assign-layout gives an NCHWc input or
// output reads packed weights afterwards (and only those), for c = 4, 8, 16 and channel counts
// that are not multiples of c; the results equal those without the pass. (Checked on a
// tree with assign-layout merged: there every convolution here is packed.)
TEST(PackWeights, PipelinePacksEveryNchwcConvolution) {
  ModelBuilder m;
  m.input("x", {1, 3, 11, 10});
  m.output("y");
  m.initializer("w1", {5, 3, 3, 3}, weights(135, 1));
  m.initializer("w2", {5, 1, 3, 3}, weights(45, 2));
  m.initializer("w3", {7, 5, 1, 1}, weights(35, 3));
  auto* c1 = m.node("Conv", {"x", "w1"}, {"a"}, "c1");
  set_ints(c1, "pads", {1, 1, 1, 1});
  set_ints(c1, "strides", {2, 2});
  m.node("Relu", {"a"}, {"ar"}, "r1");
  auto* c2 = m.node("Conv", {"ar", "w2"}, {"b"}, "dw");
  set_ints(c2, "pads", {1, 1, 1, 1});
  set_int(c2, "group", 5);
  m.node("Relu", {"b"}, {"br"}, "r2");
  m.node("Conv", {"br", "w3"}, {"y"}, "pw");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 11, 10}, 4)}};
  for (int block : {4, 8, 16}) {
    SCOPED_TRACE(::testing::Message() << "block " << block);
    const passes::Program p = compile(m, {{DType::kFloat32, {1, 3, 11, 10}}}, {}, block);
    int64_t bytes = 0;
    for (const ir::Node& node : p.graph.nodes) {
      if (node.op_type != "FusedConv") continue;
      auto layout = [&](const char* name) {
        auto it = node.attrs.find(name);
        return it == node.attrs.end() ? std::string() : it->second.s;
      };
      const bool blocked = layout("y_layout") == "NCHWc" || layout("x_layout") == "NCHWc";
      EXPECT_EQ(layout("weight_layout") == "packed", blocked) << node.name;
      const Tensor& w = p.known[node.inputs[1]];
      EXPECT_EQ(w.rank(), blocked ? 5 : 4) << node.name;
      if (blocked) {
        EXPECT_EQ(w.shape().back(), block) << node.name;
        bytes += static_cast<int64_t>(w.nbytes());
      }
    }
    EXPECT_EQ(p.memory.packed_weight_bytes, bytes);
  }
  expect_pass_keeps_results(m, feeds, "pack-weights");
}

}  // namespace
}  // namespace tern::test::pack_weights_test
