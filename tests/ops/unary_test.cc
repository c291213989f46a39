// Unary ops: hand-checked values, float references for the transcendental ones, integer
// variants, strided inputs, threads, dtype errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

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
         "input 0 (X) dtype int32 is not supported (supported: float32)"});
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

}  // namespace
}  // namespace tern::test
