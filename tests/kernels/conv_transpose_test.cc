// Reference transposed convolution (kernels/reference/conv_transpose.h): hand-checked
// cases and a sweep against a naive gather (each output sums the inputs that reach it).
#include "kernels/reference/conv_transpose.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

using test::Lcg;
using test::random_floats;

std::vector<float> run(const ConvTransposeParams& p, const std::vector<float>& x,
                       const std::vector<float>& w, const std::vector<float>* bias) {
  std::vector<float> y(p.out_channels * p.out.size(), -777.0f);
  f32_conv_transpose_nchw(p, x.data(), w.data(), bias ? bias->data() : nullptr, y.data(), 0,
                          p.out_channels);
  return y;
}

ConvTransposeParams params_1d(int64_t in, int64_t k, int64_t stride, int64_t pad_begin,
                              int64_t out) {
  ConvTransposeParams p;
  p.in_channels = p.out_channels = 1;
  p.in = {1, 1, in};
  p.kernel = {1, 1, k};
  p.stride = {1, 1, stride};
  p.pad_begin = {0, 0, pad_begin};
  p.out = {1, 1, out};
  return p;
}

TEST(RefConvTranspose, Hand1dStride2) {
  // x = [1 2 3], w = [1 1 1], stride 2: input i adds to outputs 2i, 2i+1, 2i+2.
  EXPECT_EQ(run(params_1d(3, 3, 2, 0, 7), {1, 2, 3}, {1, 1, 1}, nullptr),
            (std::vector<float>{1, 1, 3, 2, 5, 3, 3}));
  // pads 1 + 1 drop the first and last output; a bias is added everywhere.
  const std::vector<float> b = {10};
  EXPECT_EQ(run(params_1d(3, 3, 2, 1, 5), {1, 2, 3}, {1, 1, 1}, &b),
            (std::vector<float>{11, 13, 12, 15, 13}));
}

TEST(RefConvTranspose, HandNegativePadShiftsOutput) {
  // output_shape larger than natural: pad_begin -1 shifts everything right by one and
  // leaves the border at the bias.
  const std::vector<float> b = {0.5f};
  EXPECT_EQ(run(params_1d(2, 2, 1, -1, 5), {1, 2}, {1, 10}, &b),
            (std::vector<float>{0.5f, 1.5f, 12.5f, 20.5f, 0.5f}));
}

TEST(RefConvTranspose, HandGroups) {
  // C = 2, M = 4, group 2: W [2, 2, 1, 1]; channel 0 feeds outputs 0-1, channel 1 2-3.
  ConvTransposeParams p;
  p.in_channels = 2;
  p.out_channels = 4;
  p.groups = 2;
  p.in = p.out = {1, 1, 2};
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, -1, 2, 0.5f};
  EXPECT_EQ(run(p, x, w, nullptr), (std::vector<float>{1, 2, -1, -2, 6, 8, 1.5f, 2}));
}

std::vector<double> naive(const ConvTransposeParams& p, const std::vector<float>& x,
                          const std::vector<float>& w, const std::vector<float>& b,
                          std::vector<double>* tol) {
  const int64_t cg = p.in_channels / p.groups, mg = p.out_channels / p.groups;
  std::vector<double> y;
  tol->clear();
  // Input index feeding output o through tap k along one dim, or -1.
  auto source = [](int64_t o, int64_t k, int64_t s, int64_t d, int64_t pad, int64_t in) {
    const int64_t num = o + pad - k * d;
    if (num < 0 || num % s != 0 || num / s >= in) return int64_t{-1};
    return num / s;
  };
  for (int64_t oc = 0; oc < p.out_channels; ++oc)
    for (int64_t od = 0; od < p.out.d; ++od)
      for (int64_t oh = 0; oh < p.out.h; ++oh)
        for (int64_t ow = 0; ow < p.out.w; ++ow) {
          double acc = b[oc], abs_sum = std::fabs(b[oc]);
          for (int64_t icg = 0; icg < cg; ++icg)
            for (int64_t kd = 0; kd < p.kernel.d; ++kd)
              for (int64_t kh = 0; kh < p.kernel.h; ++kh)
                for (int64_t kw = 0; kw < p.kernel.w; ++kw) {
                  const int64_t id =
                      source(od, kd, p.stride.d, p.dilation.d, p.pad_begin.d, p.in.d);
                  const int64_t ih =
                      source(oh, kh, p.stride.h, p.dilation.h, p.pad_begin.h, p.in.h);
                  const int64_t iw =
                      source(ow, kw, p.stride.w, p.dilation.w, p.pad_begin.w, p.in.w);
                  if (id < 0 || ih < 0 || iw < 0) continue;
                  const int64_t ic = oc / mg * cg + icg;
                  const double xv = x[((ic * p.in.d + id) * p.in.h + ih) * p.in.w + iw];
                  const double wv =
                      w[(((ic * mg + oc % mg) * p.kernel.d + kd) * p.kernel.h + kh) * p.kernel.w +
                        kw];
                  acc += xv * wv;
                  abs_sum += std::fabs(xv * wv);
                }
          y.push_back(acc);
          tol->push_back(test::sum_tolerance(abs_sum, cg * p.kernel.size()));
        }
  return y;
}

