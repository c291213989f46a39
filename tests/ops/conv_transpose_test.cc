// ConvTranspose op (src/ops/conv_transpose.cc): the ONNX backend-test examples
// (output_shape, output_padding, pads, dilations, auto_pad), a grouped 3-D case against a
// naive gather, and errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::iota_tensor;
using test::run_op;

Tensor ones(const Shape& shape) {
  return Tensor::from_vector(std::vector<float>(shape_numel(shape), 1.0f), shape);
}

// Both output channels of the ONNX examples hold the same plane.
std::vector<float> twice(const std::vector<float>& plane) {
  std::vector<float> v = plane;
  v.insert(v.end(), plane.begin(), plane.end());
  return v;
}

TEST(ConvTransposeOp, OnnxExampleBasic2dAnd1d) {
  auto y = run_op("ConvTranspose", AttrMap(), {iota_tensor({1, 1, 3, 3}), ones({1, 2, 3, 3})})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 5, 5}));
  EXPECT_EQ(y.to_float_vector(), twice({0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                        27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8}));
  y = run_op("ConvTranspose", AttrMap(), {iota_tensor({1, 1, 3}), ones({1, 2, 3})})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 5}));
  EXPECT_EQ(y.to_float_vector(), twice({0, 1, 3, 3, 2}));
}

TEST(ConvTransposeOp, OnnxExampleOutputShapeAndOutputPadding) {
  const std::vector<float> plane = {
      0, 0, 1, 1, 3,  2, 2,  0, 0, 0, 1, 1, 3,  2, 2,  0, 0, 0, 1, 1, 3, 2, 2, 0,  3, 3,  7,
      4, 9, 5, 5, 0,  3, 3,  7, 4, 9, 5, 5, 0,  3, 3,  7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8,
      8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0,  0, 0};
  const std::vector<Tensor> in = {iota_tensor({1, 1, 3, 3}), ones({1, 2, 3, 3})};
  for (const AttrMap& attrs :
       {AttrMap().ints("strides", {3, 2}).ints("output_shape", {10, 8}),
        AttrMap().ints("strides", {3, 2}).ints("output_padding", {1, 1}),
        AttrMap().ints("strides", {3, 2}).ints("output_shape", {1, 2, 10, 8}),
        AttrMap()
            .ints("strides", {3, 2})
            .ints("output_shape", {10, 8})
            .ints("kernel_shape", {3, 3})
            .ints("output_padding", {1, 1})}) {
    const Tensor y = run_op("ConvTranspose", attrs, in)[0];
    EXPECT_EQ(y.shape(), (Shape{1, 2, 10, 8}));
    EXPECT_EQ(y.to_float_vector(), twice(plane));
  }
}

TEST(ConvTransposeOp, OnnxExamplePadsDilationsAutoPad) {
  const std::vector<Tensor> in = {iota_tensor({1, 1, 3, 3}), ones({1, 2, 3, 3})};
  Tensor y =
      run_op("ConvTranspose", AttrMap().ints("strides", {3, 2}).ints("pads", {1, 2, 1, 2}), in)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 7, 3}));
  EXPECT_EQ(y.to_float_vector(),
            twice({1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15}));

  const Tensor x = Tensor::from_vector({3, 8, 1, 9, 5, 7, 3, 2, 6}, {1, 1, 3, 3});
  const Tensor w = Tensor::from_vector({7, 2, 1, 9}, {1, 1, 2, 2});
  y = run_op("ConvTranspose", AttrMap().ints("dilations", {2, 2}), {x, w})[0];
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                                76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54}));

  y = run_op("ConvTranspose", AttrMap().s("auto_pad", "SAME_UPPER").ints("strides", {2, 2}), in)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 6, 6}));
  EXPECT_EQ(y.to_float_vector(),
            twice({0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                   3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8}));
  // SAME_LOWER puts the odd pad at the beginning: the natural 7x7 output minus its first
  // row and column.
  const Tensor natural = run_op("ConvTranspose", AttrMap().ints("strides", {2, 2}), in)[0];
  y = run_op("ConvTranspose", AttrMap().s("auto_pad", "SAME_LOWER").ints("strides", {2, 2}), in)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 6, 6}));
  EXPECT_EQ(y.to_float_vector(),
            natural.slice(2, 1, 7).slice(3, 1, 7).contiguous().to_float_vector());
}

