// NonMaxSuppression (ONNX NonMaxSuppression-11): per batch and per class, greedily keeps
// the highest-scoring boxes whose IoU with every box kept before is <= iou_threshold.
// Inputs: boxes float32 [B, N, 4], scores float32 [B, C, N], and optional scalars
// max_output_boxes_per_class (int64, default 0 = select nothing), iou_threshold (float,
// default 0) and score_threshold (float; boxes scoring <= it are dropped). center_point_box
// 0: boxes are [y1, x1, y2, x2] corners in either order; 1: [x_center, y_center, w, h].
// Output: int64 [num_selected, 3] rows (batch, class, box), batch-major, class-major, then
// in selection order (descending score; equal scores keep the lower box index first).
// The output length depends on the values, so infer() runs the selection too. The
// selection is kernels::ref::non_max_suppression.
#include "kernels/reference/non_max_suppression.h"

#include <algorithm>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

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
    kernels::ref::NmsParams p;
    p.batches = boxes.dim(0);
    p.boxes = boxes.dim(1);
    p.classes = scores.dim(1);
    p.center_point_box = center_point_box_ == 1;
    if (in[2] && in[2]->numel() > 0) {
      const std::vector<int64_t> v = int_values(*in[2], where(), 2, "max_output_boxes_per_class");
      TERN_CHECK(v.size() == 1, InvalidArgument,
                 "{}: max_output_boxes_per_class must hold one value, got {}", where(), v.size());
      p.max_output_boxes_per_class = v[0];
    }
    if (in[3] && in[3]->numel() > 0) {
      p.iou_threshold = static_cast<float>(scalar_value(*in[3], where(), 3, "iou_threshold"));
    }
    p.has_score_threshold = in[4] && in[4]->numel() > 0;
    if (p.has_score_threshold) {
      p.score_threshold = static_cast<float>(scalar_value(*in[4], where(), 4, "score_threshold"));
    }
    const int64_t per_class = std::min(p.boxes, std::max<int64_t>(p.max_output_boxes_per_class, 0));
    std::vector<int64_t> rows(static_cast<size_t>(p.batches * p.classes * per_class * 3));
    std::vector<int64_t> scratch(static_cast<size_t>(p.boxes));
    const int64_t n = kernels::ref::non_max_suppression(
        p, boxes.data<float>(), scores.data<float>(), scratch.data(), rows.data());
    rows.resize(static_cast<size_t>(n * 3));
    return rows;
  }

  int64_t center_point_box_ = 0;
};

}  // namespace

void register_non_max_suppression(OpRegistry& r) {
  r.add(make_schema<NonMaxSuppressionOp>("NonMaxSuppression", 2, 5));
}

}  // namespace tern::ops
