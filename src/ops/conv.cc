// Conv (ONNX Conv-1/11): 1-D, 2-D and 3-D convolution, NCHW, float32, with groups,
// strides, dilations, pads and auto_pad. Kernel: kernels/reference/conv.h.
#include "ops/conv.h"

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// Conv: Y = conv(X, W) + B.
///   X: [N, C, D1, ..., Dn] (n = 1..3), W: [M, C/group, k1, ..., kn], B: [M] (optional),
///   Y: [N, M, O1, ..., On] with Oi from ops/window.h (resolve_window).
/// kernel_shape defaults to W's spatial dims. Errors: ShapeError for a rank or channel
/// mismatch ("expected input with 64 channels, but got 32") or shape arithmetic that
/// overflows int64, ModelError for bad attributes, UnsupportedOpError for a dtype other
/// than float32.
class ConvOp final : public ConvLikeOp<kernels::ref::ConvParams, kernels::ref::f32_conv_nchw> {
 public:
  ConvOp(const Attrs& a, const OpContext& ctx) : ConvLikeOp(a, ctx) {}

  // N * M * prod(out spatial) * (C / group) * prod(kernel), saturated.
  int64_t macs(std::span<const TensorType> inputs,
               std::span<const TensorType> outputs) const override {
    return conv_macs(saturating_product(outputs[0].shape), inputs[1].shape);
  }

 private:
  kernels::ref::ConvParams geometry(const Shape& x, const Shape& w) const override {
    return conv_params(window_, group_, x, w, where());
  }
};

}  // namespace

kernels::ref::ConvParams conv_params(const WindowAttrs& window, int64_t group, const Shape& x,
                                     const Shape& w, const std::string& where) {
  std::vector<int64_t> kernel = check_conv_operands(window, x, w, where);
  const int spatial = static_cast<int>(x.size()) - 2;
  const int64_t c = x[1];
  const int64_t m = w[0];
  const int64_t expected_c =
      checked_mul(w[1], group, where, "the input channel count W[1] * group");
  TERN_CHECK(c == expected_c, ShapeError,
             "{}: expected input with {} channels, but got {} (weight shape {}, group {})", where,
             expected_c, c, shape_str(w), group);
  TERN_CHECK(m % group == 0, ShapeError,
             "{}: expected a number of output channels divisible by group {}, but weight "
             "shape {} has {}",
             where, group, shape_str(w), m);

  std::vector<int64_t> in(x.begin() + 2, x.end()), out(spatial), pad_begin(spatial);
  for (int i = 0; i < spatial; ++i) {
    const WindowExtent e =
        resolve_window(in[i], kernel[i], window.stride(i), window.dilation(i), window.pad_begin(i),
                       window.pad_end(i, spatial), window.auto_pad, false, where);
    out[i] = e.out;
    pad_begin[i] = e.pad_begin;
  }
  return window_params<kernels::ref::ConvParams>(window, group, c, m, in, out, kernel, pad_begin);
}

void register_conv(OpRegistry& r) { r.add(make_schema<ConvOp>("Conv", 2, 3)); }

}  // namespace tern::ops
