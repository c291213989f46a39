// Pooling ops (src/ops/pool.cc): ONNX backend-test examples for MaxPool and AveragePool
// (ceil_mode, dilations, pads, count_include_pad, auto_pad), global pools and errors.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::iota_tensor;
using test::run_op;

Tensor pool(const std::string& type, const AttrMap& attrs, const Tensor& x, int opset = 13,
            int threads = 1) {
  return run_op(type, attrs, {x}, opset, 1, threads)[0];
}

TEST(PoolOp, OnnxExamplesCeilModeAndDilations) {
  const Tensor x = iota_tensor({1, 1, 4, 4}, 1);
  const AttrMap ceil =
      AttrMap().ints("kernel_shape", {3, 3}).ints("strides", {2, 2}).i("ceil_mode", 1);
  Tensor y = pool("MaxPool", ceil, x);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{11, 12, 15, 16}));
  y = pool("AveragePool", ceil, x);
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{6, 7.5f, 12, 13.5f}));
  // Without ceil_mode the partial windows are dropped.
  y = pool("MaxPool", AttrMap().ints("kernel_shape", {3, 3}).ints("strides", {2, 2}), x);
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{11}));
  y = pool("MaxPool", AttrMap().ints("kernel_shape", {2, 2}).ints("dilations", {2, 2}), x);
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{11, 12, 15, 16}));
}

TEST(PoolOp, CeilModeDropsAWindowStartingInTheEndPadding) {
  // in 5, k 2, s 2, pads 1 + 1: ceil((5 + 2 - 2) / 2) + 1 = 4 windows, but the 4th would
  // start at 5, in the end padding: 3 windows starting at -1, 1, 3.
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5}, {1, 1, 5});
  const AttrMap attrs = AttrMap()
                            .ints("kernel_shape", {2})
                            .ints("strides", {2})
                            .ints("pads", {1, 1})
                            .i("ceil_mode", 1);
  Tensor y = pool("MaxPool", attrs, x);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 3, 5}));
  y = pool("AveragePool", attrs, x);
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2.5f, 4.5f}));
}

TEST(PoolOp, OnnxExamplesPadsAndCountIncludePad) {
  const Tensor x = iota_tensor({1, 1, 5, 5}, 1);
  const AttrMap pads = AttrMap().ints("kernel_shape", {5, 5}).ints("pads", {2, 2, 2, 2});
  Tensor y = pool("AveragePool", pads, x);
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{7,     7.5f,  8,     8.5f,  9,     9.5f,  10,    10.5f, 11,
                                11.5f, 12,    12.5f, 13,    13.5f, 14,    14.5f, 15,    15.5f,
                                16,    16.5f, 17,    17.5f, 18,    18.5f, 19}));
  AttrMap include = pads;
  include.i("count_include_pad", 1);
  y = pool("AveragePool", include, x);
  test::expect_near_all(
      y.to_float_vector(),
      {2.52f, 3.6f, 4.8f,  4.08f, 3.24f, 4.56f,  6.4f,  8.4f,  7.04f, 5.52f, 7.2f,  10,   13,
       10.8f, 8.4f, 6.96f, 9.6f,  12.4f, 10.24f, 7.92f, 6.12f, 8.4f,  10.8f, 8.88f, 6.84f},
      1e-5f, 1e-6f);
  y = pool("AveragePool", AttrMap().ints("kernel_shape", {2, 2}).ints("strides", {2, 2}), x);
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{4, 6, 14, 16}));
}

TEST(PoolOp, OnnxExamplesSameUpper) {
  const Tensor x = iota_tensor({1, 1, 5, 5}, 1);
  const AttrMap same =
      AttrMap().ints("kernel_shape", {3, 3}).ints("strides", {2, 2}).s("auto_pad", "SAME_UPPER");
  EXPECT_EQ(pool("MaxPool", same, x).to_float_vector(),
            (std::vector<float>{7, 9, 10, 17, 19, 20, 22, 24, 25}));
  EXPECT_EQ(pool("AveragePool", same, x).to_float_vector(),
            (std::vector<float>{4, 5.5f, 7, 11.5f, 13, 14.5f, 19, 20.5f, 22}));
}

