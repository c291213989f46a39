// fuse-conv-chain: UltraFace's first layers at 240 x 320 (intermediates of 1.2 MB and
// more) become one ConvChain that starts at the first conv and ends before the layer
// whose input is small; the last layer may add a residual; not across a value another
// node reads too (or the next layer reads as its residual as well), and not at all at a
// small input size; at 480 x 640, outputs past kConvChainSpillBytes join in bands of 1 row;
// results agree with the pass off, on one and two threads.
#include <span>

#include "base/cpu.h"
#include "kernels/reference/fused_conv.h"
#include "ops/conv_chain.h"
#include "support/test_env.h"
#include "toy_model_util.h"

namespace tern::test::fuse_conv_chain_test {
namespace {

// x -> conv1 (3x3 stride 2, 3 -> 16, bias) -> Relu -> "r1" -> dw1 (depthwise 3x3) -> "a2".
void first_conv_and_depthwise(ModelBuilder& m) {
  m.initializer("w1", {16, 3, 3, 3}, weights(16 * 27, 1));
  m.initializer("b1", {16}, weights(16, 2));
  m.initializer("w2", {16, 1, 3, 3}, weights(16 * 9, 3));
  auto* c1 = m.node("Conv", {"x", "w1", "b1"}, {"a1"}, "conv1");
  set_ints(c1, "pads", {1, 1, 1, 1});
  set_ints(c1, "strides", {2, 2});
  m.node("Relu", {"a1"}, {"r1"}, "relu1");
  auto* d1 = m.node("Conv", {"r1", "w2"}, {"a2"}, "dw1");
  set_int(d1, "group", 16);
  set_ints(d1, "pads", {1, 1, 1, 1});
}

// x [1, 3, h, w] -> conv1 (3x3 stride 2, 16) -> Relu -> dw1 (depthwise 3x3) -> Relu ->
// pw1 (1x1, 32) -> Relu -> dw2 (depthwise 3x3 stride 2) -> Relu -> pw2 (1x1, 32) -> y.
// `also_returned`: dw1's activation "r2" is a graph output too.
ModelBuilder first_layers(int64_t h, int64_t w, bool also_returned = false) {
  ModelBuilder m(17);
  m.input("x", {1, 3, h, w});
  m.output("y");
  if (also_returned) m.output("r2");
  first_conv_and_depthwise(m);
  m.initializer("w3", {32, 16, 1, 1}, weights(32 * 16, 4));
  m.initializer("w4", {32, 1, 3, 3}, weights(32 * 9, 5));
  m.initializer("w5", {32, 32, 1, 1}, weights(32 * 32, 6));
  m.node("Relu", {"a2"}, {"r2"}, "relu2");
  m.node("Conv", {"r2", "w3"}, {"a3"}, "pw1");
  m.node("Relu", {"a3"}, {"r3"}, "relu3");
  auto* d2 = m.node("Conv", {"r3", "w4"}, {"a4"}, "dw2");
  set_int(d2, "group", 32);
  set_ints(d2, "pads", {1, 1, 1, 1});
  set_ints(d2, "strides", {2, 2});
  m.node("Relu", {"a4"}, {"r4"}, "relu4");
  m.node("Conv", {"r4", "w5"}, {"y"}, "pw2");
  return m;
}

passes::Program compile_at(const ModelBuilder& m, int64_t h, int64_t w,
                           const std::vector<std::string>& disabled = {}) {
  return compile(m, {ops::TensorType{DType::kFloat32, {1, 3, h, w}}}, disabled, simd_float_lanes());
}

// The "names" of the program's ConvChain nodes, in node order.
std::vector<std::vector<std::string>> chains(const passes::Program& p) {
  std::vector<std::vector<std::string>> out;
  for (const ir::Node& node : p.graph.nodes) {
    if (node.op_type != "ConvChain") continue;
    out.push_back(node.attrs.at("names").strings);
  }
  return out;
}

// A layer of first_layers(240, 320) for conv_chain_band_rows: C -> M channels (groups g),
// k x k at `stride`, to an out_h x out_w output in NCHWc blocks of this target's width.
kernels::ref::FusedConvParams chain_layer(int64_t c_in, int64_t c_out, int64_t g, int64_t k,
                                          int64_t stride, int64_t out_h, int64_t out_w) {
  kernels::ref::FusedConvParams p;
  p.conv.in_channels = c_in;
  p.conv.out_channels = c_out;
  p.conv.groups = g;
  p.conv.kernel = {1, k, k};
  p.conv.stride = {1, stride, stride};
  p.conv.dilation = {1, 1, 1};
  p.conv.out = {1, out_h, out_w};
  p.x_block = p.y_block = p.w_block = simd_float_lanes();
  return p;
}

// How many of `layers` (a chain's candidates, in order, each output at least 1 MiB) the
// pass chains from the first, computed as it does: the next layer joins while bands of
// kConvChainMinBandRows rows of it fit conv_chain_grow_bytes(), or bands of 1 row where
// the output it reads has kConvChainSpillBytes or more. At least 2: the tests' first two
// layers fit any L2 of 512 KiB or more.
size_t expected_chain_length(const std::vector<kernels::ref::FusedConvParams>& layers) {
  size_t n = 2;
  for (; n < layers.size(); ++n) {
    const kernels::ref::FusedConvParams& last = layers[n - 1];
    const int64_t out_bytes = kernels::ref::fused_conv_padded_channels(last) * last.conv.out.h *
                              last.conv.out.w * int64_t{sizeof(float)};
    const int64_t min_rows =
        out_bytes >= ops::kConvChainSpillBytes ? 1 : ops::kConvChainMinBandRows;
    std::vector<int64_t> rows(n + 1);
    const std::span<const kernels::ref::FusedConvParams> first(layers.data(), n + 1);
    if (ops::conv_chain_band_rows(first, min_rows, rows) > ops::conv_chain_grow_bytes()) break;
  }
  return n;
}

TEST(FuseConvChain, FirstLayersBecomeOneChain) {
  const passes::Program p = compile_at(first_layers(240, 320), 240, 320);
  const auto found = chains(p);
  ASSERT_EQ(found.size(), 1u);
  // conv1 and dw1 always (their band buffers, 143 KB, fit any L2 of 512 KiB or more);
  // pw1 and dw2 while bands of 4 rows of the chain's last layer fit this machine's L2
  // (conv_chain_grow_bytes; no output here reaches kConvChainSpillBytes); pw2 never (its
  // input, 60 x 80 x 32 floats, is 0.6 MB).
  const size_t expected = expected_chain_length(
      {chain_layer(3, 16, 1, 3, 2, 120, 160), chain_layer(16, 16, 16, 3, 1, 120, 160),
       chain_layer(16, 32, 1, 1, 1, 120, 160), chain_layer(32, 32, 32, 3, 2, 60, 80)});
  const std::vector<std::string> names = {"conv1", "dw1", "pw1", "dw2"};
  EXPECT_EQ(found[0], std::vector<std::string>(names.begin(), names.begin() + expected))
      << "L2 " << l2_cache_bytes() << " bytes";
  EXPECT_EQ(producer_op(p, "y"), "FusedConv");
  for (const ir::Node& node : p.graph.nodes) {
    if (node.op_type == "ConvChain") {
      EXPECT_EQ(node.name.substr(0, 9), "conv1+dw1");
    }
  }

  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 240, 320}, 5)}};
  expect_pass_keeps_results(first_layers(240, 320), feeds, "fuse-conv-chain");
  const auto one = run_model(first_layers(240, 320), feeds, {}, 1);
  const auto two = run_model(first_layers(240, 320), feeds, {}, 2);
  // The threads split the rows, so bands (and the kernels' tiles within them) start at
  // other rows: values agree to float rounding.
  expect_outputs_near(one, two, 1e-5);
}

