// fold-batch-norm (src/passes/fold_batch_norm.cc): BatchNormalization folded into the
// Conv / Gemm before it or the Conv after it, or turned into tern.ScaleShift; Mul, Div and
// Add by per-channel constants folded the same way or merged into one ScaleShift; the
// cases the pass must leave alone. Each case checks the structure after the pass and that the
// model's results are the same with and without it.
//
// Tolerance: folding changes where float32 rounding happens (W * s is rounded once, then
// accumulated) but not the result's magnitude; with O(1) data, |s| <= ~3 and at most a few
// hundred taps per output the differences stay near 1e-6, so 1e-5 relative to max(1, |y|).
#include <cmath>

#include "ops/registry.h"
#include "pass_test_util.h"

namespace tern::test::fold_batch_norm_test {
namespace {

constexpr const char* kPass = "fold-batch-norm";
constexpr double kTol = 1e-5;

std::vector<float> random_values(int64_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

/// Adds BatchNormalization `name`: in -> out over `channels` channels, with random
/// gamma in [0.5, 2], beta and mean in [-1, 1], var in [0.2, 2] and `epsilon`. With
/// `zero_shift`, beta = mean = 0 (t = beta - mean * s = 0 exactly).
::onnx::NodeProto* add_bn(ModelBuilder& m, const std::string& name, const std::string& in,
                          const std::string& out, int64_t channels, uint32_t seed,
                          float epsilon = 1e-3f, bool zero_shift = false) {
  const std::vector<float> zeros(static_cast<size_t>(channels), 0.0f);
  m.initializer(name + "_gamma", {channels}, random_values(channels, seed, 0.5f, 2.0f));
  m.initializer(name + "_beta", {channels},
                zero_shift ? zeros : random_values(channels, seed + 1, -1.0f, 1.0f));
  m.initializer(name + "_mean", {channels},
                zero_shift ? zeros : random_values(channels, seed + 2, -1.0f, 1.0f));
  m.initializer(name + "_var", {channels}, random_values(channels, seed + 3, 0.2f, 2.0f));
  auto* bn =
      m.node("BatchNormalization",
             {in, name + "_gamma", name + "_beta", name + "_mean", name + "_var"}, {out}, name);
  set_float(bn, "epsilon", epsilon);
  return bn;
}

/// Conv geometry for the test models.
struct ConvSpec {
  int64_t in_channels = 3;
  int64_t out_channels = 5;
  int64_t group = 1;
  int64_t kernel = 3;
  int64_t pad = 1;
  int64_t stride = 1;
  bool bias = true;
  std::string auto_pad;  ///< "" = NOTSET
};

std::string describe(const ConvSpec& s) {
  return fmt::format("C {} M {} group {} kernel {} pad {} stride {} bias {} auto_pad '{}'",
                     s.in_channels, s.out_channels, s.group, s.kernel, s.pad, s.stride, s.bias,
                     s.auto_pad);
}

/// Adds Conv `name`: in -> out with weights "<name>_w" (scaled so outputs stay O(1)) and
/// bias "<name>_b" when spec.bias.
::onnx::NodeProto* add_conv(ModelBuilder& m, const std::string& name, const std::string& in,
                            const std::string& out, const ConvSpec& s, uint32_t seed) {
  const int64_t cg = s.in_channels / s.group;
  const int64_t n = s.out_channels * cg * s.kernel * s.kernel;
  const float range = 1.5f / std::sqrt(static_cast<float>(cg * s.kernel * s.kernel));
  m.initializer(name + "_w", {s.out_channels, cg, s.kernel, s.kernel},
                random_values(n, seed, -range, range));
  std::vector<std::string> inputs = {in, name + "_w"};
  if (s.bias) {
    m.initializer(name + "_b", {s.out_channels}, random_values(s.out_channels, seed + 1, -1, 1));
    inputs.push_back(name + "_b");
  }
  auto* conv = m.node("Conv", inputs, {out}, name);
  set_int(conv, "group", s.group);
  if (s.auto_pad.empty()) {
    set_ints(conv, "pads", {s.pad, s.pad, s.pad, s.pad});
  } else {
    add_attr(conv, "auto_pad", ::onnx::AttributeProto::STRING)->set_s(s.auto_pad);
  }
  set_ints(conv, "strides", {s.stride, s.stride});
  return conv;
}

/// Spatial output extent of `s` on an input of extent `in`.
int64_t conv_out(const ConvSpec& s, int64_t in) {
  if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER")
    return (in + s.stride - 1) / s.stride;
  const int64_t pad = s.auto_pad == "VALID" ? 0 : s.pad;
  return (in + 2 * pad - s.kernel) / s.stride + 1;
}

/// Compiles with fold-batch-norm as the only pass.
passes::Program compile_only_this(const ModelBuilder& m, const Shape& x, int block = 8) {
  return compile(m, {{DType::kFloat32, x}}, all_passes_except({kPass}), block);
}

/// The results with the pass as the only one, with every pass and with every pass but
/// this one all equal the results with no pass at all (within kTol).
void expect_same_results(const ModelBuilder& m, const std::vector<NamedTensor>& feeds) {
  expect_pass_keeps_results(m, feeds, kPass, kTol);
  expect_outputs_near(run_model(m, feeds, all_passes_except({kPass})),
                      run_model(m, feeds, passes::pass_names()), kTol);
}

/// The name of the value node `op_type` (the first one) reads at input `k`.
std::string input_name(const passes::Program& p, const std::string& op_type, size_t k) {
  for (const ir::Node& n : p.graph.nodes)
    if (n.op_type == op_type && k < n.inputs.size() && n.inputs[k] >= 0)
      return p.graph.values[n.inputs[k]].name;
  return "";
}

// ---- BN after Conv -----------------------------------------------------------------------

TEST(FoldBatchNorm, ConvThenBnFoldsIntoTheConv) {
  const std::vector<ConvSpec> specs = {
      {3, 5, 1, 3, 1, 1, true, ""},   // plain 3x3
      {3, 5, 1, 3, 1, 1, false, ""},  // no conv bias
      {6, 9, 3, 3, 0, 2, true, ""},   // groups, stride 2, no padding
      {7, 7, 7, 3, 1, 1, false, ""},  // depthwise, odd channels
      {5, 14, 1, 1, 0, 1, true, ""},  // 1x1
      {4, 8, 2, 3, 0, 1, true, "SAME_UPPER"},
      {16, 16, 16, 3, 1, 2, true, ""},  // depthwise stride 2
  };
  uint32_t seed = 10;
  for (const ConvSpec& s : specs) {
    SCOPED_TRACE(describe(s));
    const int64_t h = 9, w = 7;
    ModelBuilder m;
    m.input("x", {2, s.in_channels, h, w});
    m.output("y", {2, s.out_channels, conv_out(s, h), conv_out(s, w)});
    add_conv(m, "conv", "x", "c", s, seed);
    add_bn(m, "bn", "c", "y", s.out_channels, seed + 10);
    seed += 20;

    const passes::Program p = compile_only_this(m, {2, s.in_channels, h, w});
    EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
    EXPECT_EQ(p.graph.nodes[0].inputs.size(), 3u);  // a bias was added when absent
    EXPECT_NE(input_name(p, "Conv", 1), "conv_w");  // new weights, not the original
    expect_same_results(m, {{"x", random_tensor({2, s.in_channels, h, w}, seed)}});
  }
}

TEST(FoldBatchNorm, ConvThenTwoBnsFoldTwice) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 6});
  m.output("y", {1, 4, 6, 6});
  add_conv(m, "conv", "x", "c", {3, 4, 1, 3, 1, 1, true, ""}, 1);
  add_bn(m, "bn1", "c", "b1", 4, 2);
  add_bn(m, "bn2", "b1", "y", 4, 3, 1e-5f);
  const passes::Program p = compile_only_this(m, {1, 3, 6, 6});
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
  EXPECT_EQ(p.graph.nodes.size(), 1u);
  expect_same_results(m, {{"x", random_tensor({1, 3, 6, 6}, 4)}});
}

