// Conv (ONNX Conv-1/11): 1-D, 2-D and 3-D convolution, NCHW, float32, with groups,
// strides, dilations, pads and auto_pad. Kernel: kernels/reference/conv.h.
#include "kernels/reference/conv.h"

#include "ops/registry.h"
#include "ops/window.h"

namespace tern::ops {

namespace {

/// Conv: Y = conv(X, W) + B.
///   X: [N, C, D1, ..., Dn] (n = 1..3), W: [M, C/group, k1, ..., kn], B: [M] (optional),
///   Y: [N, M, O1, ..., On] with Oi from ops/window.h (resolve_window).
/// kernel_shape defaults to W's spatial dims. Errors: ShapeError for a rank or channel
/// mismatch ("expected input with 64 channels, but got 32"), ModelError for bad
/// attributes, UnsupportedOpError for a dtype other than float32.
class ConvOp final : public Op {
 public:
  ConvOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), window_(parse_window_attrs(a, false)), group_(a.get_int("group", 1)) {
    TERN_CHECK(group_ >= 1, ModelError, "{}: attribute 'group' must be >= 1, but got {}", where(),
               group_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Shape& x = inputs[0].shape;
    const Shape& w = inputs[1].shape;
    const bool has_bias = inputs.size() > 2 && inputs[2].present;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].present) continue;
      TERN_CHECK(inputs[i].dtype == DType::kFloat32, UnsupportedOpError,
                 "{}: supports float32 only, but input {} is {}", where(), i,
                 dtype_name(inputs[i].dtype));
    }
    if (has_bias) {
      TERN_CHECK(inputs[2].shape.size() == 1 && w.size() >= 1 && inputs[2].shape[0] == w[0],
                 ShapeError,
                 "{}: expected bias B of shape [{}] (one per output channel), but "
                 "got {}",
                 where(), w.empty() ? 0 : w[0], shape_str(inputs[2].shape));
    }
    const kernels::ref::ConvParams p = geometry(x, w);
    Shape y = {x[0], p.out_channels};
    const int spatial = static_cast<int>(x.size()) - 2;
    const int64_t out[3] = {p.out.d, p.out.h, p.out.w};
    for (int i = 3 - spatial; i < 3; ++i) y.push_back(out[i]);
    return {TensorType{DType::kFloat32, y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const Tensor w = inputs[1].contiguous();
    const Tensor b = inputs.size() > 2 && inputs[2].defined() ? inputs[2].contiguous() : Tensor();
    const kernels::ref::ConvParams p = geometry(x.shape(), w.shape());
    const int64_t batch = x.dim(0);
    const int64_t x_image = p.in_channels * p.in.size();
    const int64_t y_image = p.out_channels * p.out.size();
    const float* xd = x.data<float>();
    const float* wd = w.data<float>();
    const float* bd = b.defined() ? b.data<float>() : nullptr;
    float* yd = outputs[0].data<float>();
    const int64_t work = batch * p.out_channels;
#pragma omp parallel for num_threads(ctx.num_threads) schedule(static)
    for (int64_t i = 0; i < work; ++i) {
      const int64_t n = i / p.out_channels;
      const int64_t oc = i % p.out_channels;
      kernels::ref::f32_conv_nchw(p, xd + n * x_image, wd, bd, yd + n * y_image, oc, oc + 1);
    }
  }

  int64_t macs(std::span<const TensorType> inputs,
               std::span<const TensorType> outputs) const override {
    const Shape& w = inputs[1].shape;
    const Shape& y = outputs[0].shape;
    int64_t m = shape_numel(y);                       // N * M * prod(out spatial)
    for (size_t i = 1; i < w.size(); ++i) m *= w[i];  // (C / group) * prod(kernel)
    return m;
  }

 private:
  // Checks X and W against each other and the attributes; returns the kernel geometry.
  kernels::ref::ConvParams geometry(const Shape& x, const Shape& w) const {
    const int64_t rank = static_cast<int64_t>(x.size());
    TERN_CHECK(rank >= 3 && rank <= 5, ShapeError,
               "{}: expected input X of rank 3 to 5 (N x C x 1 to 3 spatial dims), but got "
               "shape {}",
               where(), shape_str(x));
    const int spatial = static_cast<int>(rank) - 2;
    check_window_rank(window_, spatial, where(), rank);
    TERN_CHECK(static_cast<int64_t>(w.size()) == rank, ShapeError,
               "{}: expected weight W of rank {} (like X), but got shape {}", where(), rank,
               shape_str(w));
    const int64_t c = x[1];
    const int64_t m = w[0];
    TERN_CHECK(c == w[1] * group_, ShapeError,
               "{}: expected input with {} channels, but got {} (weight shape {}, group {})",
               where(), w[1] * group_, c, shape_str(w), group_);
    TERN_CHECK(m % group_ == 0, ShapeError,
               "{}: expected a number of output channels divisible by group {}, but weight "
               "shape {} has {}",
               where(), group_, shape_str(w), m);
    std::vector<int64_t> kernel(w.begin() + 2, w.end());
    TERN_CHECK(window_.kernel_shape.empty() || window_.kernel_shape == kernel, ShapeError,
               "{}: attribute kernel_shape {} does not match weight shape {}", where(),
               window_.kernel_shape, shape_str(w));

    std::vector<int64_t> in(x.begin() + 2, x.end()), out(spatial), pad_begin(spatial),
        strides(spatial), dilations(spatial);
    for (int i = 0; i < spatial; ++i) {
      strides[i] = window_.stride(i);
      dilations[i] = window_.dilation(i);
      const WindowExtent e =
          resolve_window(in[i], kernel[i], strides[i], dilations[i], window_.pad_begin(i),
                         window_.pad_end(i, spatial), window_.auto_pad, false, where());
      out[i] = e.out;
      pad_begin[i] = e.pad_begin;
    }
    kernels::ref::ConvParams p;
    p.in_channels = c;
    p.out_channels = m;
    p.groups = group_;
    p.in = to_dims3(in);
    p.out = to_dims3(out);
    p.kernel = to_dims3(kernel);
    p.stride = to_dims3(strides);
    p.dilation = to_dims3(dilations);
    p.pad_begin = to_dims3(pad_begin, 0);
    return p;
  }

  WindowAttrs window_;
  int64_t group_;
};

}  // namespace

void register_conv(OpRegistry& r) { r.add(make_schema<ConvOp>("Conv", 2, 3)); }

}  // namespace tern::ops
