#include "vision/retinaface.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>

#include "base/check.h"

namespace tern::vision {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Returns `t` as a contiguous float32 [N, k] view (accepts [1, N, k] and [N, k]).
Tensor as_rows(const Tensor& t, const char* name, int64_t n, int64_t k, int input_height,
               int input_width) {
  TERN_CHECK(t.defined(), InvalidArgument, "retinaface_decode: output '{}' is missing", name);
  TERN_CHECK(t.dtype() == DType::kFloat32, InvalidArgument,
             "retinaface_decode: expected output '{}' as float32, but got {}", name,
             dtype_name(t.dtype()));
  const bool ok = (t.rank() == 3 && t.dim(0) == 1 && t.dim(1) == n && t.dim(2) == k) ||
                  (t.rank() == 2 && t.dim(0) == n && t.dim(1) == k);
  TERN_CHECK(ok, ShapeError,
             "retinaface_decode: expected output '{}' of shape [1, {}, {}] ({} priors for a "
             "{}x{} input), but got {}",
             name, n, k, n, input_height, input_width, shape_str(t.shape()));
  return t.contiguous();
}

}  // namespace

std::vector<PriorBox> retinaface_priors(int input_height, int input_width) {
  TERN_CHECK(input_height > 0 && input_width > 0, InvalidArgument,
             "retinaface_priors: expected a positive input size, but got {}x{}", input_height,
             input_width);
  std::vector<PriorBox> priors;
  const double h = input_height, w = input_width;
  for (int k = 0; k < 3; ++k) {
    const int step = kRetinaFaceSteps[k];
    // ceil(H / step) x ceil(W / step) cells, as MANIFEST.md and the repo's Python write it
    // (exact in double for any int size).
    const auto rows = static_cast<int64_t>(std::ceil(double(input_height) / step));
    const auto cols = static_cast<int64_t>(std::ceil(double(input_width) / step));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        for (int min_size : kRetinaFaceMinSizes[k]) {
          // Computed in double and rounded once, as the repo's Python floats -> float32.
          priors.push_back({static_cast<float>((double(j) + 0.5) * step / w),
                            static_cast<float>((double(i) + 0.5) * step / h),
                            static_cast<float>(min_size / w), static_cast<float>(min_size / h)});
        }
      }
    }
  }
  return priors;
}

RetinaFaceInput retinaface_preprocess(const Image& image, int size, bool pad_to_square) {
  TERN_CHECK(image.width > 0 && image.height > 0 && image.channels == 3 &&
                 image.pixels.size() == size_t(image.width) * image.height * 3,
             InvalidArgument,
             "retinaface_preprocess: expected a non-empty RGB image, but got {}x{}x{}", image.width,
             image.height, image.channels);
  TERN_CHECK(size >= 1 && size <= 16384, InvalidArgument,
             "retinaface_preprocess: expected a size in 1..16384, but got {}", size);
  const int long_side = std::max(image.width, image.height);
  const double scale = double(size) / long_side;
  RetinaFaceInput input;
  input.scale = static_cast<float>(scale);
  input.resized_width = std::max(1, int(std::lround(image.width * scale)));
  input.resized_height = std::max(1, int(std::lround(image.height * scale)));
  const int rw = input.resized_width, rh = input.resized_height;

  // PIL's 8-bit resampling, as the reference inputs were made (rounded after each pass).
  Image resized_storage;
  const Image* resized = &image;
  if (rw != image.width || rh != image.height) {
    resized_storage = resize_u8(image, rw, rh);
    resized = &resized_storage;
  }

  const int64_t out_h = pad_to_square ? std::max(size, rh) : rh;
  const int64_t out_w = pad_to_square ? std::max(size, rw) : rw;
  input.tensor = Tensor::zeros(DType::kFloat32, {1, 3, out_h, out_w});
  float* dst = input.tensor.data<float>();
  const uint8_t* src = resized->pixels.data();
  for (int c = 0; c < 3; ++c) {
    // Network channel c (B, G, R) comes from RGB channel 2 - c.
    const int rgb = 2 - c;
    const float mean = kRetinaFaceMeanBgr[c];
    float* plane = dst + c * out_h * out_w;
    for (int y = 0; y < rh; ++y) {
      const uint8_t* row = src + size_t(y) * rw * 3;
      float* out = plane + y * out_w;
      for (int x = 0; x < rw; ++x) out[x] = float(row[x * 3 + rgb]) - mean;
    }
  }
  return input;
}

