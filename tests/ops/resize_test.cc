// Resize and Upsample ops (src/ops/resize.cc): the ONNX backend-test examples for every
// supported coordinate and nearest mode, values from the ONNX numpy reference
// (interpolate_nd, computed offline), the opset-10 and Upsample rules, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
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
  EXPECT_EQ(a.shape(), (Shape{2, 6, 10, 3}));
  // Threads take bands of the 10 output rows of every plane (as many threads as the host
  // has, at most the number asked).
  for (int threads : {2, 3, 11}) {
    const Tensor b =
        run_op("Resize", AttrMap(), {x, Tensor(), scales({1, 2, 2, 0.5f})}, 13, 1, threads)[0];
    EXPECT_EQ(a.to_float_vector(), b.to_float_vector()) << threads << " threads";
  }
  // half_pixel, round_prefer_floor: channel c' reads (c' + 0.5) / 2 - 0.5 -> 0 0 1 1 2 2.
  EXPECT_EQ(a.slice(1, 3, 4).contiguous().to_float_vector(),
            run_op("Resize", AttrMap(),
                   {x.slice(1, 1, 2).contiguous(), Tensor(), scales({1, 1, 2, 0.5f})})[0]
                .to_float_vector());
}

// A trailing dim that is not resized (NCHWc's lanes) is copied in runs: the same values
// as resizing each lane on its own (the 4-D resize of the lane's plane).
TEST(ResizeOp, NearestWithUnresizedLastDimCopiesRuns) {
  const Tensor x = Tensor::from_vector(test::random_floats(2 * 5 * 7 * 3, 5), {1, 2, 5, 7, 3});
  const Tensor y = run_op("Resize", AttrMap(), {x, Tensor(), scales({1, 1, 2, 2, 1})})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 2, 10, 14, 3}));
  for (int threads : {2, 3}) {
    EXPECT_EQ(run_op("Resize", AttrMap(), {x, Tensor(), scales({1, 1, 2, 2, 1})}, 13, 1,
                     threads)[0].to_float_vector(),
              y.to_float_vector())
        << threads << " threads";
  }
  for (int64_t lane = 0; lane < 3; ++lane) {
    const Tensor plane = x.slice(4, lane, lane + 1).contiguous().reshape({1, 2, 5, 7});
    const Tensor want = run_op("Resize", AttrMap(), {plane, Tensor(), scales({1, 1, 2, 2})})[0];
    EXPECT_EQ(y.slice(4, lane, lane + 1).contiguous().to_float_vector(), want.to_float_vector())
        << "lane " << lane;
  }
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

// The ONNX reference's 1-D interpolation (onnx/reference/ops/op_resize.py), written
// out in double: x_original per coordinate mode, then linear or cubic taps on the
// edge-clamped input, optional exclude_outside renormalization.
double interp_1d(const std::vector<double>& d, double scale, int64_t out_len, int64_t o,
                 const std::string& mode, const std::string& coord, double a, bool exclude,
                 double roi0 = 0, double roi1 = 1, bool* outside = nullptr) {
  const double n = static_cast<double>(d.size()), len = scale * n, x = static_cast<double>(o);
  double xo = 0;
  if (coord == "half_pixel") xo = (x + 0.5) / scale - 0.5;
  if (coord == "asymmetric") xo = x / scale;
  if (coord == "align_corners") xo = len == 1 ? 0 : x * (n - 1) / (len - 1);
  if (coord == "tf_crop_and_resize") {
    xo = out_len == 1 ? (roi1 - roi0) * (n - 1) / 2 : x * (roi1 - roi0) * (n - 1) / (out_len - 1);
    xo += roi0 * (n - 1);
    if (outside) *outside = xo < 0 || xo > n - 1;
  }
  const double f = std::floor(xo), t = xo - f;
  auto at = [&](double i) { return d[static_cast<size_t>(std::clamp(i, 0.0, n - 1))]; };
  if (mode == "linear") return (1 - t) * at(f) + t * at(f + 1);
  auto w = [a](double s) {
    s = std::fabs(s);
    return s <= 1 ? ((a + 2) * s - (a + 3)) * s * s + 1 : ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  };
  double sum = 0, wsum = 0;
  for (int k = -1; k <= 2; ++k) {
    double wk = w(t - k);
    if (exclude && (f + k < 0 || f + k > n - 1)) wk = 0;
    sum += wk * at(f + k);
    wsum += wk;
  }
  return exclude ? sum / wsum : sum;
}

