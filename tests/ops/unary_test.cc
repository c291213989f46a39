// Unary ops: hand-checked values, float references for the transcendental ones, integer
// variants, strided inputs, threads, dtype errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/onnx_dtype.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

std::vector<float> run_f(const std::string& op, const std::vector<float>& x,
                         const AttrMap& attrs = {}, int opset = 13) {
  return run1(op, {f32(x, {static_cast<int64_t>(x.size())})}, attrs, opset).to_float_vector();
}

TEST(Unary, ReluLeakyReluHandChecked) {
  EXPECT_EQ(run_f("Relu", {-2.f, -0.f, 0.f, 0.5f, 3.f}),
            (std::vector<float>{0.f, 0.f, 0.f, 0.5f, 3.f}));
  // alpha defaults to 0.01.
  EXPECT_EQ(run_f("LeakyRelu", {-2.f, 0.f, 3.f}), (std::vector<float>{-0.02f, 0.f, 3.f}));
  EXPECT_EQ(run_f("LeakyRelu", {-2.f, -1.f, 4.f}, AttrMap().f("alpha", 0.1f)),
            (std::vector<float>{-2.f * 0.1f, -0.1f, 4.f}));
}

TEST(Unary, HardSigmoidHardSwishHandChecked) {
  // alpha 0.2, beta 0.5: 0.2 x + 0.5 clamped to [0, 1].
  EXPECT_EQ(run_f("HardSigmoid", {-5.f, -3.f, 0.f, 1.f, 2.5f, 10.f}),
            (std::vector<float>{0.f, 0.f, 0.5f, 0.2f * 1.f + 0.5f, 1.f, 1.f}));
  EXPECT_EQ(run_f("HardSigmoid", {1.f}, AttrMap().f("alpha", 0.5f).f("beta", 0.25f)),
            (std::vector<float>{0.75f}));
  // HardSwish: x * clamp(x / 6 + 0.5, 0, 1): 0 below -3, x above 3, 0 at 0.
  const std::vector<float> y = run_f("HardSwish", {-4.f, -3.f, 0.f, 1.5f, 3.f, 5.f}, {}, 14);
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[2], 0.f);
  EXPECT_FLOAT_EQ(y[3], 1.5f * 0.75f);
  EXPECT_EQ(y[4], 3.f);
  EXPECT_EQ(y[5], 5.f);
}

TEST(Unary, TranscendentalAgainstDouble) {
  // float evaluation of exp/log/tanh/sqrt is within a few ulp of the double result.
  const Tensor x = random_tensor<float>({1000}, 7, -6.0, 6.0);
  const std::vector<float> xs = x.to_float_vector();
  struct Case {
    const char* op;
    double (*ref)(double);
  };
  const Case cases[] = {
      {"Exp", [](double v) { return std::exp(v); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"Log", [](double v) { return std::log(std::fabs(v)); }},
      {"Sqrt", [](double v) { return std::sqrt(std::fabs(v)); }},
  };
  for (const Case& c : cases) {
    const bool needs_pos = std::string(c.op) == "Log" || std::string(c.op) == "Sqrt";
    Tensor in = x.clone();
    if (needs_pos) {
      float* p = in.data<float>();
      for (int64_t i = 0; i < in.numel(); ++i) p[i] = std::fabs(p[i]) + 1e-3f;
    }
    const std::vector<float> got = run1(c.op, {in}).to_float_vector();
    const std::vector<float> src = in.to_float_vector();
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = c.ref(src[i]);
      EXPECT_NEAR(got[i], want, 4e-7 * std::max(1.0, std::fabs(want)))
          << c.op << "(" << src[i] << ")";
    }
  }
  (void)xs;
}

TEST(Unary, SpecialValues) {
  const std::vector<float> e = run_f("Exp", {-kInf, 0.f, kInf, -200.f});
  EXPECT_EQ(e, (std::vector<float>{0.f, 1.f, kInf, 0.f}));
  const std::vector<float> l = run_f("Log", {0.f, 1.f, -1.f});
  EXPECT_EQ(l[0], -kInf);
  EXPECT_EQ(l[1], 0.f);
  EXPECT_TRUE(std::isnan(l[2]));
  EXPECT_TRUE(std::isnan(run_f("Sqrt", {-4.f})[0]));
  EXPECT_EQ(run_f("Sqrt", {16.f, 0.25f}), (std::vector<float>{4.f, 0.5f}));
  // Sigmoid saturates without NaN at the extremes.
  EXPECT_EQ(run_f("Sigmoid", {-1000.f, 0.f, 1000.f}), (std::vector<float>{0.f, 0.5f, 1.f}));
  EXPECT_EQ(run_f("Tanh", {-kInf, 0.f, kInf}), (std::vector<float>{-1.f, 0.f, 1.f}));
}

