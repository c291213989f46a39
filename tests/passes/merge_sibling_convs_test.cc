// merge-sibling-convs: 1x1 Convs of one input with the same geometry, each followed by the
// same Transpose (RetinaFace's heads), become one Conv, one Transpose (which
// fuse-transpose then puts into the conv) and a Split; left alone when the kernel is not
// 1x1 or the geometry, the perm or the readers differ. Results agree with the unmerged
// convs within rounding, at opset 11 (Split's sizes as an attribute) and 13 (as an input).
#include <algorithm>

#include "toy_model_util.h"

namespace tern::test::merge_sibling_convs_test {
namespace {

const Shape kInput = {1, 12, 9, 7};  // 12 channels: not a multiple of any SIMD block

struct Head {
  int64_t out = 4;
  bool bias = true;
  int64_t kernel = 1;
  int64_t stride = 1;
  std::vector<int64_t> perm = {0, 2, 3, 1};
  bool second_reader = false;  // the conv's output is also a graph output
  bool default_attrs = false;  // no pads and strides attributes (the defaults: 0 and 1)
};

ModelBuilder model(const std::vector<Head>& heads, int opset = 13) {
  ModelBuilder m(opset);
  m.input("x", {1, 12, 9, 7});
  for (size_t i = 0; i < heads.size(); ++i) {
    const Head& h = heads[i];
    const std::string id = std::to_string(i);
    m.output("y" + id);
    if (h.second_reader) m.output("c" + id);
    m.initializer("w" + id, {h.out, kInput[1], h.kernel, h.kernel},
                  weights(h.out * kInput[1] * h.kernel * h.kernel, 10 + static_cast<uint32_t>(i)));
    std::vector<std::string> ins = {"x", "w" + id};
    if (h.bias) {
      m.initializer("b" + id, {h.out}, weights(h.out, 20 + static_cast<uint32_t>(i)));
      ins.push_back("b" + id);
    }
    auto* conv = m.node("Conv", ins, {"c" + id}, "conv" + id);
    if (!h.default_attrs) {
      const int64_t pad = h.kernel / 2;
      set_ints(conv, "pads", {pad, pad, pad, pad});
      set_ints(conv, "strides", {h.stride, h.stride});
    }
    set_ints(m.node("Transpose", {"c" + id}, {"t" + id}, "transpose" + id), "perm", h.perm);
    int64_initializer(m, "shape" + id, {3}, {1, -1, h.out});
    m.node("Reshape", {"t" + id, "shape" + id}, {"y" + id}, "reshape" + id);
  }
  return m;
}

passes::Program compile_heads(const std::vector<Head>& heads, int opset = 13) {
  return compile(model(heads, opset), {ops::TensorType{DType::kFloat32, kInput}});
}

void expect_same_results(const std::vector<Head>& heads, int opset = 13) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kInput, 3, -2.0f, 2.0f)}};
  expect_pass_keeps_results(model(heads, opset), feeds, "merge-sibling-convs", 1e-5);
}

int convs(const passes::Program& p) { return count_ops(p, "Conv") + count_ops(p, "FusedConv"); }

TEST(MergeSiblingConvs, HeadsBecomeOneConvAndASplit) {
  const std::vector<Head> heads = {{4, true}, {8, false}, {20, true}};
  for (int opset : {11, 13}) {
    SCOPED_TRACE(testing::Message() << "opset " << opset);
    const passes::Program p = compile_heads(heads, opset);
    EXPECT_EQ(convs(p), 1);
    EXPECT_EQ(count_ops(p, "Split"), 1);
    EXPECT_EQ(count_ops(p, "Transpose"), 0) << "fuse-transpose makes the merged conv write NHWC";
    EXPECT_TRUE(std::any_of(p.graph.nodes.begin(), p.graph.nodes.end(),
                            [](const ir::Node& n) { return n.name == "conv0+conv1+conv2"; }))
        << "the merged conv is named after its members";
    expect_same_results(heads, opset);
  }
}

TEST(MergeSiblingConvs, AnyCommonGeometryAndPermMerges) {
  Head a{5, true, 1, 2, {0, 3, 1, 2}};
  Head b{7, false, 1, 2, {0, 3, 1, 2}};
  const passes::Program p = compile_heads({a, b});
  EXPECT_EQ(convs(p), 1);
  EXPECT_EQ(count_ops(p, "Split"), 1);
  expect_same_results({a, b});
}

TEST(MergeSiblingConvs, MissingAttributesEqualTheirExplicitDefaults) {
  std::vector<Head> heads(2);
  heads[0].default_attrs = true;  // vs pads 0 0 0 0 and strides 1 1 written out
  const passes::Program p = compile_heads(heads);
  EXPECT_EQ(convs(p), 1);
  expect_same_results(heads);
}

TEST(MergeSiblingConvs, KernelsLargerThan1x1StayApart) {
  // Merged 3x3 heads could reach winograd's channel threshold, whose output cannot take
  // the Transpose: each stays a direct conv writing NHWC itself.
  std::vector<Head> heads(2);
  heads[0].kernel = heads[1].kernel = 3;
  heads[1].out = 12;
  const passes::Program p = compile_heads(heads);
  EXPECT_EQ(convs(p), 2);
  EXPECT_EQ(count_ops(p, "Split"), 0);
  EXPECT_EQ(count_ops(p, "Transpose"), 0);
  expect_same_results(heads);
}

TEST(MergeSiblingConvs, OnlyThePassMerges) {
  const std::vector<Head> heads = {{4, true}, {8, true}};
  const passes::Program p = compile(model(heads), {ops::TensorType{DType::kFloat32, kInput}},
                                    {"merge-sibling-convs"});
  EXPECT_EQ(convs(p), 2);
  EXPECT_EQ(count_ops(p, "Split"), 0);
}

TEST(MergeSiblingConvs, DifferentGeometryPermOrReadersStayApart) {
  std::vector<std::vector<Head>> cases(4, std::vector<Head>(2));
  cases[0][1].stride = 2;
  cases[1][1].kernel = 3;
  cases[2][1].perm = {0, 3, 2, 1};
  cases[3][1].second_reader = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "case " << i);
    const passes::Program p = compile_heads(cases[i]);
    EXPECT_EQ(convs(p), 2);
    EXPECT_EQ(count_ops(p, "Split"), 0);
    expect_same_results(cases[i]);
  }
}

TEST(MergeSiblingConvs, TheMatchingSubsetMerges) {
  // One head has another stride, perm or kernel, first or in the middle: the other two
  // merge, it stays.
  for (int odd : {0, 1}) {
    for (int what = 0; what < 3; ++what) {
      SCOPED_TRACE(testing::Message() << "odd head " << odd << ", difference " << what);
      std::vector<Head> heads(3);
      heads[2].out = 6;
      if (what == 0) heads[odd].stride = 2;
      if (what == 1) heads[odd].perm = {0, 3, 2, 1};
      if (what == 2) heads[odd].kernel = 3;
      const passes::Program p = compile_heads(heads);
      EXPECT_EQ(convs(p), 2);
      EXPECT_EQ(count_ops(p, "Split"), 1);
      expect_same_results(heads);
    }
  }
}

}  // namespace
}  // namespace tern::test::merge_sibling_convs_test