TEST(FoldBatchNorm, SharedWeightsAreNotChangedInPlace) {
  // Two Convs read one weight tensor; each is followed by its own BN.
  ModelBuilder m;
  m.input("x", {1, 3, 5, 5});
  m.output("y1", {1, 4, 5, 5});
  m.output("y2", {1, 4, 5, 5});
  const std::vector<float> w = random_values(4 * 3 * 9, 5, -0.3f, 0.3f);
  m.initializer("w", {4, 3, 3, 3}, w);
  set_ints(m.node("Conv", {"x", "w"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  set_ints(m.node("Conv", {"x", "w"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  add_bn(m, "bn1", "c1", "y1", 4, 6);
  add_bn(m, "bn2", "c2", "y2", 4, 7);
  const passes::Program p = compile_only_this(m, {1, 3, 5, 5});
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(p, "Conv"), 2);
  const int original = p.graph.find_value("w");
  ASSERT_GE(original, 0);
  EXPECT_EQ(p.graph.values[original].constant.to_float_vector(), w);
  EXPECT_NE(p.graph.nodes[0].inputs[1], p.graph.nodes[1].inputs[1]);
  expect_same_results(m, {{"x", random_tensor({1, 3, 5, 5}, 8)}});
}

// ---- BN after Gemm -----------------------------------------------------------------------

TEST(FoldBatchNorm, GemmThenBnFoldsIntoTheGemm) {
  const int64_t rows = 4, k = 6, cols = 5;
  // C shapes: absent, [N], [1, N], [M, 1], [M, N], scalar [].
  const std::vector<std::optional<Shape>> c_shapes = {
      std::nullopt, Shape{cols}, Shape{1, cols}, Shape{rows, 1}, Shape{rows, cols}, Shape{}};
  uint32_t seed = 40;
  for (int trans_b : {0, 1}) {
    for (const auto& c_shape : c_shapes) {
      for (float beta : {1.0f, 0.6f, 0.0f}) {
        if (!c_shape && beta != 1.0f) continue;
        SCOPED_TRACE(fmt::format("transB {} C {} beta {}", trans_b,
                                 c_shape ? shape_str(*c_shape) : "absent", beta));
        ModelBuilder m;
        m.input("a", {rows, k});
        m.output("y", {rows, cols});
        const Shape b_shape = trans_b ? Shape{cols, k} : Shape{k, cols};
        m.initializer("b", b_shape, random_values(k * cols, seed, -0.6f, 0.6f));
        std::vector<std::string> inputs = {"a", "b"};
        if (c_shape) {
          m.initializer("c", *c_shape, random_values(shape_numel(*c_shape), seed + 1, -1, 1));
          inputs.push_back("c");
        }
        auto* gemm = m.node("Gemm", inputs, {"g"}, "gemm");
        set_int(gemm, "transB", trans_b);
        set_float(gemm, "alpha", 0.8f);
        if (c_shape) set_float(gemm, "beta", beta);
        add_bn(m, "bn", "g", "y", cols, seed + 2);
        seed += 5;

        const passes::Program p = compile_only_this(m, {rows, k});
        EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
        ASSERT_EQ(count_ops(p, "Gemm"), 1);
        const ir::Node& g = p.graph.nodes[0];
        ASSERT_EQ(g.inputs.size(), 3u);
        EXPECT_EQ(g.attrs.at("beta").f, 1.0f);
        expect_same_results(m, {{"a", random_tensor({rows, k}, seed)}});
      }
    }
  }
}

// ---- BN before Conv ----------------------------------------------------------------------

TEST(FoldBatchNorm, BnThenUnpaddedConvFoldsIntoTheConv) {
  const std::vector<ConvSpec> specs = {
      {3, 5, 1, 3, 0, 1, true, ""},            // 3x3, no pads
      {3, 5, 1, 3, 0, 2, false, ""},           // stride 2, no conv bias
      {6, 4, 2, 3, 0, 1, true, ""},            // groups: input channel c in group c / 3
      {6, 12, 3, 2, 0, 1, true, ""},           // groups with 4 outputs each
      {7, 7, 7, 3, 0, 1, true, ""},            // depthwise, odd channels
      {7, 14, 7, 3, 0, 1, false, ""},          // depthwise multiplier 2
      {5, 3, 1, 1, 0, 1, true, "SAME_UPPER"},  // 1x1 SAME: resolved pads are 0
      {5, 3, 1, 3, 0, 1, true, "VALID"},
  };
  uint32_t seed = 60;
  for (const ConvSpec& s : specs) {
    SCOPED_TRACE(describe(s));
    const int64_t h = 8, w = 9;
    ModelBuilder m;
    m.input("x", {2, s.in_channels, h, w});
    m.output("y", {2, s.out_channels, conv_out(s, h), conv_out(s, w)});
    add_bn(m, "bn", "x", "b", s.in_channels, seed);
    add_conv(m, "conv", "b", "y", s, seed + 10);
    seed += 20;

    const passes::Program p = compile_only_this(m, {2, s.in_channels, h, w});
    EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
    EXPECT_EQ(input_name(p, "Conv", 0), "x");  // the Conv reads the BN's input
    expect_same_results(m, {{"x", random_tensor({2, s.in_channels, h, w}, seed)}});
  }
}

TEST(FoldBatchNorm, BnThenPaddedConvBecomesScaleShift) {
  // Padding (explicit, or SAME with a 3x3 kernel) would read zeros that are not t-shifted.
  for (const ConvSpec& s :
       {ConvSpec{3, 5, 1, 3, 1, 1, true, ""}, ConvSpec{4, 4, 4, 3, 0, 1, true, "SAME_LOWER"},
        ConvSpec{3, 5, 1, 3, 2, 2, false, ""}}) {
    SCOPED_TRACE(describe(s));
    ModelBuilder m;
    m.input("x", {1, s.in_channels, 7, 7});
    m.output("y", {1, s.out_channels, conv_out(s, 7), conv_out(s, 7)});
    add_bn(m, "bn", "x", "b", s.in_channels, 70);
    add_conv(m, "conv", "b", "y", s, 71);
    const passes::Program p = compile_only_this(m, {1, s.in_channels, 7, 7});
    EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    EXPECT_EQ(input_name(p, "Conv", 1), "conv_w");  // the Conv is untouched
    EXPECT_EQ(input_name(p, "Conv", 0), "b");
    expect_same_results(m, {{"x", random_tensor({1, s.in_channels, 7, 7}, 72)}});
  }
}

TEST(FoldBatchNorm, BnWithZeroShiftFoldsIntoAPaddedConv) {
  // beta = mean = 0: bn(x) = x * s, and the padded zeros stay zeros.
  const ConvSpec s = {4, 6, 2, 3, 1, 1, true, ""};
  ModelBuilder m;
  m.input("x", {1, 4, 6, 5});
  m.output("y", {1, 6, 6, 5});
  add_bn(m, "bn", "x", "b", 4, 80, 1e-3f, /*zero_shift=*/true);
  add_conv(m, "conv", "b", "y", s, 81);
  const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
  EXPECT_EQ(count_ops(p, "Conv"), 1);
  expect_same_results(m, {{"x", random_tensor({1, 4, 6, 5}, 82)}});
}

TEST(FoldBatchNorm, BnConvBnChainFoldsBoth) {
  // x -> BN1 -> Conv (no pads) -> BN2 -> Relu: BN1 folds forward, BN2 backward.
  ModelBuilder m;
  m.input("x", {1, 5, 8, 8});
  m.output("y", {1, 6, 6, 6});
  add_bn(m, "bn1", "x", "b1", 5, 90);
  add_conv(m, "conv", "b1", "c", {5, 6, 1, 3, 0, 1, true, ""}, 91);
  add_bn(m, "bn2", "c", "b2", 6, 92);
  m.node("Relu", {"b2"}, {"y"}, "relu");
  const passes::Program p = compile_only_this(m, {1, 5, 8, 8});
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
  EXPECT_EQ(p.graph.nodes.size(), 2u);
  expect_same_results(m, {{"x", random_tensor({1, 5, 8, 8}, 93)}});
}

// ---- Stand-alone BN and must-not-fold cases ------------------------------------------------

TEST(FoldBatchNorm, StandaloneBnBecomesScaleShift) {
  // BN on a graph input feeding a Relu, ranks 2 to 5, every NCHWc block size.
  uint32_t seed = 100;
  for (const Shape& shape :
       {Shape{3, 7}, Shape{2, 5, 9}, Shape{2, 13, 5, 3}, Shape{1, 6, 2, 3, 4}}) {
    for (int block : {4, 8, 16}) {
      SCOPED_TRACE(fmt::format("{} block {}", shape_str(shape), block));
      ModelBuilder m;
      m.input("x", std::vector<DimSpec>(shape.begin(), shape.end()));
      m.output("y", std::vector<DimSpec>(shape.begin(), shape.end()));
      add_bn(m, "bn", "x", "b", shape[1], seed++);
      m.node("Relu", {"b"}, {"y"}, "relu");
      const passes::Program p =
          compile(m, {{DType::kFloat32, shape}}, all_passes_except({kPass}), block);
      EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
      ASSERT_EQ(count_ops(p, "ScaleShift"), 1);
      for (const ir::Node& n : p.graph.nodes) {
        if (n.op_type != "ScaleShift") continue;
        EXPECT_EQ(n.domain, ops::kInternalDomain);
        EXPECT_EQ(n.name, "bn");
      }
      // With every pass on (the layout pass may run it in NCHWc with this block).
      const passes::Program all = compile(m, {{DType::kFloat32, shape}}, {}, block);
      EXPECT_EQ(count_ops(all, "BatchNormalization"), 0);
      expect_same_results(m, {{"x", random_tensor(shape, seed++, -2.0f, 2.0f)}});
    }
  }
}

TEST(FoldBatchNorm, BnAsGraphOutputBecomesScaleShift) {
  ModelBuilder m;
  m.input("x", {2, 3, 4, 4});
  m.output("y", {2, 3, 4, 4});
  add_bn(m, "bn", "x", "y", 3, 110, 0.5f);  // large epsilon
  const passes::Program p = compile_only_this(m, {2, 3, 4, 4});
  EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
  expect_same_results(m, {{"x", random_tensor({2, 3, 4, 4}, 111)}});
}

TEST(FoldBatchNorm, ConvOutputWithAnotherReaderIsNotFolded) {
  // c feeds the BN and a Relu: W must keep producing the un-normalized c.
  ModelBuilder m;
  m.input("x", {1, 3, 6, 6});
  m.output("y", {1, 4, 6, 6});
  m.output("r", {1, 4, 6, 6});
  add_conv(m, "conv", "x", "c", {3, 4, 1, 3, 1, 1, true, ""}, 120);
  add_bn(m, "bn", "c", "y", 4, 121);
  m.node("Relu", {"c"}, {"r"}, "relu");
  const passes::Program p = compile_only_this(m, {1, 3, 6, 6});
  EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
  EXPECT_EQ(input_name(p, "Conv", 1), "conv_w");
  EXPECT_EQ(input_name(p, "Conv", 2), "conv_b");
  expect_same_results(m, {{"x", random_tensor({1, 3, 6, 6}, 122)}});
}

TEST(FoldBatchNorm, ConvOutputThatIsAGraphOutputIsNotFolded) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 6});
  m.output("c", {1, 4, 6, 6});
  m.output("y", {1, 4, 6, 6});
  add_conv(m, "conv", "x", "c", {3, 4, 1, 3, 1, 1, false, ""}, 130);
  add_bn(m, "bn", "c", "y", 4, 131);
  const passes::Program p = compile_only_this(m, {1, 3, 6, 6});
  EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
  EXPECT_EQ(input_name(p, "Conv", 1), "conv_w");
  expect_same_results(m, {{"x", random_tensor({1, 3, 6, 6}, 132)}});
}

TEST(FoldBatchNorm, NonConstantWeightsAreNotFolded) {
  // Conv weights, Gemm B and Gemm C fed at run time.
  {
    ModelBuilder m;
    m.input("x", {1, 3, 5, 5});
    m.input("w", {4, 3, 1, 1});
    m.output("y", {1, 4, 5, 5});
    m.node("Conv", {"x", "w"}, {"c"}, "conv");
    add_bn(m, "bn", "c", "y", 4, 140);
    const Shape xs = {1, 3, 5, 5}, ws = {4, 3, 1, 1};
    const passes::Program p =
        compile(m, {{DType::kFloat32, xs}, {DType::kFloat32, ws}}, all_passes_except({kPass}));
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    EXPECT_EQ(input_name(p, "Conv", 1), "w");
    EXPECT_EQ(p.graph.nodes[0].inputs.size(), 2u);
    expect_same_results(m, {{"x", random_tensor(xs, 141)}, {"w", random_tensor(ws, 142)}});
  }
  for (bool c_input : {false, true}) {
    SCOPED_TRACE(c_input ? "C fed" : "B fed");
    ModelBuilder m;
    m.input("a", {3, 4});
    m.output("y", {3, 2});
    if (c_input) {
      m.initializer("b", {4, 2}, random_values(8, 150, -1, 1));
      m.input("c", {2});
    } else {
      m.input("b", {4, 2});
      m.initializer("c", {2}, {0.5f, -0.25f});
    }
    m.node("Gemm", {"a", "b", "c"}, {"g"}, "gemm");
    add_bn(m, "bn", "g", "y", 2, 151);
    const Shape fed = c_input ? Shape{2} : Shape{4, 2};
    const passes::Program p =
        compile(m, {{DType::kFloat32, {3, 4}}, {DType::kFloat32, fed}}, all_passes_except({kPass}));
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    EXPECT_EQ(input_name(p, "Gemm", 1), "b");
    EXPECT_EQ(input_name(p, "Gemm", 2), "c");
    expect_same_results(
        m, {{"a", random_tensor({3, 4}, 152)}, {c_input ? "c" : "b", random_tensor(fed, 153)}});
  }
}

TEST(FoldBatchNorm, BnOutputWithTwoReadersIsNotFoldedForward) {
  // BN on a graph input read by two Convs without padding: neither may absorb it.
  ModelBuilder m;
  m.input("x", {1, 4, 5, 5});
  m.output("y1", {1, 3, 5, 5});
  m.output("y2", {1, 2, 5, 5});
  add_bn(m, "bn", "x", "b", 4, 160);
  add_conv(m, "conv1", "b", "y1", {4, 3, 1, 1, 0, 1, true, ""}, 161);
  add_conv(m, "conv2", "b", "y2", {4, 2, 1, 1, 0, 1, true, ""}, 162);
  const passes::Program p = compile_only_this(m, {1, 4, 5, 5});
  EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
  EXPECT_EQ(count_ops(p, "Conv"), 2);
  expect_same_results(m, {{"x", random_tensor({1, 4, 5, 5}, 163)}});
}

TEST(FoldBatchNorm, TrainingModeBnIsLeftAlone) {
  ModelBuilder m(15);
  m.input("x", {2, 3, 4, 4});
  m.output("y", {2, 4, 4, 4});
  add_conv(m, "conv", "x", "c", {3, 4, 1, 3, 1, 1, true, ""}, 170);
  set_int(add_bn(m, "bn", "c", "y", 4, 171), "training_mode", 1);
  const passes::Program p = compile_only_this(m, {2, 3, 4, 4});
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 1);
  EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
  EXPECT_EQ(input_name(p, "Conv", 1), "conv_w");
  expect_same_results(m, {{"x", random_tensor({2, 3, 4, 4}, 172)}});
}

TEST(FoldBatchNorm, BnWithRunTimeStatisticsIsLeftAlone) {
  ModelBuilder m;
  m.input("x", {1, 3, 4, 4});
  m.input("mean", {3});
  m.output("y", {1, 3, 4, 4});
  m.initializer("gamma", {3}, {1.0f, 0.5f, 2.0f});
  m.initializer("beta", {3}, {0.0f, 0.1f, -0.2f});
  m.initializer("var", {3}, {1.0f, 0.5f, 0.25f});
  m.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"}, "bn");
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 3, 4, 4}}, {DType::kFloat32, {3}}},
                                    all_passes_except({kPass}));
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 1);
  EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
  expect_same_results(m,
                      {{"x", random_tensor({1, 3, 4, 4}, 180)}, {"mean", random_tensor({3}, 181)}});
}