TEST(ResizeOp, CubicAndLinearAgainstOnnxReference2d) {
  // 2-D separable reference on a random [1, 1, 5, 6] input; scales up and down.
  const Tensor x = test::random_tensor<float>({1, 1, 5, 6}, 77);
  const auto xv = x.to_float_vector();
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners"}) {
      for (float s : {0.6f, 1.7f}) {
        for (bool exclude : {false, true}) {
          for (float a : {-0.75f, -0.5f}) {
            const AttrMap attrs = AttrMap()
                                      .s("mode", mode)
                                      .s("coordinate_transformation_mode", coord)
                                      .f("cubic_coeff_a", a)
                                      .i("exclude_outside", exclude ? 1 : 0);
            const Tensor y = resize_scales(attrs, x, {1, 1, s, s});
            const int64_t oh = static_cast<int64_t>(std::floor(5 * s));
            const int64_t ow = static_cast<int64_t>(std::floor(6 * s));
            ASSERT_EQ(y.shape(), (Shape{1, 1, oh, ow}));
            std::vector<float> want;
            for (int64_t i = 0; i < oh; ++i) {
              for (int64_t j = 0; j < ow; ++j) {
                std::vector<double> col;
                for (int r = 0; r < 5; ++r) {
                  std::vector<double> row(xv.begin() + r * 6, xv.begin() + r * 6 + 6);
                  col.push_back(interp_1d(row, s, ow, j, mode, coord, a, exclude));
                }
                want.push_back(
                    static_cast<float>(interp_1d(col, s, oh, i, mode, coord, a, exclude)));
              }
            }
            test::expect_near_all(y.to_float_vector(), want, 1e-5f, 1e-4f,
                                  std::string(mode) + " " + coord);
          }
        }
      }
    }
  }
}

TEST(ResizeOp, AlignCornersUsesScaledLengthAndLinearResizesAnyDim) {
  // ONNX test_resize_downsample_scales_linear_align_corners: 2x4 * 0.6 -> 1x2.
  EXPECT_EQ(resize_scales(
                AttrMap().s("mode", "linear").s("coordinate_transformation_mode", "align_corners"),
                k2x4, {1, 1, 0.6f, 0.6f})
                .shape(),
            (Shape{1, 1, 1, 2}));
  test::expect_near_all(
      resize_scales(
          AttrMap().s("mode", "linear").s("coordinate_transformation_mode", "align_corners"), k2x4,
          {1, 1, 0.6f, 0.6f})
          .to_float_vector(),
      {1.0f, 3.142857f}, 1e-5f);
  // Linear along the channel dim: [1, 2, 1, 1] -> [1, 4, 1, 1], asymmetric: 1, 1.5, 2, 2.
  const Tensor c = Tensor::from_vector({1, 2}, {1, 2, 1, 1});
  test::expect_near_all(
      resize_scales(AttrMap().s("mode", "linear").s("coordinate_transformation_mode", "asymmetric"),
                    c, {1, 2, 1, 1})
          .to_float_vector(),
      {1.0f, 1.5f, 2.0f, 2.0f}, 1e-6f);
}

