#include "kernels/reference/pool.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tern::kernels::ref {

namespace {

// Visits every tap of every window of one plane: fn(y_row, x_row, n, x_stride) for a run of
// n outputs starting at y_row whose tap reads x_row[i * x_stride]. Taps outside the input
// are skipped (for_each_window_row in spatial.h).
template <typename Fn>
void for_each_tap_row(const PoolParams& p, const float* xc, float* yc, Fn&& fn) {
  const WindowWalk walk{p.out, p.in, p.kernel, p.stride, p.dilation, p.pad_begin};
  for_each_window_row(walk, [&](int64_t, int64_t y_off, int64_t x_off, int64_t n) {
    fn(yc + y_off, xc + x_off, n, p.stride.w);
  });
}

}  // namespace

void f32_max_pool(const PoolParams& p, const float* x, float* y, int64_t plane_begin,
                  int64_t plane_end) {
  const int64_t in_plane = p.in.size();
  const int64_t out_plane = p.out.size();
  for (int64_t c = plane_begin; c < plane_end; ++c) {
    float* yc = y + c * out_plane;
    std::fill(yc, yc + out_plane, -std::numeric_limits<float>::infinity());
    for_each_tap_row(
        p, x + c * in_plane, yc,
        [](float* __restrict yrow, const float* __restrict xrow, int64_t n, int64_t stride) {
          if (stride == 1) {
            for (int64_t i = 0; i < n; ++i) yrow[i] = std::max(yrow[i], xrow[i]);
          } else {
            for (int64_t i = 0; i < n; ++i) {
              yrow[i] = std::max(yrow[i], xrow[i * stride]);
            }
          }
        });
  }
}

template <typename T>
void max_pool_with_indices(const PoolParams& p, const T* x, T* y, int64_t* indices,
                           int64_t plane_begin, int64_t plane_end, bool column_major) {
  const int64_t in_plane = p.in.size();
  const int64_t out_plane = p.out.size();
  for (int64_t c = plane_begin; c < plane_end; ++c) {
    const T* xc = x + c * in_plane;
    for (int64_t od = 0; od < p.out.d; ++od) {
      for (int64_t oh = 0; oh < p.out.h; ++oh) {
        for (int64_t ow = 0; ow < p.out.w; ++ow) {
          T best = std::numeric_limits<T>::lowest();
          if constexpr (std::numeric_limits<T>::has_infinity) {
            best = -std::numeric_limits<T>::infinity();
          }
          int64_t best_d = -1, best_h = 0, best_w = 0;
          for (int64_t kd = 0; kd < p.kernel.d; ++kd) {
            const int64_t id = od * p.stride.d - p.pad_begin.d + kd * p.dilation.d;
            if (id < 0 || id >= p.in.d) continue;
            for (int64_t kh = 0; kh < p.kernel.h; ++kh) {
              const int64_t ih = oh * p.stride.h - p.pad_begin.h + kh * p.dilation.h;
              if (ih < 0 || ih >= p.in.h) continue;
              for (int64_t kw = 0; kw < p.kernel.w; ++kw) {
                const int64_t iw = ow * p.stride.w - p.pad_begin.w + kw * p.dilation.w;
                if (iw < 0 || iw >= p.in.w) continue;
                const T v = xc[(id * p.in.h + ih) * p.in.w + iw];
                if (best_d < 0 || v > best) {
                  best = v;
                  best_d = id;
                  best_h = ih;
                  best_w = iw;
                }
              }
            }
          }
          const int64_t o = c * out_plane + (od * p.out.h + oh) * p.out.w + ow;
          y[o] = best;
          if (indices) {
            indices[o] = best_d < 0 ? -1
                         : column_major
                             ? c * in_plane + (best_w * p.in.h + best_h) * p.in.d + best_d
                             : c * in_plane + (best_d * p.in.h + best_h) * p.in.w + best_w;
          }
        }
      }
    }
  }
}

