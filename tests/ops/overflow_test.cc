// Hostile values from a model file or its inputs (repeats, pads, split sizes, dilations,
// groups, scales, plan-time dims near INT64_MAX): the shape arithmetic of every op must
// reject them with a ShapeError or ModelError naming the node, never overflow. Without the
// checked arithmetic each of these cases is signed overflow (or an out-of-range
// double -> int64 conversion), which UBSan reports and -O2 code turns into garbage shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "ops/window.h"

namespace tern::test {
namespace {

constexpr int64_t k2p40 = int64_t{1} << 40;
constexpr int64_t k2p62 = int64_t{1} << 62;

// Plan-time description of a float32 tensor of `shape` (no data: the dims may be far
// larger than anything allocatable, as a model's declared input shapes may be).
ops::InferInput type_of(const Shape& shape, DType dtype = DType::kFloat32) {
  return ops::InferInput{true, dtype, shape, nullptr};
}

std::vector<ops::TensorType> infer(const std::string& op_type, const AttrMap& attrs,
                                   const std::vector<ops::InferInput>& inputs, int opset = 13) {
  return make_op(op_type, attrs, opset)->infer(inputs);
}

TEST(Overflow, TileRepeats) {
  const Tensor x = f32({1, 2, 3}, {3});
  expect_error<ShapeError>(
      [&] {
        run1("Tile", {x, i64v({k2p62})});
      },
      {"Tile 'test_node'", "output dim 0 (input dim * repeats)", "overflows int64",
       "3 * 4611686018427387904"});
  // Every dim fits, the element count does not.
  expect_error<ShapeError>(
      [&] {
        run1("Tile", {f32({1}, {1, 1}), i64v({k2p40, k2p40})});
      },
      {"Tile 'test_node'", "more elements than int64 can count"});
}

TEST(Overflow, PadPadsNearInt64Limits) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_error<ShapeError>(
      [&] {
        run_op("Pad", {}, {x, i64v({kInt64Max - 1, 0, 5, 0})}, 13);
      },
      {"Pad 'test_node'", "output dim 0 (input dim + pads)", "overflows int64"});
  // A huge begin pad cancelled by a huge negative end pad: each side may crop at most its
  // dim, so this is rejected before -pads[d] or the sum can overflow.
  expect_error<ShapeError>(
      [&] {
        run_op("Pad", {}, {x, i64v({kInt64Max, 0, kInt64Min, 0})}, 13);
      },
      {"Pad 'test_node'", "crop more than the 3 elements of dim 0"});
  expect_error<ShapeError>(
      [&] {
        run_op("Pad", AttrMap().ints("pads", {0, kInt64Max, 0, kInt64Max}), {x}, 2);
      },
      {"Pad 'test_node'", "output dim 1", "overflows int64"});
}

TEST(Overflow, SplitSizesSum) {
  const Tensor x = f32({1, 2, 3, 4}, {4});
  expect_error<ShapeError>(
      [&] {
        run_op("Split", {}, {x, i64v({kInt64Max, kInt64Max, 2})}, 13, 3);
      },
      {"Split 'test_node'", "the sum of split", "overflows int64"});
  expect_error<ShapeError>(
      [&] {
        run_op("Split", AttrMap().ints("split", {kInt64Max, 1}), {x}, 11, 2);
      },
      {"Split 'test_node'", "overflows int64"});
}

TEST(Overflow, WindowAttributesAreCapped) {
  const Tensor x = f32(std::vector<float>(25, 1.f), {1, 1, 5, 5});
  const Tensor w = f32(std::vector<float>(9, 1.f), {1, 1, 3, 3});
  for (const char* name : {"dilations", "strides", "pads"}) {
    const std::vector<int64_t> v(std::string(name) == "pads" ? 4 : 2, k2p62);
    expect_error<ModelError>(
        [&] {
          run_op("Conv", AttrMap().ints(name, v), {x, w});
        },
        {"Conv 'test_node'", std::string("attribute '") + name + "'",
         "must have values <= 2147483647"});
  }
  expect_error<ModelError>(
      [&] {
        run_op("MaxPool", AttrMap().ints("kernel_shape", {k2p62, 1}), {x});
      },
      {"MaxPool 'test_node'", "'kernel_shape' must have values <= 2147483647"});
  expect_error<ModelError>(
      [&] {
        run_op("AveragePool", AttrMap().ints("kernel_shape", {2, 0}), {x});
      },
      {"AveragePool 'test_node'", "'kernel_shape' must have values >= 1"});
  expect_error<ModelError>(
      [&] {
        run_op("Conv", AttrMap().ints("dilations", {1, -1}), {x, w});
      },
      {"Conv 'test_node'", "'dilations' must have values >= 1"});
}

TEST(Overflow, ResolveWindowChecksItsArithmetic) {
  // The helper itself, with values the attribute parser would reject.
  expect_error<ShapeError>(
      [] { ops::resolve_window(10, k2p40, 1, k2p40, 0, 0, ops::AutoPad::kNotSet, false, "W"); },
      {"W: the dilated kernel extent", "overflows int64"});
  expect_error<ShapeError>(
      [] { ops::resolve_window(10, 3, 0, 1, 0, 0, ops::AutoPad::kNotSet, false, "W"); },
      {"W: expected kernel, stride and dilation >= 1"});
  expect_error<ShapeError>(
      [] { ops::resolve_window(kInt64Max - 1, 3, 1, 1, 1, 1, ops::AutoPad::kNotSet, true, "W"); },
      {"W: the padded input extent", "overflows int64"});
  expect_error<ShapeError>(
      [] { ops::resolve_window(kInt64Max, 3, 1, 1, 0, 0, ops::AutoPad::kSameUpper, false, "W"); },
      {"W: the extent the windows cover", "overflows int64"});
  // In range, the same helper still computes.
  EXPECT_EQ(
      ops::resolve_window(kInt64Max - 2, 3, 1, 1, 1, 1, ops::AutoPad::kNotSet, false, "W").out,
      kInt64Max - 2);
}

TEST(Overflow, ConvGroupAndPlanTimeExtents) {
  const Tensor x = f32(std::vector<float>(100, 1.f), {1, 4, 5, 5});
  const Tensor w = f32(std::vector<float>(72, 1.f), {2, 4, 3, 3});
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap().i("group", k2p62), {x, w});
      },
      {"Conv 'test_node'", "input channel count W[1] * group", "overflows int64",
       "4 * 4611686018427387904"});
  // Declared (plan-time) input extents near INT64_MAX plus pads.
  const std::vector<ops::InferInput> in = {type_of({1, 1, kInt64Max - 1, 8}),
                                           type_of({1, 1, 3, 3})};
  expect_error<ShapeError>(
      [&] {
        infer("Conv", AttrMap().ints("pads", {2, 0, 2, 0}), in);
      },
      {"Conv 'test_node'", "the padded input extent", "overflows int64"});
  expect_error<ShapeError>(
      [&] {
        infer("MaxPool", AttrMap().ints("kernel_shape", {3, 3}).ints("pads", {2, 0, 2, 0}),
              {in[0]});
      },
      {"MaxPool 'test_node'", "the padded input extent", "overflows int64"});
  expect_error<ShapeError>(
      [&] {
        infer("Conv", AttrMap().s("auto_pad", "SAME_UPPER"),
              {type_of({1, 1, kInt64Max, 8}), in[1]});
      },
      {"Conv 'test_node'", "overflows int64"});
}

