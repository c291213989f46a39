#include "kernels/reference/concat.h"

namespace tern::kernels::ref {

void f32_nchwc_copy_channels(const ChannelCopy& p, const float* x, float* y, int64_t pixel_begin,
                             int64_t pixel_end) {
  const int64_t c = p.block, xb = (p.x_channels + c - 1) / c;
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t ch = 0; ch < p.x_channels; ++ch) {
      const int64_t to = p.offset + ch;
      const float* in = x + ((n * xb + ch / c) * p.pixels) * c + ch % c;
      float* out = y + ((n * p.y_blocks + to / c) * p.pixels) * c + to % c;
      for (int64_t s = pixel_begin; s < pixel_end; ++s) out[s * c] = in[s * c];
    }
  }
}

}  // namespace tern::kernels::ref
