#include "kernels/reference/conv.h"

#include <algorithm>

namespace tern::kernels::ref {

namespace {

// y[i] += a * x[i * stride] for i in [0, n). __restrict lets the compiler vectorize.
inline void axpy_strided(int64_t n, float a, const float* __restrict x, int64_t stride,
                         float* __restrict y) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i * stride];
  }
}

}  // namespace

void f32_conv_nchw(const ConvParams& p, const float* x, const float* w, const float* bias,
                   float* y, int64_t oc_begin, int64_t oc_end) {
  const int64_t cin_per_group = p.in_channels / p.groups;
  const int64_t cout_per_group = p.out_channels / p.groups;
  const int64_t in_plane = p.in.size();
  const int64_t out_plane = p.out.size();
  const int64_t taps = p.kernel.size();

  for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
    float* yc = y + oc * out_plane;
    std::fill(yc, yc + out_plane, bias ? bias[oc] : 0.0f);
    const int64_t group = oc / cout_per_group;

    for (int64_t icg = 0; icg < cin_per_group; ++icg) {
      const float* xc = x + (group * cin_per_group + icg) * in_plane;
      const float* wc = w + (oc * cin_per_group + icg) * taps;

      for (int64_t kd = 0; kd < p.kernel.d; ++kd) {
        // Output depths whose tap kd reads inside the input, and the input offset.
        const int64_t off_d = kd * p.dilation.d - p.pad_begin.d;
        const Range rd = valid_range(p.out.d, p.stride.d, off_d, p.in.d);
        for (int64_t kh = 0; kh < p.kernel.h; ++kh) {
          const int64_t off_h = kh * p.dilation.h - p.pad_begin.h;
          const Range rh = valid_range(p.out.h, p.stride.h, off_h, p.in.h);
          for (int64_t kw = 0; kw < p.kernel.w; ++kw) {
            const int64_t off_w = kw * p.dilation.w - p.pad_begin.w;
            const Range rw = valid_range(p.out.w, p.stride.w, off_w, p.in.w);
            const float wv = wc[(kd * p.kernel.h + kh) * p.kernel.w + kw];
            if (rd.empty() || rh.empty() || rw.empty()) continue;

            for (int64_t od = rd.begin; od < rd.end; ++od) {
              const int64_t id = od * p.stride.d + off_d;
              for (int64_t oh = rh.begin; oh < rh.end; ++oh) {
                const int64_t ih = oh * p.stride.h + off_h;
                const float* xrow =
                    xc + (id * p.in.h + ih) * p.in.w + rw.begin * p.stride.w + off_w;
                float* yrow = yc + (od * p.out.h + oh) * p.out.w + rw.begin;
                axpy_strided(rw.end - rw.begin, wv, xrow, p.stride.w, yrow);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace tern::kernels::ref