template void max_pool_with_indices<float>(const PoolParams&, const float*, float*, int64_t*,
                                           int64_t, int64_t, bool);
template void max_pool_with_indices<double>(const PoolParams&, const double*, double*, int64_t*,
                                            int64_t, int64_t, bool);
template void max_pool_with_indices<int8_t>(const PoolParams&, const int8_t*, int8_t*, int64_t*,
                                            int64_t, int64_t, bool);
template void max_pool_with_indices<uint8_t>(const PoolParams&, const uint8_t*, uint8_t*, int64_t*,
                                             int64_t, int64_t, bool);

void f32_average_pool(const PoolParams& p, const float* x, float* y, int64_t plane_begin,
                      int64_t plane_end) {
  const int64_t in_plane = p.in.size();
  const int64_t out_plane = p.out.size();
  for (int64_t c = plane_begin; c < plane_end; ++c) {
    float* yc = y + c * out_plane;
    std::fill(yc, yc + out_plane, 0.0f);
    for_each_tap_row(
        p, x + c * in_plane, yc,
        [](float* __restrict yrow, const float* __restrict xrow, int64_t n, int64_t stride) {
          if (stride == 1) {
            for (int64_t i = 0; i < n; ++i) yrow[i] += xrow[i];
          } else {
            for (int64_t i = 0; i < n; ++i) yrow[i] += xrow[i * stride];
          }
        });
    // Divide by the window count, which factors into one count per dim.
    const bool inc = p.count_include_pad;
    for (int64_t od = 0; od < p.out.d; ++od) {
      const int64_t cd = pool_window_count(od, p.in.d, p.kernel.d, p.stride.d, p.dilation.d,
                                      p.pad_begin.d, p.pad_end.d, inc);
      for (int64_t oh = 0; oh < p.out.h; ++oh) {
        const int64_t ch = pool_window_count(oh, p.in.h, p.kernel.h, p.stride.h, p.dilation.h,
                                        p.pad_begin.h, p.pad_end.h, inc);
        float* yrow = yc + (od * p.out.h + oh) * p.out.w;
        for (int64_t ow = 0; ow < p.out.w; ++ow) {
          const int64_t cw = pool_window_count(ow, p.in.w, p.kernel.w, p.stride.w, p.dilation.w,
                                          p.pad_begin.w, p.pad_end.w, inc);
          const int64_t count = cd * ch * cw;
          // An empty window (possible only with pads >= kernel) stays 0 rather than NaN.
          if (count > 0) yrow[ow] /= static_cast<float>(count);
        }
      }
    }
  }
}

void f32_global_average_pool(const float* x, float* y, int64_t plane_size, int64_t plane_begin,
                             int64_t plane_end) {
  for (int64_t c = plane_begin; c < plane_end; ++c) {
    const float* xc = x + c * plane_size;
    // Accumulate in double: planes can hold 10^5 values and the mean must stay exact to
    // float precision whatever the summation order of a faster kernel. Eight partial sums
    // (summed in a fixed order, so every thread count gives the same bits) keep eight
    // additions in flight instead of one chain of their latency (ppocr's SE block on a
    // 24 x 64 x 96 NCHW tensor: 0.093 ms).
    constexpr int kChains = 8;
    double part[kChains] = {};
    int64_t i = 0;
    for (; i + kChains <= plane_size; i += kChains) {
      for (int k = 0; k < kChains; ++k) part[k] += xc[i + k];
    }
    for (; i < plane_size; ++i) part[i % kChains] += xc[i];
    double sum = 0.0;
    for (double v : part) sum += v;
    y[c] = static_cast<float>(sum / static_cast<double>(plane_size));
  }
}

void f32_global_max_pool(const float* x, float* y, int64_t plane_size, int64_t plane_begin,
                         int64_t plane_end) {
  for (int64_t c = plane_begin; c < plane_end; ++c) {
    const float* xc = x + c * plane_size;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < plane_size; ++i) m = std::max(m, xc[i]);
    y[c] = m;
  }
}

}  // namespace tern::kernels::ref
