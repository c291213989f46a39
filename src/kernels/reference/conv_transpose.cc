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

// y[j * KW + t] += w[t] * x[j] for j in [0, n), t in [0, KW): one input row through the
// KW taps of one kernel row when the taps tile the output row (stride == kernel).
template <int KW>
inline void interleave_row(int64_t n, const float* w, const float* __restrict x,
                           float* __restrict y) {
  for (int64_t j = 0; j < n; ++j) {
    for (int t = 0; t < KW; ++t) y[j * KW + t] += w[t] * x[j];
  }
}

inline void interleave_row_n(int64_t n, int64_t kw, const float* w, const float* __restrict x,
                             float* __restrict y) {
  switch (kw) {
    case 1:
      return interleave_row<1>(n, w, x, y);
    case 2:
      return interleave_row<2>(n, w, x, y);
    case 3:
      return interleave_row<3>(n, w, x, y);
    case 4:
      return interleave_row<4>(n, w, x, y);
    default:
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t t = 0; t < kw; ++t) y[j * kw + t] += w[t] * x[j];
      }
  }
}

// The upsampling case (kernel == stride, dilation 1, no padding, output = input * stride,
// 1-D or 2-D): every output pixel receives exactly one tap, so each output row is the sum over
// input channels of one input row through one kernel row, its taps interleaved. Rows
// are built one at a time from the bias (contiguous writes, a vectorizable inner loop)
// instead of scattering every tap over the whole plane with a stride.
bool tiles_output(const ConvTransposeParams& p) {
  return p.in.d == 1 && p.kernel.d == 1 && p.out.d == 1 && p.kernel.h == p.stride.h &&
         p.kernel.w == p.stride.w && p.dilation.h == 1 && p.dilation.w == 1 &&
         p.pad_begin.h == 0 && p.pad_begin.w == 0 && p.out.h == p.in.h * p.stride.h &&
         p.out.w == p.in.w * p.stride.w;
}

void upsample_channels(const ConvTransposeParams& p, const float* x, const float* w,
                       const float* bias, float* y, int64_t oc_begin, int64_t oc_end) {
  const int64_t cin_per_group = p.in_channels / p.groups;
  const int64_t cout_per_group = p.out_channels / p.groups;
  const int64_t in_plane = p.in.h * p.in.w, out_plane = p.out.h * p.out.w;
  const int64_t kh = p.kernel.h, kw = p.kernel.w;
  for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
    const int64_t group = oc / cout_per_group, oc_in_group = oc % cout_per_group;
    for (int64_t oh = 0; oh < p.out.h; ++oh) {
      const int64_t ih = oh / kh, i = oh % kh;
      float* yr = y + oc * out_plane + oh * p.out.w;
      std::fill(yr, yr + p.out.w, bias ? bias[oc] : 0.0f);
      for (int64_t icg = 0; icg < cin_per_group; ++icg) {
        const int64_t ic = group * cin_per_group + icg;
        const float* wr = w + ((ic * cout_per_group + oc_in_group) * kh + i) * kw;
        interleave_row_n(p.in.w, kw, wr, x + ic * in_plane + ih * p.in.w, yr);
      }
    }
  }
}

}  // namespace

void f32_conv_transpose_nchw(const ConvTransposeParams& p, const float* x, const float* w,
                             const float* bias, float* y, int64_t oc_begin, int64_t oc_end) {
  if (tiles_output(p)) return upsample_channels(p, x, w, bias, y, oc_begin, oc_end);
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