TEST(FoldBatchNorm, NonFiniteScaleIsLeftAlone) {
  // var = 0 and epsilon = 0: s = gamma / 0 is infinite; the BN kernel keeps its inf / NaN.
  ModelBuilder m;
  m.input("x", {1, 2, 3, 3});
  m.output("y", {1, 2, 3, 3});
  add_conv(m, "conv", "x", "c", {2, 2, 1, 1, 0, 1, true, ""}, 190);
  m.initializer("gamma", {2}, {1.0f, 1.0f});
  m.initializer("beta", {2}, {0.0f, 0.0f});
  m.initializer("mean", {2}, {0.0f, 0.0f});
  m.initializer("var", {2}, {1.0f, 0.0f});
  set_float(m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn"),
            "epsilon", 0.0f);
  const passes::Program p = compile_only_this(m, {1, 2, 3, 3});
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 1);
  EXPECT_EQ(input_name(p, "Conv", 1), "conv_w");
}

TEST(FoldBatchNorm, ScalesBeyondFloatRangeAreLeftAlone) {
  // x / 1e-39 scales by 1e39, past float32's 3.4e38: the Div stays, the Conv's weights too.
  {
    ModelBuilder m;
    m.input("x", {1, 2, 3, 3});
    m.output("y");
    add_conv(m, "conv", "x", "c", {2, 2, 1, 1, 0, 1, true, ""}, 191);
    m.initializer("k", {}, {1e-39f});
    m.node("Div", {"c", "k"}, {"y"}, "div");
    const passes::Program p = compile_only_this(m, {1, 2, 3, 3});
    EXPECT_EQ(count_ops(p, "Div"), 1);
    EXPECT_EQ(input_name(p, "Conv", 1), "conv_w");
  }
  // Two scales of 1e30 after a Relu (no Conv to fold into) would merge into 1e60.
  ModelBuilder m;
  m.input("x", {1, 2, 3, 3});
  m.output("y");
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.initializer("k", {}, {1e30f});
  m.node("Mul", {"r", "k"}, {"s"}, "mul1");
  m.node("Mul", {"s", "k"}, {"y"}, "mul2");
  const passes::Program p = compile_only_this(m, {1, 2, 3, 3});
  EXPECT_EQ(count_ops(p, "Mul"), 2);
  EXPECT_EQ(count_ops(p, "ScaleShift"), 0);
}