TEST(ConvTransposeOp, Grouped3dWithBiasAgainstNaive) {
  // X [1, 4, 2, 3, 2], W [4, 3, 2, 2, 3] with group 2 -> M = 6; strides (2, 1, 2), pads.
  const Shape xs = {1, 4, 2, 3, 2}, ws = {4, 3, 2, 2, 3};
  const auto xv = test::random_floats(shape_numel(xs), 1),
             wv = test::random_floats(shape_numel(ws), 2), bv = test::random_floats(6, 3);
  const std::vector<int64_t> s = {2, 1, 2}, pb = {1, 0, 0}, pe = {0, 1, 1};
  const int64_t in[3] = {2, 3, 2}, k[3] = {2, 2, 3};
  int64_t out[3];
  for (int i = 0; i < 3; ++i) out[i] = s[i] * (in[i] - 1) + k[i] - pb[i] - pe[i];
  std::vector<float> expected;
  for (int64_t oc = 0; oc < 6; ++oc)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          double acc = bv[oc];
          const int64_t g = oc / 3;
          for (int64_t icg = 0; icg < 2; ++icg) {
            const int64_t ic = g * 2 + icg;
            for (int64_t i0 = 0; i0 < in[0]; ++i0)
              for (int64_t i1 = 0; i1 < in[1]; ++i1)
                for (int64_t i2 = 0; i2 < in[2]; ++i2) {
                  // Tap that carries input (i0, i1, i2) to output (o0, o1, o2), if any.
                  const int64_t k0 = o0 + pb[0] - i0 * s[0], k1 = o1 + pb[1] - i1 * s[1],
                                k2 = o2 + pb[2] - i2 * s[2];
                  if (k0 < 0 || k0 >= k[0] || k1 < 0 || k1 >= k[1] || k2 < 0 || k2 >= k[2]) {
                    continue;
                  }
                  acc += static_cast<double>(xv[((ic * 2 + i0) * 3 + i1) * 2 + i2]) *
                         wv[(((ic * 3 + oc % 3) * 2 + k0) * 2 + k1) * 3 + k2];
                }
          }
          expected.push_back(static_cast<float>(acc));
        }
  const AttrMap attrs = AttrMap().i("group", 2).ints("strides", s).ints("pads", {1, 0, 0, 0, 1, 1});
  const std::vector<Tensor> inputs = {Tensor::from_vector(xv, xs), Tensor::from_vector(wv, ws),
                                      Tensor::from_vector(bv, {6})};
  const Tensor y = run_op("ConvTranspose", attrs, inputs, 13, 1, 2)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 6, out[0], out[1], out[2]}));
  test::expect_near_all(y.to_float_vector(), expected, 1e-5f, 1e-5f);
}

// 2-D ConvTranspose by the definition (a gather per output pixel, in double): X [1, C, H, W],
// W [C, M/group, kh, kw], strides s, pads [t, l] at the start, output [oh, ow].
std::vector<float> naive_conv_transpose_2d(const std::vector<float>& x, const std::vector<float>& w,
                                           const std::vector<float>* b, int64_t c, int64_t h,
                                           int64_t wd, int64_t m, int64_t group, int64_t kh,
                                           int64_t kw, int64_t sh, int64_t sw, int64_t pt,
                                           int64_t pl, int64_t oh, int64_t ow) {
  const int64_t cg = c / group, mg = m / group;
  std::vector<float> y;
  for (int64_t oc = 0; oc < m; ++oc) {
    for (int64_t yo = 0; yo < oh; ++yo) {
      for (int64_t xo = 0; xo < ow; ++xo) {
        double acc = b ? (*b)[oc] : 0.0;
        for (int64_t icg = 0; icg < cg; ++icg) {
          const int64_t ic = oc / mg * cg + icg;
          for (int64_t yi = 0; yi < h; ++yi) {
            for (int64_t xi = 0; xi < wd; ++xi) {
              const int64_t i = yo + pt - yi * sh, j = xo + pl - xi * sw;
              if (i < 0 || i >= kh || j < 0 || j >= kw) continue;
              acc += static_cast<double>(x[(ic * h + yi) * wd + xi]) *
                     w[((ic * mg + oc % mg) * kh + i) * kw + j];
            }
          }
        }
        y.push_back(static_cast<float>(acc));
      }
    }
  }
  return y;
}