float box_iou(const Box& a, const Box& b, float offset) {
  const float iw = std::min(a[2], b[2]) - std::max(a[0], b[0]) + offset;
  const float ih = std::min(a[3], b[3]) - std::max(a[1], b[1]) + offset;
  if (!(iw > 0 && ih > 0)) return 0.0f;
  const float inter = iw * ih;
  const float area_a = (a[2] - a[0] + offset) * (a[3] - a[1] + offset);
  const float area_b = (b[2] - b[0] + offset) * (b[3] - b[1] + offset);
  const float uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0.0f;
}

std::vector<size_t> nms(const std::vector<Box>& boxes, const std::vector<float>& scores,
                        float iou_threshold) {
  TERN_CHECK(boxes.size() == scores.size(), InvalidArgument,
             "nms: expected as many scores as boxes ({}), but got {}", boxes.size(), scores.size());
  std::vector<size_t> order(boxes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<size_t> keep;
  std::vector<bool> dropped(boxes.size(), false);
  for (size_t oi = 0; oi < order.size(); ++oi) {
    const size_t i = order[oi];
    if (dropped[i]) continue;
    keep.push_back(i);
    for (size_t oj = oi + 1; oj < order.size(); ++oj) {
      const size_t j = order[oj];
      if (!dropped[j] && box_iou(boxes[i], boxes[j], 1.0f) > iou_threshold) dropped[j] = true;
    }
  }
  return keep;
}

std::vector<Face> retinaface_decode(const Tensor& loc, const Tensor& conf, const Tensor& landms,
                                    int input_height, int input_width, float scale,
                                    const RetinaFaceOptions& options) {
  TERN_CHECK(scale > 0 && std::isfinite(scale), InvalidArgument,
             "retinaface_decode: expected a positive scale, but got {}", scale);
  const std::vector<PriorBox> priors = retinaface_priors(input_height, input_width);
  const auto n = static_cast<int64_t>(priors.size());
  const Tensor loc_rows = as_rows(loc, "loc", n, 4, input_height, input_width);
  const Tensor conf_rows = as_rows(conf, "conf", n, 2, input_height, input_width);
  const Tensor landms_rows = as_rows(landms, "landms", n, 10, input_height, input_width);
  const float* l = loc_rows.data<float>();
  const float* c = conf_rows.data<float>();
  const float* m = landms_rows.data<float>();

  // Candidates over the confidence threshold, best first, at most top_k.
  std::vector<int64_t> candidates;
  for (int64_t i = 0; i < n; ++i) {
    if (c[i * 2 + 1] > options.confidence_threshold) candidates.push_back(i);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int64_t a, int64_t b) { return c[a * 2 + 1] > c[b * 2 + 1]; });
  if (options.top_k >= 0 && candidates.size() > size_t(options.top_k)) {
    candidates.resize(size_t(options.top_k));
  }

  // Decode them into photo pixels: input pixels are (W, H) times the normalized values,
  // photo pixels are input pixels / scale.
  const float sx = float(input_width) / scale, sy = float(input_height) / scale;
  const float v0 = kRetinaFaceVariance[0], v1 = kRetinaFaceVariance[1];
  std::vector<Face> faces;
  std::vector<Box> boxes;
  std::vector<float> scores;
  faces.reserve(candidates.size());
  for (int64_t i : candidates) {
    const PriorBox& p = priors[size_t(i)];
    const float* d = l + i * 4;
    const float cx = p.cx + d[0] * v0 * p.w, cy = p.cy + d[1] * v0 * p.h;
    const float w = p.w * std::exp(d[2] * v1), h = p.h * std::exp(d[3] * v1);
    Face face;
    const float x1 = cx - w / 2, y1 = cy - h / 2;
    face.box = {x1 * sx, y1 * sy, (x1 + w) * sx, (y1 + h) * sy};
    face.score = c[i * 2 + 1];
    const float* lm = m + i * 10;
    for (int k = 0; k < 5; ++k) {
      face.landmarks[k] = {(p.cx + lm[2 * k] * v0 * p.w) * sx,
                           (p.cy + lm[2 * k + 1] * v0 * p.h) * sy};
    }
    faces.push_back(face);
    boxes.push_back(face.box);
    scores.push_back(face.score);
  }

  std::vector<size_t> keep = nms(boxes, scores, options.nms_iou);
  if (options.keep_top_k >= 0 && keep.size() > size_t(options.keep_top_k)) {
    keep.resize(size_t(options.keep_top_k));
  }
  std::vector<Face> result;
  for (size_t k : keep) {
    if (faces[k].score >= options.threshold) result.push_back(faces[k]);
  }
  return result;
}

