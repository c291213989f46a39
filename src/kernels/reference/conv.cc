#include "kernels/reference/conv.h"

#include <algorithm>

namespace tern::kernels::ref {

namespace {

// Input channels summed per pass over an output row. One pass per channel costs two
// loads and a store of y per multiply-add; four channels per pass share one load and
// store of y among four multiply-adds (6 memory operations per 4 MACs instead of 12),
// which makes the loop about 1.6x faster on SSE2/NEON. More pointers than 4 spill
// registers on x86-64 and run slower (measured).
constexpr int64_t kIcBlock = 4;

// y[i] += w[0] * x0[i*stride] + ... + w[3] * x3[i*stride], i in [0, n). The stride-1 case
// is a separate loop so the compiler sees contiguous loads and vectorizes it.
inline void accumulate_row4(int64_t n, const float* w, const float* const* x, int64_t stride,
                            float* __restrict y) {
  const float* __restrict x0 = x[0];
  const float* __restrict x1 = x[1];
  const float* __restrict x2 = x[2];
  const float* __restrict x3 = x[3];
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) {
      y[i] += w0 * x0[i] + w1 * x1[i] + w2 * x2[i] + w3 * x3[i];
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = i * stride;
      y[i] += w0 * x0[j] + w1 * x1[j] + w2 * x2[j] + w3 * x3[j];
    }
  }
}

// y[i] += w * x[i*stride], i in [0, n): one input channel (depthwise, remainders).
inline void accumulate_row1(int64_t n, float w, const float* __restrict x, int64_t stride,
                            float* __restrict y) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i * stride];
  }
}

}  // namespace

void f32_conv_nchw(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                   int64_t oc_begin, int64_t oc_end) {
  const int64_t cin_per_group = p.in_channels / p.groups;
  const int64_t cout_per_group = p.out_channels / p.groups;
  const int64_t in_plane = p.in.size();
  const int64_t out_plane = p.out.size();
  const int64_t taps = p.kernel.size();
  // Output positions whose taps read the input.
  const WindowWalk walk{p.out, p.in, p.kernel, p.stride, p.dilation, p.pad_begin};

  for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
    float* yc = y + oc * out_plane;
    std::fill(yc, yc + out_plane, bias ? bias[oc] : 0.0f);
    const int64_t group = oc / cout_per_group;

    // Input channels of this group, kIcBlock at a time, then one at a time.
    for (int64_t ic = 0; ic < cin_per_group;) {
      const int64_t block = cin_per_group - ic >= kIcBlock ? kIcBlock : 1;
      const float* xc = x + (group * cin_per_group + ic) * in_plane;
      const float* wc = w + (oc * cin_per_group + ic) * taps;

      for_each_window_row(walk, [&](int64_t tap, int64_t y_off, int64_t x_off, int64_t n) {
        float* yrow = yc + y_off;
        if (block == kIcBlock) {
          const float wv[kIcBlock] = {wc[tap], wc[taps + tap], wc[2 * taps + tap],
                                      wc[3 * taps + tap]};
          const float* xrows[kIcBlock];
          for (int64_t b = 0; b < kIcBlock; ++b) xrows[b] = xc + b * in_plane + x_off;
          accumulate_row4(n, wv, xrows, p.stride.w, yrow);
        } else {
          accumulate_row1(n, wc[tap], xc + x_off, p.stride.w, yrow);
        }
      });
      ic += block;
    }
  }
}

}  // namespace tern::kernels::ref
