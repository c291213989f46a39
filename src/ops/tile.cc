// Tile: repeats the input repeats[d] times along each dim d (output dim = dim * repeats).
// `repeats` is a 1-D int64 input with one non-negative entry per input dim. Any dtype.
// Source: ONNX Tile-13.
//
// Tiling is a broadcast copy: view the output [.., r_d * n_d, ..] as [.., r_d, n_d, ..]
// and the input as [.., 1, n_d, ..] (stride 0 on the repeat dims); the broadcast iterator
// then does the walk.
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class TileOp final : public Op {
 public:
  TileOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Shape& in = inputs[0].shape;
    const std::vector<int64_t> repeats = read_repeats(require_value(inputs, 1), in);
    Shape out(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
      out[d] = checked_mul(in[d], repeats[d], where(), "output dim {} (input dim * repeats)", d);
    }
    checked_numel(out, where());
    return {TensorType{inputs[0].dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor& x = inputs[0];
    const std::vector<int64_t> repeats = read_repeats(inputs[1], x.shape());
    // Interleave (repeat, dim) pairs: out [r0, n0, r1, n1, ...] contiguous, in [1, n0, ...].
    const size_t rank = x.shape().size();
    Shape out_shape(2 * rank), out_strides(2 * rank), in_shape(2 * rank), in_strides(2 * rank);
    int64_t s = 1;
    for (size_t d = rank; d-- > 0;) {
      out_shape[2 * d] = repeats[d];
      out_shape[2 * d + 1] = x.shape()[d];
      out_strides[2 * d + 1] = s;
      s *= x.shape()[d];
      out_strides[2 * d] = s;
      s *= repeats[d];
      in_shape[2 * d] = 1;
      in_shape[2 * d + 1] = x.shape()[d];
      in_strides[2 * d] = 0;
      in_strides[2 * d + 1] = x.strides()[d];
    }
    const int es = static_cast<int>(dtype_size(x.dtype()));
    StridedOperand dst{y.raw_data(), out_shape, out_strides, es};
    StridedOperand src{const_cast<void*>(x.raw_data()), in_shape, in_strides, es};
    copy_strided(dst, src, ctx.num_threads);
  }

 private:
  std::vector<int64_t> read_repeats(const Tensor& t, const Shape& in) const {
    check_dtype(t.dtype(), {DType::kInt64}, where(), 1, "repeats");
    const std::vector<int64_t> repeats = int_values(t, where(), 1, "repeats");
    TERN_CHECK(repeats.size() == in.size(), ShapeError,
               "{}: repeats {} has {} entries, but the input of shape {} has rank {}", where(),
               shape_str(repeats), repeats.size(), shape_str(in), in.size());
    for (int64_t r : repeats) {
      TERN_CHECK(r >= 0, ShapeError, "{}: repeats {} has a negative entry", where(),
                 shape_str(repeats));
    }
    return repeats;
  }
};

}  // namespace

void register_tile(OpRegistry& r) { r.add(make_schema<TileOp>("Tile", 2, 2)); }

}  // namespace tern::ops