std::vector<Face> detect_faces(Session& session, const Image& image,
                               const RetinaFaceOptions& options, DetectTimings* timings) {
  const std::vector<TensorInfo>& inputs = session.inputs();
  const std::vector<TensorInfo>& outputs = session.outputs();
  TERN_CHECK(
      inputs.size() == 1 && inputs[0].dtype == DType::kFloat32 && inputs[0].shape.size() == 4,
      InvalidArgument,
      "detect_faces: expected a RetinaFace model with one float32 input [1, 3, H, W], "
      "but the model has {} input(s){}",
      inputs.size(),
      inputs.empty() ? std::string()
                     : fmt::format(", the first '{}' {} of rank {}", inputs[0].name,
                                   dtype_name(inputs[0].dtype), inputs[0].shape.size()));
  TERN_CHECK(outputs.size() == 3, InvalidArgument,
             "detect_faces: expected a RetinaFace model with 3 outputs (loc, conf, landms), but "
             "the model has {}",
             outputs.size());

  auto start = std::chrono::steady_clock::now();
  RetinaFaceInput input = retinaface_preprocess(image, options.size, options.pad_to_square);
  const double preprocess_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  std::vector<NamedTensor> results = session.run({{inputs[0].name, input.tensor}});
  const double run_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  // Outputs by name when the model names them loc/conf/landms, else by position.
  const char* names[3] = {"loc", "conf", "landms"};
  Tensor found[3];
  for (int k = 0; k < 3; ++k) {
    for (const NamedTensor& r : results) {
      if (r.name == names[k]) found[k] = r.tensor;
    }
    if (!found[k].defined() && results.size() == 3) found[k] = results[size_t(k)].tensor;
  }
  std::vector<Face> faces =
      retinaface_decode(found[0], found[1], found[2], int(input.tensor.dim(2)),
                        int(input.tensor.dim(3)), input.scale, options);
  if (timings != nullptr) {
    timings->preprocess_ms = preprocess_ms;
    timings->run_ms = run_ms;
    timings->postprocess_ms = ms_since(start);
  }
  return faces;
}

void draw_faces(Image& image, const std::vector<Face>& faces) {
  const int shorter = std::min(image.width, image.height);
  const int thickness = std::max(2, shorter / 300);
  const int text_scale = std::max(1, shorter / 300);
  const Color box_color{0, 220, 0};
  const Color landmark_colors[5] = {
      {255, 0, 0}, {255, 255, 0}, {255, 0, 255}, {0, 255, 0}, {0, 0, 255}};
  for (const Face& face : faces) {
    draw_rect(image, face.box[0], face.box[1], face.box[2], face.box[3], box_color, thickness);
    const std::string label = fmt::format("{:.2f}", face.score);
    const TextSize size = text_size(label, text_scale);
    const float pad = float(text_scale);
    // Label on a filled tab above the box (inside it when the box touches the top).
    float top = face.box[1] - float(size.height) - 2 * pad;
    if (top < 0) top = face.box[1];
    const float left = face.box[0];
    draw_rect(image, left, top, left + float(size.width) + 2 * pad,
              top + float(size.height) + 2 * pad, box_color, size.height + 4 * text_scale);
    draw_text(image, left + pad, top + pad + 1, label, Color{0, 0, 0}, text_scale);
    for (int k = 0; k < 5; ++k) {
      draw_point(image, face.landmarks[k][0], face.landmarks[k][1], landmark_colors[k]);
    }
  }
}

}  // namespace tern::vision
