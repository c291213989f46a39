// NonMaxSuppression: hand-checked selections (suppression by IoU, by score, output limit,
// flipped corners, center-point boxes, two batches and classes) and a random sweep against
// a naive greedy reference; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

Tensor nms(const Tensor& boxes, const Tensor& scores, int64_t max_out, float iou, float score,
           int center = 0) {
  return run1("NonMaxSuppression",
              {boxes, scores, i64v({max_out}), f32({iou}, {1}), f32({score}, {1})},
              AttrMap().i("center_point_box", center), 11);
}

// Six boxes of the ONNX example: three overlapping near y = 0, two near y = 10, one at 100.
const std::vector<float> kBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NonMaxSuppression, HandChecked) {
  const Tensor b = f32(kBoxes, {1, 6, 4});
  const Tensor s = f32(kScores, {1, 1, 6});
  Tensor y = nms(b, s, 3, 0.5f, 0.0f);
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Score threshold drops box 5 (0.3 <= 0.4).
  EXPECT_EQ(nms(b, s, 3, 0.5f, 0.4f).to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // Output limit.
  EXPECT_EQ(nms(b, s, 2, 0.5f, 0.0f).to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // max_output_boxes_per_class = 0 and omitted: nothing selected.
  EXPECT_EQ(nms(b, s, 0, 0.5f, 0.0f).shape(), (Shape{0, 3}));
  EXPECT_EQ(run1("NonMaxSuppression", {b, s}, {}, 11).shape(), (Shape{0, 3}));
  // Flipped corners are the same boxes.
  std::vector<float> flipped = kBoxes;
  for (size_t i = 0; i < flipped.size(); i += 4) {
    std::swap(flipped[i], flipped[i + 2]);
    std::swap(flipped[i + 1], flipped[i + 3]);
  }
  EXPECT_EQ(nms(f32(flipped, {1, 6, 4}), s, 3, 0.5f, 0.0f).to_int64_vector(), y.to_int64_vector());
  // Center-point boxes [xc, yc, w, h] equal to the corner boxes.
  std::vector<float> center;
  for (size_t i = 0; i < kBoxes.size(); i += 4) {
    const float y1 = kBoxes[i], x1 = kBoxes[i + 1], y2 = kBoxes[i + 2], x2 = kBoxes[i + 3];
    center.insert(center.end(), {(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1});
  }
  EXPECT_EQ(nms(f32(center, {1, 6, 4}), s, 3, 0.5f, 0.0f, 1).to_int64_vector(),
            y.to_int64_vector());
  // Two batches and two classes: batch-major, then class-major.
  std::vector<float> b2 = kBoxes;
  b2.insert(b2.end(), kBoxes.begin(), kBoxes.end());
  std::vector<float> s2;
  for (int i = 0; i < 4; ++i) s2.insert(s2.end(), kScores.begin(), kScores.end());
  const Tensor y2 = nms(f32(b2, {2, 6, 4}), f32(s2, {2, 2, 6}), 2, 0.5f, 0.0f);
  EXPECT_EQ(y2.to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0,
                                                        1, 0, 3, 1, 0, 0, 1, 1, 3, 1, 1, 0}));
  // Identical boxes with equal scores: the lowest index wins.
  std::vector<float> same_boxes;
  for (int i = 0; i < 5; ++i) same_boxes.insert(same_boxes.end(), {0, 0, 1, 1});
  EXPECT_EQ(
      nms(f32(same_boxes, {1, 5, 4}), f32(std::vector<float>(5, 0.9f), {1, 1, 5}), 3, 0.5f, 0.0f)
          .to_int64_vector(),
      (std::vector<int64_t>{0, 0, 0}));
}

float iou_ref(const float* a, const float* b) {
  const float ay1 = std::min(a[0], a[2]), ay2 = std::max(a[0], a[2]);
  const float ax1 = std::min(a[1], a[3]), ax2 = std::max(a[1], a[3]);
  const float by1 = std::min(b[0], b[2]), by2 = std::max(b[0], b[2]);
  const float bx1 = std::min(b[1], b[3]), bx2 = std::max(b[1], b[3]);
  const float ih = std::max(0.0f, std::min(ay2, by2) - std::max(ay1, by1));
  const float iw = std::max(0.0f, std::min(ax2, bx2) - std::max(ax1, bx1));
  const float inter = ih * iw;
  const float uni = (ay2 - ay1) * (ax2 - ax1) + (by2 - by1) * (bx2 - bx1) - inter;
  return uni <= 0 ? 0.0f : inter / uni;
}

TEST(NonMaxSuppression, RandomSweepAgainstGreedy) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const int64_t B = 2, C = 3, N = 17;
    const Tensor boxes = random_tensor<float>({B, N, 4}, seed, 0.0, 10.0);
    const Tensor scores = random_tensor<float>({B, C, N}, seed + 100, 0.0, 1.0);
    const float iou_t = 0.1f * static_cast<float>(seed);
    const int64_t max_out = 1 + seed;
    const Tensor y = nms(boxes, scores, max_out, iou_t, 0.2f);
    std::vector<int64_t> want;
    const float* bp = boxes.data<float>();
    const float* sp = scores.data<float>();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t c = 0; c < C; ++c) {
        std::vector<int64_t> order;
        for (int64_t n = 0; n < N; ++n) {
          if (sp[(b * C + c) * N + n] > 0.2f) order.push_back(n);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          return sp[(b * C + c) * N + p] > sp[(b * C + c) * N + q];
        });
        std::vector<int64_t> kept;
        for (int64_t n : order) {
          if (static_cast<int64_t>(kept.size()) == max_out) break;
          bool ok = true;
          for (int64_t k : kept)
            ok = ok && iou_ref(bp + (b * N + n) * 4, bp + (b * N + k) * 4) <= iou_t;
          if (!ok) continue;
          kept.push_back(n);
          want.insert(want.end(), {b, c, n});
        }
      }
    }
    EXPECT_EQ(y.to_int64_vector(), want) << "seed " << seed;
  }
}

TEST(NonMaxSuppression, Errors) {
  const Tensor b = f32(kBoxes, {1, 6, 4});
  expect_error<ShapeError>(
      [&] {
        run1("NonMaxSuppression", {b, f32(kScores, {1, 6, 1})}, {}, 11);
      },
      {"NonMaxSuppression 'test_node'", "[B, C, N]"});
  expect_error<ModelError>(
      [&] {
        run1("NonMaxSuppression", {b, f32(kScores, {1, 1, 6})}, AttrMap().i("center_point_box", 2),
             11);
      },
      {"NonMaxSuppression 'test_node'", "center_point_box"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("NonMaxSuppression", {b, make<double>({0, 0, 0, 0, 0, 0}, {1, 1, 6})}, {}, 11);
      },
      {"NonMaxSuppression 'test_node'", "float64"});
}

// D9: a NaN score is never selected and does not disturb the order of the others.
TEST(NonMaxSuppression, NaNScoresSkipped) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor b = f32(kBoxes, {1, 6, 4});
  const Tensor s = f32({nan, 0.75f, nan, 0.95f, nan, 0.3f}, {1, 1, 6});
  EXPECT_EQ(nms(b, s, 6, 0.5f, 0.0f).to_int64_vector(),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 1, 0, 0, 5}));
  // Without a score threshold too.
  EXPECT_EQ(run1("NonMaxSuppression", {b, s, i64v({6})}, {}, 11).to_int64_vector(),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 1, 0, 0, 5}));
}

}  // namespace
}  // namespace tern::test
