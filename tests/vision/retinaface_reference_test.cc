// The key end-to-end check: detect_faces() on the reference photos finds the faces that
// the ONNX Runtime reference outputs decode to (../shared/models/reference/
// retinaface_mnet025/*): same count with score > 0.6, each reference face matched by
// one of ours with IoU >= 0.9.
//
// The oracles are independent of tern's runtime: the reference boxes come from ORT's raw
// outputs (.bin) through retinaface_decode(), whose result is itself checked against
// the checks the reference tooling recorded in index.json (detection count, top boxes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/reference_cases.h"
#include "support/test_env.h"
#include "vision/image.h"
#include "vision/retinaface.h"

namespace tern::vision {
namespace {

// The retinaface_mnet025 cases of index.json (test::load_reference_cases()).
const std::vector<test::ReferenceCase>& face_cases() {
  static const std::vector<test::ReferenceCase> cases = [] {
    std::vector<test::ReferenceCase> out;
    for (test::ReferenceCase& c : test::load_reference_cases()) {
      if (c.model == "retinaface_mnet025") out.push_back(std::move(c));
    }
    return out;
  }();
  return cases;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const test::ReferenceCase& c : face_cases()) names.push_back(c.name);
  if (names.empty()) names.push_back("<none>");  // one test that skips
  return names;
}

Tensor read_output(const test::ReferenceCase& c, const std::string& name) {
  const test::CaseTensor* out = c.output(name);
  if (out == nullptr) {
    ADD_FAILURE() << "case " << c.name << " has no output " << name;
    return Tensor();
  }
  Tensor t = test::read_raw_f32(out->file, out->shape);
  EXPECT_TRUE(t.defined()) << "cannot read output " << name << " of " << c.name;
  return t;
}

class RetinaFaceReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto& cases = face_cases();
    auto it = std::find_if(cases.begin(), cases.end(),
                           [&](const test::ReferenceCase& c) { return c.name == GetParam(); });
    if (it == cases.end()) {
      GTEST_SKIP() << "no retinaface_mnet025 reference cases under " << test::models_dir();
    }
    c_ = &*it;
    ASSERT_FALSE(c_->image_meta.is_null()) << "case.json of " << c_->name << " has no image_meta";
    ASSERT_FALSE(c_->image.empty()) << "case " << c_->name << " names no image";
    const Shape& shape = c_->inputs.at(0).shape;  // [1, 3, H, W]
    height_ = shape.at(2);
    width_ = shape.at(3);
    scale_ = c_->image_meta.at("scale").get<float>();
    const auto pad = c_->image_meta.at("pad_bottom_right").get<std::vector<int>>();
    padded_ = pad.at(0) != 0 || pad.at(1) != 0;
  }

  // Faces decoded from ORT's outputs, in original photo pixels (threshold 0.6).
  std::vector<Face> reference_faces() const {
    return retinaface_decode(read_output(*c_, "loc"), read_output(*c_, "conf"),
                             read_output(*c_, "landms"), int(height_), int(width_), scale_);
  }

  const test::ReferenceCase* c_ = nullptr;
  int64_t height_ = 0, width_ = 0;  // network input
  float scale_ = 1;
  bool padded_ = false;
};

// Our decoding of ORT's outputs agrees with what the reference tooling recorded.
TEST_P(RetinaFaceReference, DecodingMatchesCaseJson) {
  const std::vector<Face> faces = reference_faces();
  const auto& checks = c_->checks;
  int over = 0;
  for (const Face& f : faces) over += f.score > 0.6f;
  EXPECT_EQ(over, checks.at("detections_score_gt_0.6_after_nms_0.4").get<int>());
  // Top boxes in input pixels (rounded to 0.1) and top scores (rounded to 1e-4), best first.
  const auto& boxes = checks.at("top_boxes_input_px_x1y1x2y2");
  const auto& scores = checks.at("top_scores");
  ASSERT_GE(faces.size(), boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(faces[i].box[size_t(k)] * scale_, boxes[i][size_t(k)].get<double>(), 0.06)
          << "face " << i << " coord " << k;
    }
    EXPECT_NEAR(faces[i].score, scores[i].get<double>(), 5.1e-5) << "face " << i;
  }
}

// tern's preprocessing of the photo reproduces the reference input (PIL 9.4 resize): only
// the JPEG decoders differ (stb_image vs libjpeg: IDCT and chroma upsampling round
// differently), by a level or two on a few pixels.
TEST_P(RetinaFaceReference, PreprocessingMatchesReferenceInput) {
  const Image photo = load_image(c_->image.string());
  const RetinaFaceInput in = retinaface_preprocess(photo, int(std::max(height_, width_)), padded_);
  ASSERT_EQ(in.tensor.shape(), (Shape{1, 3, height_, width_}));
  EXPECT_FLOAT_EQ(in.scale, scale_);
  const auto resized = c_->image_meta.at("resized_wh").get<std::vector<int>>();
  EXPECT_EQ(in.resized_width, resized.at(0));
  EXPECT_EQ(in.resized_height, resized.at(1));
  const Tensor ref = test::read_raw_f32(c_->inputs.at(0).file, in.tensor.shape());
  ASSERT_TRUE(ref.defined());
  const float* a = in.tensor.data<float>();
  const float* b = ref.data<float>();
  const int64_t n = ref.numel();
  double max_diff = 0, sum_diff = 0;
  int64_t exact = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    max_diff = std::max(max_diff, d);
    sum_diff += d;
    exact += d == 0;
  }
  EXPECT_LE(max_diff, 2.0);
  EXPECT_LT(sum_diff / double(n), 0.1);
  EXPECT_GT(double(exact) / double(n), 0.9);
}

// THE key test: tern end to end (photo -> preprocessing -> runtime -> decoding) finds the
// reference faces.
TEST_P(RetinaFaceReference, DetectFacesFindsTheReferenceFaces) {
  if (c_->input_pixels > test::max_test_pixels()) {
    GTEST_SKIP() << "input larger than TERN_TEST_MAX_PIXELS";
  }
  const std::vector<Face> expected = reference_faces();
  Session session(c_->model_path.string());
  const Image photo = load_image(c_->image.string());
  RetinaFaceOptions options;
  options.size = int(std::max(height_, width_));
  options.pad_to_square = padded_;
  const std::vector<Face> found = detect_faces(session, photo, options);

  auto count_over = [](const std::vector<Face>& faces) {
    return std::count_if(faces.begin(), faces.end(), [](const Face& f) { return f.score > 0.6f; });
  };
  EXPECT_EQ(count_over(found), count_over(expected));
  // One-to-one matching, reference faces in score order, each to its best unused match.
  std::vector<bool> used(found.size(), false);
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!(expected[i].score > 0.6f)) continue;
    float best = 0;
    size_t best_j = found.size();
    for (size_t j = 0; j < found.size(); ++j) {
      const float iou = box_iou(expected[i].box, found[j].box);
      if (!used[j] && iou > best) {
        best = iou;
        best_j = j;
      }
    }
    EXPECT_GE(best, 0.9f) << "reference face " << i << " (score " << expected[i].score
                          << ") has no match with IoU >= 0.9";
    if (best_j < found.size()) {
      used[best_j] = true;
      EXPECT_NEAR(found[best_j].score, expected[i].score, 0.05) << "face " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RetinaFaceReference, ::testing::ValuesIn(case_names()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace tern::vision
