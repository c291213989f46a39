// Sliding-window attributes shared by Conv, ConvTranspose and the pooling ops:
// kernel_shape, strides, dilations, pads and auto_pad, the output-size arithmetic
// of ONNX Conv-11 / MaxPool-12 / AveragePool-11, and the operand checks, output shape,
// MAC count and threaded run loop that Conv and ConvTranspose share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reference/spatial.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "ops/op_args.h"
#include "ops/parallel.h"

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

/// Largest kernel extent, stride, dilation or pad the window attributes accept. Real
/// models stay far below it; the cap keeps the window arithmetic (dilation * (kernel - 1)
/// + 1, pads added to an input extent) far from int64 overflow.
inline constexpr int64_t kMaxWindowAttr = (int64_t{1} << 31) - 1;

/// Reads and checks the window attributes. Throws ModelError (prefixed by a.where())
/// when kernel_shape is required and missing, a value is out of range (kernel, stride,
/// dilation < 1, pad < 0, any of them > kMaxWindowAttr), the lengths disagree (pads must
/// have twice as many entries) or auto_pad is not one of NOTSET, SAME_UPPER, SAME_LOWER,
/// VALID.
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
/// Throws ShapeError (prefixed by `where`) when the output would be empty or the
/// arithmetic overflows int64 (a hostile input extent or attribute), and for k, s or d < 1.
WindowExtent resolve_window(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                            AutoPad auto_pad, bool ceil_mode, const std::string& where);

/// Right-aligned copy of up to 3 spatial values into Dims3 (1-D fills w, 2-D h and w);
/// the unused leading dims get `fill` (1 for extents, strides, dilations; 0 for pads).
kernels::ref::Dims3 to_dims3(const std::vector<int64_t>& v, int64_t fill = 1);

/// "1-D", "2-D", ... for messages.
std::string rank_name(int64_t rank);

// ---- Conv and ConvTranspose ------------------------------------------------------------

/// Checks the data X and weight W of a Conv or ConvTranspose against each other and the
/// attributes: X of rank 3 to 5 (N x C x 1 to 3 spatial dims) matching the attributes'
/// spatial rank, W of X's rank, kernel_shape (when given) equal to W's spatial dims.
/// Returns W's spatial dims (the kernel). Throws ShapeError prefixed by `where`.
std::vector<int64_t> check_conv_operands(const WindowAttrs& window, const Shape& x, const Shape& w,
                                         const std::string& where);

/// Checks the optional bias B (input 2) of a Conv or ConvTranspose: shape [out_channels].
void check_conv_bias(std::span<const InferInput> inputs, int64_t out_channels,
                     const std::string& where);

/// [N, M, O1, ..., On]: the output shape of a Conv, ConvTranspose or pooling op with
/// `spatial` dims, the extents right-aligned in `out` (see to_dims3).
Shape window_output_shape(int64_t batch, int64_t out_channels, const kernels::ref::Dims3& out,
                          int spatial);

/// Multiply-accumulates of a Conv (numel = output elements) or ConvTranspose (numel =
/// input elements): numel * prod(W dims 1..), saturated to INT64_MAX.
int64_t conv_macs(int64_t numel, const Shape& w);

/// The kernel parameters (kernels::ref::ConvParams or ConvTransposeParams) of a Conv or
/// ConvTranspose with `group` groups, channel counts C (in) and M (out), and per-spatial-
/// dim extents (1 to 3 values each), with strides and dilations from `window`.
template <typename Params>
Params window_params(const WindowAttrs& window, int64_t group, int64_t in_channels,
                     int64_t out_channels, const std::vector<int64_t>& in,
                     const std::vector<int64_t>& out, const std::vector<int64_t>& kernel,
                     const std::vector<int64_t>& pad_begin) {
  const size_t spatial = in.size();
  std::vector<int64_t> strides(spatial), dilations(spatial);
  for (size_t i = 0; i < spatial; ++i) {
    strides[i] = window.stride(static_cast<int>(i));
    dilations[i] = window.dilation(static_cast<int>(i));
  }
  Params p;
  p.in_channels = in_channels;
  p.out_channels = out_channels;
  p.groups = group;
  p.in = to_dims3(in);
  p.out = to_dims3(out);
  p.kernel = to_dims3(kernel);
  p.stride = to_dims3(strides);
  p.dilation = to_dims3(dilations);
  p.pad_begin = to_dims3(pad_begin, 0);
  return p;
}

/// The attributes, infer() and run() that Conv and ConvTranspose share. Params is
/// kernels::ref::ConvParams or ConvTransposeParams; Kernel is f32_conv_nchw or
/// f32_conv_transpose_nchw. The constructor parses the window attributes and `group`
/// (ModelError when < 1); a subclass parses its own attributes and implements geometry():
/// the checks of X and W and the kernel parameters (built with make_params()).
///   infer: every input float32 (UnsupportedOpError), geometry(), bias B of shape [M];
///          Y: [N, M, O1, ..., On].
///   run:   Kernel(p, x_image, w, bias, y_image, oc, oc + 1) for every (image, output
///          channel) pair, split across the session's threads.
template <typename Params, void (*Kernel)(const Params&, const float*, const float*, const float*,
                                          float*, int64_t, int64_t)>
class ConvLikeOp : public Op {
 public:
  ConvLikeOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), window_(parse_window_attrs(a, false)), group_(a.get_int("group", 1)) {
    TERN_CHECK(group_ >= 1, ModelError, "{}: attribute 'group' must be >= 1, but got {}", where(),
               group_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"X", "W", "B"});
    const Shape& x = inputs[0].shape;
    const Params p = geometry(x, inputs[1].shape);
    check_conv_bias(inputs, p.out_channels, where());
    return {TensorType{DType::kFloat32, window_output_shape(x[0], p.out_channels, p.out,
                                                            static_cast<int>(x.size()) - 2)}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const Tensor w = inputs[1].contiguous();
    const Tensor b = has_input(inputs, 2) ? inputs[2].contiguous() : Tensor();
    const Params p = geometry(x.shape(), w.shape());
    const int64_t x_image = p.in_channels * p.in.size();
    const int64_t y_image = p.out_channels * p.out.size();
    const float* xd = x.data<float>();
    const float* wd = w.data<float>();
    const float* bd = b.defined() ? b.data<float>() : nullptr;
    float* yd = outputs[0].data<float>();
    const int64_t work = x.dim(0) * p.out_channels;
    parallel_for(work, ctx.num_threads, [&](int64_t i) {
      const int64_t n = i / p.out_channels;
      const int64_t oc = i % p.out_channels;
      Kernel(p, xd + n * x_image, wd, bd, yd + n * y_image, oc, oc + 1);
    });
  }

 protected:
  /// Checks X and W against each other and the attributes (ShapeError prefixed by
  /// where()); returns the kernel parameters.
  virtual Params geometry(const Shape& x, const Shape& w) const = 0;

  /// The kernel parameters for channel counts C (in) and M (out) and per-spatial-dim
  /// extents, with strides and dilations from the attributes (see window_params()).
  Params make_params(int64_t in_channels, int64_t out_channels, const std::vector<int64_t>& in,
                     const std::vector<int64_t>& out, const std::vector<int64_t>& kernel,
                     const std::vector<int64_t>& pad_begin) const {
    return window_params<Params>(window_, group_, in_channels, out_channels, in, out, kernel,
                                 pad_begin);
  }

  WindowAttrs window_;
  int64_t group_;
};

}  // namespace tern::ops
