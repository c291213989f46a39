// Cast: converts every element to the dtype `to` (an ONNX TensorProto.DataType value),
// between every float, integer and bool type tern has (kernels::ref::cast gives the rules)
// and strings (kernels/reference/string_cast.h). Complex targets are UnsupportedOpError.
// CastLike: the same conversion to the dtype of its second input (target_type; only its
// dtype is read). Sources: ONNX Cast-13, CastLike-15 (the `saturate` attribute of
// Cast-19/CastLike-19 concerns float8 only, which tern does not have, and is ignored).
#include "base/onnx_dtype.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/string_cast.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

// y (contiguous, x's shape) = x converted to y's dtype. Parsing a string can throw (a
// string that is not a number) with the flat element index in its message, so string
// casts run on one thread, in order, counting the elements done.
void cast_into(const Tensor& x, Tensor& y, int num_threads) {
  const DType from = x.dtype();
  const DType to = y.dtype();
  const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(x)};
  if (from == DType::kString && to != DType::kString) {
    int64_t done = 0;
    it.for_each(0, y.numel(), [&](char* const* p, const int64_t* s, int64_t n) {
      kernels::ref::cast_from_string(n, reinterpret_cast<const std::string*>(p[1]), s[1], to, p[0],
                                     done);
      done += n;
    });
    return;
  }
  it.parallel_for_each(num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
    kernels::ref::cast(n, from, p[1], s[1], to, p[0]);
  });
}

class CastOp final : public Op {
 public:
  CastOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const int64_t to = attrs.require_int("to");
    const std::optional<DType> d = dtype_from_onnx(to);
    TERN_CHECK(d.has_value() || to == 14 || to == 15, ModelError,
               "{}: attribute 'to' is {}, which is not an ONNX data type", where(), to);
    TERN_CHECK(d.has_value(), UnsupportedOpError,
               "{}: cast to ONNX data type {} (complex) is not supported: tern has no complex "
               "tensors",
               where(), to);
    to_ = *d;
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    return {TensorType{to_, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    cast_into(inputs[0], y, ctx.num_threads);
  }

 private:
  DType to_ = DType::kFloat32;
};

/// CastLike(input, target_type): input converted to target_type's dtype, input's shape.
class CastLikeOp final : public Op {
 public:
  CastLikeOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    return {TensorType{inputs[1].dtype, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    cast_into(inputs[0], y, ctx.num_threads);
  }
};

}  // namespace

void register_cast(OpRegistry& r) {
  r.add(make_schema<CastOp>("Cast", 1, 1));
  r.add(make_schema<CastLikeOp>("CastLike", 2, 2));
}

}  // namespace tern::ops
