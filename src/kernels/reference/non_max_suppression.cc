#include "kernels/reference/non_max_suppression.h"

#include <algorithm>
#include <cmath>

namespace tern::kernels::ref {

namespace {

struct Corners {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
};

Corners to_corners(const float* v, bool center_point_box) {
  if (center_point_box) {
    const float xc = v[0], yc = v[1], w = v[2], h = v[3];
    return Corners{yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return Corners{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]),
                 std::max(v[1], v[3])};
}

// Intersection over union; 0 for disjoint boxes and degenerate unions.
float iou(const Corners& a, const Corners& b) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0.0f;
  const float inter = ih * iw;
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const float area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  const float uni = area_a + area_b - inter;
  return uni <= 0 ? 0.0f : inter / uni;
}

}  // namespace

int64_t non_max_suppression(const NmsParams& p, const float* boxes, const float* scores,
                            int64_t* scratch, int64_t* out) {
  if (p.max_output_boxes_per_class <= 0) return 0;
  const int64_t N = p.boxes;
  int64_t rows = 0;
  for (int64_t b = 0; b < p.batches; ++b) {
    const float* bb = boxes + b * N * 4;
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* s = scores + (b * p.classes + c) * N;
      int64_t candidates = 0;
      for (int64_t n = 0; n < N; ++n) {
        // A NaN score is never selected (it would also break the sort's strict weak order).
        if (std::isnan(s[n])) continue;
        if (!p.has_score_threshold || s[n] > p.score_threshold) scratch[candidates++] = n;
      }
      std::stable_sort(scratch, scratch + candidates,
                       [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      // The kept boxes of this (b, c) are the last `kept` rows of out.
      int64_t kept = 0;
      for (int64_t i = 0; i < candidates && kept < p.max_output_boxes_per_class; ++i) {
        const int64_t n = scratch[i];
        const Corners cn = to_corners(bb + n * 4, p.center_point_box);
        bool suppressed = false;
        for (int64_t k = 0; k < kept && !suppressed; ++k) {
          const int64_t m = out[(rows - kept + k) * 3 + 2];
          suppressed = iou(cn, to_corners(bb + m * 4, p.center_point_box)) > p.iou_threshold;
        }
        if (suppressed) continue;
        out[rows * 3] = b;
        out[rows * 3 + 1] = c;
        out[rows * 3 + 2] = n;
        ++rows;
        ++kept;
      }
    }
  }
  return rows;
}

}  // namespace tern::kernels::ref
