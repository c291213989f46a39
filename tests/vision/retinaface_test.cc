// RetinaFace post- and preprocessing on hand-made values: prior boxes, decoding, NMS,
// and the network input of tiny synthetic images.
#include "vision/retinaface.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tern/status.h"

namespace tern::vision {
namespace {

using ::testing::HasSubstr;

void expect_prior(const PriorBox& p, double cx, double cy, double w, double h) {
  EXPECT_FLOAT_EQ(p.cx, float(cx));
  EXPECT_FLOAT_EQ(p.cy, float(cy));
  EXPECT_FLOAT_EQ(p.w, float(w));
  EXPECT_FLOAT_EQ(p.h, float(h));
}

// ---- prior boxes ----

TEST(RetinaFacePriors, Square320) {
  const std::vector<PriorBox> p = retinaface_priors(320, 320);
  // 40x40x2 + 20x20x2 + 10x10x2.
  ASSERT_EQ(p.size(), 4200u);
  expect_prior(p[0], 4.0 / 320, 4.0 / 320, 10.0 / 320, 10.0 / 320);     // level 0, (0, 0), m 10
  expect_prior(p[1], 4.0 / 320, 4.0 / 320, 20.0 / 320, 20.0 / 320);     // same cell, m 20
  expect_prior(p[2], 12.0 / 320, 4.0 / 320, 10.0 / 320, 10.0 / 320);    // next column
  expect_prior(p[80], 4.0 / 320, 12.0 / 320, 10.0 / 320, 10.0 / 320);   // next row
  expect_prior(p[3200], 8.0 / 320, 8.0 / 320, 32.0 / 320, 32.0 / 320);  // level 1 starts
  expect_prior(p[3201], 8.0 / 320, 8.0 / 320, 64.0 / 320, 64.0 / 320);
  expect_prior(p[4000], 16.0 / 320, 16.0 / 320, 128.0 / 320, 128.0 / 320);    // level 2
  expect_prior(p[4199], 304.0 / 320, 304.0 / 320, 256.0 / 320, 256.0 / 320);  // last
}

TEST(RetinaFacePriors, OddSizeUsesCeilAndNoClipping) {
  // H 212, W 320: ceil(212/8) = 27, ceil(212/16) = 14, ceil(212/32) = 7 rows.
  const std::vector<PriorBox> p = retinaface_priors(212, 320);
  ASSERT_EQ(p.size(), size_t(2 * (27 * 40 + 14 * 20 + 7 * 10)));
  ASSERT_EQ(p.size(), 2860u);
  // Last row of level 0 (i = 26): cy = 26.5 * 8 / 212 = 1.0 (centre on the border).
  expect_prior(p[2 * 26 * 40], 4.0 / 320, 212.0 / 212, 10.0 / 320, 10.0 / 212);
  // Last prior of level 2 (i = 6, j = 9): cy = 6.5 * 32 / 212 > 1, kept unclipped.
  expect_prior(p[2859], 304.0 / 320, 208.0 / 212, 256.0 / 320, 256.0 / 212);
  EXPECT_GT(p[2859].cy, 0.98f);
  expect_prior(p[2160], 8.0 / 320, 8.0 / 212, 32.0 / 320, 32.0 / 212);      // level 1 starts
  expect_prior(p[2720], 16.0 / 320, 16.0 / 212, 128.0 / 320, 128.0 / 212);  // level 2 starts
  EXPECT_EQ(retinaface_priors(640, 640).size(), 16800u);
  EXPECT_EQ(retinaface_priors(1, 1).size(), 6u);
  EXPECT_EQ(retinaface_priors(9, 17).size(), size_t(2 * (2 * 3 + 1 * 2 + 1 * 1)));
}

TEST(RetinaFacePriors, RejectsEmptySize) {
  EXPECT_THROW(retinaface_priors(0, 320), InvalidArgument);
  EXPECT_THROW(retinaface_priors(320, -1), InvalidArgument);
}

// ---- IoU and NMS ----

TEST(BoxIou, ContinuousAndPixelConventions) {
  const Box a{0, 0, 10, 10}, b{5, 0, 15, 10}, far{20, 20, 30, 30};
  EXPECT_FLOAT_EQ(box_iou(a, a), 1.0f);
  EXPECT_FLOAT_EQ(box_iou(a, b), 50.0f / 150.0f);
  // py_cpu_nms: inclusive corners, inter 6 x 11, areas 11 x 11.
  EXPECT_FLOAT_EQ(box_iou(a, b, 1), 66.0f / 176.0f);
  EXPECT_EQ(box_iou(a, far), 0.0f);
  EXPECT_EQ(box_iou(a, Box{10, 0, 20, 10}), 0.0f);             // touching edges
  EXPECT_EQ(box_iou(Box{1, 1, 1, 1}, Box{1, 1, 1, 1}), 0.0f);  // empty boxes
}

TEST(Nms, KeepsBestAndDropsOverlaps) {
  // Given out of score order: B (0.9) beats A (0.8, IoU 0.70 with B), C is apart.
  const std::vector<Box> boxes = {{1, 1, 11, 11}, {0, 0, 10, 10}, {20, 20, 30, 30}};
  const std::vector<float> scores = {0.8f, 0.9f, 0.7f};
  EXPECT_EQ(nms(boxes, scores, 0.4f), (std::vector<size_t>{1, 2}));
  // A high threshold keeps all, best first.
  EXPECT_EQ(nms(boxes, scores, 0.75f), (std::vector<size_t>{1, 0, 2}));
  EXPECT_TRUE(nms({}, {}, 0.4f).empty());
}

TEST(Nms, SuppressedBoxesSuppressNothing) {
  // A drops B (IoU 0.467); B would drop C, but B is gone; A and C overlap 0.158.
  const std::vector<Box> boxes = {{0, 0, 10, 10}, {4, 0, 14, 10}, {8, 0, 18, 10}};
  EXPECT_EQ(nms(boxes, {0.9f, 0.8f, 0.7f}, 0.4f), (std::vector<size_t>{0, 2}));
}

TEST(Nms, IouEqualToThresholdIsKeptAndTiesKeepIndexOrder) {
  // IoU (pixel convention) of these two is exactly 66 / 176 = 0.375: py_cpu_nms keeps
  // boxes with overlap <= threshold.
  const std::vector<Box> boxes = {{0, 0, 10, 10}, {5, 0, 15, 10}};
  EXPECT_EQ(nms(boxes, {0.5f, 0.5f}, 0.375f), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(nms(boxes, {0.5f, 0.5f}, 0.37f), (std::vector<size_t>{0}));
}

TEST(Nms, SizeMismatchIsInvalidArgument) {
  EXPECT_THROW(nms({{0, 0, 1, 1}}, {}, 0.4f), InvalidArgument);
}

// ---- decoding ----

// Raw outputs for a 64x64 input (168 priors): every prior background except those set.
struct RawOutputs {
  static constexpr int64_t kPriors = 2 * (8 * 8 + 4 * 4 + 2 * 2);
  std::vector<float> loc = std::vector<float>(kPriors * 4, 0.0f);
  std::vector<float> conf = std::vector<float>(kPriors * 2, 0.0f);
  std::vector<float> landms = std::vector<float>(kPriors * 10, 0.0f);
  RawOutputs() {
    for (int64_t i = 0; i < kPriors; ++i) conf[size_t(i) * 2] = 1.0f;
  }
  void set_score(int64_t prior, float score) {
    conf[size_t(prior) * 2] = 1 - score;
    conf[size_t(prior) * 2 + 1] = score;
  }
  std::vector<Face> decode(float scale, const RetinaFaceOptions& options = {}) {
    return retinaface_decode(Tensor::from_vector(loc, {1, kPriors, 4}),
                             Tensor::from_vector(conf, {1, kPriors, 2}),
                             Tensor::from_vector(landms, {1, kPriors, 10}), 64, 64, scale, options);
  }
};

TEST(RetinaFaceDecode, ZeroRegressionIsThePrior) {
  RawOutputs raw;
  raw.set_score(0, 0.9f);  // prior 0: centre (4, 4), size 10 (input pixels)
  const std::vector<Face> faces = raw.decode(0.5f);  // photo = input / 0.5
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_FLOAT_EQ(f.score, 0.9f);
  EXPECT_NEAR(f.box[0], -2.0f, 1e-4);
  EXPECT_NEAR(f.box[1], -2.0f, 1e-4);
  EXPECT_NEAR(f.box[2], 18.0f, 1e-4);
  EXPECT_NEAR(f.box[3], 18.0f, 1e-4);
  for (const auto& p : f.landmarks) {
    EXPECT_NEAR(p[0], 8.0f, 1e-4);
    EXPECT_NEAR(p[1], 8.0f, 1e-4);
  }
}

TEST(RetinaFaceDecode, RegressionsUseTheVariances) {
  RawOutputs raw;
  // Prior 1: centre (4, 4), size 20. loc: centre += (1, -1) * 0.1 * 20 = (+2, -2);
  // width *= exp(0.2 * ln(2) / 0.2) = 2 -> 40; height *= exp(0) -> 20.
  raw.set_score(1, 0.95f);
  raw.loc[4] = 1.0f;
  raw.loc[5] = -1.0f;
  raw.loc[6] = std::log(2.0f) / 0.2f;
  raw.loc[7] = 0.0f;
  // Landmark 2 (nose) at prior centre + (3, 0.5) * 0.1 * 20 = (10, 5); right mouth at
  // (4, 4) - (0.5, 1) * 2 = (3, 2).
  raw.landms[10 + 4] = 3.0f;
  raw.landms[10 + 5] = 0.5f;
  raw.landms[10 + 8] = -0.5f;
  raw.landms[10 + 9] = -1.0f;
  const std::vector<Face> faces = raw.decode(1.0f);
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_NEAR(f.box[0], 6 - 20, 1e-4);
  EXPECT_NEAR(f.box[1], 2 - 10, 1e-4);
  EXPECT_NEAR(f.box[2], 6 + 20, 1e-4);
  EXPECT_NEAR(f.box[3], 2 + 10, 1e-4);
  EXPECT_NEAR(f.landmarks[0][0], 4, 1e-4);
  EXPECT_NEAR(f.landmarks[2][0], 10, 1e-4);
  EXPECT_NEAR(f.landmarks[2][1], 5, 1e-4);
  EXPECT_NEAR(f.landmarks[4][0], 3, 1e-4);
  EXPECT_NEAR(f.landmarks[4][1], 2, 1e-4);
}

TEST(RetinaFaceDecode, LevelTwoPrior) {
  RawOutputs raw;
  // Level 2 (step 32) holds priors 160..167: prior 166 is cell (1, 1) with min size 128,
  // centre (48, 48) in input pixels.
  raw.set_score(166, 0.99f);
  const std::vector<Face> faces = raw.decode(0.25f);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_NEAR(faces[0].box[0], (48 - 64) * 4.0f, 1e-3);
  EXPECT_NEAR(faces[0].box[1], (48 - 64) * 4.0f, 1e-3);
  EXPECT_NEAR(faces[0].box[2], (48 + 64) * 4.0f, 1e-3);
  EXPECT_NEAR(faces[0].box[3], (48 + 64) * 4.0f, 1e-3);
}

TEST(RetinaFaceDecode, ThresholdsAndOrder) {
  RawOutputs raw;
  raw.set_score(20, 0.7f);    // level 0, cell (1, 2)
  raw.set_score(60, 0.95f);   // level 0, cell (3, 6): far from the others
  raw.set_score(100, 0.59f);  // below the display threshold
  raw.set_score(130, 0.6f);   // exactly the threshold: shown (repo: vis_thres <= score)
  const std::vector<Face> faces = raw.decode(1.0f);
  ASSERT_EQ(faces.size(), 3u);
  EXPECT_FLOAT_EQ(faces[0].score, 0.95f);
  EXPECT_FLOAT_EQ(faces[1].score, 0.7f);
  EXPECT_FLOAT_EQ(faces[2].score, 0.6f);

  RetinaFaceOptions all;
  all.threshold = 0.0f;  // everything over confidence_threshold (0.02) survives NMS here
  EXPECT_EQ(raw.decode(1.0f, all).size(), 4u);
  RetinaFaceOptions top1 = all;
  top1.top_k = 1;
  ASSERT_EQ(raw.decode(1.0f, top1).size(), 1u);
  EXPECT_FLOAT_EQ(raw.decode(1.0f, top1)[0].score, 0.95f);
  RetinaFaceOptions keep2 = all;
  keep2.keep_top_k = 2;
  EXPECT_EQ(raw.decode(1.0f, keep2).size(), 2u);
  RetinaFaceOptions high_confidence = all;
  high_confidence.confidence_threshold = 0.6f;  // strictly greater: 0.6 is out
  EXPECT_EQ(raw.decode(1.0f, high_confidence).size(), 2u);
}

TEST(RetinaFaceDecode, NmsMergesDuplicates) {
  RawOutputs raw;
  // Priors 0 (size 10) and 1 (size 20) share a centre; shrinking prior 1 by exp(0.2 *
  // ln(0.5) / 0.2) = 0.5 makes the two boxes identical: only the better one stays.
  raw.set_score(0, 0.8f);
  raw.set_score(1, 0.9f);
  raw.loc[6] = raw.loc[7] = std::log(0.5f) / 0.2f;
  std::vector<Face> faces = raw.decode(1.0f);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_FLOAT_EQ(faces[0].score, 0.9f);
  // Without the shrink the 10 and 20 boxes overlap (11 x 11) / (21 x 21) = 0.27 < 0.4.
  raw.loc[6] = raw.loc[7] = 0;
  EXPECT_EQ(raw.decode(1.0f).size(), 2u);
}

TEST(RetinaFaceDecode, AcceptsRank2AndStridedViews) {
  RawOutputs raw;
  raw.set_score(5, 0.9f);
  const int64_t n = RawOutputs::kPriors;
  // conf as a transposed view of a [2, N] tensor.
  std::vector<float> conf_t(size_t(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    conf_t[size_t(i)] = raw.conf[size_t(i) * 2];
    conf_t[size_t(n + i)] = raw.conf[size_t(i) * 2 + 1];
  }
  const Tensor conf = Tensor::from_vector(conf_t, {2, n}).transpose(0, 1);
  const std::vector<Face> faces =
      retinaface_decode(Tensor::from_vector(raw.loc, {n, 4}), conf,
                        Tensor::from_vector(raw.landms, {n, 10}), 64, 64, 1.0f);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_FLOAT_EQ(faces[0].score, 0.9f);
}

TEST(RetinaFaceDecode, ShapeMismatchNamesTheOutput) {
  RawOutputs raw;
  const int64_t n = RawOutputs::kPriors;
  try {
    retinaface_decode(Tensor::from_vector(raw.loc, {1, n, 4}),
                      Tensor::from_vector(raw.conf, {1, n, 2}),
                      Tensor::from_vector(raw.landms, {1, n, 10}), 64, 72, 1.0f);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    // 64x72 has 2 * (8 * 9 + 4 * 5 + 2 * 3) = 196 priors.
    EXPECT_THAT(e.what(), HasSubstr("'loc'"));
    EXPECT_THAT(e.what(), HasSubstr("[1, 196, 4]"));
    EXPECT_THAT(e.what(), HasSubstr("[1, 168, 4]"));
  }
  EXPECT_THROW(retinaface_decode(Tensor::from_vector(raw.loc, {1, n, 4}),
                                 Tensor::from_vector(raw.conf, {1, n, 2}), Tensor(), 64, 64, 1),
               InvalidArgument);
  EXPECT_THROW(retinaface_decode(Tensor::from_vector(raw.loc, {1, n, 4}),
                                 Tensor::from_vector(raw.conf, {1, n, 2}),
                                 Tensor::from_vector(raw.landms, {1, n, 10}), 64, 64, 0.0f),
               InvalidArgument);
  const Tensor int_conf = Tensor::zeros(DType::kInt32, {1, n, 2});
  EXPECT_THROW(retinaface_decode(Tensor::from_vector(raw.loc, {1, n, 4}), int_conf,
                                 Tensor::from_vector(raw.landms, {1, n, 10}), 64, 64, 1),
               InvalidArgument);
}

// ---- preprocessing ----

// A w x h RGB image whose pixel (x, y) is (r0 + x, g0 + y, b0 + x + y).
Image synthetic(int w, int h, int r0 = 10, int g0 = 50, int b0 = 200) {
  Image img = Image::black(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.at(x, y);
      p[0] = uint8_t(r0 + x);
      p[1] = uint8_t(g0 + y);
      p[2] = uint8_t(b0 + x + y);
    }
  }
  return img;
}

float at(const Tensor& t, int c, int y, int x) { return float(t.item_as_double({0, c, y, x})); }

TEST(RetinaFacePreprocess, BgrOrderAndMeanWithoutResize) {
  const Image img = synthetic(4, 2);
  const RetinaFaceInput in = retinaface_preprocess(img, 4, false);  // long side already 4
  EXPECT_EQ(in.tensor.shape(), (Shape{1, 3, 2, 4}));
  EXPECT_EQ(in.tensor.dtype(), DType::kFloat32);
  EXPECT_FLOAT_EQ(in.scale, 1.0f);
  EXPECT_EQ(in.resized_width, 4);
  EXPECT_EQ(in.resized_height, 2);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 4; ++x) {
      EXPECT_FLOAT_EQ(at(in.tensor, 0, y, x), float(200 + x + y) - 104);  // B
      EXPECT_FLOAT_EQ(at(in.tensor, 1, y, x), float(50 + y) - 117);       // G
      EXPECT_FLOAT_EQ(at(in.tensor, 2, y, x), float(10 + x) - 123);       // R
    }
  }
}

TEST(RetinaFacePreprocess, PaddingIsZeroBottomRight) {
  const Image img = synthetic(4, 2);
  const RetinaFaceInput in = retinaface_preprocess(img, 4, true);
  ASSERT_EQ(in.tensor.shape(), (Shape{1, 3, 4, 4}));
  EXPECT_FLOAT_EQ(at(in.tensor, 0, 1, 3), float(200 + 3 + 1) - 104);
  for (int c = 0; c < 3; ++c) {
    for (int y = 2; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) EXPECT_EQ(at(in.tensor, c, y, x), 0.0f);
    }
  }
  // A portrait image pads on the right.
  const RetinaFaceInput tall = retinaface_preprocess(synthetic(2, 4), 4, true);
  ASSERT_EQ(tall.tensor.shape(), (Shape{1, 3, 4, 4}));
  EXPECT_FLOAT_EQ(at(tall.tensor, 2, 3, 1), float(10 + 1) - 123);
  EXPECT_EQ(at(tall.tensor, 2, 3, 2), 0.0f);
}

