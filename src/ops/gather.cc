// Gather: picks entries of `data` along `axis` (negative counts from the end) at int32 or
// int64 `indices` (negative indices count from the end). Output shape:
// data.shape[:axis] + indices.shape + data.shape[axis+1:]. Any data dtype. An index
// outside [-d, d - 1] is an InvalidArgument naming the node. Source: ONNX Gather-13.
// GatherElements (ONNX GatherElements-13): out[i] = data[i with i[axis] = indices[i]];
// indices has data's rank, output its shape. GatherND (ONNX GatherND-13, batch_dims from
// -12): the last indices dim m addresses the first m data dims after batch_dims; output
// indices.shape[:-1] + data.shape[batch_dims + m:]. Any data dtype, int32/int64 indices,
// negative indices count from the end, out-of-range ones are InvalidArgument.
#include "kernels/reference/gather.h"

#include <algorithm>
#include <cstring>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class GatherOp final : public Op {
 public:
  GatherOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { axis_ = attrs.get_int("axis", 0); }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& data = inputs[0];
    const InferInput& indices = inputs[1];
    check_dtype(indices.dtype, {DType::kInt32, DType::kInt64}, where(), 1, "indices");
    const int rank = static_cast<int>(data.shape.size());
    TERN_CHECK(rank >= 1, ShapeError, "{}: data must have rank >= 1, but got a scalar", where());
    const int axis = normalize_axis(axis_, rank, where());
    Shape out(data.shape.begin(), data.shape.begin() + axis);
    out.insert(out.end(), indices.shape.begin(), indices.shape.end());
    out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
    return {TensorType{data.dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor data = inputs[0].contiguous();
    const Tensor indices = inputs[1].contiguous();
    const int axis = normalize_axis(axis_, data.rank(), where());
    kernels::ref::GatherParams p;
    p.axis_size = data.dim(axis);
    p.num_indices = indices.numel();
    p.elem_size = static_cast<int>(dtype_size(data.dtype()));
    for (int d = 0; d < axis; ++d) p.outer *= data.dim(d);
    for (int d = axis + 1; d < data.rank(); ++d) p.inner *= data.dim(d);
    visit_dtype<int32_t, int64_t>(indices.dtype(), where(), [&]<typename TI>() {
      const TI* idx = indices.data<TI>();
      for (int64_t j = 0; j < p.num_indices; ++j) {
        const int64_t k = static_cast<int64_t>(idx[j]);
        TERN_CHECK(k >= -p.axis_size && k < p.axis_size, InvalidArgument,
                   "{}: index {} (indices element {}) is out of range for axis {} of size {} "
                   "(expected {}..{})",
                   where(), k, j, axis, p.axis_size, -p.axis_size, p.axis_size - 1);
      }
      if (y.numel() > 0) kernels::ref::gather<TI>(p, data.raw_data(), idx, y.raw_data());
    });
  }

 private:
  int64_t axis_ = 0;
};

class GatherElementsOp final : public Op {
 public:
  GatherElementsOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.get_int("axis", 0);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& data = inputs[0];
    const InferInput& indices = inputs[1];
    check_dtype(indices.dtype, {DType::kInt32, DType::kInt64}, where(), 1, "indices");
    const int rank = static_cast<int>(data.shape.size());
    TERN_CHECK(rank >= 1 && indices.shape.size() == data.shape.size(), ShapeError,
               "{}: indices {} must have the rank of data {} (>= 1)", where(),
               shape_str(indices.shape), shape_str(data.shape));
    const int axis = normalize_axis(axis_, rank, where());
    for (int d = 0; d < rank; ++d) {
      TERN_CHECK(d == axis || indices.shape[d] <= data.shape[d], ShapeError,
                 "{}: indices {} exceeds data {} in dim {}", where(), shape_str(indices.shape),
                 shape_str(data.shape), d);
    }
    return {TensorType{data.dtype, indices.shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    const Tensor data = inputs[0].contiguous();
    const int rank = data.rank();
    const int axis = normalize_axis(axis_, rank, where());
    const int64_t n = data.dim(axis);
    const std::vector<int64_t> idx =
        checked_indices(inputs[1], where(), [n](int64_t) { return n; });
    const std::vector<int64_t> dst = strides_of(data.shape());
    const size_t es = dtype_size(data.dtype());
    const auto* src = static_cast<const char*>(data.raw_data());
    auto* out = static_cast<char*>(y.raw_data());
    std::vector<int64_t> pos(rank, 0);  // multi-index into indices / output
    for (size_t j = 0; j < idx.size(); ++j) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += (d == axis ? idx[j] : pos[d]) * dst[d];
      std::memcpy(out + j * es, src + off * es, es);
      for (int d = rank - 1; d >= 0 && ++pos[d] == y.dim(d); --d) pos[d] = 0;
    }
  }

