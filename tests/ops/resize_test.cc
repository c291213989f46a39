// Resize and Upsample ops (src/ops/resize.cc): the ONNX backend-test examples for every
// supported coordinate and nearest mode, values from the ONNX numpy reference
// (interpolate_nd, computed offline), the opset-10 and Upsample rules, and errors.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

const Tensor k2x2 = Tensor::from_vector({1, 2, 3, 4}, {1, 1, 2, 2});
const Tensor k2x4 = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
const Tensor k4x4 = test::iota_tensor({1, 1, 4, 4}, 1);
const Tensor k2x3 = Tensor::from_vector({1, 2, 4, 3, 7, 5}, {1, 1, 2, 3});

Tensor scales(const std::vector<float>& s) {
  return Tensor::from_vector(s, {static_cast<int64_t>(s.size())});
}
Tensor sizes(const std::vector<int64_t>& s) {
  return Tensor::from_vector_i64(s, {static_cast<int64_t>(s.size())});
}

// Resize-11/13 with scales (roi omitted).
Tensor resize_scales(const AttrMap& attrs, const Tensor& x, const std::vector<float>& s,
                     int opset = 13) {
  return run_op("Resize", attrs, {x, Tensor(), scales(s)}, opset)[0];
}
// Resize-11/13 with sizes (roi and scales omitted).
Tensor resize_sizes(const AttrMap& attrs, const Tensor& x, const std::vector<int64_t>& s,
                    int opset = 13) {
  return run_op("Resize", attrs, {x, Tensor(), Tensor(), sizes(s)}, opset)[0];
}

TEST(ResizeOp, OnnxExamplesNearest) {
  Tensor y = resize_scales(AttrMap(), k2x2, {1, 1, 2, 3});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 6}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                                     3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  y = resize_scales(AttrMap(), k2x4, {1, 1, 0.6f, 0.6f});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 3}));
  y = resize_sizes(AttrMap(), k2x2, {1, 1, 7, 8});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 7, 8}));
  const std::vector<float> top = {1, 1, 1, 1, 2, 2, 2, 2}, bottom = {3, 3, 3, 3, 4, 4, 4, 4};
  std::vector<float> expected;
  for (int r = 0; r < 7; ++r)
    expected.insert(expected.end(), (r < 4 ? top : bottom).begin(), (r < 4 ? top : bottom).end());
  EXPECT_EQ(y.to_float_vector(), expected);
  y = resize_sizes(AttrMap(), k2x4, {1, 1, 1, 3});  // interpolate_nd: [1 2 4]
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2, 4}));
  // 2x3 -> 3x7 (scale 7/3 along W): round_prefer_floor and round_prefer_ceil differ on
  // the ties at 0.5 (interpolate_nd values).
  y = resize_sizes(AttrMap(), k2x3, {1, 1, 3, 7});
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{1, 1, 2, 2, 2, 4, 4, 1, 1, 2, 2, 2, 4, 4, 3, 3, 7, 7, 7, 5, 5}));
  y = resize_sizes(AttrMap().s("nearest_mode", "round_prefer_ceil"), k2x3, {1, 1, 3, 7});
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{1, 1, 2, 2, 2, 4, 4, 3, 3, 7, 7, 7, 5, 5, 3, 3, 7, 7, 7, 5, 5}));
}

