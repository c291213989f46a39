// Trilu (ONNX Trilu-14): keeps the upper (upper = 1, default: col - row >= k) or lower
// (upper = 0: col - row <= k) triangle of each matrix in the last two dims and zeroes the
// rest. k is an optional int64 scalar input (default 0). EyeLike (ONNX EyeLike-9): a
// rank-2 tensor shaped like the input with ones on diagonal k (col - row == k) and zeros
// elsewhere, of dtype `dtype` (an ONNX type code; default: the input's dtype).
// Any dtype (zero is the all-zero bit pattern in every dtype).
#include <cstring>

#include "base/dtype_dispatch.h"
#include "base/onnx_dtype.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class TriluOp final : public Op {
 public:
  TriluOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    upper_ = attrs.get_int("upper", 1) != 0;
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(inputs[0].shape.size() >= 2, ShapeError,
               "{}: input must have rank >= 2, got shape {}", where(), shape_str(inputs[0].shape));
    if (has_input(inputs, 1)) check_dtype(inputs[1].dtype, {DType::kInt64}, where(), 1, "k");
    return {TensorType{inputs[0].dtype, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    int64_t k = 0;
    if (has_input(inputs, 1)) {
      const std::vector<int64_t> kv = int_values(inputs[1], where(), 1, "k");
      TERN_CHECK(kv.size() == 1, InvalidArgument, "{}: k must hold one value, got {}", where(),
                 kv.size());
      k = kv[0];
    }
    const Tensor x = inputs[0].contiguous();
    const int64_t rows = x.dim(x.rank() - 2);
    const int64_t cols = x.dim(x.rank() - 1);
    const int64_t mats = x.numel() / (rows * cols);
    const size_t es = dtype_size(x.dtype());
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* out = static_cast<char*>(y.raw_data());
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t off = (m * rows + r) * cols + c;
          const bool keep = upper_ ? c - r >= k : c - r <= k;
          if (keep) {
            std::memcpy(out + off * es, src + off * es, es);
          } else {
            std::memset(out + off * es, 0, es);
          }
        }
      }
    }
  }

 private:
  bool upper_ = true;
};

class EyeLikeOp final : public Op {
 public:
  EyeLikeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    k_ = attrs.get_int("k", 0);
    if (attrs.has("dtype")) {
      const int64_t code = attrs.get_int("dtype", 1);
      dtype_ = dtype_from_onnx(code);
      TERN_CHECK(dtype_.has_value() && *dtype_ != DType::kString, UnsupportedOpError,
                 "{}: dtype {} is not supported (supported: numeric and bool type codes)", where(),
                 code);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(inputs[0].shape.size() == 2, ShapeError, "{}: input must have rank 2, got {}",
               where(), shape_str(inputs[0].shape));
    return {TensorType{dtype_.value_or(inputs[0].dtype), inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    (void)inputs;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    std::memset(y.raw_data(), 0, y.nbytes());
    const int64_t rows = y.dim(0), cols = y.dim(1);
    tern::visit_dtype(y.dtype(), [&]<typename T>(std::type_identity<T>) {
      T one{};
      if constexpr (std::is_same_v<T, Float16>) {
        one.bits = 0x3C00;
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        one.bits = 0x3F80;
      } else {
        one = static_cast<T>(1);
      }
      T* out = y.data<T>();
      for (int64_t r = 0; r < rows; ++r) {
        // Column r + k_, tested without forming r + k_ (k_ may be near INT64_MAX/MIN).
        if (k_ >= -r && k_ < cols - r) out[r * cols + r + k_] = one;
      }
    });
  }

 private:
  int64_t k_ = 0;
  std::optional<DType> dtype_;
};

}  // namespace

void register_trilu(OpRegistry& r) {
  r.add(make_schema<TriluOp>("Trilu", 1, 2));
  r.add(make_schema<EyeLikeOp>("EyeLike", 1, 1));
}

}  // namespace tern::ops
