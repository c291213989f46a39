#include "kernels/reference/conv_transpose.h"

#include <algorithm>

namespace tern::kernels::ref {

namespace {

// y[i*stride] += w * x[i], i in [0, n).
inline void scatter_row(int64_t n, float w, const float* __restrict x, int64_t stride,
                        float* __restrict y) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i * stride] += w * x[i];
  }
}

}  // namespace

void f32_conv_transpose_nchw(const ConvTransposeParams& p, const float* x, const float* w,
                             const float* bias, float* y, int64_t oc_begin, int64_t oc_end) {
  const int64_t cin_per_group = p.in_channels / p.groups;
  const int64_t cout_per_group = p.out_channels / p.groups;
  const int64_t in_plane = p.in.size();
  const int64_t out_plane = p.out.size();
  const int64_t taps = p.kernel.size();
  // Input positions whose taps write the output.
  const WindowWalk walk{p.in, p.out, p.kernel, p.stride, p.dilation, p.pad_begin};

  for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
    float* yc = y + oc * out_plane;
    std::fill(yc, yc + out_plane, bias ? bias[oc] : 0.0f);
    const int64_t group = oc / cout_per_group;
    const int64_t oc_in_group = oc % cout_per_group;

    for (int64_t icg = 0; icg < cin_per_group; ++icg) {
      const int64_t ic = group * cin_per_group + icg;
      const float* xc = x + ic * in_plane;
      const float* wc = w + (ic * cout_per_group + oc_in_group) * taps;

      for_each_window_row(walk, [&](int64_t tap, int64_t x_off, int64_t y_off, int64_t n) {
        scatter_row(n, wc[tap], xc + x_off, p.stride.w, yc + y_off);
      });
    }
  }
}

}  // namespace tern::kernels::ref
