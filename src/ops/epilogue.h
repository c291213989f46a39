// The epilogue of tern's fused operators (FusedConv, FusedGemm, FusedMatMul) as node
// attributes. The descriptor itself and its reference kernel are in
// kernels/reference/epilogue.h.
//
// Attributes:
//   activation                 string: "" or absent (none), "Relu", "Clip", "LeakyRelu",
//                              "HardSigmoid", "HardSwish", "Sigmoid", "SiLU"
//   activation_alpha           float: Clip min (default -inf), LeakyRelu alpha (0.01),
//                              HardSigmoid alpha (0.2)
//   activation_beta            float: Clip max (default +inf), HardSigmoid beta (0.5)
//   residual_before_activation int 0/1 (default 0): with a residual input Z,
//                              y = act(acc + bias + Z) instead of act(acc + bias) + Z
//   affine_scale, affine_shift float (defaults 1 and 0; either present = an affine map):
//                              act(v) * affine_scale + affine_shift after the activation
//                              (every fused op applies it; fuse-epilogue sets it on
//                              FusedConv only, from a ScaleShift with one scale and one
//                              shift)
// Whether a residual is added is not an attribute: the op adds one when its Z input is
// present.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "ir/graph.h"
#include "kernels/reference/epilogue.h"
#include "ops/attrs.h"

namespace tern::ops {

/// Input index of the residual Z of every fused op (FusedConv: X W B Z; FusedGemm: A B C Z;
/// FusedMatMul: A B bias Z), and of the bias.
inline constexpr size_t kResidualInput = 3;
inline constexpr size_t kBiasInput = 2;

/// Reads the epilogue attributes (residual = false; the op sets it from its inputs).
/// Throws ModelError naming the node for an unknown activation name, an attribute of the
/// wrong type or residual_before_activation other than 0 or 1.
kernels::ref::Epilogue parse_epilogue(const Attrs& a);

/// Writes `e`'s attributes into `attrs` (removing those it does not need), so that
/// parse_epilogue() reads `e` back (except `residual`, which is the presence of Z).
void write_epilogue(const kernels::ref::Epilogue& e, std::map<std::string, ir::Attribute>& attrs);

/// The attribute name of an activation ("" for none, "Relu", "SiLU", ...).
const char* activation_name(kernels::ref::Activation a);

}  // namespace tern::ops