TEST(RefConvTranspose, SweepAgainstNaiveGather) {
  Lcg rng(23);
  int checked = 0;
  for (int iter = 0; checked < 300 && iter < 5000; ++iter) {
    ConvTransposeParams p;
    const int64_t groups = rng.pick(std::vector<int64_t>{1, 1, 2, 3});
    p.groups = groups;
    p.in_channels = groups * rng.uniform(1, 3);
    p.out_channels = groups * rng.uniform(1, 3);
    const int spatial = rng.uniform(1, 3);
    auto ext = [&](int dim, int lo, int hi) { return dim > 3 - spatial ? rng.uniform(lo, hi) : 1; };
    p.in = {ext(1, 1, 5), ext(2, 1, 9), rng.uniform(1, 11)};
    p.kernel = {ext(1, 1, 3), ext(2, 1, 3), rng.uniform(1, 4)};
    p.stride = {ext(1, 1, 2), ext(2, 1, 3), rng.uniform(1, 3)};
    p.dilation = {ext(1, 1, 2), ext(2, 1, 2), rng.uniform(1, 2)};
    p.pad_begin = {ext(1, 0, 1), ext(2, 0, 2), rng.uniform(-1, 2)};
    auto natural = [](int64_t in, int64_t k, int64_t s, int64_t d) {
      return s * (in - 1) + d * (k - 1) + 1;
    };
    // Output extents from natural minus pads, plus output_padding-like slack.
    p.out = {
        natural(p.in.d, p.kernel.d, p.stride.d, p.dilation.d) - 2 * p.pad_begin.d,
        natural(p.in.h, p.kernel.h, p.stride.h, p.dilation.h) - 2 * p.pad_begin.h +
            rng.uniform(0, 1),
        natural(p.in.w, p.kernel.w, p.stride.w, p.dilation.w) - p.pad_begin.w - rng.uniform(0, 2)};
    if (p.out.d < 1 || p.out.h < 1 || p.out.w < 1) continue;
    const auto x = random_floats(p.in_channels * p.in.size(), 900 + iter);
    const auto w =
        random_floats(p.in_channels * (p.out_channels / groups) * p.kernel.size(), 1900 + iter);
    const auto b = random_floats(p.out_channels, 2900 + iter);
    std::vector<double> tol;
    const auto expected = naive(p, x, w, b, &tol);
    test::expect_close(run(p, x, w, &b), expected, tol,
                       fmt::format("C{} M{} g{} in {}x{}x{} k {}x{}x{} s {},{},{} pad {},{},{}",
                                   p.in_channels, p.out_channels, p.groups, p.in.d, p.in.h, p.in.w,
                                   p.kernel.d, p.kernel.h, p.kernel.w, p.stride.d, p.stride.h,
                                   p.stride.w, p.pad_begin.d, p.pad_begin.h, p.pad_begin.w));
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

}  // namespace
}  // namespace tern::kernels::ref
