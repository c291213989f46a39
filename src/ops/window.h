// Sliding-window attributes shared by Conv, ConvTranspose and the pooling ops:
// kernel_shape, strides, dilations, pads and auto_pad, and the output-size arithmetic
// of ONNX Conv-11 / MaxPool-12 / AveragePool-11.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reference/spatial.h"
#include "ops/attrs.h"

namespace tern::ops {

/// ONNX auto_pad.
enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// The window attributes as written in the node. Empty vectors mean "absent" (defaults:
/// strides and dilations 1, pads 0, kernel_shape from the weights for Conv).
struct WindowAttrs {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  ///< [x1_begin, x2_begin, ..., x1_end, x2_end, ...]
  AutoPad auto_pad = AutoPad::kNotSet;

  /// Number of spatial dims the attributes imply (0 when none of them is given).
  int spatial_rank() const;
  int64_t stride(int i) const { return strides.empty() ? 1 : strides[i]; }
  int64_t dilation(int i) const { return dilations.empty() ? 1 : dilations[i]; }
  int64_t pad_begin(int i) const { return pads.empty() ? 0 : pads[i]; }
  int64_t pad_end(int i, int spatial) const { return pads.empty() ? 0 : pads[spatial + i]; }
};

/// Reads and checks the window attributes. Throws ModelError (prefixed by a.where())
/// when kernel_shape is required and missing, a value is out of range (kernel, stride,
/// dilation < 1, pad < 0), the lengths disagree (pads must have twice as many entries)
/// or auto_pad is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID.
WindowAttrs parse_window_attrs(const Attrs& a, bool kernel_required);

/// Checks that the attributes fit an input with `spatial` spatial dims (rank - 2).
/// Throws ShapeError "<where>: expected a 4-D input (N x C x 2 spatial dims, as the
/// attributes say), but got rank 3".
void check_window_rank(const WindowAttrs& w, int spatial, const std::string& where,
                       int64_t input_rank);

/// Output length and resolved pads along one spatial dim.
struct WindowExtent {
  int64_t out = 0;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};

/// Output length of a Conv or pooling window along one dim (ONNX Conv-11, MaxPool-12):
///   NOTSET: floor((in + pb + pe - (d*(k-1)+1)) / s) + 1 (ceil with ceil_mode; a last
///           window that would start in the end padding is dropped);
///   SAME_UPPER / SAME_LOWER: ceil(in / s), total pad max(0, (out-1)*s + d*(k-1)+1 - in)
///           split evenly, the odd one at the end (UPPER) or the beginning (LOWER);
///   VALID: no pads, floor((in - (d*(k-1)+1)) / s) + 1 (ceil_mode changes nothing).
/// Throws ShapeError (prefixed by `where`) when the output would be empty.
WindowExtent resolve_window(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                            AutoPad auto_pad, bool ceil_mode, const std::string& where);

/// Right-aligned copy of up to 3 spatial values into Dims3 (1-D fills w, 2-D h and w);
/// the unused leading dims get `fill` (1 for extents, strides, dilations; 0 for pads).
kernels::ref::Dims3 to_dims3(const std::vector<int64_t>& v, int64_t fill = 1);

/// "1-D", "2-D", ... for messages.
std::string rank_name(int64_t rank);

}  // namespace tern::ops