TEST(Unary, NegAbsFloatAndInt) {
  EXPECT_EQ(run_f("Neg", {-2.f, 0.f, 3.5f}), (std::vector<float>{2.f, -0.f, -3.5f}));
  EXPECT_EQ(run_f("Abs", {-2.f, -0.f, 3.5f}), (std::vector<float>{2.f, 0.f, 3.5f}));
  const int64_t big = int64_t{1} << 50;
  EXPECT_EQ(run1("Neg", {i64({-2, 0, big}, {3})}).to_int64_vector(),
            (std::vector<int64_t>{2, 0, -big}));
  EXPECT_EQ(run1("Abs", {i64({-2, 0, -big}, {3})}).to_int64_vector(),
            (std::vector<int64_t>{2, 0, big}));
  const Tensor n32 = run1("Neg", {i32({-7, 7, std::numeric_limits<int32_t>::min()}, {3})});
  EXPECT_EQ(n32.dtype(), DType::kInt32);
  // Wraps like two's complement instead of overflowing.
  EXPECT_EQ(n32.to_int64_vector(),
            (std::vector<int64_t>{7, -7, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(run1("Abs", {i32({-7, 7}, {2})}).to_int64_vector(), (std::vector<int64_t>{7, 7}));
}

TEST(Unary, ReluIntegerFromOpset14) {
  const Tensor y = run1("Relu", {i64({-5, 0, 9}, {3})}, {}, 14);
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 0, 9}));
  EXPECT_EQ(run1("Relu", {i32({-5, 4}, {2})}, {}, 14).to_int64_vector(),
            (std::vector<int64_t>{0, 4}));
  expect_error<UnsupportedOpError>([] { run1("Relu", {i64({1}, {1})}, {}, 13); },
                                   {"Relu 'test_node'", "float32", "int64"});
}

TEST(Unary, FloatOnlyOpsRejectIntegers) {
  for (const char* op : {"Sigmoid", "Exp", "LeakyRelu", "HardSwish"}) {
    expect_error<UnsupportedOpError>(
        [&] { run1(op, {i32({1}, {1})}); },
        {std::string(op) + " 'test_node'",
         "input 0 (X) dtype int32 is not supported (supported: float32, float64, float16 or "
         "bfloat16)"});
  }
  expect_error<UnsupportedOpError>([] { run1("Neg", {make<uint8_t>({1}, {1})}); },
                                   {"Neg 'test_node'", "uint8"});
}

TEST(Unary, StridedInputAndThreads) {
  const Tensor base = random_tensor<float>({64, 130}, 3);
  const Tensor view = base.transpose(0, 1).slice(0, 1, 129, 3);  // non-contiguous
  const Tensor y = run1("Relu", {view}, {}, 13, /*threads=*/4);
  ASSERT_EQ(y.shape(), view.shape());
  const std::vector<float> src = view.to_float_vector();
  const std::vector<float> got = y.to_float_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], std::max(src[i], 0.f));
  // Large enough to split over threads: same result as one thread.
  const Tensor big = random_tensor<float>({3, 100000}, 4);
  EXPECT_EQ(run1("Tanh", {big}, {}, 13, 4).to_float_vector(),
            run1("Tanh", {big}, {}, 13, 1).to_float_vector());
}

TEST(Unary, ScalarAndEmpty) {
  const Tensor s = run1("Neg", {Tensor::scalar_f32(2.f)});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.to_float_vector(), (std::vector<float>{-2.f}));
  const Tensor e = run1("Relu", {Tensor::empty(DType::kFloat32, {2, 0, 3})});
  EXPECT_EQ(e.shape(), (Shape{2, 0, 3}));
}

