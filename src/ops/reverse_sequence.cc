// ReverseSequence (ONNX ReverseSequence-10): for each batch entry b, reverses the first
// sequence_lens[b] elements along time_axis (default 0) and keeps the rest; batch_axis
// (default 1) and time_axis are 0 and 1 in either order. Input rank >= 2, any dtype;
// sequence_lens int64 [batch], each in [0, time] (else InvalidArgument).
#include <cstring>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ReverseSequenceOp final : public Op {
 public:
  ReverseSequenceOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    batch_axis_ = attrs.get_int("batch_axis", 1);
    time_axis_ = attrs.get_int("time_axis", 0);
    TERN_CHECK((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0),
               ModelError, "{}: batch_axis and time_axis must be 0 and 1 (got {} and {})", where(),
               batch_axis_, time_axis_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Shape& xs = inputs[0].shape;
    check_dtype(inputs[1].dtype, {DType::kInt64, DType::kInt32}, where(), 1, "sequence_lens");
    TERN_CHECK(xs.size() >= 2 && inputs[1].shape == Shape{xs[batch_axis_]}, ShapeError,
               "{}: expected input of rank >= 2 and sequence_lens [batch], got {} and {}", where(),
               shape_str(xs), shape_str(inputs[1].shape));
    return {TensorType{inputs[0].dtype, xs}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    const Tensor x = inputs[0].contiguous();
    const std::vector<int64_t> lens = int_values(inputs[1], where(), 1, "sequence_lens");
    const int64_t batch = x.dim(static_cast<int>(batch_axis_));
    const int64_t time = x.dim(static_cast<int>(time_axis_));
    const size_t row = static_cast<size_t>(x.numel() / (batch * time)) * dtype_size(x.dtype());
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* out = static_cast<char*>(y.raw_data());
    for (int64_t b = 0; b < batch; ++b) {
      TERN_CHECK(lens[b] >= 0 && lens[b] <= time, InvalidArgument,
                 "{}: sequence_lens[{}] = {} must be in 0..{}", where(), b, lens[b], time);
      for (int64_t t = 0; t < time; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        auto offset = [&](int64_t tt) { return batch_axis_ == 0 ? b * time + tt : tt * batch + b; };
        std::memcpy(out + offset(t) * row, src + offset(from) * row, row);
      }
    }
  }

 private:
  int64_t batch_axis_ = 1;
  int64_t time_axis_ = 0;
};

}  // namespace

void register_reverse_sequence(OpRegistry& r) {
  r.add(make_schema<ReverseSequenceOp>("ReverseSequence", 2, 2));
}

}  // namespace tern::ops