 private:
  int64_t axis_ = 0;
};

class GatherNDOp final : public Op {
 public:
  GatherNDOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    batch_dims_ = attrs.get_int("batch_dims", 0);
    TERN_CHECK(batch_dims_ >= 0, ModelError, "{}: batch_dims must be >= 0, got {}", where(),
               batch_dims_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Shape& ds = inputs[0].shape;
    const Shape& is = inputs[1].shape;
    check_dtype(inputs[1].dtype, {DType::kInt64, DType::kInt32}, where(), 1, "indices");
    const int64_t r = static_cast<int64_t>(ds.size());
    const int64_t q = static_cast<int64_t>(is.size());
    TERN_CHECK(q >= 1 && r >= 1 && batch_dims_ < std::min(q, r), ShapeError,
               "{}: data {} and indices {} must have rank > batch_dims {}", where(), shape_str(ds),
               shape_str(is), batch_dims_);
    const int64_t m = is.back();
    TERN_CHECK(m >= 1 && m <= r - batch_dims_, ShapeError,
               "{}: the last indices dim {} must be in 1..{} (data rank - batch_dims)", where(), m,
               r - batch_dims_);
    for (int64_t d = 0; d < batch_dims_; ++d) {
      TERN_CHECK(ds[d] == is[d], ShapeError, "{}: batch dim {} differs: data {} vs indices {}",
                 where(), d, shape_str(ds), shape_str(is));
    }
    Shape out(is.begin(), is.end() - 1);
    out.insert(out.end(), ds.begin() + batch_dims_ + m, ds.end());
    return {TensorType{inputs[0].dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    const Tensor data = inputs[0].contiguous();
    const Shape& ds = data.shape();
    const Shape& is = inputs[1].shape();
    const int64_t m = is.back();
    const int64_t b = batch_dims_;
    const std::vector<int64_t> idx =
        checked_indices(inputs[1], where(), [&](int64_t j) { return ds[b + j % m]; });
    const std::vector<int64_t> dst = strides_of(ds);
    int64_t batches = 1;
    for (int64_t d = 0; d < b; ++d) batches *= is[d];
    const int64_t tuples = static_cast<int64_t>(idx.size()) / m;
    const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
    const int64_t slice = b + m < static_cast<int64_t>(ds.size()) ? dst[b + m - 1] : 1;
    const int64_t batch_stride = b > 0 ? dst[b - 1] : 0;
    const size_t es = dtype_size(data.dtype());
    const auto* src = static_cast<const char*>(data.raw_data());
    auto* out = static_cast<char*>(y.raw_data());
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = (t / std::max<int64_t>(per_batch, 1)) * batch_stride;
      for (int64_t k = 0; k < m; ++k) off += idx[t * m + k] * dst[b + k];
      std::memcpy(out + t * slice * es, src + off * es, slice * es);
    }
  }

 private:
  int64_t batch_dims_ = 0;
};

}  // namespace

void register_gather(OpRegistry& r) {
  r.add(make_schema<GatherOp>("Gather", 2, 2));
  r.add(make_schema<GatherElementsOp>("GatherElements", 2, 2));
  r.add(make_schema<GatherNDOp>("GatherND", 2, 2));
}

}  // namespace tern::ops
