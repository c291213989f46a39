// ScaleShift (internal op, domain "tern"): y = x * scale[c] + shift[c] along the channel
// axis, float32, in the plain layout or in NCHWc. Kernel: kernels/reference/scale_shift.h.
//
// Only graph passes create it (a model file cannot name it). fold-batch-norm turns each
// inference BatchNormalization it cannot fold into a Conv or Gemm into one, with
// scale = gamma / sqrt(var + epsilon) and shift = beta - mean * scale precomputed.
//
// Contract (for the passes that create or convert it):
//   inputs   X, scale [C], shift [C] (float32; scale and shift are usually constants).
//   attrs    block    (int, default 0): 0 = plain layout; c > 0 = X is NCHWc with block c.
//            channels (int, default 0): the logical channel count C. Required (>= 1) when
//                     block > 0, since the physical shape holds only ceil(C / c); when
//                     block = 0 it is optional and, if set, must equal X's dim 1.
//   block 0: X is [N, C, D1, ...] (rank >= 2), Y has X's shape.
//   block c: X is the physical NCHWc tensor [N, ceil(C / c), D1, ..., c] (rank >= 3; the
//            layout pass uses 5-D [N, ceil(C/c), H, W, c]), lane l of channel block b being
//            channel b * c + l. Y has X's physical shape and layout; the padded lanes of the
//            last block (b * c + l >= C) are written as 0, whatever X holds there.
// To convert a plain ScaleShift to NCHWc, the layout pass sets block = c and channels = C
// and feeds it the NCHWc value; scale and shift stay [C]. Y may share X's buffer (the
// in-place pass relies on it: element i of Y depends only on element i of X).
#include "kernels/reference/scale_shift.h"

#include "ops/op_args.h"
#include "ops/registry.h"
#include "ops/parallel.h"

namespace tern::ops {

namespace {

/// ScaleShift, see the file comment. Errors: ModelError for block < 0 or a missing
/// channels attribute with block > 0; ShapeError (naming the node) for X's rank or channel
/// dims not matching the attributes, or scale / shift not of shape [C];
/// UnsupportedOpError for dtypes other than float32.
class ScaleShiftOp final : public Op {
 public:
  ScaleShiftOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), block_(a.get_int("block", 0)), channels_(a.get_int("channels", 0)) {
    TERN_CHECK(block_ >= 0, ModelError, "{}: attribute 'block' must be >= 0, but got {}", where(),
               block_);
    TERN_CHECK(channels_ >= 0, ModelError, "{}: attribute 'channels' must be >= 0, but got {}",
               where(), channels_);
    TERN_CHECK(block_ == 0 || channels_ >= 1, ModelError,
               "{}: attribute 'channels' (the logical channel count) is required with block {}",
               where(), block_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"X", "scale", "shift"});
    const Shape& x = inputs[0].shape;
    const int64_t c = channels(x);
    for (size_t i = 1; i < 3; ++i) {
      TERN_CHECK(inputs[i].shape == Shape{c}, ShapeError,
                 "{}: expected {} of shape [{}] (one value per channel), but got {}", where(),
                 i == 1 ? "scale" : "shift", c, shape_str(inputs[i].shape));
    }
    return {TensorType{DType::kFloat32, x}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const Tensor scale = inputs[1].contiguous();
    const Tensor shift = inputs[2].contiguous();
    kernels::ref::ScaleShiftParams p;
    p.channels = channels(x.shape());
    p.block = block_;
    const int64_t rank = x.rank();
    p.inner = 1;
    for (int64_t d = 2; d < rank - (block_ > 0 ? 1 : 0); ++d) p.inner *= x.dim(static_cast<int>(d));
    // Planes (plain) or channel blocks (NCHWc): independent units of work.
    const int64_t units = x.dim(0) * x.dim(1);
    const float* xd = x.data<float>();
    const float* sd = scale.data<float>();
    const float* td = shift.data<float>();
    float* yd = outputs[0].data<float>();
    parallel_ranges(units, ctx.num_threads, [&](int64_t begin, int64_t end) {
      if (block_ > 0) {
        kernels::ref::f32_scale_shift_nchwc(p, xd, sd, td, yd, begin, end);
      } else {
        kernels::ref::f32_scale_shift_nchw(p, xd, sd, td, yd, begin, end);
      }
    });
  }

 private:
  // C for input shape x, after checking x against the attributes.
  int64_t channels(const Shape& x) const {
    if (block_ == 0) {
      TERN_CHECK(x.size() >= 2, ShapeError,
                 "{}: expected input X of rank >= 2 (N x C x ...), but got shape {}", where(),
                 shape_str(x));
      TERN_CHECK(channels_ == 0 || x[1] == channels_, ShapeError,
                 "{}: expected input X with {} channels, but got shape {}", where(), channels_,
                 shape_str(x));
      return x[1];
    }
    const int64_t blocks = (channels_ + block_ - 1) / block_;
    TERN_CHECK(x.size() >= 3 && x[1] == blocks && x.back() == block_, ShapeError,
               "{}: expected an NCHWc input [N, {}, ..., {}] ({} channels in blocks of {}), but "
               "got shape {}",
               where(), blocks, block_, channels_, block_, shape_str(x));
    return channels_;
  }

  int64_t block_;
  int64_t channels_;
};

}  // namespace

void register_scale_shift(OpRegistry& r) {
  OpSchema s = make_schema<ScaleShiftOp>("ScaleShift", 3, 3);
  s.domain = kInternalDomain;
  r.add(std::move(s));
}

}  // namespace tern::ops