TEST(ResizeOp, TfCropAndResize) {
  // roi crops [0.4, 0.6] x [0.6, 0.8] of a 4x4 image into 3x3 (ONNX's example), and a roi
  // reaching outside gives extrapolation_value there.
  const Tensor roi = Tensor::from_vector({0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}, {8});
  const AttrMap attrs =
      AttrMap().s("mode", "linear").s("coordinate_transformation_mode", "tf_crop_and_resize");
  const Tensor y = run_op("Resize", attrs, {k4x4, roi, Tensor(), sizes({1, 1, 3, 3})})[0];
  test::expect_near_all(y.to_float_vector(),
                        {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10.0f, 10.3f, 10.6f}, 1e-5f, 1e-5f);
  const Tensor roi2 = Tensor::from_vector({0, 0, -0.5f, 0, 1, 1, 1, 1}, {8});
  const Tensor y2 = run_op("Resize", AttrMap(attrs).f("extrapolation_value", -9.0f),
                           {k4x4, roi2, Tensor(), sizes({1, 1, 4, 2})})[0];
  // Rows at x_original = -1.5, -0.5 are outside; rows 0.5, 1.5... inside.
  const auto v = y2.to_float_vector();
  const std::vector<double> col0 = {1, 5, 9, 13};
  for (int i = 0; i < 4; ++i) {
    bool out = false;
    const double want =
        interp_1d(col0, 1.0, 4, i, "linear", "tf_crop_and_resize", 0, false, -0.5, 1.0, &out);
    EXPECT_NEAR(v[i * 2], out ? -9.0 : want, 1e-5) << i;
  }
  expect_error<ModelError>(
      [&] {
        run_op("Resize", attrs, {k4x4, Tensor(), Tensor(), sizes({1, 1, 3, 3})});
      },
      {"Resize 'test_node'", "roi"});
}

TEST(ResizeOp, TfCropAndResizeRejectsNonFiniteRoi) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    const AttrMap attrs =
        AttrMap().s("mode", mode).s("coordinate_transformation_mode", "tf_crop_and_resize");
    for (float bad : {nan, inf, -inf}) {
      const Tensor roi = Tensor::from_vector({0, 0, bad, 0.6f, 1, 1, 0.6f, 0.8f}, {8});
      // With sizes the NaN would reach the coordinate; with scales the output size.
      expect_error<InvalidArgument>(
          [&] {
            run_op("Resize", attrs, {k4x4, roi, Tensor(), sizes({1, 1, 3, 3})});
          },
          {"Resize 'test_node'", "finite roi"});
      expect_error<InvalidArgument>(
          [&] {
            run_op("Resize", attrs, {k4x4, roi, scales({1, 1, 2, 2})});
          },
          {"Resize 'test_node'", "finite roi"});
    }
  }
}

TEST(ResizeOp, PytorchHalfPixelTestsScaledLengthInEveryMode) {
  // in 5, scale 0.3: one output (floor(1.5)), but the length in * scale = 1.5 > 1, so the
  // ONNX reference maps it to (0 + 0.5) / 0.3 - 0.5 = 1.1667 in every mode.
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5}, {5});
  const AttrMap attrs = AttrMap().s("coordinate_transformation_mode", "pytorch_half_pixel");
  EXPECT_EQ(resize_scales(attrs, x, {0.3f}).to_float_vector(), std::vector<float>{2.0f});
  EXPECT_EQ(resize_scales(AttrMap(attrs).s("nearest_mode", "floor"), x, {0.3f}).to_float_vector(),
            std::vector<float>{2.0f});
  const double xo = 0.5 / static_cast<double>(0.3f) - 0.5;
  test::expect_near_all(
      resize_scales(AttrMap(attrs).s("mode", "linear"), x, {0.3f}).to_float_vector(),
      {static_cast<float>(2.0 + (xo - 1.0))}, 1e-6f);
  // A length of exactly 1 (sizes 1, or in 4 with scale 0.25) maps to coordinate 0.
  const Tensor x4 = Tensor::from_vector({1, 2, 3, 4}, {4});
  EXPECT_EQ(resize_sizes(attrs, x4, {1}).to_float_vector(), std::vector<float>{1.0f});
  EXPECT_EQ(resize_scales(AttrMap(attrs).s("mode", "linear"), x4, {0.25f}).to_float_vector(),
            std::vector<float>{1.0f});
}

TEST(ResizeOp, Errors) {
  expect_error<ModelError>(
      [&] {
        run_op("Resize", AttrMap().s("mode", "cubic"), {k2x2, scales({1, 1, 2, 2})}, 10);
      },
      {"Resize 'test_node': mode 'cubic' needs Resize-11"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("Resize", AttrMap().s("coordinate_transformation_mode", "half_pixel_symmetric"),
               {k2x2, Tensor(), scales({1, 1, 2, 2})});
      },
      {"'half_pixel_symmetric' is not supported"});
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
  expect_error<ModelError>(
      [&] { run_op("Upsample", AttrMap(), {k2x2}, 7); },
      {"Upsample 'test_node': required attribute 'scales' (FLOATS) is missing"});
}

}  // namespace
}  // namespace tern
