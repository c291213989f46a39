#include "kernels/reference/reorder.h"

namespace tern::kernels::ref {

void f32_reorder_to_nchwc(const ReorderParams& p, const float* x, float* y, int64_t block_begin,
                          int64_t block_end) {
  const int64_t c = p.block, hw = p.h * p.w, cb = p.blocks();
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t b = block_begin; b < block_end; ++b) {
      float* out = y + (n * cb + b) * hw * c;
      for (int64_t lane = 0; lane < c; ++lane) {
        const int64_t ch = b * c + lane;
        if (ch >= p.channels) {
          for (int64_t s = 0; s < hw; ++s) out[s * c + lane] = 0.0f;
          continue;
        }
        const float* in = x + (n * p.channels + ch) * hw;
        for (int64_t s = 0; s < hw; ++s) out[s * c + lane] = in[s];
      }
    }
  }
}

void f32_reorder_to_nchw(const ReorderParams& p, const float* x, float* y, int64_t pixel_begin,
                         int64_t pixel_end) {
  const int64_t c = p.block, hw = p.h * p.w, cb = p.blocks();
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t b = 0; b < cb; ++b) {
      const int64_t lanes = p.channels - b * c < c ? p.channels - b * c : c;
      for (int64_t s0 = pixel_begin; s0 < pixel_end; s0 += kReorderRun) {
        const int64_t s1 = s0 + kReorderRun < pixel_end ? s0 + kReorderRun : pixel_end;
        const float* in = x + ((n * cb + b) * hw + s0) * c;
        for (int64_t lane = 0; lane < lanes; ++lane) {
          float* out = y + (n * p.channels + b * c + lane) * hw + s0;
          for (int64_t s = 0; s < s1 - s0; ++s) out[s] = in[s * c + lane];
        }
      }
    }
  }
}

}  // namespace tern::kernels::ref
