#include "ops/epilogue.h"

#include <limits>

#include "base/check.h"

namespace tern::ops {

namespace {

using kernels::ref::Activation;

constexpr Activation kActivations[] = {
    Activation::kNone,        Activation::kRelu,      Activation::kClip,    Activation::kLeakyRelu,
    Activation::kHardSigmoid, Activation::kHardSwish, Activation::kSigmoid, Activation::kSilu,
};

ir::Attribute float_attr(float v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kFloat;
  a.f = v;
  return a;
}

}  // namespace

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kNone:
      return "";
    case Activation::kRelu:
      return "Relu";
    case Activation::kClip:
      return "Clip";
    case Activation::kLeakyRelu:
      return "LeakyRelu";
    case Activation::kHardSigmoid:
      return "HardSigmoid";
    case Activation::kHardSwish:
      return "HardSwish";
    case Activation::kSigmoid:
      return "Sigmoid";
    case Activation::kSilu:
      return "SiLU";
  }
  return "";
}

kernels::ref::Epilogue parse_epilogue(const Attrs& a) {
  kernels::ref::Epilogue e;
  const std::string name = a.get_string("activation", "");
  bool found = false;
  for (Activation k : kActivations) {
    if (name == activation_name(k)) {
      e.activation = k;
      found = true;
    }
  }
  TERN_CHECK(found, ModelError,
             "{}: attribute 'activation' must be empty or one of Relu, Clip, LeakyRelu, "
             "HardSigmoid, HardSwish, Sigmoid, SiLU, but got '{}'",
             a.where(), name);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (e.activation) {
    case Activation::kClip:
      e.alpha = a.get_float("activation_alpha", -kInf);
      e.beta = a.get_float("activation_beta", kInf);
      break;
    case Activation::kLeakyRelu:
      e.alpha = a.get_float("activation_alpha", 0.01f);
      break;
    case Activation::kHardSigmoid:
      e.alpha = a.get_float("activation_alpha", 0.2f);
      e.beta = a.get_float("activation_beta", 0.5f);
      break;
    default:
      break;
  }
  const int64_t before = a.get_int("residual_before_activation", 0);
  TERN_CHECK(before == 0 || before == 1, ModelError,
             "{}: attribute 'residual_before_activation' must be 0 or 1, but got {}", a.where(),
             before);
  e.residual_before_activation = before == 1;
  e.affine = a.has("affine_scale") || a.has("affine_shift");
  e.scale = a.get_float("affine_scale", 1.0f);
  e.shift = a.get_float("affine_shift", 0.0f);
  return e;
}

void write_epilogue(const kernels::ref::Epilogue& e, std::map<std::string, ir::Attribute>& attrs) {
  attrs.erase("activation");
  attrs.erase("activation_alpha");
  attrs.erase("activation_beta");
  attrs.erase("residual_before_activation");
  attrs.erase("affine_scale");
  attrs.erase("affine_shift");
  if (e.affine) {
    attrs["affine_scale"] = float_attr(e.scale);
    attrs["affine_shift"] = float_attr(e.shift);
  }
  if (e.activation != Activation::kNone) {
    ir::Attribute name;
    name.type = ir::Attribute::Type::kString;
    name.s = activation_name(e.activation);
    attrs["activation"] = name;
  }
  switch (e.activation) {
    case Activation::kClip:
    case Activation::kHardSigmoid:
      attrs["activation_alpha"] = float_attr(e.alpha);
      attrs["activation_beta"] = float_attr(e.beta);
      break;
    case Activation::kLeakyRelu:
      attrs["activation_alpha"] = float_attr(e.alpha);
      break;
    default:
      break;
  }
  if (e.residual_before_activation) {
    ir::Attribute before;
    before.type = ir::Attribute::Type::kInt;
    before.i = 1;
    attrs["residual_before_activation"] = before;
  }
}

}  // namespace tern::ops