TEST(Overflow, ConvTransposeOutputExtent) {
  const ops::InferInput w = type_of({1, 1, 3, 3});
  // stride * (in - 1) overflows.
  expect_error<ShapeError>(
      [&] {
        infer("ConvTranspose", AttrMap().ints("strides", {4, 1}), {type_of({1, 1, k2p62, 3}), w});
      },
      {"ConvTranspose 'test_node'", "stride * (input extent - 1)", "overflows int64"});
  // ... + output_padding overflows.
  expect_error<ShapeError>(
      [&] {
        infer("ConvTranspose", AttrMap().ints("strides", {2, 1}).ints("output_padding", {k2p62, 0}),
              {type_of({1, 1, k2p62, 3}), w});
      },
      {"ConvTranspose 'test_node'", "the output extent of spatial dim 0", "overflows int64"});
  // SAME: input * stride overflows.
  expect_error<ShapeError>(
      [&] {
        infer("ConvTranspose", AttrMap().s("auto_pad", "SAME_UPPER").ints("strides", {4, 1}),
              {type_of({1, 1, k2p62, 3}), w});
      },
      {"ConvTranspose 'test_node'", "overflows int64"});
  // W[1] * group overflows.
  const Tensor x = f32(std::vector<float>(18, 1.f), {1, 2, 3, 3});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap().i("group", k2p62),
               {x, f32(std::vector<float>(36, 1.f), {2, 2, 3, 3})});
      },
      {"ConvTranspose 'test_node'", "divisible by group"});
  expect_error<ShapeError>(
      [&] {
        infer("ConvTranspose", AttrMap().i("group", k2p62),
              {type_of({1, k2p62, 3, 3}), type_of({k2p62, 4, 3, 3})});
      },
      {"ConvTranspose 'test_node'", "output channel count W[1] * group", "overflows int64"});
}