TEST(ResizeOp, OnnxExamplesNearestModes) {
  const std::vector<float> ceil_rows = {1, 2, 2, 3, 3, 4, 4, 4};
  auto expand = [](const std::vector<int>& rows, const std::vector<int>& cols) {
    std::vector<float> v;
    for (int r : rows)
      for (int c : cols) v.push_back(static_cast<float>(r * 4 + c + 1));
    return v;
  };
  Tensor y = resize_sizes(
      AttrMap().s("coordinate_transformation_mode", "align_corners").s("nearest_mode", "floor"),
      k4x4, {1, 1, 8, 8});
  EXPECT_EQ(y.to_float_vector(), expand({0, 0, 0, 1, 1, 2, 2, 3}, {0, 0, 0, 1, 1, 2, 2, 3}));
  y = resize_sizes(AttrMap()
                       .s("coordinate_transformation_mode", "asymmetric")
                       .s("nearest_mode", "round_prefer_ceil"),
                   k4x4, {1, 1, 8, 8});
  EXPECT_EQ(y.to_float_vector(), expand({0, 1, 1, 2, 2, 3, 3, 3}, {0, 1, 1, 2, 2, 3, 3, 3}));
  y = resize_sizes(AttrMap().s("nearest_mode", "ceil"), k4x4, {1, 1, 8, 8});  // half_pixel
  EXPECT_EQ(y.to_float_vector(), expand({0, 1, 1, 2, 2, 3, 3, 3}, {0, 1, 1, 2, 2, 3, 3, 3}));
  // tf_half_pixel_for_nn: x = (o + 0.5) / 2 -> 0.25, 0.75, 1.25, ... rounded.
  y = resize_sizes(AttrMap().s("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
                   Tensor::from_vector({1, 2, 3, 4}, {4}), {8});
  EXPECT_EQ(y.to_float_vector(), ceil_rows);
}

TEST(ResizeOp, OnnxExamplesLinear) {
  Tensor y = resize_scales(AttrMap().s("mode", "linear"), k2x2, {1, 1, 2, 2});
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f,
                                3.5f, 3, 3.25f, 3.75f, 4}));
  y = resize_scales(
      AttrMap().s("mode", "linear").s("coordinate_transformation_mode", "align_corners"), k2x2,
      {1, 1, 2, 2});
  test::expect_near_all(y.to_float_vector(),
                        {1, 4 / 3.f, 5 / 3.f, 2, 5 / 3.f, 2, 7 / 3.f, 8 / 3.f, 7 / 3.f, 8 / 3.f, 3,
                         10 / 3.f, 3, 10 / 3.f, 11 / 3.f, 4},
                        1e-6f);
  y = resize_scales(AttrMap().s("mode", "linear"), k2x4, {1, 1, 0.6f, 0.6f});
  test::expect_near_all(y.to_float_vector(), {2.6666665f, 4.3333331f}, 1e-6f);
  y = resize_sizes(
      AttrMap().s("mode", "linear").s("coordinate_transformation_mode", "pytorch_half_pixel"), k4x4,
      {1, 1, 3, 1});
  test::expect_near_all(y.to_float_vector(), {1.6666666f, 7, 12.333333f}, 1e-5f);
}

TEST(ResizeOp, LinearEveryCoordinateModeAgainstOnnxReference) {
  // 2x3 -> 4x5 by sizes; expected values from the ONNX numpy reference (interpolate_nd).
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"pytorch_half_pixel", {1,    1.4f, 2,     3.2f,  4,     1.5f, 2.2f, 3.25f, 3.85f, 4.25f,
                              2.5f, 3.8f, 5.75f, 5.15f, 4.75f, 3,    4.6f, 7,     5.8f,  5}},
      {"half_pixel", {1,    1.4f, 2,     3.2f,  4,     1.5f, 2.2f, 3.25f, 3.85f, 4.25f,
                      2.5f, 3.8f, 5.75f, 5.15f, 4.75f, 3,    4.6f, 7,     5.8f,  5}},
      {"align_corners",
       {1,       1.5f,     2,        3, 4,        5 / 3.f, 8 / 3.f, 11 / 3.f, 4, 13 / 3.f,
        7 / 3.f, 23 / 6.f, 16 / 3.f, 5, 14 / 3.f, 3,       5,       7,        6, 5}},
      {"asymmetric", {1, 1.6f, 2.4f, 3.6f, 4, 2, 3.5f, 4.5f, 4.5f, 4.5f,
                      3, 5.4f, 6.6f, 5.4f, 5, 3, 5.4f, 6.6f, 5.4f, 5}},
  };
  for (const auto& [mode, expected] : cases) {
    const Tensor y =
        resize_sizes(AttrMap().s("mode", "linear").s("coordinate_transformation_mode", mode), k2x3,
                     {1, 1, 4, 5});
    test::expect_near_all(y.to_float_vector(), expected, 2e-6f, 1e-6f, mode);
  }
}

TEST(ResizeOp, Opset10AndUpsample) {
  // Resize-10: (X, scales), asymmetric, nearest floor when upsampling / ceil when
  // downsampling (ONNX test resize_downsample_nearest, opset 10: [1 3]).
  Tensor y = run_op("Resize", AttrMap(), {k2x4, scales({1, 1, 0.6f, 0.6f})}, 10)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 3}));
  y = run_op("Resize", AttrMap(), {k2x2, scales({1, 1, 2, 3})}, 10)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                                     3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  // Upsample-7: scales attribute; Upsample-9: scales input.
  const Tensor up7 = run_op("Upsample", AttrMap().floats("scales", {1, 1, 2, 3}), {k2x2}, 7)[0];
  const Tensor up9 = run_op("Upsample", AttrMap(), {k2x2, scales({1, 1, 2, 3})}, 9)[0];
  EXPECT_EQ(up7.to_float_vector(), y.to_float_vector());
  EXPECT_EQ(up9.to_float_vector(), y.to_float_vector());
  // linear Upsample, asymmetric: x = o / 2 -> 0, 0.5, 1, 1.5 (clamped).
  y = run_op("Upsample", AttrMap().s("mode", "linear"),
             {Tensor::from_vector({1, 2}, {1, 2}), scales({1, 2})}, 9)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 1.5f, 2, 2}));
}

