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

}  // namespace tern::kernels::ref
