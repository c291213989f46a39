// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against a naive reference: every
// reduction, with and without weights, ignore_index (negative and out of range), spatial
// dims; log_prob output; errors.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

struct Case {
  Shape x_shape;  // [N, C, d...]
  std::string reduction;
  bool weights;
  std::optional<int64_t> ignore;
};

// Naive loss from the definition, over a flat [N, C, inner] view.
std::vector<double> reference(const std::vector<float>& logp, const std::vector<int64_t>& t,
                              const std::vector<float>& w, int64_t n, int64_t c, int64_t inner,
                              const Case& k) {
  std::vector<double> loss;
  double total = 0, wsum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t tt = t[b * inner + d];
      double l = 0, ww = 0;
      if (!(k.ignore && tt == *k.ignore)) {
        ww = w.empty() ? 1.0 : w[tt];
        l = -ww * logp[(b * c + tt) * inner + d];
      }
      loss.push_back(l);
      total += l;
      wsum += ww;
    }
  }
  if (k.reduction == "sum") return {total};
  if (k.reduction == "mean") return {total / wsum};
  return loss;
}

void check(const std::string& op, const Case& k, uint32_t seed) {
  SCOPED_TRACE(op + " " + shape_str(k.x_shape) + " " + k.reduction);
  const Tensor x = random_tensor<float>(k.x_shape, seed, -3, 3);
  const int64_t n = k.x_shape[0], c = k.x_shape[1];
  const int64_t inner = x.numel() / (n * c);
  Shape t_shape = k.x_shape;
  t_shape.erase(t_shape.begin() + 1);
  std::vector<int64_t> t(static_cast<size_t>(n * inner));
  for (size_t i = 0; i < t.size(); ++i) {
    t[i] = static_cast<int64_t>((i * 7 + seed) % static_cast<size_t>(c));
    if (k.ignore && i % 3 == 1) t[i] = *k.ignore;
  }
  std::vector<float> w;
  std::vector<Tensor> inputs = {x, i64(t, t_shape)};
  if (k.weights) {
    for (int64_t j = 0; j < c; ++j) w.push_back(0.5f + 0.25f * static_cast<float>(j));
    inputs.push_back(f32(w, {c}));
  }
  AttrMap attrs;
  attrs.s("reduction", k.reduction);
  if (k.ignore) attrs.i("ignore_index", *k.ignore);
  std::vector<float> logp = x.to_float_vector();
  const bool sce = op == "SoftmaxCrossEntropyLoss";
  if (sce) {  // log_softmax over axis 1
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t d = 0; d < inner; ++d) {
        double s = 0;
        for (int64_t j = 0; j < c; ++j) s += std::exp(logp[(b * c + j) * inner + d]);
        const double ls = std::log(s);
        for (int64_t j = 0; j < c; ++j) logp[(b * c + j) * inner + d] -= static_cast<float>(ls);
      }
    }
  }
  const auto out = run_op(op, attrs, inputs, 13, sce ? 2 : 1);
  const std::vector<double> want = reference(logp, t, w, n, c, inner, k);
  const std::vector<float> got = out[0].to_float_vector();
  ASSERT_EQ(out[0].shape(), k.reduction == "none" ? t_shape : Shape{});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  if (sce) {
    ASSERT_EQ(out[1].shape(), k.x_shape);
    const std::vector<float> lp = out[1].to_float_vector();
    for (size_t i = 0; i < lp.size(); ++i) ASSERT_NEAR(lp[i], logp[i], 1e-5) << i;
  }
}

TEST(Loss, SweepAgainstNaive) {
  uint32_t seed = 3;
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    for (const char* red : {"none", "sum", "mean"}) {
      for (bool weights : {false, true}) {
        for (std::optional<int64_t> ignore :
             {std::optional<int64_t>{}, std::optional<int64_t>{-1}, std::optional<int64_t>{9}}) {
          check(op, {{3, 5}, red, weights, ignore}, seed++);
          check(op, {{2, 4, 3}, red, weights, ignore}, seed++);
          check(op, {{2, 3, 2, 3, 1}, red, weights, ignore}, seed++);
        }
      }
    }
  }
}

TEST(Loss, HandValues) {
  // log-probabilities [[-1, -2], [-3, -4]], targets [1, 0]: losses 2 and 3.
  const Tensor x = f32({-1, -2, -3, -4}, {2, 2});
  const Tensor t = i64({1, 0}, {2});
  EXPECT_EQ(
      run1("NegativeLogLikelihoodLoss", {x, t}, AttrMap().s("reduction", "none")).to_float_vector(),
      (std::vector<float>{2, 3}));
  EXPECT_EQ(run1("NegativeLogLikelihoodLoss", {x, t}).to_float_vector(),
            (std::vector<float>{2.5f}));
  // Weights 1 and 3: (3 * 2 + 1 * 3) / (3 + 1).
  EXPECT_EQ(run1("NegativeLogLikelihoodLoss", {x, t, f32({1, 3}, {2})}).to_float_vector(),
            (std::vector<float>{9.f / 4.f}));
}

TEST(Loss, Errors) {
  const Tensor x = f32({-1, -2, -3, -4}, {2, 2});
  expect_error<InvalidArgument>(
      [&] {
        run1("NegativeLogLikelihoodLoss", {x, i64({1, 2}, {2})});
      },
      {"NegativeLogLikelihoodLoss 'test_node'", "target 2", "outside [0, 2)"});
  expect_error<ShapeError>(
      [&] {
        run1("NegativeLogLikelihoodLoss", {x, i64({1, 0, 1}, {3})});
      },
      {"targets have shape [3], expected [2]"});
  expect_error<ShapeError>(
      [&] {
        run1("NegativeLogLikelihoodLoss", {x, i64({1, 0}, {2}), f32({1, 2, 3}, {3})});
      },
      {"weights have shape [3], expected [2]"});
  expect_error<ModelError>(
      [&] {
        run1("SoftmaxCrossEntropyLoss", {x, i64({1, 0}, {2}), {}}, AttrMap().s("reduction", "avg"));
      },
      {"SoftmaxCrossEntropyLoss 'test_node'", "reduction is 'avg'"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("NegativeLogLikelihoodLoss", {i64({1, 2, 3, 4}, {2, 2}), i64({1, 0}, {2})});
      },
      {"dtype int64 is not supported"});
}

}  // namespace
}  // namespace tern::test
