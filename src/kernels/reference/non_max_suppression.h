// Reference NonMaxSuppression kernel (ONNX NonMaxSuppression-11): greedy selection per
// batch and class.
//
// Data contract: boxes float32 [B, N, 4] (corners [y1, x1, y2, x2] in either order, or
// [x_center, y_center, w, h] with center_point_box), scores float32 [B, C, N], both
// contiguous. The caller gives scratch for N box indices and the output capacity
// (B * C * min(N, max_output_boxes_per_class) rows of 3 int64 always suffice).
// No allocation, no threads, no throwing.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// Shape and thresholds of one NonMaxSuppression.
struct NmsParams {
  int64_t batches = 1;                     ///< B
  int64_t classes = 1;                     ///< C
  int64_t boxes = 0;                       ///< N
  bool center_point_box = false;           ///< boxes are [xc, yc, w, h]
  int64_t max_output_boxes_per_class = 0;  ///< <= 0 selects nothing
  float iou_threshold = 0.0f;              ///< suppress when IoU > this
  bool has_score_threshold = false;        ///< drop boxes scoring <= score_threshold
  float score_threshold = 0.0f;
};

/// Writes the selected (batch, class, box) triples to `out` (batch-major, class-major,
/// then by descending score; equal scores keep the lower box index first) and returns
/// their count. `scratch` holds N int64 values.
int64_t non_max_suppression(const NmsParams& p, const float* boxes, const float* scores,
                            int64_t* scratch, int64_t* out);

}  // namespace tern::kernels::ref
