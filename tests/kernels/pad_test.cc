// Reference padding (kernels/reference/pad.h): index mapping of each mode and 2-D / 3-D
// padding against numpy.pad outputs (computed offline and embedded).
#include "kernels/reference/pad.h"

#include <gtest/gtest.h>

#include <vector>

namespace tern::kernels::ref {
namespace {

std::vector<int64_t> indices(int64_t in, int64_t pb, int64_t pe, PadMode mode) {
  std::vector<int64_t> r;
  for (int64_t o = 0; o < in + pb + pe; ++o) r.push_back(pad_source_index(o, in, pb, pe, mode));
  return r;
}

TEST(RefPad, SourceIndexPerMode) {
  EXPECT_EQ(indices(3, 2, 2, PadMode::kConstant), (std::vector<int64_t>{-1, -1, 0, 1, 2, -1, -1}));
  EXPECT_EQ(indices(3, 2, 2, PadMode::kReflect), (std::vector<int64_t>{2, 1, 0, 1, 2, 1, 0}));
  EXPECT_EQ(indices(3, 2, 2, PadMode::kEdge), (std::vector<int64_t>{0, 0, 0, 1, 2, 2, 2}));
}

TEST(RefPad, ReflectLongerThanTheInput) {
  // numpy.pad([0 1 2], (5, 4), 'reflect') = [1 0 1 2 1 0 1 2 1 0 1 2]
  EXPECT_EQ(indices(3, 5, 4, PadMode::kReflect),
            (std::vector<int64_t>{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2}));
  // A single element reflects onto itself.
  EXPECT_EQ(indices(1, 2, 1, PadMode::kReflect), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(RefPad, NegativePadsCropFirst) {
  EXPECT_EQ(indices(5, -1, -2, PadMode::kConstant), (std::vector<int64_t>{1, 2}));
  // Crop x0, then reflect [x1 x2 x3] by 2 at the end: x1 x2 x3 x2 x1.
  EXPECT_EQ(indices(4, -1, 2, PadMode::kReflect), (std::vector<int64_t>{1, 2, 3, 2, 1}));
  EXPECT_EQ(indices(4, 2, -3, PadMode::kEdge), (std::vector<int64_t>{0, 0, 0}));
}

std::vector<float> pad2d(const std::vector<int64_t>& shape, const std::vector<int64_t>& pb,
                         const std::vector<int64_t>& pe, PadMode mode, float value) {
  std::vector<float> x(shape[0] * shape[1]);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  PadParams p;
  p.rank = 2;
  p.in_shape = shape.data();
  p.pad_begin = pb.data();
  p.pad_end = pe.data();
  p.mode = mode;
  p.value = value;
  const int64_t rows = shape[0] + pb[0] + pe[0], cols = shape[1] + pb[1] + pe[1];
  std::vector<float> y(rows * cols, -777.0f);
  f32_pad(p, x.data(), y.data(), 0, 2);
  f32_pad(p, x.data(), y.data(), 2, rows);
  return y;
}

TEST(RefPad, TwoDimsAgainstNumpy) {
  // x = arange(12).reshape(3, 4), pads ((1, 2), (2, 1)).
  EXPECT_EQ(
      pad2d({3, 4}, {1, 2}, {2, 1}, PadMode::kReflect, 0),
      (std::vector<float>{6,  5, 4, 5, 6,  7,  6,  2, 1, 0, 1, 2, 3, 2, 6, 5, 4, 5, 6, 7, 6,
                          10, 9, 8, 9, 10, 11, 10, 6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2}));
  EXPECT_EQ(
      pad2d({3, 4}, {1, 2}, {2, 1}, PadMode::kEdge, 0),
      (std::vector<float>{0, 0, 0, 1, 2,  3,  3,  0, 0, 0, 1, 2,  3,  3,  4, 4, 4, 5, 6,  7,  7,
                          8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11}));
  EXPECT_EQ(pad2d({3, 4}, {1, 2}, {2, 1}, PadMode::kConstant, -1),
            (std::vector<float>{-1, -1, -1, -1, -1, -1, -1, -1, -1, 0,  1,  2,  3,  -1,
                                -1, -1, 4,  5,  6,  7,  -1, -1, -1, 8,  9,  10, 11, -1,
                                -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(RefPad, NegativeAndPositiveMixedAgainstNumpy) {
  // numpy.pad(x[1:, :3], ((0, 1), (2, 0)), 'reflect'), pads (-1, 2) / (1, -1).
  EXPECT_EQ(pad2d({3, 4}, {-1, 2}, {1, -1}, PadMode::kReflect, 0),
            (std::vector<float>{6, 5, 4, 5, 6, 10, 9, 8, 9, 10, 6, 5, 4, 5, 6}));
}

TEST(RefPad, ThreeDims) {
  // [2, 1, 2] -> pads (1, 0, 0) / (0, 1, 1) constant 9: y[d][h][w].
  const std::vector<int64_t> shape = {2, 1, 2}, pb = {1, 0, 0}, pe = {0, 1, 1};
  const std::vector<float> x = {1, 2, 3, 4};
  PadParams p{3, shape.data(), pb.data(), pe.data(), PadMode::kConstant, 9.0f};
  std::vector<float> y(3 * 2 * 3, -777.0f);
  f32_pad(p, x.data(), y.data(), 0, 6);
  EXPECT_EQ(y, (std::vector<float>{9, 9, 9, 9, 9, 9, 1, 2, 9, 9, 9, 9, 3, 4, 9, 9, 9, 9}));
}

}  // namespace
}  // namespace tern::kernels::ref