// The ops added for ONNX conformance against double references written here.
double ref_unary(const std::string& op, double v) {
  if (op == "Erf") return std::erf(v);
  if (op == "Elu") return v > 0 ? v : 1.0 * (std::exp(v) - 1.0);
  if (op == "Selu") {
    // The defaults are float attributes, so float64 inputs see them rounded to float.
    const double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
    return gamma * (v > 0 ? v : alpha * (std::exp(v) - 1.0));
  }
  if (op == "Celu") return std::max(0.0, v) + std::min(0.0, std::exp(v) - 1.0);
  if (op == "Softplus") return std::log(1.0 + std::exp(v));
  if (op == "Softsign") return v / (1.0 + std::fabs(v));
  if (op == "ThresholdedRelu") return v > 1.0 ? v : 0.0;
  if (op == "Reciprocal") return 1.0 / v;
  if (op == "Floor") return std::floor(v);
  if (op == "Ceil") return std::ceil(v);
  if (op == "Sin") return std::sin(v);
  if (op == "Cos") return std::cos(v);
  if (op == "Tan") return std::tan(v);
  if (op == "Atan") return std::atan(v);
  if (op == "Sinh") return std::sinh(v);
  if (op == "Cosh") return std::cosh(v);
  if (op == "Asinh") return std::asinh(v);
  if (op == "Sign") return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
  if (op == "Shrink") return v < -0.5 ? v : (v > 0.5 ? v : 0.0);  // lambd 0.5, bias 0
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

template <typename T>
void sweep_new_unary(double tol) {
  const char* ops[] = {
      "Erf",        "Elu",   "Selu",  "Celu", "Softplus", "Softsign", "ThresholdedRelu",
      "Reciprocal", "Floor", "Ceil",  "Sin",  "Cos",      "Tan",      "Atan",
      "Sinh",       "Cosh",  "Asinh", "Sign", "Shrink"};
  // [7, 13] transposed: a strided view with odd sizes.
  const Tensor base = random_tensor<float>({7, 13}, 21, -3.0, 3.0);
  Tensor typed = run1("Cast", {base}, AttrMap().i("to", onnx_dtype_code(dtype_of<T>())));
  const Tensor x = typed.transpose(0, 1);
  for (const char* op : ops) {
    const Tensor y = run1(op, {x});
    ASSERT_EQ(y.dtype(), dtype_of<T>()) << op;
    ASSERT_EQ(y.shape(), x.shape()) << op;
    for_each_index(y.shape(), [&](const Shape& idx) {
      const double want = ref_unary(op, x.item_as_double(idx));
      ASSERT_NEAR(y.item_as_double(idx), want, tol * std::max(1.0, std::fabs(want)))
          << op << " at " << shape_str(idx);
    });
  }
}

TEST(Unary, NewOpsSweepEveryFloatType) {
  sweep_new_unary<float>(1e-5);
  sweep_new_unary<double>(1e-12);
  sweep_new_unary<Float16>(1e-3);   // one rounding to 11 bits
  sweep_new_unary<BFloat16>(8e-3);  // one rounding to 8 bits
}

TEST(Unary, NewOpsHandChecked) {
  // Round: ties to even.
  EXPECT_EQ(run_f("Round", {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f}, {}, 11),
            (std::vector<float>{0.f, 2.f, 2.f, -0.f, -2.f, 2.f, -3.f}));
  EXPECT_EQ(run_f("Elu", {-1.f, 2.f}, AttrMap().f("alpha", 2.f), 6)[1], 2.f);
  EXPECT_FLOAT_EQ(run_f("Elu", {-1.f}, AttrMap().f("alpha", 2.f), 6)[0],
                  2.f * (std::exp(-1.f) - 1));
  EXPECT_FLOAT_EQ(run_f("Selu", {-1.f, 1.f}, AttrMap().f("alpha", 2.f).f("gamma", 3.f), 6)[0],
                  3.f * 2.f * (std::exp(-1.f) - 1));
  EXPECT_EQ(run_f("ThresholdedRelu", {1.f, 2.f, 3.f}, AttrMap().f("alpha", 2.f), 10),
            (std::vector<float>{0.f, 0.f, 3.f}));
  EXPECT_EQ(
      run_f("Shrink", {-2.f, -1.f, 0.f, 1.f, 2.f}, AttrMap().f("lambd", 1.5f).f("bias", 1.f), 9),
      (std::vector<float>{-1.f, 0.f, 0.f, 0.f, 1.f}));
  // Softplus does not overflow for large inputs.
  EXPECT_EQ(run_f("Softplus", {100.f, -100.f}, {}, 1)[0], 100.f);
  EXPECT_EQ(run_f("Reciprocal", {0.f})[0], kInf);
  EXPECT_TRUE(std::isnan(run_f("Sign", {std::nanf("")})[0]));
  EXPECT_NEAR(run_f("Acos", {0.5f}, {}, 7)[0], std::acos(0.5), 1e-6);
  EXPECT_NEAR(run_f("Asin", {0.5f}, {}, 7)[0], std::asin(0.5), 1e-6);
  EXPECT_NEAR(run_f("Acosh", {2.f}, {}, 9)[0], std::acosh(2.0), 1e-6);
  EXPECT_NEAR(run_f("Atanh", {0.5f}, {}, 9)[0], std::atanh(0.5), 1e-6);
  EXPECT_NEAR(run_f("Celu", {-1.f}, AttrMap().f("alpha", 2.f), 12)[0], 2.0 * (std::exp(-0.5) - 1.0),
              1e-6);
  expect_error<ModelError>([] { run_f("Celu", {1.f}, AttrMap().f("alpha", 0.f), 12); },
                           {"Celu 'test_node'", "alpha"});
}

template <typename T>
void check_int_unary() {
  const Tensor x = make<T>({static_cast<T>(0), static_cast<T>(3), std::numeric_limits<T>::max(),
                            std::numeric_limits<T>::min()},
                           {4});
  const Tensor sign = run1("Sign", {x});
  ASSERT_EQ(sign.dtype(), dtype_of<T>());
  const double min_sign = std::numeric_limits<T>::min() < 0 ? -1.0 : 0.0;
  EXPECT_EQ(sign.item_as_double({0}), 0.0);
  EXPECT_EQ(sign.item_as_double({1}), 1.0);
  EXPECT_EQ(sign.item_as_double({2}), 1.0);
  EXPECT_EQ(sign.item_as_double({3}), min_sign);
  const Tensor abs = run1("Abs", {x});
  EXPECT_EQ(abs.item_as_double({1}), 3.0);
  EXPECT_EQ(abs.item_as_double({2}), static_cast<double>(std::numeric_limits<T>::max()));
  // |MIN| wraps to MIN for signed types.
  EXPECT_EQ(abs.item_as_double({3}), static_cast<double>(std::numeric_limits<T>::min()));
  const Tensor relu = run1("Relu", {x}, {}, 14);
  EXPECT_EQ(relu.item_as_double({3}), 0.0);
  EXPECT_EQ(relu.item_as_double({2}), static_cast<double>(std::numeric_limits<T>::max()));
}

TEST(Unary, IntegerSignAbsReluEveryIntType) {
  check_int_unary<int8_t>();
  check_int_unary<int16_t>();
  check_int_unary<int32_t>();
  check_int_unary<int64_t>();
  check_int_unary<uint8_t>();
  check_int_unary<uint16_t>();
  check_int_unary<uint32_t>();
  check_int_unary<uint64_t>();
  EXPECT_EQ(run1("Shrink", {make<int8_t>({-5, -1, 0, 1, 5}, {5})},
                 AttrMap().f("lambd", 1.5f).f("bias", 1.f), 9)
                .to_int64_vector(),
            (std::vector<int64_t>{-4, 0, 0, 0, 4}));
  EXPECT_EQ(run1("Neg", {make<int16_t>({-5, 7}, {2})}).to_int64_vector(),
            (std::vector<int64_t>{5, -7}));
}

TEST(Unary, IsNaNIsInf) {
  const float nan = std::nanf("");
  const Tensor x = f32({1.f, nan, kInf, -kInf, 0.f}, {5});
  const auto bools = [](const Tensor& t) {
    EXPECT_EQ(t.dtype(), DType::kBool);
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data<bool>()[i] ? 1 : 0);
    return v;
  };
  EXPECT_EQ(bools(run1("IsNaN", {x})), (std::vector<int>{0, 1, 0, 0, 0}));
  EXPECT_EQ(bools(run1("IsInf", {x}, {}, 10)), (std::vector<int>{0, 0, 1, 1, 0}));
  EXPECT_EQ(bools(run1("IsInf", {x}, AttrMap().i("detect_negative", 0), 10)),
            (std::vector<int>{0, 0, 1, 0, 0}));
  EXPECT_EQ(bools(run1("IsInf", {x}, AttrMap().i("detect_positive", 0), 10)),
            (std::vector<int>{0, 0, 0, 1, 0}));
  const Tensor xd = make<double>({std::nan(""), 1.0}, {2});
  EXPECT_EQ(bools(run1("IsNaN", {xd})), (std::vector<int>{1, 0}));
  expect_error<UnsupportedOpError>([] { run1("IsNaN", {i32({1}, {1})}); },
                                   {"IsNaN 'test_node'", "int32"});
}

}  // namespace
}  // namespace tern::test
