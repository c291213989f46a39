// Comparison ops with multidirectional (numpy) broadcasting and a bool output: Equal,
// Greater, GreaterOrEqual, Less, LessOrEqual. Sources: ONNX Equal-13 (bool and every
// numeric dtype; Equal-19 adds strings, which tern does not have), Greater-13, Less-13,
// GreaterOrEqual-16, LessOrEqual-16 (every numeric dtype: float32, float64, float16,
// bfloat16, int8..int64, uint8..uint64). Older opsets allow fewer dtypes and, before
// opset 7, opt-in broadcasting (broadcast = 1 with B's dims matching A's trailing dims,
// which numpy broadcasting also covers; an explicit `axis` is not supported).
// A NaN compares unequal to everything, itself included.
#include <initializer_list>

#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::CompareKind;

/// A comparison y = A op B: A and B of one dtype, y bool of the broadcast shape.
/// Throws UnsupportedOpError for another dtype, InvalidArgument when A and B differ in dtype,
/// ShapeError when they do not broadcast.
class CompareOp final : public Op {
 public:
  CompareOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const std::string& t = ctx.op_type;
    if (t == "Equal") {
      kind_ = CompareKind::kEqual;
    } else if (t == "Greater") {
      kind_ = CompareKind::kGreater;
    } else if (t == "GreaterOrEqual") {
      kind_ = CompareKind::kGreaterOrEqual;
    } else if (t == "Less") {
      kind_ = CompareKind::kLess;
    } else if (t == "LessOrEqual") {
      kind_ = CompareKind::kLessOrEqual;
    } else {
      TERN_THROW(UnsupportedOpError, "{}: not a comparison op", where());
    }
    TERN_CHECK(!(ctx.opset < 7 && attrs.has("axis")), UnsupportedOpError,
               "{}: the legacy 'axis' attribute (opset {}) is not supported; only numpy-style "
               "trailing-dim broadcasting is",
               where(), ctx.opset);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& a = inputs[0];
    const InferInput& b = inputs[1];
    if (kind_ == CompareKind::kEqual) {
      check_dtype(a.dtype,
                  {DType::kBool, DType::kFloat32, DType::kFloat64, DType::kFloat16,
                   DType::kBFloat16, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
                   DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64},
                  where(), 0, "A");
    } else {
      check_dtype(a.dtype,
                  {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                   DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUint8,
                   DType::kUint16, DType::kUint32, DType::kUint64},
                  where(), 0, "A");
    }
    check_same_dtype(b.dtype, a.dtype, where(), 1, "B", 0, "A");
    return {TensorType{DType::kBool, broadcast_shape(a.shape, b.shape, where())}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor& a = inputs[0];
    const Tensor& b = inputs[1];
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(a), StridedOperand::of(b)};
    visit_dtype<bool, float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                uint16_t, uint32_t, uint64_t>(a.dtype(), where(), [&]<typename T>() {
      it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
        kernels::ref::compare<T>(kind_, n, reinterpret_cast<const T*>(p[1]), s[1],
                                 reinterpret_cast<const T*>(p[2]), s[2],
                                 reinterpret_cast<bool*>(p[0]));
      });
    });
  }

 private:
  CompareKind kind_ = CompareKind::kEqual;
};

}  // namespace

void register_compare(OpRegistry& r) {
  for (const char* name : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
    r.add(make_schema<CompareOp>(name, 2, 2));
  }
}

}  // namespace tern::ops
