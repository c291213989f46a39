// Identity and Dropout (inference). Both return a view of their input (returns_view()).
// Dropout (ONNX Dropout-13; Dropout-7/10 before opset 12): ratio and seed are ignored;
// the optional mask output is all true (bool) and is the one buffer this op allocates.
// A training_mode input (opset >= 12) that holds true is UnsupportedOpError: tern only
// does inference.
#include <cstring>

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
    if (dropout) out.push_back(TensorType{DType::kBool, inputs[0].shape});
    return out;
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    if (has_input(inputs, 2)) check_training_mode(inputs[2]);
    if (!outputs.empty()) outputs[0] = inputs[0];
    if (outputs.size() > 1 && context().op_type == "Dropout") {
      Tensor mask = Tensor::empty(DType::kBool, inputs[0].shape());
      std::memset(mask.raw_data(), 1, mask.nbytes());
      outputs[1] = mask;
    }
  }

 private:
  void check_training_mode(const Tensor& t) const {
    TERN_CHECK(t.dtype() == DType::kBool, InvalidArgument,
               "{}: input 2 (training_mode) must be bool, but got {}", where(),
               dtype_name(t.dtype()));
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
