// A compiler pass: one named rewrite of a Program (see program.h and pipeline.cc).
//
// Most passes are one local rule, written as a NodeRule: where to try it (applies_to, a
// cheap match on the node's op type and neighbours), whether it is legal there (legal:
// the checks that keep the model's results unchanged), and the rewrite itself. The
// pipeline (pipeline.h) sets the order and lets a user switch any pass off by name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "passes/program.h"

namespace tern::passes {

/// One named pass.
class Pass {
 public:
  virtual ~Pass() = default;
  /// The name a user switches it off with, e.g. "fold-constants".
  virtual const char* name() const = 0;
  /// One line for `tern inspect --passes` and the docs.
  virtual const char* summary() const = 0;
  /// Rewrites `p` and leaves it analyzed (types and ops current); returns the number of
  /// rewrites made (0 = nothing applied). Throws what analyze() throws.
  virtual int run(Program& p) const = 0;
};

/// A pass made of one local rule, tried at every node in execution order until nothing
/// more applies. After each sweep the removed nodes are erased and the program is
/// re-analyzed, so a later match sees the types of what an earlier one created.
class NodeRule : public Pass {
 public:
  int run(Program& p) const override;

 protected:
  /// Where to try: a cheap structural match at node `n` (op type, inputs' producers).
  virtual bool applies_to(const Program& p, int n) const = 0;
  /// Is it legal: the rewrite at `n` keeps every result the model returns unchanged.
  virtual bool legal(const Program& p, int n) const = 0;
  /// Do it. May edit any node; sets dead[m] for nodes to remove (never erases itself).
  virtual void rewrite(Program& p, int n, std::vector<bool>& dead) const = 0;
};

/// The one consumer of value `v`, or -1 when it has none, several, or is a graph output
/// (the "must not fuse" cases: a fused-away value can have no other reader).
int sole_consumer(const Program& p, int v);

/// Node `n`'s string attribute `name`, or `def` when it has none (or one of another type).
std::string string_attr(const ir::Node& n, const char* name, const char* def);

/// Node `n`'s int attribute `name`, or `def` when it has none (or one of another type).
int64_t int_attr(const ir::Node& n, const char* name, int64_t def);

/// Sets node `n`'s attribute `name` (replacing any) to an int, a list of ints or a string.
void set_int_attr(ir::Node& n, const char* name, int64_t v);
void set_ints_attr(ir::Node& n, const char* name, std::vector<int64_t> v);
void set_string_attr(ir::Node& n, const char* name, std::string v);

/// Whether Conv / FusedConv node `conv` with weights of shape `w` ([M, C/g, k...]) is a
/// 1x1 conv with stride 1, no padding and one group.
bool pointwise_one_group(const ir::Node& conv, const Shape& w);

/// Whether Conv / FusedConv node `conv` with weights `w` runs as a GEMM when it reads and
/// writes NCHW (kernels/gemm: the pixels along the vectors): a pointwise_one_group conv,
/// or a 2-D conv with stride 1 and one group (an implicit GEMM; any kernel, padding and
/// dilation).
bool gemm_window(const ir::Node& conv, const Shape& w);

/// Whether value `v`'s one reader is a Transpose with perm (0, 2, 3, 1) and `v` is no
/// graph output: a conv writing `v` may then write NHWC itself (conv_writes_nhwc).
bool read_by_nhwc_transpose(const Program& p, int v);

/// Whether fuse-transpose, if it runs (this does not check Program::runs_pass; nhwc_context
/// in tune.h does), makes FusedConv node `conv` write NHWC (its legality, shared with the
/// passes that plan for it): its one output is
/// read_by_nhwc_transpose, 4-D and NCHW (y_layout "NCHW"); it has no residual input (its z would
/// have to be NHWC too); and its kernel writes NHWC: not winograd weights, not depthwise (by its
/// algorithm or its groups: the reference would run instead) and not the gemm algorithm (the pixels
/// along the vectors: NCHW only). The direct, pointwise and dot kernels and the reference do.
bool conv_writes_nhwc(const Program& p, int conv);

/// Whether an output row of `width` pixels fills SIMD vectors of `block` lanes better
/// than `channels` output channels fill blocks of `block` (width / (ceil(width / block) *
/// block) > channels / (ceil(channels / block) * block)): the lane use of a kernel with
/// the pixels along the vectors (kernels/gemm) against one with the channels along them.
bool rows_fill_vectors_better(int64_t width, int64_t channels, int64_t block);

/// The kernel a FusedConv from NCHW to NCHW (`conv`, weights `w` [M, C/g, kH, kW], SIMD
/// block `block`) runs: kGemm for a gemm_window conv (OIHW weights, the pixels along the
/// vectors; a k x k one only where rows_fill_vectors_better for its output width, or when
/// that width is not known) unless a Transpose(0, 2, 3, 1) reads it (fuse-transpose then
/// makes it write NHWC, which the direct kernel does and the GEMM kernel does not); kDirect
/// (packed weights) with at least half a block of output channels and, with groups,
/// whole blocks per group; kReference otherwise (f32_conv_nchw on OIHW weights).
enum class PlainConvKernel { kGemm, kDirect, kReference };
PlainConvKernel plain_conv_kernel(const Program& p, const ir::Node& conv, const Shape& w,
                                  int64_t block);

/// A unique node name derived from `base` (the graph's node names stay distinct).
std::string unique_node_name(const Program& p, const std::string& base);

/// The float32 constant value `v` holds, or nullptr (absent, not constant, other dtype).
const Tensor* float_constant(const Program& p, int v);

/// A new constant value named after `base`, holding `values` with `shape`. Constants a
/// pass rewrites are never changed in place: they may be shared by other nodes (tied
/// weights) or by other Programs compiled from the same graph.
int add_constant(Program& p, const std::string& base, const std::vector<float>& values,
                 const Shape& shape);

/// The values of float32 constant `v` per channel (dim 1) of a tensor of shape `x` that it
/// is combined with elementwise: one value per channel ([1, C, 1, ..., 1] of x's rank, or
/// [C, 1, ..., 1] of rank one less) or one value for all (a single element of rank at most
/// x's); nullopt for any other constant, or a value that is not one.
std::optional<std::vector<double>> per_channel_constant(const Program& p, int v, const Shape& x);

/// Makes node `n` write value `to` instead of its output `from` (whose producer, being
/// removed or rewired, wrote `to` before).
void take_output(Program& p, int n, int from, int to);

/// y = x * s[c] + t[c], per channel c, in double.
struct ChannelAffine {
  std::vector<double> s;
  std::vector<double> t;
  /// True when every t[c] is 0.
  bool shift_is_zero() const;
  /// True when every s[c] and t[c] is finite and within float32's range (the maps are
  /// rounded to float32 weights or ScaleShift constants).
  bool finite_in_float() const;
};

/// The affine map of node `n` when it is an inference BatchNormalization a pass may fold:
/// training_mode absent or 0, no output but Y, float32 input of rank >= 2, scale, B, mean
/// and var float32 constants of shape [C], and s = scale / sqrt(var + epsilon),
/// t = B - mean * s finite in float32 (ONNX BatchNormalization, inference form).
std::optional<ChannelAffine> batch_norm_affine(const Program& p, int n);

}  // namespace tern::passes
