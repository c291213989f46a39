// Spatial extents and window arithmetic shared by the sliding-window reference kernels
// (conv, conv_transpose, pool). See README.md in this folder for the data contract.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tern::kernels::ref {

/// Extents of up to three spatial dims (depth, height, width). Kernels with fewer
/// spatial dims set the leading ones to 1 (a 1-D conv has d = h = 1; a 2-D conv d = 1),
/// so one loop nest serves 1-D, 2-D and 3-D.
struct Dims3 {
  int64_t d = 1;
  int64_t h = 1;
  int64_t w = 1;
  int64_t size() const { return d * h * w; }
};

/// Floor division for any signs (C++ `/` truncates toward zero).
inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Ceiling division for any signs.
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/// Half-open index range [begin, end); empty when end <= begin.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  bool empty() const { return end <= begin; }
};

/// The indices o in [0, count) for which i = o * stride + offset lies in [0, limit).
/// Conv uses it with o an output index and i the input index a tap reads; ConvTranspose
/// with o an input index and i the output index it writes. stride >= 1.
inline Range valid_range(int64_t count, int64_t stride, int64_t offset, int64_t limit) {
  Range r;
  r.begin = std::max<int64_t>(0, ceil_div(-offset, stride));
  r.end = std::min<int64_t>(count, floor_div(limit - 1 - offset, stride) + 1);
  return r;
}

/// A sliding window between the grid a kernel iterates ("o", extents `count`) and the
/// grid its taps land in ("i", extents `limit`): tap k of position o lands at
/// i = o * stride + k * dilation - pad_begin along each dim. Conv and pooling iterate
/// output positions whose taps read the input (count = out, limit = in); ConvTranspose
/// iterates input positions whose taps write the output (count = in, limit = out).
struct WindowWalk {
  Dims3 count;
  Dims3 limit;
  Dims3 kernel;
  Dims3 stride;              ///< >= 1
  Dims3 dilation;            ///< >= 1
  Dims3 pad_begin{0, 0, 0};  ///< may be negative (ConvTranspose with output_shape)
};

/// The one window loop nest of the sliding-window kernels. For every tap (kd, kh, kw)
/// and every row (fixed d and h) of positions whose tap lands inside `limit`, calls
///   fn(tap, o_offset, i_offset, n)
/// with tap = (kd * kernel.h + kh) * kernel.w + kw: the run covers the n positions
/// o_offset, o_offset + 1, ... (row-major offsets in the count grid, contiguous) whose
/// tap lands at i_offset, i_offset + stride.w, ... (row-major offsets in the limit grid).
/// Loop order kd -> kh -> kw -> d -> h; valid_range() drops the positions whose tap
/// falls outside, so the caller's inner loop needs no bounds checks and vectorizes.
template <typename Fn>
inline void for_each_window_row(const WindowWalk& g, Fn&& fn) {
  for (int64_t kd = 0; kd < g.kernel.d; ++kd) {
    const int64_t off_d = kd * g.dilation.d - g.pad_begin.d;
    const Range rd = valid_range(g.count.d, g.stride.d, off_d, g.limit.d);
    for (int64_t kh = 0; kh < g.kernel.h; ++kh) {
      const int64_t off_h = kh * g.dilation.h - g.pad_begin.h;
      const Range rh = valid_range(g.count.h, g.stride.h, off_h, g.limit.h);
      for (int64_t kw = 0; kw < g.kernel.w; ++kw) {
        const int64_t off_w = kw * g.dilation.w - g.pad_begin.w;
        const Range rw = valid_range(g.count.w, g.stride.w, off_w, g.limit.w);
        if (rd.empty() || rh.empty() || rw.empty()) continue;
        const int64_t tap = (kd * g.kernel.h + kh) * g.kernel.w + kw;
        const int64_t n = rw.end - rw.begin;
        for (int64_t od = rd.begin; od < rd.end; ++od) {
          const int64_t id = od * g.stride.d + off_d;
          for (int64_t oh = rh.begin; oh < rh.end; ++oh) {
            const int64_t ih = oh * g.stride.h + off_h;
            fn(tap, (od * g.count.h + oh) * g.count.w + rw.begin,
               (id * g.limit.h + ih) * g.limit.w + rw.begin * g.stride.w + off_w, n);
          }
        }
      }
    }
  }
}

}  // namespace tern::kernels::ref
