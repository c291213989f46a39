// Pooling (ONNX MaxPool-8/10/11/12, AveragePool-7/10/11, GlobalAveragePool-1,
// GlobalMaxPool-1, MaxUnpool-9/11), NCHW (1-D to 3-D), float32 (MaxPool also float64,
// int8, uint8). Kernels: kernels/pool (NCHWc, SIMD) and kernels/reference/pool.h.
#include "kernels/reference/pool.h"

#include <algorithm>

#include "kernels/pool/nchwc_pool.h"
#include "ops/op_args.h"
#include "ops/parallel.h"
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
    if (kernels::nchwc_pool_supported(p)) {
      // NCHWc (the 3-D window whose last dim is the lanes): the SIMD kernel, a region of
      // every plane per thread (parallel_grid; the planes of all images are one grid).
      const kernels::PoolKind kind =
          is_max_ ? kernels::PoolKind::kMax : kernels::PoolKind::kAverage;
      parallel_grid(1, kernels::nchwc_pool_work(p, planes), ctx.num_threads,
                    [&](int64_t, int64_t begin, int64_t end) {
                      kernels::f32_nchwc_pool(p, kind, xd, yd, begin, end);
                    });
      return;
    }
    parallel_ranges(planes, ctx.num_threads, [&](int64_t begin, int64_t end) {
      if (is_max_) {
        kernels::ref::f32_max_pool(p, xd, yd, begin, end);
      } else {
        kernels::ref::f32_average_pool(p, xd, yd, begin, end);
      }
    });
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
    parallel_ranges(planes, ctx.num_threads, [&](int64_t begin, int64_t end) {
      if (is_max_) {
        kernels::ref::f32_global_max_pool(xd, yd, plane_size, begin, end);
      } else {
        kernels::ref::f32_global_average_pool(xd, yd, plane_size, begin, end);
      }
    });
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

/// MaxUnpool (ONNX MaxUnpool-9/11), float32: scatters X [N, C, D1, ..., Dn] into zeros at
/// the flat indices I (int64, X's shape, as MaxPool's Indices output gives them) of the
/// unpooled shape [N, C, (Di - 1) * stride_i - pad_begin_i - pad_end_i + kernel_i].
/// An output_shape input (each dim >= the unpooled one) pads that result, floor(extra / 2)
/// before and the rest after, as the ONNX reference does. Attributes kernel_shape
/// (required), strides, pads. ShapeError for mismatched shapes, InvalidArgument for an
/// index outside the unpooled shape.
class MaxUnpoolOp final : public Op {
 public:
  MaxUnpoolOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx),
        kernel_(a.require_ints("kernel_shape")),
        strides_(a.get_ints("strides", std::vector<int64_t>(kernel_.size(), 1))),
        pads_(a.get_ints("pads", std::vector<int64_t>(2 * kernel_.size(), 0))) {
    TERN_CHECK(strides_.size() == kernel_.size() && pads_.size() == 2 * kernel_.size(), ModelError,
               "{}: expected {} strides and {} pads for kernel_shape {}, but got {} and {}",
               where(), kernel_.size(), 2 * kernel_.size(), kernel_, strides_.size(), pads_.size());
    for (size_t i = 0; i < kernel_.size(); ++i) {
      TERN_CHECK(
          kernel_[i] >= 1 && strides_[i] >= 1 && pads_[i] >= 0 && pads_[kernel_.size() + i] >= 0,
          ModelError,
          "{}: expected kernel_shape and strides >= 1 and pads >= 0, but got {}, {}, {}", where(),
          kernel_, strides_, pads_);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "X");
    check_dtype(inputs[1].dtype, {DType::kInt64}, where(), 1, "I");
    const Shape& x = inputs[0].shape;
    const size_t k = kernel_.size();
    TERN_CHECK(x.size() == k + 2 && inputs[1].shape == x, ShapeError,
               "{}: expected X of rank {} (N x C x kernel_shape {} dims) and I of X's shape, "
               "but got {} and {}",
               where(), k + 2, kernel_, shape_str(x), shape_str(inputs[1].shape));
    const Shape base = default_shape(x);
    Shape y = base;
    if (has_input(inputs, 2)) {
      y = int_values(require_value(inputs, 2), where(), 2, "output_shape");
      TERN_CHECK(y.size() == x.size() && y[0] == x[0] && y[1] == x[1], ShapeError,
                 "{}: expected output_shape [{}, {}, ...] of rank {}, but got {}", where(), x[0],
                 x[1], x.size(), shape_str(y));
      for (size_t d = 2; d < y.size(); ++d) {
        TERN_CHECK(y[d] >= base[d], ShapeError,
                   "{}: output_shape {} is smaller than the unpooled shape {}", where(),
                   shape_str(y), shape_str(base));
      }
    }
    for (int64_t d : y) {
      TERN_CHECK(d >= 0, ShapeError, "{}: the output shape {} has a negative dim", where(),
                 shape_str(y));
    }
    checked_numel(y, where());
    return {TensorType{DType::kFloat32, y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext&) const override {
    const Tensor x = inputs[0].contiguous(), idx = inputs[1].contiguous();
    Tensor& y = outputs[0];
    float* yd = y.data<float>();
    const int64_t total = y.numel();
    std::fill(yd, yd + total, 0.0f);
    const float* xd = x.data<float>();
    const int64_t* id = idx.data<int64_t>();
    // Indices address the default (unpooled) shape; a larger output_shape pads it,
    // floor(extra / 2) before and the rest after along each spatial dim.
    const Shape base = default_shape(x.shape());
    const Shape& out = y.shape();
    const int64_t base_total = shape_numel(base);
    const int rank = static_cast<int>(out.size());
    for (int64_t i = 0; i < x.numel(); ++i) {
      TERN_CHECK(id[i] >= 0 && id[i] < base_total, InvalidArgument,
                 "{}: index {} is outside the unpooled shape {}", where(), id[i], shape_str(base));
      int64_t rem = id[i], pos = 0, stride = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t coord = rem % base[d] + (out[d] - base[d]) / 2;
        rem /= base[d];
        pos += coord * stride;
        stride *= out[d];
      }
      yd[pos] = xd[i];
    }
  }

 private:
  // [N, C, (Di - 1) * stride_i - pad_begin_i - pad_end_i + kernel_i]. Throws ShapeError
  // naming the node when a dim overflows int64 (strides and pads come from the model).
  Shape default_shape(const Shape& x) const {
    const size_t k = kernel_.size();
    Shape y = {x[0], x[1]};
    for (size_t i = 0; i < k; ++i) {
      int64_t v = checked_mul(x[i + 2] - 1, strides_[i], where(), "unpooled dim {}", i + 2);
      v = checked_add(v, -pads_[i], where(), "unpooled dim {}", i + 2);
      v = checked_add(v, -pads_[k + i], where(), "unpooled dim {}", i + 2);
      y.push_back(checked_add(v, kernel_[i], where(), "unpooled dim {}", i + 2));
    }
    return y;
  }

  std::vector<int64_t> kernel_, strides_, pads_;
};

}  // namespace

void register_pool(OpRegistry& r) {
  r.add(make_schema<MaxUnpoolOp>("MaxUnpool", 2, 3));
  r.add(make_schema<MaxPoolOp>("MaxPool", 1, 1, 1, 2));
  r.add(make_schema<AveragePoolOp>("AveragePool", 1, 1));
  r.add(make_schema<GlobalAveragePoolOp>("GlobalAveragePool", 1, 1));
  r.add(make_schema<GlobalMaxPoolOp>("GlobalMaxPool", 1, 1));
}

}  // namespace tern::ops