TEST(PoolOp, AutoPadLowerUpperValid1d) {
  const Tensor x = Tensor::from_vector({1, 2, 3, 4}, {1, 1, 4});
  auto max = [&](const std::string& mode) {
    return pool("MaxPool", AttrMap().ints("kernel_shape", {2}).s("auto_pad", mode), x)
        .to_float_vector();
  };
  EXPECT_EQ(max("SAME_UPPER"), (std::vector<float>{2, 3, 4, 4}));  // pad at the end
  EXPECT_EQ(max("SAME_LOWER"), (std::vector<float>{1, 2, 3, 4}));  // pad at the beginning
  EXPECT_EQ(max("VALID"), (std::vector<float>{2, 3, 4}));
}

TEST(PoolOp, ThreeDAndThreads) {
  const Tensor x = Tensor::from_vector(test::random_floats(2 * 3 * 5 * 6 * 7, 9), {2, 3, 5, 6, 7});
  const AttrMap attrs = AttrMap()
                            .ints("kernel_shape", {2, 3, 2})
                            .ints("strides", {2, 1, 2})
                            .ints("pads", {1, 1, 0, 0, 1, 1});
  const Tensor a = pool("MaxPool", attrs, x, 13, 1), b = pool("MaxPool", attrs, x, 13, 2);
  EXPECT_EQ(a.shape(), (Shape{2, 3, 3, 6, 4}));
  EXPECT_EQ(a.to_float_vector(), b.to_float_vector());
  // Spot check: output (0, 0, 0, 0, 0) covers depth {-1, 0}, rows {-1, 0, 1}, cols {0, 1}.
  float m = -1e30f;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 2; ++w) m = std::max(m, x.to_float_vector()[h * 7 + w]);
  EXPECT_EQ(a.to_float_vector()[0], m);
}

TEST(PoolOp, GlobalPools) {
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, -1, -2, -3, -6}, {1, 2, 2, 2});
  Tensor y = run_op("GlobalAveragePool", AttrMap(), {x})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{2.5f, -3}));
  y = run_op("GlobalMaxPool", AttrMap(), {x})[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{4, -1}));
  y = run_op("GlobalMaxPool", AttrMap(), {x.reshape({2, 2, 2})}, 13, 1, 2)[0];  // 1-D
  EXPECT_EQ(y.shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{2, 4, -1, -3}));
  // Planes of 143 values (the kernel's eight partial sums and a tail of 7): the mean in
  // double, rounded once (the inputs are multiples of 2^-23 in [-1, 1), so every double
  // sum of them is exact and a misplaced element changes the result).
  const std::vector<float> v = test::random_floats(3 * 13 * 11, 7);
  const Tensor big = Tensor::from_vector(v, {1, 3, 13, 11});
  const Tensor mean = run_op("GlobalAveragePool", AttrMap(), {big})[0];
  for (int c = 0; c < 3; ++c) {
    double sum = 0.0;
    for (int i = 0; i < 143; ++i) sum += v[c * 143 + i];
    EXPECT_EQ(mean.to_float_vector()[c], static_cast<float>(sum / 143.0)) << c;
  }
}