// ---- Mul, Div and Add by per-channel constants -----------------------------------------

/// x [1, 4, 6, 5] -> Conv 3x3 "conv" (pad 1) -> c -> Relu -> r -> [op1 by k1] -> [op2 by k2]
/// -> a -> Conv `tail` "tail" -> y. k1 is a scalar, k2 one value per channel [1, 4, 1, 1].
ModelBuilder affine_model(const std::string& op1, const std::string& op2, const ConvSpec& tail,
                          bool before_relu = false) {
  ModelBuilder m;
  m.input("x", {1, 4, 6, 5});
  m.output("y");
  add_conv(m, "conv", "x", "c", {4, 4, 1, 3, 1, 1, true, ""}, 90);
  m.initializer("k1", {}, {0.75f});
  m.initializer("k2", {1, 4, 1, 1}, random_values(4, 91, 0.5f, 1.5f));
  std::string v = before_relu ? "c" : "r";
  if (!before_relu) m.node("Relu", {"c"}, {"r"}, "relu");
  m.node(op1, {v, "k1"}, {"a1"}, "op1");
  m.node(op2, {"k2", "a1"}, {"a"}, "op2");  // the constant first: either order folds
  if (before_relu) {
    m.node("Relu", {"a"}, {"r"}, "relu");
    add_conv(m, "tail", "r", "y", tail, 92);
  } else {
    add_conv(m, "tail", "a", "y", tail, 92);
  }
  return m;
}