// The op's band height for UltraFace's first four layers at widths 160 to 4000 (rows of
// 2 to 50 KB): the most rows within half of L2, but 2 rows instead of 1 where they fit all
// of L2. The scan must meet such a width, whatever this machine's L2.
TEST(FuseConvChain, BandsTakeTwoRowsWhereTheyFitL2) {
  bool two_past_half = false;
  for (int64_t w = 160; w <= 4000; w += 16) {
    const std::vector<kernels::ref::FusedConvParams> layers = {
        chain_layer(3, 16, 1, 3, 2, 240, w / 2), chain_layer(16, 16, 16, 3, 1, 240, w / 2),
        chain_layer(16, 32, 1, 1, 1, 240, w / 2), chain_layer(32, 32, 32, 3, 2, 120, w / 4)};
    std::vector<int64_t> rows(layers.size());
    const auto bytes = [&](int64_t band) { return ops::conv_chain_band_rows(layers, band, rows); };
    const int64_t band = ops::conv_chain_band_height(layers);
    ASSERT_GE(band, 1) << w;
    ASSERT_LE(band, 120) << w;
    if (band > 2 || bytes(band) <= ops::conv_chain_band_bytes()) {
      EXPECT_LE(bytes(band), ops::conv_chain_band_bytes()) << w;
      if (band < 120) {
        EXPECT_GT(bytes(band + 1), ops::conv_chain_band_bytes()) << w;
      }
    } else {
      EXPECT_EQ(band == 2, bytes(2) <= ops::conv_chain_grow_bytes()) << w;
      two_past_half = two_past_half || band == 2;
    }
    if (bytes(2) <= ops::conv_chain_grow_bytes()) {
      EXPECT_GE(band, 2) << w;
    }
  }
  EXPECT_TRUE(two_past_half) << "L2 " << l2_cache_bytes() << " bytes";
  EXPECT_THROW(ops::conv_chain_band_height({}), InvalidArgument);
}