TEST(PoolOp, Errors) {
  const Tensor x = iota_tensor({1, 1, 4, 4});
  expect_error<ModelError>(
      [&] { run_op("MaxPool", AttrMap(), {x}); },
      {"MaxPool 'test_node': required attribute 'kernel_shape' (INTS) is missing"});
  expect_error<ShapeError>(
      [&] { run_op("AveragePool", AttrMap().ints("kernel_shape", {2}), {x}); },
      {"AveragePool 'test_node': expected a 3-D input (N x C x 1 spatial dims"});
  expect_error<ModelError>(
      [&] {
        run_op("MaxPool", AttrMap().ints("kernel_shape", {2, 2}).i("ceil_mode", 2), {x});
      },
      {"'ceil_mode' must be 0 or 1, but got 2"});
  expect_error<ModelError>(
      [&] {
        run_op("AveragePool", AttrMap().ints("kernel_shape", {2, 2}).i("count_include_pad", 5),
               {x});
      },
      {"'count_include_pad' must be 0 or 1"});
  expect_error<ShapeError>(
      [&] {
        run_op("MaxPool", AttrMap().ints("kernel_shape", {5, 5}), {x});
      },
      {"expected a padded input extent of at least 5"});
  expect_error<ModelError>(
      [&] {
        test::make_op("AveragePool", AttrMap().ints("kernel_shape", {2, 2}), 11, 2);
      },
      {"AveragePool 'test_node'", "one output"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("MaxPool", AttrMap().ints("kernel_shape", {2}),
               {Tensor::zeros(DType::kInt32, {1, 1, 4})});
      },
      {"MaxPool 'test_node'", "int32 is not supported"});
  expect_error<ShapeError>(
      [&] {
        run_op("GlobalAveragePool", AttrMap(), {iota_tensor({2, 3})});
      },
      {"GlobalAveragePool 'test_node': expected input X of rank >= 3"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("GlobalMaxPool", AttrMap(), {Tensor::zeros(DType::kFloat16, {1, 1, 2, 2})});
      },
      {"input 0 (X) dtype float16 is not supported (supported: float32)"});
}

// Max of each window with the flat index of its first max: the plain oracle for
// MaxPool's Indices output (2-D, NCHW, pads and strides).
template <typename T>
void max_pool_oracle(const std::vector<T>& x, int64_t planes, int64_t h, int64_t w, int64_t k,
                     int64_t s, int64_t pad, int64_t oh, int64_t ow, bool column_major,
                     std::vector<T>& y, std::vector<int64_t>& idx) {
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        bool any = false;
        T best{};
        int64_t bi = 0, bj = 0;
        for (int64_t a = 0; a < k; ++a)
          for (int64_t b = 0; b < k; ++b) {
            const int64_t r = i * s - pad + a, q = j * s - pad + b;
            if (r < 0 || r >= h || q < 0 || q >= w) continue;
            const T v = x[(c * h + r) * w + q];
            if (!any || v > best) {
              any = true;
              best = v;
              bi = r;
              bj = q;
            }
          }
        y.push_back(best);
        idx.push_back(c * h * w + (column_major ? bj * h + bi : bi * w + bj));
      }
}

TEST(PoolOp, MaxPoolIndicesAndIntegerDtypes) {
  const int64_t n = 2, c = 3, h = 5, w = 7;
  for (int64_t k : {2, 3}) {
    for (int64_t s : {1, 2}) {
      for (int64_t pad : {0, 1}) {
        for (bool cm : {false, true}) {
          const int64_t oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
          const AttrMap attrs = AttrMap()
                                    .ints("kernel_shape", {k, k})
                                    .ints("strides", {s, s})
                                    .ints("pads", {pad, pad, pad, pad})
                                    .i("storage_order", cm ? 1 : 0);
          // float32 with Indices.
          const Tensor xf = test::random_tensor<float>({n, c, h, w}, 9);
          std::vector<float> yf;
          std::vector<int64_t> idx;
          max_pool_oracle(xf.to_float_vector(), n * c, h, w, k, s, pad, oh, ow, cm, yf, idx);
          const auto out = run_op("MaxPool", attrs, {xf}, 12, 2);
          EXPECT_EQ(out[0].to_float_vector(), yf);
          EXPECT_EQ(out[1].to_int64_vector(), idx);
          EXPECT_EQ(out[1].shape(), (Shape{n, c, oh, ow}));
          // uint8 (many ties: values 0..3) and int8, Y only.
          const Tensor xu = test::random_tensor<uint8_t>({n, c, h, w}, 10, 0, 3);
          const Tensor xi = test::random_tensor<int8_t>({n, c, h, w}, 11, -128, 127);
          for (const Tensor& xt : {xu, xi}) {
            std::vector<int64_t> xv = xt.to_int64_vector(), yv, iv;
            max_pool_oracle(xv, n * c, h, w, k, s, pad, oh, ow, cm, yv, iv);
            const auto o = run_op("MaxPool", attrs, {xt}, 12, 2);
            EXPECT_EQ(o[0].dtype(), xt.dtype());
            EXPECT_EQ(o[0].to_int64_vector(), yv);
            EXPECT_EQ(o[1].to_int64_vector(), iv);
            EXPECT_EQ(run_op("MaxPool", attrs, {xt}, 12)[0].to_int64_vector(), yv);
          }
        }
      }
    }
  }
}

