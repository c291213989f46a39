// Normalization ops (src/ops/norm.cc): InstanceNormalization, LayerNormalization (every
// axis, broadcast Scale / B, Mean and InvStdDev outputs), MeanVarianceNormalization and
// LRN against plain double references written here; odd shapes and the error cases.
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

// (v - mean) / sqrt(var + eps) of each consecutive group of n values (biased var).
std::vector<double> normalize_groups(const std::vector<float>& v, int64_t n, double eps,
                                     std::vector<double>* means = nullptr,
                                     std::vector<double>* inv_stds = nullptr) {
  std::vector<double> out(v.size());
  for (size_t g = 0; g * n < v.size(); ++g) {
    double m = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) m += v[g * n + i];
    m /= n;
    for (int64_t i = 0; i < n; ++i) var += (v[g * n + i] - m) * (v[g * n + i] - m);
    var /= n;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) out[g * n + i] = (v[g * n + i] - m) * inv;
    if (means) means->push_back(m);
    if (inv_stds) inv_stds->push_back(inv);
  }
  return out;
}

std::vector<float> to_f(const std::vector<double>& v) { return {v.begin(), v.end()}; }

TEST(InstanceNormOp, MatchesReferenceOverOddShapes) {
  for (const Shape& s : {Shape{1, 1, 1}, Shape{2, 3, 5}, Shape{3, 2, 3, 7}, Shape{1, 3, 2, 3, 2}}) {
    const Tensor x = test::random_tensor<float>(s, 11);
    const Tensor scale = test::random_tensor<float>({s[1]}, 12);
    const Tensor bias = test::random_tensor<float>({s[1]}, 13);
    const float eps = 0.01f;
    const Tensor y =
        run_op("InstanceNormalization", AttrMap().f("epsilon", eps), {x, scale, bias}, 6)[0];
    const int64_t inner = x.numel() / (s[0] * s[1]);
    std::vector<double> ref = normalize_groups(x.to_float_vector(), inner, eps);
    const auto sv = scale.to_float_vector(), bv = bias.to_float_vector();
    for (size_t i = 0; i < ref.size(); ++i) {
      const size_t c = (i / inner) % s[1];
      ref[i] = ref[i] * sv[c] + bv[c];
    }
    test::expect_near_all(y.to_float_vector(), to_f(ref), 1e-5f, 1e-5f, shape_str(s));
  }
}

TEST(InstanceNormOp, Errors) {
  const Tensor x = test::random_tensor<float>({1, 3, 4}, 1);
  expect_error<ShapeError>(
      [&] {
        run_op("InstanceNormalization", {}, {x, test::f32({1, 1}, {2}), test::f32({0, 0, 0}, {3})});
      },
      {"InstanceNormalization 'test_node'", "shape [3]"});
  expect_error<ModelError>(
      [&] { test::make_op("InstanceNormalization", AttrMap().f("epsilon", -1)); },
      {"InstanceNormalization 'test_node'", "epsilon"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("InstanceNormalization", {},
               {test::i32({1, 2, 3}, {1, 1, 3}), test::i32({1}, {1}), test::i32({1}, {1})});
      },
      {"InstanceNormalization 'test_node'", "int32"});
}

TEST(LayerNormOp, EveryAxisWithStatsOutputs) {
  const Shape s{2, 3, 5};
  const Tensor x = test::random_tensor<float>(s, 21);
  for (int axis = -3; axis < 3; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    const Shape norm(s.begin() + a, s.end());
    const Tensor scale = test::random_tensor<float>(norm, 22);
    const Tensor bias = test::random_tensor<float>(norm, 23);
    const auto out = run_op("LayerNormalization", AttrMap().i("axis", axis).f("epsilon", 1e-3f),
                            {x, scale, bias}, 17, 3);
    const int64_t n = shape_numel(norm);
    std::vector<double> means, invs;
    std::vector<double> ref = normalize_groups(x.to_float_vector(), n, 1e-3, &means, &invs);
    const auto sv = scale.to_float_vector(), bv = bias.to_float_vector();
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = ref[i] * sv[i % n] + bv[i % n];
    test::expect_near_all(out[0].to_float_vector(), to_f(ref), 1e-5f, 1e-5f);
    test::expect_near_all(out[1].to_float_vector(), to_f(means), 1e-6f, 1e-6f);
    test::expect_near_all(out[2].to_float_vector(), to_f(invs), 1e-5f, 1e-5f);
    Shape stat(s.begin(), s.begin() + a);
    stat.resize(3, 1);
    EXPECT_EQ(out[1].shape(), stat);
    EXPECT_EQ(out[2].shape(), stat);
  }
}

