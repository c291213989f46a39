// Identity and Dropout (inference). Both return a view of their input (returns_view()).
// Dropout (ONNX Dropout-13; Dropout-7 before opset 10, Dropout-10 before opset 12): ratio
// and seed are ignored; the optional mask output is all ones and is the one buffer this op
// allocates. Its dtype is bool from opset 10 (T1) and the data's dtype before (Dropout-7
// declares mask as T). A training_mode input (opset >= 12) that holds true is
// UnsupportedOpError: tern only does inference.
#include "kernels/reference/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class IdentityOp final : public Op {
 public:
  IdentityOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) { (void)attrs; }

  bool returns_view() const override { return true; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const bool dropout = context().op_type == "Dropout";
    if (dropout && has_input(inputs, 2) && inputs[2].value) check_training_mode(*inputs[2].value);
    std::vector<TensorType> out = {TensorType{inputs[0].dtype, inputs[0].shape}};
    if (dropout) out.push_back(TensorType{mask_dtype(inputs[0].dtype), inputs[0].shape});
    return out;
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    if (has_input(inputs, 2)) check_training_mode(inputs[2]);
    if (!outputs.empty()) outputs[0] = inputs[0];
    if (outputs.size() > 1 && context().op_type == "Dropout") {
      // All ones of the mask's dtype: 1 converted from bool (1.0f, half 1.0, 1...).
      Tensor mask = Tensor::empty(mask_dtype(inputs[0].dtype()), inputs[0].shape());
      const uint8_t one_bool = 1;
      alignas(8) unsigned char one[8] = {};
      kernels::ref::cast(1, DType::kBool, &one_bool, 0, mask.dtype(), one);
      kernels::ref::fill(mask.numel(), static_cast<int>(dtype_size(mask.dtype())), one,
                         mask.raw_data());
      outputs[1] = mask;
    }
  }

 private:
  DType mask_dtype(DType data) const { return context().opset < 10 ? data : DType::kBool; }

  void check_training_mode(const Tensor& t) const {
    check_dtype(t.dtype(), {DType::kBool}, where(), 2, "training_mode");
    TERN_CHECK(scalar_value(t, where(), 2, "training_mode") == 0, UnsupportedOpError,
               "{}: training_mode is true; tern runs Dropout in inference mode only", where());
  }
};

}  // namespace

void register_identity(OpRegistry& r) {
  r.add(make_schema<IdentityOp>("Identity", 1, 1));
  r.add(make_schema<IdentityOp>("Dropout", 1, 3, 1, 2));
}

}  // namespace tern::ops