TEST(Overflow, MacsSaturate) {
  const std::vector<ops::TensorType> conv_in = {{DType::kFloat32, {k2p40, k2p40, 8, 8}},
                                                {DType::kFloat32, {k2p40, 4, 3, 3}}};
  const std::vector<ops::TensorType> conv_out = {{DType::kFloat32, {k2p40, k2p40, 8, 8}}};
  EXPECT_EQ(make_op("Conv", {})->macs(conv_in, conv_out), kInt64Max);
  EXPECT_EQ(make_op("ConvTranspose", {})->macs(conv_in, conv_out), kInt64Max);
  // Shapes that infer() accepts (every element count fits), MACs that do not.
  constexpr int64_t k2p31 = int64_t{1} << 31;
  const std::vector<ops::TensorType> mm = {{DType::kFloat32, {k2p31, k2p31}},
                                           {DType::kFloat32, {k2p31, k2p31}}};
  const std::vector<ops::TensorType> mm_out = {{DType::kFloat32, {k2p31, k2p31}}};
  EXPECT_EQ(make_op("Gemm", {})->macs(mm, mm_out), kInt64Max);
  EXPECT_EQ(make_op("MatMul", {})->macs(mm, mm_out), kInt64Max);
  // Still exact when the product fits.
  const std::vector<ops::TensorType> small = {{DType::kFloat32, {2, 3}}, {DType::kFloat32, {3, 4}}};
  EXPECT_EQ(make_op("MatMul", {})->macs(small, {}), 2 * 3 * 4);
}

TEST(Overflow, MatMulPlanTimeBatch) {
  expect_error<ShapeError>(
      [&] {
        infer("MatMul", {}, {type_of({k2p40, k2p40, 4, 2}), type_of({2, 2})});
      },
      {"MatMul 'test_node'", "overflows int64"});
}

TEST(Overflow, ResizeScalesAndSizes) {
  const Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  auto scales = [](std::vector<float> s) {
    return Tensor::from_vector(s, {static_cast<int64_t>(s.size())});
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {inf, std::nanf("")}) {
    expect_error<ShapeError>(
        [&] {
          run_op("Resize", {}, {x, Tensor(), scales({1, 1, bad, 1})});
        },
        {"Resize 'test_node'", "expected finite scales"});
  }
  expect_error<ShapeError>(
      [&] {
        run_op("Resize", {}, {x, Tensor(), scales({1, 1, 1e30f, 1})});
      },
      {"Resize 'test_node'", "output dim 2", "overflows int64"});
  // 2 * 2^62 = 2^63: just past INT64_MAX.
  expect_error<ShapeError>(
      [&] {
        run_op("Resize", {}, {x, Tensor(), scales({1, 1, 0x1p62f, 1})});
      },
      {"Resize 'test_node'", "overflows int64"});
  // Dims that fit, an element count that does not.
  expect_error<ShapeError>(
      [&] {
        run_op("Resize", {}, {x, Tensor(), Tensor(), i64v({1, 1, k2p40, k2p40})});
      },
      {"Resize 'test_node'", "more elements than int64 can count"});
  expect_error<ShapeError>(
      [&] {
        run_op("Upsample", AttrMap().floats("scales", {1, 1, inf, 1}), {x}, 7);
      },
      {"Upsample 'test_node'", "expected finite scales"});
  expect_error<ShapeError>(
      [&] {
        run_op("Upsample", {}, {x, scales({1, 1, 1e30f, 1})}, 9);
      },
      {"Upsample 'test_node'", "overflows int64"});
}

TEST(Overflow, ShapeOpsNameTheNode) {
  expect_error<ShapeError>(
      [] {
        run1("Expand", {f32({1}, {1}), i64v({k2p40, k2p40})});
      },
      {"Expand 'test_node'", "more elements than int64 can count"});
  expect_error<ShapeError>(
      [] {
        run1("ConstantOfShape", {i64v({k2p40, k2p40})});
      },
      {"ConstantOfShape 'test_node'", "more elements than int64 can count"});
  expect_error<ShapeError>(
      [] {
        run1("Reshape", {f32({1, 2}, {2}), i64v({-1, k2p40, k2p40})});
      },
      {"Reshape 'test_node'", "more elements than int64 can count"});
  expect_error<ShapeError>(
      [] {
        run1("Reshape", {f32({1, 2}, {2}), i64v({k2p40, k2p40})});
      },
      {"Reshape 'test_node'", "more elements than int64 can count"});
  expect_error<ShapeError>(
      [] {
        infer("Concat", AttrMap().i("axis", 0), {type_of({kInt64Max - 1}), type_of({2})});
      },
      {"Concat 'test_node'", "output dim 0", "overflows int64"});
  expect_error<ShapeError>(
      [] {
        infer("Flatten", {}, {type_of({2, k2p40, k2p40})}, 13);
      },
      {"Flatten 'test_node'", "more elements than int64 can count"});
}

}  // namespace
}  // namespace tern::test
