// Conv op (src/ops/conv.cc): the ONNX backend-test examples, auto_pad modes, attribute
// plumbing against a naive convolution, threading, views, macs and every error path.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::iota_tensor;
using test::run_op;

Tensor filled(const Shape& shape, float value) {
  return Tensor::from_vector(std::vector<float>(shape_numel(shape), value), shape);
}

TEST(ConvOp, OnnxExamplePaddingAndStrides) {
  const Tensor x55 = iota_tensor({1, 1, 5, 5}), x75 = iota_tensor({1, 1, 7, 5}),
               w = filled({1, 1, 3, 3}, 1);
  std::vector<Tensor> y =
      run_op("Conv", AttrMap().ints("kernel_shape", {3, 3}).ints("pads", {1, 1, 1, 1}), {x55, w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(y[0].to_float_vector(),
            (std::vector<float>{12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
  y = run_op("Conv", AttrMap(), {x55, w});  // kernel_shape from W, no pads
  EXPECT_EQ(y[0].to_float_vector(), (std::vector<float>{54, 63, 72, 99, 108, 117, 144, 153, 162}));
  y = run_op("Conv", AttrMap().ints("pads", {1, 1, 1, 1}).ints("strides", {2, 2}), {x75, w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 4, 3}));
  EXPECT_EQ(y[0].to_float_vector(),
            (std::vector<float>{12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124}));
  y = run_op("Conv", AttrMap().ints("pads", {1, 0, 1, 0}).ints("strides", {2, 2}), {x75, w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 4, 2}));
  EXPECT_EQ(y[0].to_float_vector(), (std::vector<float>{21, 33, 99, 117, 189, 207, 171, 183}));
  y = run_op("Conv", AttrMap().s("auto_pad", "SAME_LOWER").ints("strides", {2, 2}), {x55, w});
  EXPECT_EQ(y[0].to_float_vector(), (std::vector<float>{12, 27, 24, 63, 108, 81, 72, 117, 84}));
}

TEST(ConvOp, AutoPadUpperLowerValid1d) {
  // x = [1 2 3 4], w = ones(3), stride 2: total pad 1 goes at the end (SAME_UPPER) or
  // at the beginning (SAME_LOWER).
  const Tensor x = iota_tensor({1, 1, 4}, 1), w = filled({1, 1, 3}, 1);
  auto conv = [&](const std::string& mode) {
    return run_op("Conv", AttrMap().s("auto_pad", mode).ints("strides", {2}), {x, w})[0];
  };
  EXPECT_EQ(conv("SAME_UPPER").to_float_vector(), (std::vector<float>{6, 7}));
  EXPECT_EQ(conv("SAME_LOWER").to_float_vector(), (std::vector<float>{3, 9}));
  EXPECT_EQ(conv("VALID").to_float_vector(), (std::vector<float>{6}));
  EXPECT_EQ(conv("NOTSET").to_float_vector(), (std::vector<float>{6}));
}

TEST(ConvOp, BiasAndGroups) {
  // 4 input channels, group 2, 2 outputs: output g sums input channels 2g, 2g+1.
  const Tensor x = iota_tensor({1, 4, 1, 2}), w = filled({2, 2, 1, 1}, 1);
  const Tensor b = Tensor::from_vector({100, 200}, {2});
  const auto y = run_op("Conv", AttrMap().i("group", 2), {x, w, b})[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{102, 104, 210, 212}));
  const auto y_nobias = run_op("Conv", AttrMap().i("group", 2), {x, w, Tensor()})[0];
  EXPECT_EQ(y_nobias.to_float_vector(), (std::vector<float>{2, 4, 10, 12}));
}

// Naive N-D conv (1 to 3 spatial dims) over the ONNX attributes, in double.
std::vector<float> naive_conv(const Tensor& xt, const Tensor& wt, const Tensor& bt,
                              const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
                              const std::vector<int64_t>& pads, int64_t group, Shape* y_shape) {
  const Shape& xs = xt.shape();
  const Shape& ws = wt.shape();
  const int sp = static_cast<int>(xs.size()) - 2;
  const auto x = xt.to_float_vector(), w = wt.to_float_vector(), b = bt.to_float_vector();
  Shape in(3, 1), k(3, 1), s(3, 1), d(3, 1), pb(3, 0), pe(3, 0), out(3, 1);
  for (int i = 0; i < sp; ++i) {
    const int j = 3 - sp + i;
    in[j] = xs[2 + i];
    k[j] = ws[2 + i];
    s[j] = strides[i];
    d[j] = dil[i];
    pb[j] = pads[i];
    pe[j] = pads[sp + i];
    out[j] = (in[j] + pb[j] + pe[j] - d[j] * (k[j] - 1) - 1) / s[j] + 1;
  }
  const int64_t n_batch = xs[0], c = xs[1], m = ws[0], cg = c / group, mg = m / group;
  *y_shape = {n_batch, m};
  for (int i = 0; i < sp; ++i) y_shape->push_back(out[3 - sp + i]);
  std::vector<float> y;
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            double acc = b.empty() ? 0.0 : b[oc];
            for (int64_t icg = 0; icg < cg; ++icg)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i0 = o0 * s[0] - pb[0] + k0 * d[0];
                    const int64_t i1 = o1 * s[1] - pb[1] + k1 * d[1];
                    const int64_t i2 = o2 * s[2] - pb[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) {
                      continue;
                    }
                    const int64_t ic = oc / mg * cg + icg;
                    acc += static_cast<double>(
                               x[(((n * c + ic) * in[0] + i0) * in[1] + i1) * in[2] + i2]) *
                           w[(((oc * cg + icg) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                  }
            y.push_back(static_cast<float>(acc));
          }
  return y;
}

TEST(ConvOp, AsymmetricAttributesAgainstNaive) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{2, 3, 9, 11}, {4, 3, 3, 2}, {1, 2}, {2, 1}, {1, 0, 2, 1}, 1},
      {{1, 6, 7, 8}, {6, 1, 3, 3}, {2, 1}, {1, 2}, {0, 2, 1, 0}, 6},                    // depthwise
      {{1, 6, 5, 13}, {9, 2, 1, 5}, {1, 3}, {1, 1}, {0, 2, 0, 1}, 3},                   // grouped
      {{2, 3, 17}, {5, 3, 4}, {3}, {2}, {2, 1}, 1},                                     // 1-D
      {{1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}, 1},  // 3-D
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Tensor x = test::random_tensor<float>(c.x, 10 + i, -1, 1),
                 w = test::random_tensor<float>(c.w, 20 + i, -1, 1),
                 b = test::random_tensor<float>({c.w[0]}, 30 + i, -1, 1);
    Shape expected_shape;
    const auto expected =
        naive_conv(x, w, b, c.strides, c.dilations, c.pads, c.group, &expected_shape);
    const AttrMap attrs = AttrMap()
                              .ints("strides", c.strides)
                              .ints("dilations", c.dilations)
                              .ints("pads", c.pads)
                              .i("group", c.group);
    const Tensor y1 = run_op("Conv", attrs, {x, w, b}, 11, 1, 1)[0];
    EXPECT_EQ(y1.shape(), expected_shape) << "case " << i;
    test::expect_near_all(y1.to_float_vector(), expected, 1e-5f, 1e-5f, fmt::format("case {}", i));
    // Two threads compute each output channel exactly as one thread does.
    const Tensor y2 = run_op("Conv", attrs, {x, w, b}, 11, 1, 2)[0];
    EXPECT_EQ(y2.to_float_vector(), y1.to_float_vector()) << "case " << i;
  }
}

