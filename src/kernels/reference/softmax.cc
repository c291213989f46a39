#include "kernels/reference/softmax.h"

#include <algorithm>
#include <cmath>

namespace tern::kernels::ref {

void f32_softmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
                 int64_t inner, bool log) {
  for (int64_t o = outer_begin; o < outer_end; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      // One softmax over axis_len values `inner` apart (contiguous when inner == 1).
      const float* xs = x + o * axis_len * inner + i;
      float* ys = y + o * axis_len * inner + i;
      float m = xs[0];
      for (int64_t j = 1; j < axis_len; ++j) m = std::max(m, xs[j * inner]);
      float sum = 0.0f;
      if (log) {
        for (int64_t j = 0; j < axis_len; ++j) sum += std::exp(xs[j * inner] - m);
        const float shift = m + std::log(sum);
        for (int64_t j = 0; j < axis_len; ++j) ys[j * inner] = xs[j * inner] - shift;
      } else {
        for (int64_t j = 0; j < axis_len; ++j) {
          const float e = std::exp(xs[j * inner] - m);
          ys[j * inner] = e;
          sum += e;
        }
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < axis_len; ++j) ys[j * inner] *= inv;
      }
    }
  }
}

void f32_hardmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
                 int64_t inner) {
  for (int64_t o = outer_begin; o < outer_end; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* xs = x + o * axis_len * inner + i;
      float* ys = y + o * axis_len * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < axis_len; ++j) {
        if (xs[j * inner] > xs[best * inner]) best = j;
      }
      for (int64_t j = 0; j < axis_len; ++j) ys[j * inner] = j == best ? 1.0f : 0.0f;
    }
  }
}

}  // namespace tern::kernels::ref