TEST(FoldBatchNorm, MulAndAddAfterAConvFoldIntoIt) {
  const ModelBuilder m = affine_model("Mul", "Add", {4, 3, 1, 1, 0, 1, true, ""}, true);
  const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
  EXPECT_EQ(count_ops(p, "Mul") + count_ops(p, "Add") + count_ops(p, "ScaleShift"), 0);
  EXPECT_EQ(count_ops(p, "Conv"), 2);
  expect_same_results(m, {{"x", random_tensor({1, 4, 6, 5}, 93)}});
}

TEST(FoldBatchNorm, DivAndAddBeforeAnUnpaddedConvFoldIntoIt) {
  // Relu -> Div -> Add -> 1x1 Conv: the two merge, then fold into the Conv's weights.
  const ModelBuilder m = affine_model("Div", "Add", {4, 3, 1, 1, 0, 1, true, ""});
  const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
  EXPECT_EQ(count_ops(p, "Div") + count_ops(p, "Add") + count_ops(p, "ScaleShift"), 0);
  EXPECT_EQ(input_name(p, "Conv", 0), "x");  // the first Conv
  expect_same_results(m, {{"x", random_tensor({1, 4, 6, 5}, 94)}});
}

TEST(FoldBatchNorm, MulAndAddBeforeAPaddedConvBecomeOneScaleShift) {
  // A padded 3x3 Conv cannot take the shift: the pair becomes one ScaleShift (the Mul's
  // scale applies to the Add's shift when the Add comes first).
  for (const auto& [op1, op2] : {std::pair<std::string, std::string>{"Mul", "Add"},
                                 {"Add", "Mul"}, {"Add", "Add"}}) {
    SCOPED_TRACE(op1 + " then " + op2);
    const ModelBuilder m = affine_model(op1, op2, {4, 3, 1, 3, 1, 1, true, ""});
    const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
    EXPECT_EQ(count_ops(p, "Mul") + count_ops(p, "Add") + count_ops(p, "Div"), 0);
    EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
    EXPECT_EQ(input_name(p, "ScaleShift", 0), "r");
    expect_same_results(m, {{"x", random_tensor({1, 4, 6, 5}, 95)}});
  }
}

