// What tern.FusedConv computes, for ops that run its kernels themselves (ops/conv_chain.cc
// computes a chain of FusedConvs in bands of rows).
#pragma once

#include <memory>
#include <string>

#include "kernels/reference/fused_conv.h"
#include "ops/attrs.h"
#include "ops/op.h"

namespace tern::ops {

/// A tern.FusedConv op made from node attributes `a` (see fused_conv.cc for the
/// attributes). Throws ModelError for bad attributes, as the registry's factory.
std::unique_ptr<Op> make_fused_conv(const Attrs& a, const OpContext& ctx);

/// One FusedConv's computation for given physical input shapes: the kernel parameters
/// (logical C, M and window, layouts, epilogue; residual off) and the kernel the op runs
/// for them on the SIMD target in use ("direct-first", "pointwise", "depthwise",
/// "direct", "winograd", "gemm", "dot" or "reference").
struct FusedConvLayer {
  kernels::ref::FusedConvParams params;
  std::string algorithm;
};

/// The FusedConvLayer of `op`, a FusedConv op (make_fused_conv), for physical input
/// shapes x (NCHW or NCHWc) and w (its weight layout). Throws ShapeError as op.infer()
/// does, and InvalidArgument when `op` is no FusedConv.
FusedConvLayer fused_conv_layer(const Op& op, const Shape& x, const Shape& w);

}  // namespace tern::ops