TEST(ConvOp, NonContiguousInputView) {
  const Tensor base = test::random_tensor<float>({1, 5, 6, 3}, 4, -1, 1);
  const Tensor x = base.permute({0, 3, 1, 2});  // [1, 3, 5, 6], not contiguous
  ASSERT_FALSE(x.is_contiguous());
  const Tensor w = test::random_tensor<float>({2, 3, 3, 3}, 5, -1, 1);
  const auto a = run_op("Conv", AttrMap().ints("pads", {1, 1, 1, 1}), {x, w})[0];
  const auto b = run_op("Conv", AttrMap().ints("pads", {1, 1, 1, 1}), {x.contiguous(), w})[0];
  EXPECT_EQ(a.to_float_vector(), b.to_float_vector());
}

TEST(ConvOp, Macs) {
  auto op = test::make_op("Conv", AttrMap().i("group", 2).ints("pads", {1, 1, 1, 1}));
  // N*M*OH*OW*(C/group)*KH*KW = 2*8*10*12*(4/2)*3*3
  const std::vector<ops::TensorType> in = {{DType::kFloat32, {2, 4, 10, 12}},
                                           {DType::kFloat32, {8, 2, 3, 3}}};
  const std::vector<ops::TensorType> out = {{DType::kFloat32, {2, 8, 10, 12}}};
  EXPECT_EQ(op->macs(in, out), 2 * 8 * 10 * 12 * 2 * 9);
}