TEST(RetinaFacePreprocess, ResizeKeepsAspectAndRounds) {
  // 10x6 -> long side 8: scale 0.8, 8 x round(4.8) = 5.
  Image flat = Image::black(10, 6);
  for (int i = 0; i < 60; ++i) {
    flat.pixels[size_t(i) * 3] = 30;       // R
    flat.pixels[size_t(i) * 3 + 1] = 140;  // G
    flat.pixels[size_t(i) * 3 + 2] = 250;  // B
  }
  const RetinaFaceInput in = retinaface_preprocess(flat, 8, false);
  EXPECT_EQ(in.tensor.shape(), (Shape{1, 3, 5, 8}));
  EXPECT_FLOAT_EQ(in.scale, 0.8f);
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 8; ++x) {
      EXPECT_FLOAT_EQ(at(in.tensor, 0, y, x), 250 - 104);
      EXPECT_FLOAT_EQ(at(in.tensor, 1, y, x), 140 - 117);
      EXPECT_FLOAT_EQ(at(in.tensor, 2, y, x), 30 - 123);
    }
  }
  // Upscaling too: 3x2 -> 9x6 (scale 3).
  const RetinaFaceInput up = retinaface_preprocess(synthetic(3, 2), 9, false);
  EXPECT_EQ(up.tensor.shape(), (Shape{1, 3, 6, 9}));
  EXPECT_FLOAT_EQ(up.scale, 3.0f);
  // Each value is a whole level (8-bit resampling) minus the mean.
  for (float v : up.tensor.to_float_vector()) EXPECT_EQ(v, std::round(v));
}

TEST(RetinaFacePreprocess, Errors) {
  EXPECT_THROW(retinaface_preprocess(Image{}, 320, false), InvalidArgument);
  EXPECT_THROW(retinaface_preprocess(synthetic(4, 4), 0, false), InvalidArgument);
  EXPECT_THROW(retinaface_preprocess(Image::black(4, 4, 1), 4, false), InvalidArgument);
}

}  // namespace
}  // namespace tern::vision
