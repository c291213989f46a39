// Reorder (internal op, domain "tern"): converts a float32 activation between plain NCHW
// and the channel-blocked NCHWc layout (DESIGN.md "NCHWc"). Only the assign-layout pass
// creates it, at the boundaries of the NCHWc regions it chooses.
// Kernels: kernels/reorder/reorder.h (to NCHW) and kernels/reference/reorder.h (to NCHWc).
#include "kernels/reorder/reorder.h"

#include <algorithm>

#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// Reorder of X with attributes:
///   to = "NCHWc", block = c (>= 1): X NCHW [N, C, H, W] -> Y [N, ceil(C/c), H, W, c],
///     channel ch at [n, ch / c, h, w, ch % c]; the padded lanes (ch >= C) are 0, so a
///     consumer may rely on them being zero.
///   to = "NCHW", channels = C (>= 1): X NCHWc [N, Cb, H, W, c] -> Y [N, C, H, W], which
///     needs (Cb - 1) * c < C <= Cb * c (the padded lanes are dropped, never read).
/// float32 only (UnsupportedOpError otherwise); ShapeError for another rank or a channel
/// count that does not fit the blocks; ModelError for missing or bad attributes.
class ReorderOp final : public Op {
 public:
  ReorderOp(const Attrs& a, const OpContext& ctx) : Op(ctx) {
    const std::string to = a.require_string("to");
    TERN_CHECK(to == "NCHWc" || to == "NCHW", ModelError,
               "{}: attribute 'to' is '{}', expected NCHWc or NCHW", where(), to);
    to_blocked_ = to == "NCHWc";
    if (to_blocked_) {
      block_ = a.require_int("block");
      TERN_CHECK(block_ >= 1 && block_ <= 1024, ModelError,
                 "{}: attribute 'block' must be in [1, 1024], but got {}", where(), block_);
    } else {
      channels_ = a.require_int("channels");
      TERN_CHECK(channels_ >= 1, ModelError, "{}: attribute 'channels' must be >= 1, but got {}",
                 where(), channels_);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "X");
    const kernels::ref::ReorderParams p = geometry(inputs[0].shape);
    if (to_blocked_) return {TensorType{DType::kFloat32, {p.n, p.blocks(), p.h, p.w, p.block}}};
    return {TensorType{DType::kFloat32, {p.n, p.channels, p.h, p.w}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const kernels::ref::ReorderParams p = geometry(x.shape());
    const float* xd = x.data<float>();
    float* yd = outputs[0].data<float>();
    if (to_blocked_) {
      const int64_t blocks = p.blocks();
      parallel_ranges(blocks, ctx.num_threads, [&](int64_t begin, int64_t end) {
        kernels::ref::f32_reorder_to_nchwc(p, xd, yd, begin, end);
      });
    } else {
      // By pixels, in runs of 16 (whole cache lines of y where a plane is): each thread
      // reads the rows its convolution wrote (parallel_grid).
      const int64_t hw = p.h * p.w;
      parallel_ranges((hw + 15) / 16, ctx.num_threads, [&](int64_t begin, int64_t end) {
        kernels::f32_reorder_to_nchw(p, xd, yd, begin * 16, std::min(end * 16, hw));
      });
    }
  }

 private:
  kernels::ref::ReorderParams geometry(const Shape& x) const {
    kernels::ref::ReorderParams p;
    if (to_blocked_) {
      TERN_CHECK(x.size() == 4, ShapeError,
                 "{}: expected a 4-D NCHW input [N, C, H, W], but got shape {}", where(),
                 shape_str(x));
      p.n = x[0];
      p.channels = x[1];
      p.h = x[2];
      p.w = x[3];
      p.block = block_;
    } else {
      TERN_CHECK(x.size() == 5, ShapeError,
                 "{}: expected a 5-D NCHWc input [N, C/c, H, W, c], but got shape {}", where(),
                 shape_str(x));
      TERN_CHECK(x[4] >= 1 && channels_ <= x[1] * x[4] && channels_ > (x[1] - 1) * x[4], ShapeError,
                 "{}: {} channels do not fit NCHWc input {}: expected (C/c - 1) * c < {} <= "
                 "C/c * c",
                 where(), channels_, shape_str(x), channels_);
      p.n = x[0];
      p.channels = channels_;
      p.h = x[2];
      p.w = x[3];
      p.block = x[4];
    }
    return p;
  }

  bool to_blocked_ = true;
  int64_t block_ = 0;
  int64_t channels_ = 0;
};

}  // namespace

void register_reorder(OpRegistry& r) {
  OpSchema s = make_schema<ReorderOp>("Reorder", 1, 1);
  s.domain = kInternalDomain;
  r.add(std::move(s));
}

}  // namespace tern::ops