TEST(LayerNormOp, BroadcastScaleWithoutBias) {
  // Scale [1, 5] broadcasts over the normalized [3, 5]; B omitted.
  const Tensor x = test::random_tensor<float>({2, 3, 5}, 31);
  const Tensor scale = test::random_tensor<float>({1, 5}, 32);
  const Tensor y = run_op("LayerNormalization", AttrMap().i("axis", 1), {x, scale}, 17)[0];
  std::vector<double> ref = normalize_groups(x.to_float_vector(), 15, 1e-5);
  const auto sv = scale.to_float_vector();
  for (size_t i = 0; i < ref.size(); ++i) ref[i] *= sv[i % 5];
  test::expect_near_all(y.to_float_vector(), to_f(ref), 1e-5f, 1e-5f);
}

TEST(LayerNormOp, Errors) {
  const Tensor x = test::random_tensor<float>({2, 3}, 1);
  expect_error<ShapeError>(
      [&] {
        run_op("LayerNormalization", {}, {x, test::f32({1, 2}, {2})}, 17);
      },
      {"LayerNormalization 'test_node'", "broadcast"});
  expect_error<ShapeError>(
      [&] {
        run_op("LayerNormalization", AttrMap().i("axis", 2), {x, test::f32({1}, {1})}, 17);
      },
      {"LayerNormalization 'test_node'", "axis"});
  expect_error<UnsupportedOpError>(
      [&] { test::make_op("LayerNormalization", AttrMap().i("stash_type", 11), 17); },
      {"LayerNormalization 'test_node'", "stash_type"});
}

TEST(MvnOp, DefaultAndCustomAxes) {
  const Tensor x = test::random_tensor<float>({3, 2, 3, 5}, 41);
  // Default axes [0, 2, 3]: per channel over N, H, W.
  const Tensor y = run_op("MeanVarianceNormalization", {}, {x}, 13)[0];
  const auto xv = x.to_float_vector();
  for (int c = 0; c < 2; ++c) {
    std::vector<float> vals;
    std::vector<size_t> pos;
    for (size_t i = 0; i < xv.size(); ++i) {
      if ((i / 15) % 2 == static_cast<size_t>(c)) {
        vals.push_back(xv[i]);
        pos.push_back(i);
      }
    }
    const auto ref = normalize_groups(vals, static_cast<int64_t>(vals.size()), 0.0);
    for (size_t k = 0; k < pos.size(); ++k) {
      EXPECT_NEAR(y.to_float_vector()[pos[k]], ref[k], 1e-5) << k;
    }
  }
  // axes [-1]: each row of 5.
  const Tensor y2 = run_op("MeanVarianceNormalization", AttrMap().ints("axes", {-1}), {x}, 13)[0];
  test::expect_near_all(y2.to_float_vector(), to_f(normalize_groups(xv, 5, 0.0)), 1e-5f, 1e-5f);
}

TEST(LrnOp, MatchesReferenceForOddAndEvenSizes) {
  const Tensor x = test::random_tensor<float>({2, 5, 3, 2}, 51);
  const auto xv = x.to_float_vector();
  for (int64_t size : {1, 2, 3, 4, 7}) {
    const float alpha = 0.02f, beta = 0.6f, bias = 1.5f;
    const Tensor y =
        run_op("LRN", AttrMap().i("size", size).f("alpha", alpha).f("beta", beta).f("bias", bias),
               {x}, 13)[0];
    std::vector<float> ref(xv.size());
    for (int n = 0; n < 2; ++n) {
      for (int c = 0; c < 5; ++c) {
        for (int i = 0; i < 6; ++i) {
          double sq = 0;
          for (int k = c - static_cast<int>((size - 1) / 2);
               k <= c + static_cast<int>(size - 1 - (size - 1) / 2); ++k) {
            if (k >= 0 && k < 5) sq += xv[(n * 5 + k) * 6 + i] * xv[(n * 5 + k) * 6 + i];
          }
          ref[(n * 5 + c) * 6 + i] = static_cast<float>(xv[(n * 5 + c) * 6 + i] /
                                                        std::pow(bias + alpha / size * sq, beta));
        }
      }
    }
    test::expect_near_all(y.to_float_vector(), ref, 1e-6f, 1e-5f);
  }
  expect_error<ModelError>([&] { test::make_op("LRN", AttrMap()); }, {"LRN 'test_node'", "size"});
  expect_error<ModelError>([&] { test::make_op("LRN", AttrMap().i("size", 0)); },
                           {"LRN 'test_node'", "size"});
}

}  // namespace
}  // namespace tern
