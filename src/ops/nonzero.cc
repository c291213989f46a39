// NonZero (ONNX NonZero-13): the indices of the non-zero elements of the input, as an
// int64 [rank, count] tensor in row-major order (a scalar input gives [1, count] with
// index 0, as numpy and ONNX Runtime do). Any dtype; -0.0 counts as zero. The output
// length depends on the values.
// Compress (ONNX Compress-11): the slices of the input along `axis` whose bool condition
// is true (condition may be shorter than the axis: missing entries are false); without
// `axis` the input is flattened first. Any data dtype.
#include <algorithm>
#include <cstring>

#include "base/dtype_dispatch.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// flags[i] = element i of `t` (contiguous) is non-zero.
std::vector<bool> nonzero_flags(const Tensor& t) {
  std::vector<bool> flags(t.numel());
  tern::visit_dtype(t.dtype(), [&]<typename T>(std::type_identity<T>) {
    const T* p = t.data<T>();
    for (size_t i = 0; i < flags.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        flags[i] = (p[i].bits & 0x7fff) != 0;
      } else {
        flags[i] = p[i] != T{0};
      }
    }
  });
  return flags;
}

class NonZeroOp final : public Op {
 public:
  NonZeroOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const std::vector<bool> flags = nonzero_flags(require_value(inputs, 0).contiguous());
    int64_t n = 0;
    for (bool f : flags) n += f ? 1 : 0;
    return {TensorType{DType::kInt64,
                       {std::max<int64_t>(static_cast<int64_t>(inputs[0].shape.size()), 1), n}}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    const Tensor x = inputs[0].contiguous();
    const std::vector<bool> flags = nonzero_flags(x);
    const int rank = x.rank();
    const int64_t n = y.dim(1);
    int64_t* out = y.data<int64_t>();
    std::vector<int64_t> pos(rank, 0);
    int64_t j = 0;
    for (size_t i = 0; i < flags.size(); ++i) {
      if (flags[i]) {
        if (rank == 0) out[j] = 0;
        for (int d = 0; d < rank; ++d) out[d * n + j] = pos[d];
        ++j;
      }
      for (int d = rank - 1; d >= 0 && ++pos[d] == x.dim(d); --d) pos[d] = 0;
    }
  }
};

class CompressOp final : public Op {
 public:
  CompressOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    has_axis_ = attrs.has("axis");
    axis_ = attrs.get_int("axis", 0);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[1].dtype, {DType::kBool}, where(), 1, "condition");
    TERN_CHECK(inputs[1].shape.size() == 1, ShapeError, "{}: condition must be 1-D, got {}",
               where(), shape_str(inputs[1].shape));
    const Tensor cond = require_value(inputs, 1).contiguous();
    Shape shape = inputs[0].shape;
    if (!has_axis_) shape = {checked_numel(shape, where(), "input")};
    const int axis = normalize_axis(axis_, static_cast<int>(shape.size()), where());
    TERN_CHECK(cond.numel() <= shape[axis], ShapeError,
               "{}: condition has {} entries, more than the {} of axis {}", where(), cond.numel(),
               shape[axis], axis);
    int64_t n = 0;
    for (int64_t i = 0; i < cond.numel(); ++i) n += cond.data<bool>()[i] ? 1 : 0;
    shape[axis] = n;
    return {TensorType{inputs[0].dtype, shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    Tensor x = inputs[0].contiguous();
    if (!has_axis_) x = x.reshape({x.numel()});
    const Tensor cond = inputs[1].contiguous();
    const int axis = normalize_axis(axis_, x.rank(), where());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const int64_t n = x.dim(axis);
    const size_t row = inner * dtype_size(x.dtype());
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* out = static_cast<char*>(y.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < cond.numel(); ++i) {
        if (!cond.data<bool>()[i]) continue;
        std::memcpy(out, src + (o * n + i) * row, row);
        out += row;
      }
    }
  }

 private:
  bool has_axis_ = false;
  int64_t axis_ = 0;
};

}  // namespace

void register_nonzero(OpRegistry& r) {
  r.add(make_schema<NonZeroOp>("NonZero", 1, 1));
  r.add(make_schema<CompressOp>("Compress", 2, 2));
}

}  // namespace tern::ops
