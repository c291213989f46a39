// Scatter ops: the output is a copy of `data` with elements of `updates` written (or,
// with `reduction`, added / multiplied / maxed / mined) at places given by `indices`.
// ScatterElements (ONNX ScatterElements-18; reduction add/mul from -16, max/min from -18;
// Scatter-9/10 is the same op without reduction): indices and updates share one shape of
// data's rank; element i goes to data[i with i[axis] = indices[i]]. ScatterND (ONNX
// ScatterND-18, same reductions): the last indices dim m addresses the first m data dims;
// updates has shape indices.shape[:-1] + data.shape[m:]. int32/int64 indices, negative
// ones count from the end, out of range is InvalidArgument. Updates apply in index order.
// Dtypes: any for reduction none; float32, float64, int32, int64 with a reduction.
#include <algorithm>
#include <cstring>

#include "kernels/reference/wrapping.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const Attrs& attrs, const OpContext& ctx) {
  if (ctx.op_type == "Scatter") return Reduction::kNone;
  const std::string r = attrs.get_enum("reduction", "none", {"none", "add", "mul", "max", "min"});
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return Reduction::kNone;
}

/// Applies updates: dst[dst_off[j] + e] (op)= src[j * count + e] for e < count, in order.
void apply(Reduction red, DType dtype, const std::string& where,
           const std::vector<int64_t>& dst_off, int64_t count, const void* src, void* dst) {
  if (red == Reduction::kNone) {
    const size_t es = dtype_size(dtype);
    for (size_t j = 0; j < dst_off.size(); ++j) {
      std::memcpy(static_cast<char*>(dst) + dst_off[j] * es,
                  static_cast<const char*>(src) + j * count * es, count * es);
    }
    return;
  }
  visit_dtype<float, double, int32_t, int64_t>(dtype, where, [&]<typename T>() {
    const T* s = static_cast<const T*>(src);
    T* d = static_cast<T*>(dst);
    for (size_t j = 0; j < dst_off.size(); ++j) {
      for (int64_t e = 0; e < count; ++e) {
        T& out = d[dst_off[j] + e];
        const T v = s[j * count + e];
        switch (red) {
          case Reduction::kAdd:
            out = kernels::ref::wrapping_add(out, v);
            break;
          case Reduction::kMul:
            out = kernels::ref::wrapping_mul(out, v);
            break;
          // NaN propagates (from either side), like np.maximum / np.minimum.
          case Reduction::kMax:
            out = (out < v || v != v) ? v : out;
            break;
          case Reduction::kMin:
            out = (v < out || v != v) ? v : out;
            break;
          case Reduction::kNone:
            out = v;
            break;
        }
      }
    }
  });
}

void check_dtypes_for(Reduction red, std::span<const InferInput> inputs, const std::string& where) {
  check_dtype(inputs[1].dtype, {DType::kInt32, DType::kInt64}, where, 1, "indices");
  check_same_dtype(inputs[2].dtype, inputs[0].dtype, where, 2, "updates", 0, "data");
  if (red != Reduction::kNone) {
    check_dtype(inputs[0].dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64},
                where, 0, "data");
  }
}

class ScatterElementsOp final : public Op {
 public:
  ScatterElementsOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.get_int("axis", 0);
    reduction_ = parse_reduction(attrs, ctx);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes_for(reduction_, inputs, where());
    const Shape& ds = inputs[0].shape;
    const Shape& is = inputs[1].shape;
    TERN_CHECK(!ds.empty() && is.size() == ds.size() && inputs[2].shape == is, ShapeError,
               "{}: expected indices and updates of one shape with data's rank, got data {}, "
               "indices {}, updates {}",
               where(), shape_str(ds), shape_str(is), shape_str(inputs[2].shape));
    const int axis = normalize_axis(axis_, static_cast<int>(ds.size()), where());
    for (size_t d = 0; d < ds.size(); ++d) {
      TERN_CHECK(static_cast<int>(d) == axis || is[d] <= ds[d], ShapeError,
                 "{}: indices {} exceeds data {} in dim {}", where(), shape_str(is), shape_str(ds),
                 d);
    }
    return {TensorType{inputs[0].dtype, ds}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    y.copy_from(inputs[0]);
    const int rank = y.rank();
    const int axis = normalize_axis(axis_, rank, where());
    const int64_t n = y.dim(axis);
    const std::vector<int64_t> idx =
        checked_indices(inputs[1], where(), [n](int64_t) { return n; });
    const std::vector<int64_t> st = strides_of(y.shape());
    std::vector<int64_t> dst_off(idx.size());
    std::vector<int64_t> pos(rank, 0);
    for (size_t j = 0; j < idx.size(); ++j) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += (d == axis ? idx[j] : pos[d]) * st[d];
      dst_off[j] = off;
      for (int d = rank - 1; d >= 0 && ++pos[d] == inputs[1].dim(d); --d) pos[d] = 0;
    }
    const Tensor updates = inputs[2].contiguous();
    apply(reduction_, y.dtype(), where(), dst_off, 1, updates.raw_data(), y.raw_data());
  }

 private:
  int64_t axis_ = 0;
  Reduction reduction_ = Reduction::kNone;
};

class ScatterNDOp final : public Op {
 public:
  ScatterNDOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    reduction_ = parse_reduction(attrs, ctx);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes_for(reduction_, inputs, where());
    const Shape& ds = inputs[0].shape;
    const Shape& is = inputs[1].shape;
    TERN_CHECK(!ds.empty() && !is.empty() && is.back() >= 1 &&
                   is.back() <= static_cast<int64_t>(ds.size()),
               ShapeError, "{}: indices {} must end in a dim 1..{} (data {})", where(),
               shape_str(is), ds.size(), shape_str(ds));
    Shape us(is.begin(), is.end() - 1);
    us.insert(us.end(), ds.begin() + is.back(), ds.end());
    TERN_CHECK(inputs[2].shape == us, ShapeError, "{}: updates must have shape {}, got {}", where(),
               shape_str(us), shape_str(inputs[2].shape));
    return {TensorType{inputs[0].dtype, ds}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    y.copy_from(inputs[0]);
    const Shape& ds = y.shape();
    const int64_t m = inputs[1].shape().back();
    const std::vector<int64_t> idx =
        checked_indices(inputs[1], where(), [&](int64_t j) { return ds[j % m]; });
    const std::vector<int64_t> st = strides_of(ds);
    const int64_t slice = m < static_cast<int64_t>(ds.size()) ? st[m - 1] : 1;
    std::vector<int64_t> dst_off(idx.size() / m);
    for (size_t t = 0; t < dst_off.size(); ++t) {
      int64_t off = 0;
      for (int64_t k = 0; k < m; ++k) off += idx[t * m + k] * st[k];
      dst_off[t] = off;
    }
    const Tensor updates = inputs[2].contiguous();
    apply(reduction_, y.dtype(), where(), dst_off, slice, updates.raw_data(), y.raw_data());
  }

 private:
  Reduction reduction_ = Reduction::kNone;
};

}  // namespace

void register_scatter(OpRegistry& r) {
  r.add(make_schema<ScatterElementsOp>("ScatterElements", 3, 3));
  r.add(make_schema<ScatterElementsOp>("Scatter", 3, 3));
  r.add(make_schema<ScatterNDOp>("ScatterND", 3, 3));
}

}  // namespace tern::ops
