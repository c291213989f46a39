// fuse-transpose: a FusedConv read only by Transpose(0, 2, 3, 1) writes NHWC itself and
// the Transpose goes (the detection heads); not for another permutation, an output read
// elsewhere or returned, a residual, a depthwise conv; results keep their bits (the same
// kernel, only the store differs), on one and two threads.
#include "base/cpu.h"
#include "toy_model_util.h"

namespace tern::test::fuse_transpose_test {
namespace {

// x [1, 3, 12, 10] -> 3x3 conv (16) -> ReLU -> head: 1x1 (6; 16 with a residual) or
// depthwise 3x3 (16) -> Transpose(perm) -> "t" -> Reshape [1, -1, 2] -> y. `residual`:
// the head adds the graph input "z" [1, 16, 12, 10] (plain, so the head's output stays
// NCHW) before the Transpose; `also_returned`: the head's output is a graph output too.
ModelBuilder head_model(std::vector<int64_t> perm = {0, 2, 3, 1}, bool depthwise = false,
                        bool residual = false, bool also_returned = false) {
  ModelBuilder m(17);
  m.input("x", {1, 3, 12, 10});
  if (residual) m.input("z", {1, 16, 12, 10});
  m.output("y");
  if (also_returned) m.output("h");
  m.initializer("w1", {16, 3, 3, 3}, weights(16 * 27, 1));
  const int64_t out = depthwise || residual ? 16 : 6;
  if (depthwise) {
    m.initializer("wh", {16, 1, 3, 3}, weights(16 * 9, 2));
  } else {
    m.initializer("wh", {out, 16, 1, 1}, weights(out * 16, 2));
  }
  m.initializer("bh", {out}, weights(out, 3));
  int64_initializer(m, "shape", {3}, {1, -1, 2});
  set_ints(m.node("Conv", {"x", "w1"}, {"a"}, "body"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"a"}, {"r"}, "relu");
  auto* head = m.node("Conv", {"r", "wh", "bh"}, {residual ? "hc" : "h"}, "head");
  if (depthwise) {
    set_int(head, "group", 16);
    set_ints(head, "pads", {1, 1, 1, 1});
  }
  if (residual) m.node("Add", {"hc", "z"}, {"h"}, "residual");
  set_ints(m.node("Transpose", {"h"}, {"t"}, "transpose"), "perm", perm);
  m.node("Reshape", {"t", "shape"}, {"y"}, "reshape");
  return m;
}

// Every pass, with this machine's block: the plan's SIMD kernels (direct, pointwise,
// depthwise) run.
passes::Program compile_all(const ModelBuilder& m) {
  return compile(m, {ops::TensorType{DType::kFloat32, {1, 3, 12, 10}}}, {}, simd_float_lanes());
}

// The y_layout of the FusedConv named "head".
std::string head_layout(const passes::Program& p) {
  for (const ir::Node& node : p.graph.nodes) {
    if (node.name != "head") continue;
    auto it = node.attrs.find("y_layout");
    return it == node.attrs.end() ? "NCHW" : it->second.s;
  }
  ADD_FAILURE() << "no node named head";
  return {};
}

void expect_same_results(const ModelBuilder& m, bool residual = false) {
  std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 12, 10}, 5)}};
  if (residual) feeds.push_back({"z", random_tensor({1, 16, 12, 10}, 7)});
  expect_pass_exact(m, feeds, {}, "fuse-transpose");
  expect_pass_exact(m, feeds, {}, "fuse-transpose", 2);
  expect_pass_keeps_results(m, feeds, "fuse-transpose");
}

TEST(FuseTranspose, HeadWritesNhwcAndTheTransposeGoes) {
  const ModelBuilder m = head_model();
  const passes::Program p = compile_all(m);
  EXPECT_EQ(count_ops(p, "Transpose"), 0);
  EXPECT_EQ(head_layout(p), "NHWC");
  EXPECT_EQ(producer_op(p, "t"), "FusedConv");
  EXPECT_EQ(p.types[value_id(p, "t")]->shape, (Shape{1, 12, 10, 6}));
  expect_same_results(m);
}

TEST(FuseTranspose, OffKeepsTheTranspose) {
  const passes::Program p =
      compile(head_model(), {ops::TensorType{DType::kFloat32, {1, 3, 12, 10}}},
              {"fuse-transpose"});
  EXPECT_EQ(count_ops(p, "Transpose"), 1);
  EXPECT_EQ(head_layout(p), "NCHW");
}

