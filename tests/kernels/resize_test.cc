// Reference resize (kernels/reference/resize.h): coordinate transforms, nearest rounding
// on hand-checked values; the gather kernels against naive loops.
#include "kernels/reference/resize.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

using M = ResizeCoordMode;
using N = ResizeNearestMode;

TEST(RefResize, SourceCoordinates) {
  // Arguments: mode, x, scale, length (in * scale), in.
  // half_pixel: (x + 0.5) / scale - 0.5
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kHalfPixel, 0, 2.0, 4.0, 2), -0.25);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kHalfPixel, 3, 2.0, 4.0, 2), 1.25);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kHalfPixel, 1, 0.5, 2.0, 4), 2.5);
  // pytorch_half_pixel: as half_pixel, but 0 when the length in * scale is <= 1
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kPytorchHalfPixel, 3, 2.0, 4.0, 2), 1.25);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kPytorchHalfPixel, 0, 0.25, 1.0, 4), 0.0);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kHalfPixel, 0, 0.25, 1.0, 4), 1.5);
  // The length decides, not the floored output size: in 5, scale 0.3 gives one output
  // (floor(1.5)) at (0 + 0.5) / 0.3 - 0.5, as the ONNX reference has it.
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kPytorchHalfPixel, 0, 0.3, 1.5, 5), 0.5 / 0.3 - 0.5);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kPytorchHalfPixel, 0, 0.2, 0.8, 4), 0.0);
  // align_corners: x * (in - 1) / (length - 1), 0 for a length of 1
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kAlignCorners, 1, 0.75, 3.0, 4), 1.5);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kAlignCorners, 7, 2.0, 8.0, 4), 3.0);
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kAlignCorners, 0, 0.25, 1.0, 4), 0.0);
  // in * scale = 2.4 (not the floored 2): 1 * 3 / 1.4.
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kAlignCorners, 1, 0.6, 2.4, 4), 3.0 / 1.4);
  // asymmetric: x / scale
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kAsymmetric, 3, 2.0, 4.0, 2), 1.5);
  // tf_half_pixel_for_nn: (x + 0.5) / scale
  EXPECT_DOUBLE_EQ(resize_source_coord(M::kTfHalfPixelForNn, 1, 2.0, 4.0, 2), 0.75);
}

TEST(RefResize, NearestIndexOfNonFiniteOrHugeCoordinateIsClamped) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (N mode : {N::kRoundPreferFloor, N::kRoundPreferCeil, N::kFloor, N::kCeil, N::kSimple}) {
    EXPECT_EQ(resize_nearest_index(mode, nan, 2.0, 4), 0);
    EXPECT_EQ(resize_nearest_index(mode, -inf, 2.0, 4), 0);
    EXPECT_EQ(resize_nearest_index(mode, -1e30, 2.0, 4), 0);
    EXPECT_EQ(resize_nearest_index(mode, inf, 2.0, 4), 3);
    EXPECT_EQ(resize_nearest_index(mode, 1e30, 2.0, 4), 3);
  }
}

TEST(RefResize, NearestRounding) {
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferFloor, 1.5f, 2.0f, 4), 1);
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferFloor, 1.6f, 2.0f, 4), 2);
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferFloor, 2.4f, 2.0f, 4), 2);
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferCeil, 1.5f, 2.0f, 4), 2);
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferCeil, 1.4f, 2.0f, 4), 1);
  EXPECT_EQ(resize_nearest_index(N::kFloor, 1.9f, 2.0f, 4), 1);
  EXPECT_EQ(resize_nearest_index(N::kCeil, 1.1f, 2.0f, 4), 2);
  EXPECT_EQ(resize_nearest_index(N::kCeil, 2.0f, 2.0f, 4), 2);
  // kSimple: floor when upsampling, ceil when downsampling.
  EXPECT_EQ(resize_nearest_index(N::kSimple, 1.7f, 2.0f, 4), 1);
  EXPECT_EQ(resize_nearest_index(N::kSimple, 1.2f, 0.6f, 4), 2);
  // Clamped to [0, in).
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferCeil, -0.25f, 2.0f, 4), 0);
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferFloor, -0.75f, 2.0f, 4), 0);
  EXPECT_EQ(resize_nearest_index(N::kCeil, 3.2f, 2.0f, 4), 3);
  EXPECT_EQ(resize_nearest_index(N::kRoundPreferFloor, 9.0f, 2.0f, 4), 3);
}

TEST(RefResize, NearestGatherAgainstNaive) {
  // Rank 3 [2, 3, 4] -> [3, 2, 5] with arbitrary index tables.
  const std::vector<int64_t> in = {2, 3, 4}, out = {3, 2, 5};
  const std::vector<int64_t> i0 = {1, 0, 1}, i1 = {2, 0}, i2 = {3, 3, 0, 1, 2};
  const int64_t* tables[] = {i0.data(), i1.data(), i2.data()};
  ResizeNearestParams p{3, in.data(), out.data(), tables};
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  std::vector<float> y(30, -777.0f);
  f32_resize_nearest(p, x.data(), y.data(), 0, 4);
  f32_resize_nearest(p, x.data(), y.data(), 4, 6);
  std::vector<float> expected;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 5; ++c) expected.push_back(x[(i0[a] * 3 + i1[b]) * 4 + i2[c]]);
  EXPECT_EQ(y, expected);
}

TEST(RefResize, NearestRank1) {
  const std::vector<int64_t> in = {3}, out = {4}, idx = {0, 0, 2, 1};
  const int64_t* tables[] = {idx.data()};
  ResizeNearestParams p{1, in.data(), out.data(), tables};
  const std::vector<float> x = {5, 6, 7};
  std::vector<float> y(4);
  f32_resize_nearest(p, x.data(), y.data(), 0, 1);
  EXPECT_EQ(y, (std::vector<float>{5, 5, 7, 6}));
}

}  // namespace
}  // namespace tern::kernels::ref
