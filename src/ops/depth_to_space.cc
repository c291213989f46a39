// DepthToSpace (ONNX -1/11/13; mode DCR default, CRD from opset 11) and SpaceToDepth
// (ONNX -1/13), every dtype: pure data movement, written as reshape -> permute -> copy.
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// DepthToSpace / SpaceToDepth of a 4-D X [N, C, H, W] with attribute blocksize b >= 1:
///   DepthToSpace: Y [N, C / b^2, H * b, W * b]; C must be divisible by b^2.
///     DCR: Y[n, c, h*b + i, w*b + j] = X[n, (i*b + j) * C/b^2 + c, h, w]
///     CRD: Y[n, c, h*b + i, w*b + j] = X[n, c * b^2 + i*b + j, h, w]
///   SpaceToDepth: Y [N, C * b^2, H / b, W / b] (the inverse of DCR); H, W divisible by b.
/// ShapeError for another rank or an indivisible dim.
class SpaceDepthOp final : public Op {
 public:
  SpaceDepthOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), to_space_(ctx.op_type == "DepthToSpace"), block_(a.require_int("blocksize")) {
    TERN_CHECK(block_ >= 1, ModelError, "{}: attribute 'blocksize' must be >= 1, but got {}",
               where(), block_);
    if (to_space_) crd_ = a.get_enum("mode", "DCR", {"DCR", "CRD"}) == "CRD";
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Shape& x = inputs[0].shape;
    TERN_CHECK(x.size() == 4, ShapeError, "{}: expected a 4-D input [N, C, H, W], but got {}",
               where(), shape_str(x));
    const int64_t b = block_;
    const int64_t bb = checked_mul(b, b, where(), "blocksize^2");
    if (to_space_) {
      TERN_CHECK(x[1] % bb == 0, ShapeError,
                 "{}: channels {} are not divisible by blocksize^2 = {}", where(), x[1], bb);
      return {TensorType{inputs[0].dtype,
                         {x[0], x[1] / bb, checked_mul(x[2], b, where(), "output height"),
                          checked_mul(x[3], b, where(), "output width")}}};
    }
    TERN_CHECK(x[2] % b == 0 && x[3] % b == 0, ShapeError,
               "{}: height {} and width {} must be divisible by blocksize {}", where(), x[2], x[3],
               b);
    return {
        TensorType{inputs[0].dtype,
                   {x[0], checked_mul(x[1], bb, where(), "output channels"), x[2] / b, x[3] / b}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor x = inputs[0].contiguous();
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    Tensor y = outputs[0];
    if (to_space_) {
      const int64_t oc = c / (b * b);
      if (crd_) {
        const Tensor v = x.reshape({n, oc, b, b, h, w}).permute({0, 1, 4, 2, 5, 3});
        y.reshape({n, oc, h, b, w, b}).copy_from(v);
      } else {
        const Tensor v = x.reshape({n, b, b, oc, h, w}).permute({0, 3, 4, 1, 5, 2});
        y.reshape({n, oc, h, b, w, b}).copy_from(v);
      }
    } else {
      const Tensor v = x.reshape({n, c, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4});
      y.reshape({n, b, b, c, h / b, w / b}).copy_from(v);
    }
  }

 private:
  bool to_space_;
  bool crd_ = false;
  int64_t block_;
};

}  // namespace

void register_depth_to_space(OpRegistry& r) {
  r.add(make_schema<SpaceDepthOp>("DepthToSpace", 1, 1));
  r.add(make_schema<SpaceDepthOp>("SpaceToDepth", 1, 1));
}

}  // namespace tern::ops