TEST(PoolOp, MaxUnpoolInvertsMaxPool) {
  const Tensor x = test::random_tensor<float>({2, 2, 4, 6}, 12);
  const AttrMap attrs = AttrMap().ints("kernel_shape", {2, 2}).ints("strides", {2, 2});
  const auto pooled = run_op("MaxPool", attrs, {x}, 12, 2);
  const Tensor y = run_op("MaxUnpool", attrs, {pooled[0], pooled[1]}, 11)[0];
  ASSERT_EQ(y.shape(), x.shape());
  // Each max back at its place, zeros elsewhere.
  std::vector<float> want(x.numel(), 0.0f);
  const auto pv = pooled[0].to_float_vector();
  const auto iv = pooled[1].to_int64_vector();
  for (size_t i = 0; i < iv.size(); ++i) want[iv[i]] = pv[i];
  EXPECT_EQ(y.to_float_vector(), want);
  // output_shape [2, 2, 5, 7]: indices refer to the requested shape.
  const Tensor y2 =
      run_op("MaxUnpool", attrs, {pooled[0], pooled[1], Tensor::from_vector_i64({2, 2, 5, 7}, {4})},
             11)[0];
  EXPECT_EQ(y2.shape(), (Shape{2, 2, 5, 7}));
  // The unpooled [4, 6] result sits at offset (0, 0) (floor of the extra 1 before).
  const auto y2v = y2.to_float_vector();
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t q = 0; q < 7; ++q) {
        const float got = y2v[(p * 5 + r) * 7 + q];
        EXPECT_EQ(got, r < 4 && q < 6 ? want[(p * 4 + r) * 6 + q] : 0.0f) << p << r << q;
      }
  expect_error<InvalidArgument>(
      [&] {
        run_op("MaxUnpool", attrs, {test::f32({1}, {1, 1, 1, 1}), test::i64({99}, {1, 1, 1, 1})},
               11);
      },
      {"MaxUnpool 'test_node'", "outside the unpooled shape"});
  expect_error<ShapeError>(
      [&] {
        run_op("MaxUnpool", attrs, {pooled[0], test::i64({0}, {1, 1, 1, 1})}, 11);
      },
      {"MaxUnpool 'test_node'"});
}

TEST(PoolOp, MaxUnpoolRejectsOverflowingUnpooledShape) {
  // (3 - 1) * 2^62 overflows int64.
  const Tensor x = test::f32({1, 2, 3}, {1, 1, 1, 3});
  const Tensor i = test::i64({0, 1, 2}, {1, 1, 1, 3});
  const int64_t big = int64_t{1} << 62;
  expect_error<ShapeError>(
      [&] {
        run_op("MaxUnpool", AttrMap().ints("kernel_shape", {1, 1}).ints("strides", {1, big}),
               {x, i}, 11);
      },
      {"MaxUnpool 'test_node'", "unpooled dim 3", "overflows int64"});
  // -pad_begin - pad_end overflows.
  const int64_t max = std::numeric_limits<int64_t>::max();
  expect_error<ShapeError>(
      [&] {
        run_op("MaxUnpool", AttrMap().ints("kernel_shape", {1, 1}).ints("pads", {0, max, 0, max}),
               {test::f32({1}, {1, 1, 1, 1}), test::i64({0}, {1, 1, 1, 1})}, 11);
      },
      {"MaxUnpool 'test_node'", "unpooled dim 3", "overflows int64"});
}

}  // namespace
}  // namespace tern