TEST(FoldBatchNorm, ScalesWithoutShiftFoldIntoAPaddedConv) {
  // Div then Mul: a zero shift, so the merged map folds into the padded Conv's weights.
  const ModelBuilder m = affine_model("Div", "Mul", {4, 3, 1, 3, 1, 1, true, ""});
  const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
  EXPECT_EQ(count_ops(p, "Mul") + count_ops(p, "Div") + count_ops(p, "ScaleShift"), 0);
  expect_same_results(m, {{"x", random_tensor({1, 4, 6, 5}, 95)}});
}

TEST(FoldBatchNorm, MulByAConstantThatIsNotPerChannelIsLeftAlone) {
  // A [1, 1, 6, 5] constant varies over the image; a [2, 4, 6, 5] one would broadcast x
  // to two images; a Div of the constant by x is no affine map of x.
  for (const Shape& k : {Shape{1, 1, 6, 5}, Shape{2, 4, 6, 5}}) {
    SCOPED_TRACE(shape_str(k));
    ModelBuilder m;
    m.input("x", {1, 4, 6, 5});
    m.output("y");
    add_conv(m, "conv", "x", "c", {4, 4, 1, 3, 1, 1, true, ""}, 96);
    m.initializer("k", k, random_values(shape_numel(k), 97, 0.5f, 1.5f));
    m.node("Mul", {"c", "k"}, {"y"}, "mul");
    const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
    EXPECT_EQ(count_ops(p, "Mul"), 1);
    expect_same_results(m, {{"x", random_tensor({1, 4, 6, 5}, 98)}});
  }
  ModelBuilder m;
  m.input("x", {1, 4, 6, 5});
  m.output("y");
  add_conv(m, "conv", "x", "c", {4, 4, 1, 3, 1, 1, true, ""}, 96);
  m.initializer("k", {}, {2.0f});
  m.node("Div", {"k", "c"}, {"y"}, "div");
  const passes::Program p = compile_only_this(m, {1, 4, 6, 5});
  EXPECT_EQ(count_ops(p, "Div"), 1);
  // y = 2 / c amplifies c's rounding by 1 / |c|, unbounded near c = 0; compare c = 2 / y,
  // whose error is the conv's own (within kTol * max(1, |c|)).
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 4, 6, 5}, 99)}};
  auto divisor = [](std::vector<NamedTensor> outputs) {
    std::vector<float> c = outputs.at(0).tensor.to_float_vector();
    for (float& v : c) v = 2.0f / v;
    outputs[0].tensor = Tensor::from_vector(c, outputs[0].tensor.shape());
    return outputs;
  };
  const auto all_off = divisor(run_model(m, feeds, passes::pass_names()));
  expect_outputs_near(divisor(run_model(m, feeds)), all_off, kTol);
  expect_outputs_near(divisor(run_model(m, feeds, {kPass})), all_off, kTol);
  expect_outputs_near(divisor(run_model(m, feeds, all_passes_except({kPass}))), all_off, kTol);
}

