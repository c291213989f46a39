// Cast: converts every element to the dtype `to` (an ONNX TensorProto.DataType value).
// Supported: float32 (1), uint8 (2), int8 (3), int32 (6), int64 (7), bool (9),
// float16 (10), from any of those. Float to integer truncates toward zero (and
// saturates out-of-range values, which ONNX leaves undefined). Other valid types
// (double, int16, string, ...) are UnsupportedOpError. Source: ONNX Cast-13.
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class CastOp final : public Op {
 public:
  CastOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const int64_t to = attrs.require_int("to");
    switch (to) {
      case 1:
        to_ = DType::kFloat32;
        break;
      case 2:
        to_ = DType::kUint8;
        break;
      case 3:
        to_ = DType::kInt8;
        break;
      case 6:
        to_ = DType::kInt32;
        break;
      case 7:
        to_ = DType::kInt64;
        break;
      case 9:
        to_ = DType::kBool;
        break;
      case 10:
        to_ = DType::kFloat16;
        break;
      case 4:
      case 5:
      case 8:
      case 11:
      case 12:
      case 13:
      case 14:
      case 15:
      case 16:
        TERN_THROW(UnsupportedOpError,
                   "{}: cast to ONNX data type {} is not supported (supported: 1 float32, "
                   "2 uint8, 3 int8, 6 int32, 7 int64, 9 bool, 10 float16)",
                   where(), to);
      default:
        TERN_THROW(ModelError, "{}: attribute 'to' is {}, which is not an ONNX data type", where(),
                   to);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    return {TensorType{to_, inputs[0].shape}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor& x = inputs[0];
    const DType from = x.dtype();
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(x)};
    it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
      kernels::ref::cast(n, from, p[1], s[1], to_, p[0]);
    });
  }

 private:
  DType to_ = DType::kFloat32;
};

}  // namespace

void register_cast(OpRegistry& r) { r.add(make_schema<CastOp>("Cast", 1, 1)); }

}  // namespace tern::ops