TEST(FuseTranspose, NotForAnotherPermutation) {
  const ModelBuilder m = head_model({0, 3, 2, 1});
  const passes::Program p = compile_all(m);
  EXPECT_EQ(count_ops(p, "Transpose"), 1);
  EXPECT_EQ(head_layout(p), "NCHW");
  expect_same_results(m);
}

TEST(FuseTranspose, NotWhenTheConvOutputIsReturned) {
  const ModelBuilder m = head_model({0, 2, 3, 1}, false, false, true);
  const passes::Program p = compile_all(m);
  EXPECT_EQ(count_ops(p, "Transpose"), 1);
  EXPECT_EQ(head_layout(p), "NCHW");
  expect_same_results(m);
}

// The depthwise kernel writes NCHW or NCHWc only (recognised by its algorithm and, with
// select-algorithm off, by its groups); a residual would have to be NHWC as well.
TEST(FuseTranspose, NotForADepthwiseHeadOrOneWithAResidual) {
  for (const bool depthwise : {true, false}) {
    SCOPED_TRACE(depthwise ? "depthwise" : "pointwise with a residual");
    const ModelBuilder m = head_model({0, 2, 3, 1}, depthwise, !depthwise);
    for (const bool select : {true, false}) {
      const std::vector<std::string> off =
          select ? std::vector<std::string>{} : std::vector<std::string>{"select-algorithm"};
      std::vector<ops::TensorType> inputs = {{DType::kFloat32, {1, 3, 12, 10}}};
      if (!depthwise) inputs.push_back({DType::kFloat32, {1, 16, 12, 10}});
      const passes::Program p = compile(m, inputs, off, simd_float_lanes());
      EXPECT_EQ(count_ops(p, "Transpose"), 1);
      EXPECT_EQ(head_layout(p), "NCHW");
    }
    expect_same_results(m, !depthwise);
  }
}

// A 1x1 conv reading the NCHW network input runs as a GEMM when its weights stay OIHW
// (pack-weights off; on, it packs them because the Transpose reads it): the GEMM kernel
// writes NCHW only, so the Transpose stays rather than the reference writing NHWC.
TEST(FuseTranspose, NotForAGemmConv) {
  ModelBuilder m(17);
  m.input("x", {1, 16, 12, 10});
  m.output("y");
  m.initializer("w", {16, 16, 1, 1}, weights(256, 2));  // 16 outputs: a whole block
  int64_initializer(m, "shape", {3}, {1, -1, 2});
  m.node("Conv", {"x", "w"}, {"h"}, "head");
  set_ints(m.node("Transpose", {"h"}, {"t"}, "transpose"), "perm", {0, 2, 3, 1});
  m.node("Reshape", {"t", "shape"}, {"y"}, "reshape");
  for (const bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "pack-weights on" : "pack-weights off");
    const std::vector<std::string> off =
        pack ? std::vector<std::string>{} : std::vector<std::string>{"pack-weights"};
    const passes::Program p =
        compile(m, {{DType::kFloat32, {1, 16, 12, 10}}}, off, simd_float_lanes());
    const bool fast = cpu_info().best_target != "SCALAR";
    EXPECT_EQ(count_ops(p, "Transpose"), pack && fast ? 0 : 1);
    EXPECT_EQ(head_layout(p), pack && fast ? "NHWC" : "NCHW");
  }
}

// A plan made for this machine's vector width, run after a SIMD target of another width
// is forced: the direct kernel does not apply, and the reference writes NHWC itself.
TEST(FuseTranspose, ReferenceKernelWritesNhwc) {
  if (simd_float_lanes() == 4 || dispatchable_simd_targets().size() < 2) {
    GTEST_SKIP() << "one vector width only";
  }
  const ModelBuilder m = head_model();
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 12, 10}, 6)}};
  const std::vector<NamedTensor> plain = run_model(m, feeds, passes::pass_names());
  const std::string bytes = m.bytes();
  SessionOptions options;
  options.verify_passes = true;
  Session session = Session::from_memory(bytes.data(), bytes.size(), options);
  const std::vector<NamedTensor> fast = session.run(feeds);
  force_simd_target("SSE4");
  const std::vector<NamedTensor> fallback = session.run(feeds);
  force_simd_target("");
  expect_outputs_near(fast, plain, 1e-5);
  expect_outputs_near(fallback, plain, 1e-5);
}

}  // namespace
}  // namespace tern::test::fuse_transpose_test
