// Softmax / LogSoftmax ops (src/ops/softmax.cc): the opset-13 axis semantics against the
// older coerce-to-2-D semantics, log variant, threads and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

// softmax over the given values (double), for expectations.
std::vector<float> softmax_of(const std::vector<float>& v) {
  double m = -1e300, s = 0;
  for (float x : v) m = std::max(m, static_cast<double>(x));
  for (float x : v) s += std::exp(x - m);
  std::vector<float> r;
  for (float x : v) r.push_back(static_cast<float>(std::exp(x - m) / s));
  return r;
}

TEST(SoftmaxOp, Opset13AlongLastAxisByDefault) {
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 0, 0, 0, 1}, {2, 2, 2});
  const Tensor y = run_op("Softmax", AttrMap(), {x}, 13)[0];
  std::vector<float> expected;
  for (int r = 0; r < 4; ++r) {
    const auto s = softmax_of({x.to_float_vector()[2 * r], x.to_float_vector()[2 * r + 1]});
    expected.insert(expected.end(), s.begin(), s.end());
  }
  test::expect_near_all(y.to_float_vector(), expected, 1e-7f);
}

// Many short rows (a detection head's [1, N, 2] scores), split across threads: every row
// is its own softmax (hardmax), whichever thread's share it falls in.
TEST(SoftmaxOp, ManyShortRowsOnTwoThreads) {
  std::vector<float> v(2 * 37 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  const Tensor x = Tensor::from_vector(v, {2, 37, 3});
  for (int threads : {1, 2, 3}) {
    const Tensor y = run_op("Softmax", AttrMap(), {x}, 13, 1, threads)[0];
    const Tensor h = run_op("Hardmax", AttrMap(), {x}, 13, 1, threads)[0];
    std::vector<float> expected, hard;
    for (size_t r = 0; r < v.size() / 3; ++r) {
      const auto sm = softmax_of({v[3 * r], v[3 * r + 1], v[3 * r + 2]});
      expected.insert(expected.end(), sm.begin(), sm.end());
      size_t best = 0;
      for (size_t j = 1; j < 3; ++j) best = v[3 * r + j] > v[3 * r + best] ? j : best;
      for (size_t j = 0; j < 3; ++j) hard.push_back(j == best ? 1.0f : 0.0f);
    }
    test::expect_near_all(y.to_float_vector(), expected, 1e-7f);
    EXPECT_EQ(h.to_float_vector(), hard) << threads << " threads";
  }
}

TEST(SoftmaxOp, Opset11CoercesTo2dAtAxis1) {
  // Default axis 1: each batch row of 4 values is one softmax.
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 0, 0, 0, 1}, {2, 2, 2});
  const Tensor y = run_op("Softmax", AttrMap(), {x}, 11)[0];
  std::vector<float> expected = softmax_of({1, 2, 3, 4});
  const auto second = softmax_of({0, 0, 0, 1});
  expected.insert(expected.end(), second.begin(), second.end());
  test::expect_near_all(y.to_float_vector(), expected, 1e-7f);
  // axis 0 at opset 11: one softmax over all 8 values.
  const Tensor all = run_op("Softmax", AttrMap().i("axis", 0), {x}, 11)[0];
  test::expect_near_all(all.to_float_vector(), softmax_of(x.to_float_vector()), 1e-7f);
}

TEST(SoftmaxOp, Opset13MiddleAxisAndLogSoftmax) {
  // [1, 3, 2] along axis 1 (-2): the columns (0, 2, 4) and (1, 3, 5) separately.
  const Tensor x = Tensor::from_vector({0, 5, 1, 5, 2, 6}, {1, 3, 2});
  const auto c0 = softmax_of({0, 1, 2}), c1 = softmax_of({5, 5, 6});
  const std::vector<float> expected = {c0[0], c1[0], c0[1], c1[1], c0[2], c1[2]};
  test::expect_near_all(run_op("Softmax", AttrMap().i("axis", -2), {x})[0].to_float_vector(),
                        expected, 1e-7f);
  std::vector<float> logs;
  for (float v : expected) logs.push_back(std::log(v));
  const Tensor y = run_op("LogSoftmax", AttrMap().i("axis", 1), {x}, 13, 1, 2)[0];
  test::expect_near_all(y.to_float_vector(), logs, 1e-6f);
}

TEST(HardmaxOp, FirstMaxPerRowBothOpsetSemantics) {
  // [2, 3, 4] random with ties forced: opset 13 per axis, opset 11 coerced to 2-D.
  Tensor x = test::random_tensor<float>({2, 3, 4}, 5);
  x.data<float>()[1] = x.data<float>()[2] = 10.0f;  // a tie: the first one wins
  const auto xv = x.to_float_vector();
  auto hard = [&](int64_t outer, int64_t len, int64_t inner) {
    std::vector<float> y(xv.size(), 0.0f);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        for (int64_t j = 1; j < len; ++j)
          if (xv[(o * len + j) * inner + i] > xv[(o * len + best) * inner + i]) best = j;
        y[(o * len + best) * inner + i] = 1.0f;
      }
    return y;
  };
  for (int axis = -3; axis < 3; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    const int64_t dims[3] = {2, 3, 4};
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= dims[d];
    for (int d = a + 1; d < 3; ++d) inner *= dims[d];
    EXPECT_EQ(run_op("Hardmax", AttrMap().i("axis", axis), {x}, 13)[0].to_float_vector(),
              hard(outer, dims[a], inner))
        << axis;
    EXPECT_EQ(run_op("Hardmax", AttrMap().i("axis", axis), {x}, 11)[0].to_float_vector(),
              hard(outer, 24 / outer, 1))
        << axis;
  }
  EXPECT_EQ(run_op("Hardmax", AttrMap(), {x}, 13)[0].to_float_vector(), hard(6, 4, 1));
  EXPECT_EQ(run_op("Hardmax", AttrMap(), {x}, 1)[0].to_float_vector(), hard(2, 12, 1));
  expect_error<ShapeError>([&] { run_op("Hardmax", AttrMap().i("axis", 3), {x}, 13); },
                           {"Hardmax 'test_node'", "axis"});
}

TEST(SoftmaxOp, Errors) {
  const Tensor x = test::iota_tensor({2, 3});
  expect_error<ShapeError>([&] { run_op("Softmax", AttrMap().i("axis", 2), {x}, 13); },
                           {"Softmax 'test_node': axis 2 is out of range for a rank-2 input "
                            "(expected -2..1)"});
  expect_error<ShapeError>([&] { run_op("LogSoftmax", AttrMap().i("axis", -3), {x}, 11); },
                           {"LogSoftmax 'test_node': axis -3 is out of range for a rank-2 input "
                            "(expected -2..2)"});
  expect_error<UnsupportedOpError>(
      [&] { run_op("Softmax", AttrMap(), {Tensor::scalar_i64(1)}); },
      {"input 0 (input) dtype int64 is not supported (supported: float32)"});
}

}  // namespace
}  // namespace tern
