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

  for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
    float* yc = y + oc * out_plane;
    std::fill(yc, yc + out_plane, bias ? bias[oc] : 0.0f);
    const int64_t group = oc / cout_per_group;
    const int64_t oc_in_group = oc % cout_per_group;

    for (int64_t icg = 0; icg < cin_per_group; ++icg) {
      const int64_t ic = group * cin_per_group + icg;
      const float* xc = x + ic * in_plane;
      const float* wc = w + (ic * cout_per_group + oc_in_group) * taps;

      for (int64_t kd = 0; kd < p.kernel.d; ++kd) {
        // Input depths whose tap kd lands inside the output, and where it lands.
        const int64_t off_d = kd * p.dilation.d - p.pad_begin.d;
        const Range rd = valid_range(p.in.d, p.stride.d, off_d, p.out.d);
        for (int64_t kh = 0; kh < p.kernel.h; ++kh) {
          const int64_t off_h = kh * p.dilation.h - p.pad_begin.h;
          const Range rh = valid_range(p.in.h, p.stride.h, off_h, p.out.h);
          for (int64_t kw = 0; kw < p.kernel.w; ++kw) {
            const int64_t off_w = kw * p.dilation.w - p.pad_begin.w;
            const Range rw = valid_range(p.in.w, p.stride.w, off_w, p.out.w);
            if (rd.empty() || rh.empty() || rw.empty()) continue;
            const float wv = wc[(kd * p.kernel.h + kh) * p.kernel.w + kw];

            for (int64_t id = rd.begin; id < rd.end; ++id) {
              const int64_t od = id * p.stride.d + off_d;
              for (int64_t ih = rh.begin; ih < rh.end; ++ih) {
                const int64_t oh = ih * p.stride.h + off_h;
                const float* xrow = xc + (id * p.in.h + ih) * p.in.w + rw.begin;
                float* yrow = yc + (od * p.out.h + oh) * p.out.w + rw.begin * p.stride.w + off_w;
                scatter_row(rw.end - rw.begin, wv, xrow, p.stride.w, yrow);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace tern::kernels::ref
