// Identity and Dropout. Both return a view of their input (returns_view()) in inference.
// Dropout (ONNX Dropout-13; Dropout-7 before opset 10, Dropout-10 before opset 12): in
// inference ratio and seed are ignored; the optional mask output is all ones (bool from
// opset 10 (T1), the data's dtype before: Dropout-7 declares mask as T).
// Training mode (opset >= 12, training_mode input true, ratio > 0) is deterministic: it
// draws the mask exactly as numpy after np.random.seed(seed) (the ONNX reference), with
// seed 0 when the attribute is absent: MT19937 init_genrand(seed), one double in [0, 1)
// from each two 32-bit draws, keep = u >= ratio, Y = X * keep / (1 - ratio); float32 data.
#include <random>

#include "kernels/reference/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class IdentityOp final : public Op {
 public:
  IdentityOp(const Attrs& attrs, const OpContext& ctx)
      : Op(ctx), seed_(ctx.op_type == "Dropout" ? attrs.get_int("seed", 0) : 0) {}

  bool returns_view() const override { return true; }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const bool dropout = context().op_type == "Dropout";
    if (dropout && has_input(inputs, 2) && inputs[2].value) (void)training(*inputs[2].value);
    std::vector<TensorType> out = {TensorType{inputs[0].dtype, inputs[0].shape}};
    if (dropout) out.push_back(TensorType{mask_dtype(inputs[0].dtype), inputs[0].shape});
    return out;
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    const bool dropout = context().op_type == "Dropout";
    if (dropout && has_input(inputs, 2) && training(inputs[2])) {
      const float ratio = has_input(inputs, 1)
                              ? static_cast<float>(scalar_value(inputs[1], where(), 1, "ratio"))
                              : 0.5f;
      TERN_CHECK(ratio >= 0.0f && ratio < 1.0f, InvalidArgument,
                 "{}: expected ratio in [0, 1), but got {}", where(), ratio);
      if (ratio > 0.0f) {
        train(inputs[0], ratio, outputs);
        return;
      }
    }
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

  // True when the training_mode input holds true; UnsupportedOpError unless it is bool.
  bool training(const Tensor& t) const {
    check_dtype(t.dtype(), {DType::kBool}, where(), 2, "training_mode");
    return scalar_value(t, where(), 2, "training_mode") != 0;
  }

  // Training-mode Dropout of float32 x into new outputs (see the file comment).
  void train(const Tensor& x_in, float ratio, std::span<Tensor> outputs) const {
    check_dtype(x_in.dtype(), {DType::kFloat32}, where(), 0, "data");
    const Tensor x = x_in.contiguous();
    Tensor y = Tensor::empty(DType::kFloat32, x.shape());
    Tensor mask = Tensor::empty(DType::kBool, x.shape());
    std::mt19937 gen(static_cast<uint32_t>(seed_));
    const float scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(ratio)));
    const float* xd = x.data<float>();
    float* yd = y.data<float>();
    auto* md = static_cast<uint8_t*>(mask.raw_data());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const uint32_t a = gen() >> 5, b = gen() >> 6;
      const double u = (a * 67108864.0 + b) / 9007199254740992.0;
      const bool keep = u >= static_cast<double>(ratio);
      md[i] = keep ? 1 : 0;
      yd[i] = keep ? xd[i] * scale : 0.0f;
    }
    if (!outputs.empty()) outputs[0] = y;
    if (outputs.size() > 1) outputs[1] = mask;
  }

  int64_t seed_;
};

}  // namespace

void register_identity(OpRegistry& r) {
  r.add(make_schema<IdentityOp>("Identity", 1, 1));
  r.add(make_schema<IdentityOp>("Dropout", 1, 3, 1, 2));
}

}  // namespace tern::ops
