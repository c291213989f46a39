// OneHot (ONNX OneHot-11): out has indices' shape with a new dim of size `depth` inserted
// at `axis` (default -1 = last; range [-rank-1, rank]); out[..., j, ...] = on_value where
// j == indices[...] (negative indices count from the end, -depth..-1) and off_value
// elsewhere (also for an index out of range). indices and depth: float32, float64, int32
// or int64 (depth a single value, floats truncated; a non-finite or out-of-int64-range
// float depth is an InvalidArgument; float indices saturate, NaN -> 0); values: [off_value,
// on_value] of any dtype, which is the output's.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/reference/wrapping.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// The values of a float32/float64/int32/int64 tensor as int64. Floats are truncated and
/// saturated (NaN -> 0, so an index of 1e30 or inf is out of range); with `exact`, a float
/// that is not finite or not in (-2^63, 2^63) is an InvalidArgument instead.
std::vector<int64_t> as_int64(const Tensor& t_in, const std::string& where, int index,
                              const char* name, bool exact) {
  check_dtype(t_in.dtype(), {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, where,
              index, name);
  const Tensor t = t_in.contiguous();
  std::vector<int64_t> out(t.numel());
  visit_dtype<float, double, int32_t, int64_t>(t.dtype(), where, [&]<typename T>() {
    for (size_t i = 0; i < out.size(); ++i) {
      const T v = t.data<T>()[i];
      if constexpr (std::is_floating_point_v<T>) {
        constexpr double kLimit = 9223372036854775808.0;  // 2^63
        TERN_CHECK(!exact || (std::isfinite(v) && std::fabs(static_cast<double>(v)) < kLimit),
                   InvalidArgument, "{}: {} must be finite and fit in int64, got {}", where, name,
                   static_cast<double>(v));
        out[i] = kernels::ref::float_to_int<int64_t>(static_cast<double>(v));
      } else {
        out[i] = v;
      }
    }
  });
  return out;
}

class OneHotOp final : public Op {
 public:
  OneHotOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.get_int("axis", -1);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs.subspan(0, 2),
                 {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, where(),
                 {"indices", "depth"});
    TERN_CHECK(checked_numel(inputs[2].shape, where(), "input") == 2, ShapeError,
               "{}: values must hold 2 elements [off, on], got shape {}", where(),
               shape_str(inputs[2].shape));
    const int64_t depth = depth_of(require_value(inputs, 1));
    Shape out = inputs[0].shape;
    const int axis = out_axis(static_cast<int>(out.size()));
    out.insert(out.begin() + axis, depth);
    (void)checked_numel(out, where());
    return {TensorType{inputs[2].dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    const std::vector<int64_t> idx = as_int64(inputs[0], where(), 0, "indices", false);
    const int64_t depth = depth_of(inputs[1]);
    const int axis = out_axis(inputs[0].rank());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= inputs[0].dim(d);
    for (int d = axis; d < inputs[0].rank(); ++d) inner *= inputs[0].dim(d);
    const Tensor values = inputs[2].contiguous();
    const size_t es = dtype_size(values.dtype());
    const auto* off_v = static_cast<const char*>(values.raw_data());
    const char* on_v = off_v + es;
    auto* out = static_cast<char*>(y.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < depth; ++j) {
        for (int64_t i = 0; i < inner; ++i) {
          int64_t k = idx[o * inner + i];
          if (k < 0) k += depth;
          std::memcpy(out + ((o * depth + j) * inner + i) * es, k == j ? on_v : off_v, es);
        }
      }
    }
  }

 private:
  // The output dim of depth: axis in [-rank - 1, rank] counts within the output's rank + 1.
  int out_axis(int rank) const { return normalize_axis(axis_, rank + 1, where()); }

  int64_t depth_of(const Tensor& t) const {
    const std::vector<int64_t> d = as_int64(t, where(), 1, "depth", true);
    TERN_CHECK(d.size() == 1 && d[0] >= 0, InvalidArgument,
               "{}: depth must be one non-negative value, got {} values", where(), d.size());
    return d[0];
  }

  int64_t axis_ = -1;
};

}  // namespace

void register_onehot(OpRegistry& r) { r.add(make_schema<OneHotOp>("OneHot", 3, 3)); }

}  // namespace tern::ops