TEST(FoldBatchNorm, CountsOneRewritePerBn) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 6});
  m.output("y", {1, 4, 6, 6});
  add_conv(m, "conv", "x", "c", {3, 4, 1, 3, 1, 1, true, ""}, 200);
  add_bn(m, "bn1", "c", "b1", 4, 201);
  add_bn(m, "bn2", "b1", "b2", 4, 202);
  m.node("Relu", {"b2"}, {"r"}, "relu");
  add_bn(m, "bn3", "r", "y", 4, 203);  // after the Relu: stand-alone
  const std::string bytes = m.bytes();
  ir::Graph graph = onnx::load_model(bytes.data(), bytes.size(), onnx::LoadLimits{});
  passes::Program p = passes::make_program(graph, {{DType::kFloat32, {1, 3, 6, 6}}},
                                           ops::ExecContext{1}, int64_t{1} << 31, 8);
  const passes::Pass* pass = nullptr;
  for (const passes::Pass* candidate : passes::all_passes())
    if (std::string(candidate->name()) == kPass) pass = candidate;
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->run(p), 3);
  EXPECT_EQ(count_ops(p, "ScaleShift"), 1);
  EXPECT_EQ(count_ops(p, "BatchNormalization"), 0);
  EXPECT_EQ(pass->run(p), 0);  // nothing left to do
}

}  // namespace
}  // namespace tern::test::fold_batch_norm_test
