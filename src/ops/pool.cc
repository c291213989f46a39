// Pooling (ONNX MaxPool-8/10/11/12, AveragePool-7/10/11, GlobalAveragePool-1,
// GlobalMaxPool-1), NCHW (1-D to 3-D), float32 (MaxPool also float64, int8, uint8). Kernels:
// kernels/reference/pool.h.
#include "kernels/reference/pool.h"

#include "ops/op_args.h"
#include "ops/registry.h"
#include "ops/window.h"

namespace tern::ops {

namespace {

/// MaxPool and AveragePool: a window slides over the spatial dims of
/// X: [N, C, D1, ..., Dn] (n = 1..3), Y: [N, C, O1, ..., On], Oi from resolve_window
/// (ops/window.h) with ceil_mode. MaxPool takes the max of the taps inside the input;
/// AveragePool their mean, the divisor counting the pad taps when count_include_pad.
/// MaxPool supports float32, float64, int8 and uint8 (AveragePool float32) and the
/// optional Indices output (int64 flat indices into X, storage_order 0 row-major or 1
/// column-major; see kernels::ref::max_pool_with_indices).
class PoolOp : public Op {
 public:
  PoolOp(const Attrs& a, const OpContext& ctx, bool is_max)
      : Op(ctx), window_(parse_window_attrs(a, true)), is_max_(is_max) {
    TERN_CHECK(is_max || ctx.num_outputs <= 1, ModelError,
               "{}: AveragePool has one output, but the node declares {}", where(),
               ctx.num_outputs);
    ceil_mode_ = a.get_int("ceil_mode", 0);
    TERN_CHECK(ceil_mode_ == 0 || ceil_mode_ == 1, ModelError,
               "{}: attribute 'ceil_mode' must be 0 or 1, but got {}", where(), ceil_mode_);
    if (is_max) {
      const int64_t storage_order = a.get_int("storage_order", 0);
      TERN_CHECK(storage_order == 0 || storage_order == 1, ModelError,
                 "{}: attribute 'storage_order' must be 0 or 1, but got {}", where(),
                 storage_order);
      column_major_ = storage_order == 1;
    } else {
      count_include_pad_ = a.get_int("count_include_pad", 0);
      TERN_CHECK(count_include_pad_ == 0 || count_include_pad_ == 1, ModelError,
                 "{}: attribute 'count_include_pad' must be 0 or 1, but got {}", where(),
                 count_include_pad_);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    if (is_max_) {
      check_dtype(inputs[0].dtype, {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUint8},
                  where(), 0, "X");
    } else {
      check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "X");
    }
    const Shape& x = inputs[0].shape;
    const kernels::ref::PoolParams p = geometry(x);
    const Shape y = window_output_shape(x[0], x[1], p.out, static_cast<int>(x.size()) - 2);
    return {TensorType{inputs[0].dtype, y}, TensorType{DType::kInt64, y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const kernels::ref::PoolParams p = geometry(x.shape());
    const int64_t planes = x.dim(0) * x.dim(1);
    const bool want_indices = outputs.size() > 1 && outputs[1].defined();
    if (is_max_ && (want_indices || x.dtype() != DType::kFloat32)) {
      int64_t* idx = want_indices ? outputs[1].data<int64_t>() : nullptr;
      visit_dtype<float, double, int8_t, uint8_t>(x.dtype(), where(), [&]<typename T>() {
        kernels::ref::max_pool_with_indices<T>(p, x.data<T>(), outputs[0].data<T>(), idx, 0, planes,
                                               column_major_);
      });
      return;
    }
    const float* xd = x.data<float>();
    float* yd = outputs[0].data<float>();
#pragma omp parallel for num_threads(ctx.num_threads) schedule(static)
    for (int64_t c = 0; c < planes; ++c) {
      if (is_max_) {
        kernels::ref::f32_max_pool(p, xd, yd, c, c + 1);
      } else {
        kernels::ref::f32_average_pool(p, xd, yd, c, c + 1);
      }
    }
  }

 private:
  kernels::ref::PoolParams geometry(const Shape& x) const {
    const int64_t rank = static_cast<int64_t>(x.size());
    const int spatial = window_.spatial_rank();
    TERN_CHECK(rank == spatial + 2, ShapeError,
               "{}: expected a {} input (N x C x {} spatial dims, as kernel_shape {} says), "
               "but got shape {}",
               where(), rank_name(spatial + 2), spatial, window_.kernel_shape, shape_str(x));
    TERN_CHECK(spatial >= 1 && spatial <= 3, ShapeError,
               "{}: supports 1 to 3 spatial dims, but kernel_shape {} has {}", where(),
               window_.kernel_shape, spatial);
    std::vector<int64_t> in(x.begin() + 2, x.end()), out(spatial), pad_begin(spatial),
        pad_end(spatial), strides(spatial), dilations(spatial);
    for (int i = 0; i < spatial; ++i) {
      strides[i] = window_.stride(i);
      dilations[i] = window_.dilation(i);
      const WindowExtent e = resolve_window(
          in[i], window_.kernel_shape[i], strides[i], dilations[i], window_.pad_begin(i),
          window_.pad_end(i, spatial), window_.auto_pad, ceil_mode_ != 0, where());
      out[i] = e.out;
      pad_begin[i] = e.pad_begin;
      pad_end[i] = e.pad_end;
    }
    kernels::ref::PoolParams p;
    p.in = to_dims3(in);
    p.out = to_dims3(out);
    p.kernel = to_dims3(window_.kernel_shape);
    p.stride = to_dims3(strides);
    p.dilation = to_dims3(dilations);
    p.pad_begin = to_dims3(pad_begin, 0);
    p.pad_end = to_dims3(pad_end, 0);
    p.count_include_pad = count_include_pad_ != 0;
    return p;
  }

  WindowAttrs window_;
  bool is_max_;
  bool column_major_ = false;
  int64_t ceil_mode_ = 0;
  int64_t count_include_pad_ = 0;
};

class MaxPoolOp final : public PoolOp {
 public:
  MaxPoolOp(const Attrs& a, const OpContext& ctx) : PoolOp(a, ctx, true) {}
};

class AveragePoolOp final : public PoolOp {
 public:
  AveragePoolOp(const Attrs& a, const OpContext& ctx) : PoolOp(a, ctx, false) {}
};

/// GlobalAveragePool / GlobalMaxPool: X: [N, C, D1, ..., Dn] (n >= 1) ->
/// Y: [N, C, 1, ..., 1], the mean or max of each channel plane.
class GlobalPoolOp : public Op {
 public:
  GlobalPoolOp(const OpContext& ctx, bool is_max) : Op(ctx), is_max_(is_max) {}

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "X");
    const Shape& x = inputs[0].shape;
    TERN_CHECK(x.size() >= 3, ShapeError,
               "{}: expected input X of rank >= 3 (N x C x spatial dims), but got shape {}",
               where(), shape_str(x));
    TERN_CHECK(checked_numel(Shape(x.begin() + 2, x.end()), where(), "spatial") > 0, ShapeError,
               "{}: expected non-empty spatial dims, but got shape {}", where(), shape_str(x));
    Shape y(x.size(), 1);
    y[0] = x[0];
    y[1] = x[1];
    return {TensorType{DType::kFloat32, y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t plane_size = planes == 0 ? 0 : x.numel() / planes;
    const float* xd = x.data<float>();
    float* yd = outputs[0].data<float>();
#pragma omp parallel for num_threads(ctx.num_threads) schedule(static)
    for (int64_t c = 0; c < planes; ++c) {
      if (is_max_) {
        kernels::ref::f32_global_max_pool(xd, yd, plane_size, c, c + 1);
      } else {
        kernels::ref::f32_global_average_pool(xd, yd, plane_size, c, c + 1);
      }
    }
  }

 private:
  bool is_max_;
};

class GlobalAveragePoolOp final : public GlobalPoolOp {
 public:
  GlobalAveragePoolOp(const Attrs&, const OpContext& ctx) : GlobalPoolOp(ctx, false) {}
};

class GlobalMaxPoolOp final : public GlobalPoolOp {
 public:
  GlobalMaxPoolOp(const Attrs&, const OpContext& ctx) : GlobalPoolOp(ctx, true) {}
};

}  // namespace

void register_pool(OpRegistry& r) {
  r.add(make_schema<MaxPoolOp>("MaxPool", 1, 1, 1, 2));
  r.add(make_schema<AveragePoolOp>("AveragePool", 1, 1));
  r.add(make_schema<GlobalAveragePoolOp>("GlobalAveragePool", 1, 1));
  r.add(make_schema<GlobalMaxPoolOp>("GlobalMaxPool", 1, 1));
}

}  // namespace tern::ops