TEST(FuseConvChain, OffKeepsTheLayers) {
  const passes::Program p = compile_at(first_layers(240, 320), 240, 320, {"fuse-conv-chain"});
  EXPECT_TRUE(chains(p).empty());
  EXPECT_EQ(count_ops(p, "FusedConv"), 5);
}

TEST(FuseConvChain, NotAcrossAValueAnotherNodeReads) {
  // r2 (dw1's output) is returned too: the chain may not go past dw1.
  const passes::Program p = compile_at(first_layers(240, 320, true), 240, 320);
  const auto found = chains(p);
  for (const auto& names : found) {
    for (size_t i = 0; i + 1 < names.size(); ++i) EXPECT_NE(names[i], "dw1");
  }
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 240, 320}, 7)}};
  expect_pass_keeps_results(first_layers(240, 320, true), feeds, "fuse-conv-chain");
}

// x [1, 3, 1024, 64] -> conv1 (3x3 stride 2, 16) -> Relu -> dw1 (depthwise 3x3) -> then,
// when `z_is_input`, Relu -> pw (1x1, 16) + z (a graph input) -> y; else dw1 + conv1's
// output (Relu'd) -> y: the residual of dw1 is the chain's would-be intermediate. The
// intermediates (512 x 32 x 16 floats, 1 MiB) have narrow rows, so that bands of any
// height fit any L2.
ModelBuilder residual_model(bool z_is_input) {
  ModelBuilder m(17);
  m.input("x", {1, 3, 1024, 64});
  if (z_is_input) m.input("z", {1, 16, 512, 32});
  m.output("y");
  first_conv_and_depthwise(m);
  m.initializer("w3", {16, 16, 1, 1}, weights(16 * 16, 4));
  if (z_is_input) {
    m.node("Relu", {"a2"}, {"r2"}, "relu2");
    m.node("Conv", {"r2", "w3"}, {"a3"}, "pw");
    m.node("Add", {"a3", "z"}, {"y"}, "residual");
  } else {
    m.node("Add", {"a2", "r1"}, {"y"}, "residual");
  }
  return m;
}

