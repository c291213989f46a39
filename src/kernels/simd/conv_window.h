// The 2-D window of a convolution as the NCHWc tile loops read it (kernels/direct,
// kernels/depthwise): one flat set of extents instead of ConvParams' Dims3 triples.
#pragma once

#include <cstdint>

#include "kernels/reference/conv.h"

namespace tern::kernels {

/// Input extent (h rows, wd columns), output extent (oh, ow), kernel (kh, kw), stride
/// (sh, sw), dilation (dh, dw) and leading padding (ph rows, pw columns) of a 2-D
/// convolution; the depth dims of ConvParams are 1 for every kernel that uses it.
struct ConvWindow {
  int64_t h = 1, wd = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

/// The window of `cp` (its h and w dims).
inline ConvWindow conv_window(const ref::ConvParams& cp) {
  return ConvWindow{cp.in.h,       cp.in.w,       cp.out.h,       cp.out.w,
                    cp.kernel.h,   cp.kernel.w,   cp.stride.h,    cp.stride.w,
                    cp.dilation.h, cp.dilation.w, cp.pad_begin.h, cp.pad_begin.w};
}

}  // namespace tern::kernels
