// The Conv geometry shared by Conv (conv.cc) and FusedConv (fused_conv.cc): checks of X
// and W against each other and the attributes, and the reference kernel's parameters.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/reference/conv.h"
#include "ops/window.h"

namespace tern::ops {

/// Kernel parameters of a Conv (ONNX Conv-1/11) with `group` groups for the logical
/// shapes X [N, C, D1, ..., Dn] and W [M, C/group, k1, ..., kn] (n = 1..3), pads and
/// auto_pad resolved (ops/window.h, resolve_window). Throws ShapeError prefixed by
/// `where` for a rank or channel mismatch ("expected input with 64 channels, but got
/// 32"), M not divisible by group, an empty output or shape arithmetic that overflows.
kernels::ref::ConvParams conv_params(const WindowAttrs& window, int64_t group, const Shape& x,
                                     const Shape& w, const std::string& where);

}  // namespace tern::ops
