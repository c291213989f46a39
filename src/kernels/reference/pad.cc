#include "kernels/reference/pad.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tern::kernels::ref {

int64_t pad_source_index(int64_t o, int64_t in, int64_t pad_begin, int64_t pad_end, PadMode mode) {
  // The cropped input is [lo, lo + n); the output starts with `lead` padded elements.
  const int64_t lo = std::max<int64_t>(0, -pad_begin);
  const int64_t n = in - lo - std::max<int64_t>(0, -pad_end);
  const int64_t lead = std::max<int64_t>(0, pad_begin);
  int64_t j = o - lead;
  if (j >= 0 && j < n) return lo + j;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return lo + std::clamp<int64_t>(j, 0, n - 1);
    case PadMode::kReflect: {
      if (n == 1) return lo;
      const int64_t period = 2 * (n - 1);
      j %= period;
      if (j < 0) j += period;
      return lo + (j < n ? j : period - j);
    }
  }
  return -1;
}

namespace {

// The padding of f32_pad / pad_any for elements of type T (copied bit for bit).
template <typename T>
void pad_rows(const PadParams& p, const T* x, T* y, T value, int64_t row_begin, int64_t row_end) {
  const int last = p.rank - 1;
  const int64_t in_w = p.in_shape[last];
  const int64_t pb_w = p.pad_begin[last];
  const int64_t pe_w = p.pad_end[last];
  const int64_t out_w = in_w + pb_w + pe_w;
  // The middle run of each row copies x[lo_w, lo_w + n_w) to y[lead_w, lead_w + n_w).
  const int64_t lo_w = std::max<int64_t>(0, -pb_w);
  const int64_t lead_w = std::max<int64_t>(0, pb_w);
  const int64_t n_w = std::max<int64_t>(0, in_w - lo_w - std::max<int64_t>(0, -pe_w));

  for (int64_t r = row_begin; r < row_end; ++r) {
    T* yrow = y + r * out_w;
    // Source row: decompose r into output indices (last leading dim first).
    int64_t rem = r;
    int64_t in_off = 0;
    int64_t in_stride = in_w;
    bool fill = false;
    for (int d = last - 1; d >= 0; --d) {
      const int64_t out_d = p.in_shape[d] + p.pad_begin[d] + p.pad_end[d];
      const int64_t o = rem % out_d;
      rem /= out_d;
      const int64_t i = pad_source_index(o, p.in_shape[d], p.pad_begin[d], p.pad_end[d], p.mode);
      if (i < 0) {
        fill = true;
        break;
      }
      in_off += i * in_stride;
      in_stride *= p.in_shape[d];
    }
    if (fill) {
      std::fill(yrow, yrow + out_w, value);
      continue;
    }
    const T* xrow = x + in_off;
    for (int64_t o = 0; o < lead_w; ++o) {
      const int64_t i = pad_source_index(o, in_w, pb_w, pe_w, p.mode);
      yrow[o] = i < 0 ? value : xrow[i];
    }
    std::copy(xrow + lo_w, xrow + lo_w + n_w, yrow + lead_w);
    for (int64_t o = lead_w + n_w; o < out_w; ++o) {
      const int64_t i = pad_source_index(o, in_w, pb_w, pe_w, p.mode);
      yrow[o] = i < 0 ? value : xrow[i];
    }
  }
}

}  // namespace

void f32_pad(const PadParams& p, const float* x, float* y, int64_t row_begin, int64_t row_end) {
  pad_rows<float>(p, x, y, p.value, row_begin, row_end);
}

void pad_any(const PadParams& p, int elem_size, const void* x, void* y, const void* value,
             int64_t row_begin, int64_t row_end) {
  auto go = [&]<typename T>() {
    T v;
    std::memcpy(&v, value, sizeof(T));
    pad_rows<T>(p, static_cast<const T*>(x), static_cast<T*>(y), v, row_begin, row_end);
  };
  switch (elem_size) {
    case 1:
      go.template operator()<uint8_t>();
      break;
    case 2:
      go.template operator()<uint16_t>();
      break;
    case 4:
      go.template operator()<uint32_t>();
      break;
    default:
      go.template operator()<uint64_t>();
      break;
  }
}

}  // namespace tern::kernels::ref