TEST(ConvOp, ErrorWrongChannelCount) {
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap(),
               {test::random_tensor<float>({1, 32, 4, 4}, 1, -1, 1),
                test::random_tensor<float>({8, 64, 3, 3}, 2, -1, 1)});
      },
      {"Conv 'test_node': expected input with 64 channels, but got 32"});
  // With groups the expectation counts C/group per group.
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap().i("group", 2),
               {test::random_tensor<float>({1, 6, 4, 4}, 1, -1, 1),
                test::random_tensor<float>({4, 2, 1, 1}, 2, -1, 1)});
      },
      {"expected input with 4 channels, but got 6"});
}

TEST(ConvOp, ErrorWrongRanks) {
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap(),
               {test::random_tensor<float>({3, 4}, 1, -1, 1),
                test::random_tensor<float>({2, 3, 1}, 2, -1, 1)});
      },
      {"Conv 'test_node': expected input X of rank 3 to 5"});
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap(),
               {test::random_tensor<float>({1, 3, 4, 4}, 1, -1, 1),
                test::random_tensor<float>({2, 3, 3}, 2, -1, 1)});
      },
      {"expected weight W of rank 4"});
  // 2-D attributes on a 1-D input.
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap().ints("strides", {1, 1}),
               {test::random_tensor<float>({1, 3, 4}, 1, -1, 1),
                test::random_tensor<float>({2, 3, 3}, 2, -1, 1)});
      },
      {"expected a 4-D input"});
}

TEST(ConvOp, ErrorBadAttributes) {
  const std::vector<Tensor> in = {test::random_tensor<float>({1, 3, 5, 5}, 1, -1, 1),
                                  test::random_tensor<float>({2, 3, 3, 3}, 2, -1, 1)};
  expect_error<ModelError>(
      [&] {
        run_op("Conv", AttrMap().ints("strides", {0, 1}), in);
      },
      {"Conv 'test_node': attribute 'strides' must have values >= 1"});
  expect_error<ModelError>(
      [&] {
        run_op("Conv", AttrMap().ints("pads", {1, 1, 1}), in);
      },
      {"'pads' must have 2 values per spatial dim"});
  expect_error<ModelError>(
      [&] {
        run_op("Conv", AttrMap().ints("pads", {-1, 0, 0, 0}), in);
      },
      {"'pads' must have values >= 0"});
  expect_error<ModelError>([&] { run_op("Conv", AttrMap().s("auto_pad", "SAME"), in); },
                           {"attribute 'auto_pad' is 'SAME', expected one of"});
  expect_error<ModelError>([&] { run_op("Conv", AttrMap().i("group", 0), in); },
                           {"'group' must be >= 1"});
  expect_error<ModelError>(
      [&] {
        run_op("Conv", AttrMap().ints("strides", {1, 1}).ints("dilations", {1}), in);
      },
      {"'dilations' must have 2 values"});
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap().ints("kernel_shape", {5, 5}), in);
      },
      {"kernel_shape [5, 5] does not match weight shape [2, 3, 3, 3]"});
}

TEST(ConvOp, ErrorBiasShapeDtypeAndSize) {
  const Tensor x = test::random_tensor<float>({1, 3, 5, 5}, 1, -1, 1),
               w = test::random_tensor<float>({2, 3, 3, 3}, 2, -1, 1);
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap(), {x, w, test::random_tensor<float>({3}, 3, -1, 1)});
      },
      {"expected bias B of shape [2]"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("Conv", AttrMap(), {Tensor::zeros(DType::kFloat16, {1, 3, 5, 5}), w});
      },
      {"input 0 (X) dtype float16 is not supported (supported: float32)"});
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap(), {test::random_tensor<float>({1, 3, 2, 5}, 1, -1, 1), w});
      },
      {"expected a padded input extent of at least 3"});
  expect_error<ShapeError>(
      [&] {
        run_op("Conv", AttrMap().i("group", 3),
               {x, test::random_tensor<float>({4, 1, 3, 3}, 2, -1, 1)});
      },
      {"divisible by group 3"});
}

}  // namespace
}  // namespace tern
