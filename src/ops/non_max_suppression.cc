// NonMaxSuppression (ONNX NonMaxSuppression-11): per batch and per class, greedily keeps
// the highest-scoring boxes whose IoU with every box kept before is <= iou_threshold.
// Inputs: boxes float32 [B, N, 4], scores float32 [B, C, N], and optional scalars
// max_output_boxes_per_class (int64, default 0 = select nothing), iou_threshold (float,
// default 0) and score_threshold (float; boxes scoring <= it are dropped). center_point_box
// 0: boxes are [y1, x1, y2, x2] corners in either order; 1: [x_center, y_center, w, h].
// Output: int64 [num_selected, 3] rows (batch, class, box), batch-major, class-major, then
// in selection order (descending score; equal scores keep the lower box index first).
// The output length depends on the values, so infer() runs the selection too.
#include <algorithm>
#include <numeric>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

struct Corners {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
};

class NonMaxSuppressionOp final : public Op {
 public:
  NonMaxSuppressionOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    center_point_box_ = attrs.get_int("center_point_box", 0);
    TERN_CHECK(center_point_box_ == 0 || center_point_box_ == 1, ModelError,
               "{}: center_point_box must be 0 or 1, got {}", where(), center_point_box_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "boxes");
    check_dtype(inputs[1].dtype, {DType::kFloat32}, where(), 1, "scores");
    const Shape& bs = inputs[0].shape;
    const Shape& ss = inputs[1].shape;
    TERN_CHECK(bs.size() == 3 && bs[2] == 4 && ss.size() == 3 && ss[0] == bs[0] && ss[2] == bs[1],
               ShapeError, "{}: expected boxes [B, N, 4] and scores [B, C, N], got {} and {}",
               where(), shape_str(bs), shape_str(ss));
    std::vector<const Tensor*> values(5, nullptr);
    for (int i = 0; i < 5; ++i) {
      if (has_input(inputs, i)) values[i] = &require_value(inputs, i);
    }
    const int64_t n = static_cast<int64_t>(select(values).size()) / 3;
    return {TensorType{DType::kInt64, {n, 3}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    std::vector<const Tensor*> values(5, nullptr);
    for (int i = 0; i < 5; ++i) {
      if (has_input(inputs, i)) values[i] = &inputs[i];
    }
    const std::vector<int64_t> rows = select(values);
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    TERN_CHECK(y.numel() == static_cast<int64_t>(rows.size()), InvalidArgument,
               "{}: output has {} elements, expected {}", where(), y.numel(), rows.size());
    std::copy(rows.begin(), rows.end(), y.data<int64_t>());
  }

 private:
  // The selected (batch, class, box) triples, flattened.
  std::vector<int64_t> select(const std::vector<const Tensor*>& in) const {
    const Tensor boxes = in[0]->contiguous();
    const Tensor scores = in[1]->contiguous();
    const int64_t max_out = in[2] && in[2]->numel() > 0
                                ? int_values(*in[2], where(), 2, "max_output_boxes_per_class")[0]
                                : 0;
    const float iou_threshold =
        in[3] && in[3]->numel() > 0
            ? static_cast<float>(scalar_value(*in[3], where(), 3, "iou_threshold"))
            : 0.0f;
    const bool has_score_threshold = in[4] && in[4]->numel() > 0;
    const float score_threshold =
        has_score_threshold
            ? static_cast<float>(scalar_value(*in[4], where(), 4, "score_threshold"))
            : 0.0f;
    const int64_t B = boxes.dim(0), N = boxes.dim(1), C = scores.dim(1);
    std::vector<int64_t> rows;
    if (max_out <= 0) return rows;
    const float* bp = boxes.data<float>();
    const float* sp = scores.data<float>();
    std::vector<Corners> corners(N);
    std::vector<int64_t> order;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t n = 0; n < N; ++n) corners[n] = to_corners(bp + (b * N + n) * 4);
      for (int64_t c = 0; c < C; ++c) {
        const float* s = sp + (b * C + c) * N;
        order.clear();
        for (int64_t n = 0; n < N; ++n) {
          if (!has_score_threshold || s[n] > score_threshold) order.push_back(n);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t bb) { return s[a] > s[bb]; });
        kept.clear();
        for (int64_t n : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          bool suppressed = false;
          for (int64_t k : kept) {
            if (iou(corners[n], corners[k]) > iou_threshold) {
              suppressed = true;
              break;
            }
          }
          if (suppressed) continue;
          kept.push_back(n);
          rows.insert(rows.end(), {b, c, n});
        }
      }
    }
    return rows;
  }

  Corners to_corners(const float* v) const {
    if (center_point_box_ == 1) {
      const float xc = v[0], yc = v[1], w = v[2], h = v[3];
      return Corners{yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
    }
    return Corners{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]),
                   std::max(v[1], v[3])};
  }

  static float iou(const Corners& a, const Corners& b) {
    const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
    const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
    if (ih <= 0 || iw <= 0) return 0.0f;
    const float inter = ih * iw;
    const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
    const float area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
    const float uni = area_a + area_b - inter;
    return uni <= 0 ? 0.0f : inter / uni;
  }

  int64_t center_point_box_ = 0;
};

}  // namespace

void register_non_max_suppression(OpRegistry& r) {
  r.add(make_schema<NonMaxSuppressionOp>("NonMaxSuppression", 2, 5));
}

}  // namespace tern::ops