TEST(FuseConvChain, TheLastLayerMayAddAResidual) {
  const passes::Program p = compile(residual_model(true),
                                    {ops::TensorType{DType::kFloat32, {1, 3, 1024, 64}},
                                     ops::TensorType{DType::kFloat32, {1, 16, 512, 32}}},
                                    {}, simd_float_lanes());
  const auto found = chains(p);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], (std::vector<std::string>{"conv1", "dw1", "pw"}));
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 1024, 64}, 9)},
                                          {"z", random_tensor({1, 16, 512, 32}, 10)}};
  expect_pass_keeps_results(residual_model(true), feeds, "fuse-conv-chain");
}

TEST(FuseConvChain, NotWhenTheResidualIsTheIntermediate) {
  // dw1 reads conv1's output as X and as Z: conv1's output must stay a tensor.
  const passes::Program p = compile_at(residual_model(false), 1024, 64);
  EXPECT_TRUE(chains(p).empty());
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 1024, 64}, 11)}};
  expect_pass_keeps_results(residual_model(false), feeds, "fuse-conv-chain");
}

// At 480 x 640, conv1's and dw1's outputs are 4.9 MB and pw1's 9.8 MB: past
// kConvChainSpillBytes, so dw2 joins wherever bands of 1 row of it fit L2 (614 KB of band
// buffers), although bands of 4 rows (2.6 MB) fit no L2 of the development machines; pw2
// joins only with bands of 4 rows (its input, dw2's output, is 2.5 MB).
TEST(FuseConvChain, OutputsPastTheSpillSizeJoinInBandsOfOneRow) {
  const std::vector<kernels::ref::FusedConvParams> layers = {
      chain_layer(3, 16, 1, 3, 2, 240, 320), chain_layer(16, 16, 16, 3, 1, 240, 320),
      chain_layer(16, 32, 1, 1, 1, 240, 320), chain_layer(32, 32, 32, 3, 2, 120, 160),
      chain_layer(32, 32, 1, 1, 1, 120, 160)};
  std::vector<int64_t> rows(4);
  const std::span<const kernels::ref::FusedConvParams> four(layers.data(), 4);
  EXPECT_GT(ops::conv_chain_band_rows(four, ops::kConvChainMinBandRows, rows), 2'000'000);
  const size_t expected = expected_chain_length(layers);
  if (ops::conv_chain_band_rows(four, 1, rows) <= ops::conv_chain_grow_bytes()) {
    EXPECT_GE(expected, 4u) << "L2 " << l2_cache_bytes() << " bytes";
  }
  const passes::Program p = compile_at(first_layers(480, 640), 480, 640);
  const auto found = chains(p);
  ASSERT_GE(found.size(), 1u);  // dw2 and pw2 chain on their own where dw2 does not join
  const std::vector<std::string> names = {"conv1", "dw1", "pw1", "dw2", "pw2"};
  EXPECT_EQ(found[0], std::vector<std::string>(names.begin(), names.begin() + expected))
      << "L2 " << l2_cache_bytes() << " bytes";
  if (480 * 640 > max_test_pixels()) return;  // the arm64 run under qemu
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 480, 640}, 6)}};
  expect_pass_keeps_results(first_layers(480, 640), feeds, "fuse-conv-chain");
}

TEST(FuseConvChain, NotForSmallIntermediates) {
  // 64 x 80: conv1's output is 16 x 32 x 40 floats (80 KB).
  EXPECT_TRUE(chains(compile_at(first_layers(64, 80), 64, 80)).empty());
}

}  // namespace
}  // namespace tern::test::fuse_conv_chain_test