// The upsampling case (kernel == stride, no padding: one tap per output pixel, built row
// by row) against the definition: several kernels, groups, odd sizes, with and without
// bias, 1 and 2 threads; and the same shapes with output_padding, which leave that case.
TEST(ConvTransposeOp, KernelEqualStrideUpsamplingAgainstNaive) {
  struct Case {
    int64_t c, m, group, h, w, kh, kw;
    bool bias;
  };
  const Case cases[] = {{3, 5, 1, 5, 7, 2, 2, true},  {4, 6, 2, 3, 4, 3, 3, false},
                        {2, 3, 1, 4, 5, 2, 3, true},  {6, 4, 2, 1, 9, 1, 4, true},
                        {5, 2, 1, 2, 3, 5, 5, false}, {24, 24, 1, 6, 11, 2, 2, true}};
  uint32_t seed = 10;
  for (const Case& t : cases) {
    for (int64_t out_pad : {0, 1}) {
      if (out_pad && (t.kh == 1 || t.kw == 1)) continue;  // output_padding < stride
      const Shape xs = {1, t.c, t.h, t.w}, ws = {t.c, t.m / t.group, t.kh, t.kw};
      const auto xv = test::random_floats(shape_numel(xs), seed++);
      const auto wv = test::random_floats(shape_numel(ws), seed++);
      const auto bv = test::random_floats(t.m, seed++);
      const int64_t oh = t.h * t.kh + out_pad, ow = t.w * t.kw + out_pad;
      const std::vector<float> expected =
          naive_conv_transpose_2d(xv, wv, t.bias ? &bv : nullptr, t.c, t.h, t.w, t.m, t.group,
                                  t.kh, t.kw, t.kh, t.kw, 0, 0, oh, ow);
      std::vector<Tensor> inputs = {Tensor::from_vector(xv, xs), Tensor::from_vector(wv, ws)};
      if (t.bias) inputs.push_back(Tensor::from_vector(bv, {t.m}));
      AttrMap attrs = AttrMap().i("group", t.group).ints("strides", {t.kh, t.kw});
      if (out_pad) attrs = attrs.ints("output_padding", {out_pad, out_pad});
      for (int threads : {1, 2}) {
        const Tensor y = run_op("ConvTranspose", attrs, inputs, 13, 1, threads)[0];
        ASSERT_EQ(y.shape(), (Shape{1, t.m, oh, ow}));
        test::expect_near_all(y.to_float_vector(), expected, 1e-5f, 1e-5f,
                              fmt::format("c {} m {} group {} {}x{} k {}x{} output_padding {}",
                                          t.c, t.m, t.group, t.h, t.w, t.kh, t.kw, out_pad));
      }
    }
  }
}

TEST(ConvTransposeOp, Errors) {
  const Tensor x = iota_tensor({1, 2, 3, 3}), w = ones({2, 1, 3, 3});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap(), {iota_tensor({1, 3, 3, 3}), w});
      },
      {"ConvTranspose 'test_node': expected input with 2 channels, but got 3"});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap(), {iota_tensor({2, 3}), w});
      },
      {"expected input X of rank 3 to 5"});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap().ints("output_padding", {1}), {x, w});
      },
      {"output_padding [1] must have 2 values"});
  expect_error<ModelError>(
      [&] {
        run_op("ConvTranspose", AttrMap().ints("output_padding", {-1, 0}), {x, w});
      },
      {"'output_padding' must have values >= 0"});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap().ints("pads", {3, 3, 3, 3}), {x, w});
      },
      {"the output would be empty"});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap().i("group", 2),
               {iota_tensor({1, 3, 3, 3}), ones({3, 1, 3, 3})});
      },
      {"divisible by group 2"});
  expect_error<ShapeError>(
      [&] {
        run_op("ConvTranspose", AttrMap(), {x, w, Tensor::from_vector({1, 2}, {2})});
      },
      {"expected bias B of shape [1]"});
}

}  // namespace
}  // namespace tern