TEST(ResizeOp, NearestResizesChannelsAndThreadsAgree) {
  const Tensor x = Tensor::from_vector(test::random_floats(2 * 3 * 5 * 7, 4), {2, 3, 5, 7});
  const Tensor a = run_op("Resize", AttrMap(), {x, Tensor(), scales({1, 2, 2, 0.5f})}, 13, 1, 1)[0];
  const Tensor b = run_op("Resize", AttrMap(), {x, Tensor(), scales({1, 2, 2, 0.5f})}, 13, 1, 2)[0];
  EXPECT_EQ(a.shape(), (Shape{2, 6, 10, 3}));
  EXPECT_EQ(a.to_float_vector(), b.to_float_vector());
  // half_pixel, round_prefer_floor: channel c' reads (c' + 0.5) / 2 - 0.5 -> 0 0 1 1 2 2.
  EXPECT_EQ(a.slice(1, 3, 4).contiguous().to_float_vector(),
            run_op("Resize", AttrMap(),
                   {x.slice(1, 1, 2).contiguous(), Tensor(), scales({1, 1, 2, 0.5f})})[0]
                .to_float_vector());
}

TEST(ResizeOp, ScalesNotKnownAtPlanTime) {
  auto op = test::make_op("Resize", AttrMap(), 13);
  std::vector<ops::InferInput> in(3);
  in[0] = {true, DType::kFloat32, {1, 1, 2, 2}, nullptr};
  in[2] = {true, DType::kFloat32, {4}, nullptr};
  try {
    op->infer(in);
    ADD_FAILURE() << "no ValueNotKnown";
  } catch (const ops::ValueNotKnown& e) {
    EXPECT_EQ(e.input_index, 2);
  }
}

TEST(ResizeOp, Errors) {
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("Resize", AttrMap().s("mode", "cubic"), {k2x2, Tensor(), scales({1, 1, 2, 2})});
      },
      {"Resize 'test_node': mode 'cubic' is not supported"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("Resize", AttrMap().s("coordinate_transformation_mode", "tf_crop_and_resize"),
               {k2x2, Tensor(), scales({1, 1, 2, 2})});
      },
      {"'tf_crop_and_resize' is not supported"});
  expect_error<ModelError>(
      [&] {
        run_op("Resize", AttrMap().s("mode", "bicubic"), {k2x2, Tensor(), scales({1, 1, 2, 2})});
      },
      {"attribute 'mode' is 'bicubic', expected one of"});
  expect_error<ModelError>(
      [&] {
        run_op("Resize", AttrMap(), {k2x2, Tensor(), scales({1, 1, 2, 2}), sizes({1, 1, 4, 4})});
      },
      {"expected exactly one of the inputs scales and sizes to be non-empty, but "
       "got both"});
  expect_error<ModelError>(
      [&] {
        run_op("Resize", AttrMap(), {k2x2, Tensor(), Tensor::from_vector({}, {0})});
      },
      {"but got neither"});
  expect_error<ShapeError>(
      [&] {
        run_op("Resize", AttrMap(), {k2x2, Tensor(), scales({2, 2})});
      },
      {"expected scales with 4 values (one per dim of X [1, 1, 2, 2]), but got 2"});
  expect_error<InvalidArgument>(
      [&] {
        run_op("Resize", AttrMap(), {k2x2, Tensor(), scales({1, 1, 0, 2})});
      },
      {"expected scales > 0"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("Resize", AttrMap().s("mode", "linear"), {k2x2, Tensor(), scales({1, 2, 2, 2})});
      },
      {"linear mode resizes only the last two dims, but dim 1 changes from 1 to 2"});
  expect_error<ModelError>(
      [&] { run_op("Upsample", AttrMap(), {k2x2}, 7); },
      {"Upsample 'test_node': required attribute 'scales' (FLOATS) is missing"});
}

}  // namespace
}  // namespace tern
