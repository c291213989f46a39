// Reference direct convolution (kernels/reference/conv.h): hand-checked cases and a sweep
// against a naive loop over every output and every tap.
#include "kernels/reference/conv.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

using test::Lcg;
using test::random_floats;

ConvParams params_2d(int64_t c, int64_t m, int64_t groups, int64_t h, int64_t w, int64_t k,
                     int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end) {
  ConvParams p;
  p.in_channels = c;
  p.out_channels = m;
  p.groups = groups;
  p.in = {1, h, w};
  p.kernel = {1, k, k};
  p.stride = {1, stride, stride};
  p.dilation = {1, dilation, dilation};
  p.pad_begin = {0, pad_begin, pad_begin};
  const int64_t span = dilation * (k - 1) + 1;
  p.out = {1, (h + pad_begin + pad_end - span) / stride + 1,
           (w + pad_begin + pad_end - span) / stride + 1};
  return p;
}

std::vector<float> run(const ConvParams& p, const std::vector<float>& x,
                       const std::vector<float>& w, const std::vector<float>* bias) {
  std::vector<float> y(p.out_channels * p.out.size(), -777.0f);
  f32_conv_nchw(p, x.data(), w.data(), bias ? bias->data() : nullptr, y.data(), 0, p.out_channels);
  return y;
}

TEST(RefConv, Hand2dNoPad) {
  // x = 1..9 (3x3), w = [[1, 2], [3, 4]]: y(0,0) = 1*1 + 2*2 + 4*3 + 5*4 = 37, ...
  const ConvParams p = params_2d(1, 1, 1, 3, 3, 2, 1, 1, 0, 0);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4}, b = {0.5f};
  EXPECT_EQ(run(p, x, w, nullptr), (std::vector<float>{37, 47, 67, 77}));
  EXPECT_EQ(run(p, x, w, &b), (std::vector<float>{37.5f, 47.5f, 67.5f, 77.5f}));
}

TEST(RefConv, Hand2dPadStride2) {
  // 3x3 ones, pad 1, stride 2 on 1..9: each output sums the 2x2 corner block it covers.
  const ConvParams p = params_2d(1, 1, 1, 3, 3, 3, 2, 1, 1, 1);
  ASSERT_EQ(p.out.h, 2);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w(9, 1.0f);
  EXPECT_EQ(run(p, x, w, nullptr), (std::vector<float>{12, 16, 24, 28}));
}

TEST(RefConv, Hand1dDilation) {
  // x = [1 2 3 4 5], w = [1, -1] with dilation 2: y[i] = x[i] - x[i + 2] = -2.
  ConvParams p;
  p.in_channels = p.out_channels = 1;
  p.in = {1, 1, 5};
  p.kernel = {1, 1, 2};
  p.dilation = {1, 1, 2};
  p.out = {1, 1, 3};
  EXPECT_EQ(run(p, {1, 2, 3, 4, 5}, {1, -1}, nullptr), (std::vector<float>{-2, -2, -2}));
}

TEST(RefConv, HandGroupsWithBias) {
  // Two groups of one channel: y0 = 2 * x0, y1 = 10 - x1.
  const ConvParams p = params_2d(2, 2, 2, 2, 2, 1, 1, 1, 0, 0);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, w = {2, -1}, b = {0, 10};
  EXPECT_EQ(run(p, x, w, &b), (std::vector<float>{2, 4, 6, 8, 5, 4, 3, 2}));
}

TEST(RefConv, HandChannelBlockAndRemainder) {
  // 5 input channels: one block of 4 and a remainder of 1. y = sum_c (c+1) * w_c.
  const ConvParams p = params_2d(5, 1, 1, 1, 1, 1, 1, 1, 0, 0);
  EXPECT_EQ(run(p, {1, 2, 3, 4, 5}, {1, 10, 100, 1000, 10000}, nullptr),
            (std::vector<float>{54321}));
}

TEST(RefConv, WritesOnlyTheRequestedOutputChannels) {
  const ConvParams p = params_2d(3, 4, 1, 5, 5, 3, 1, 1, 1, 1);
  const auto x = random_floats(3 * 25, 1), w = random_floats(4 * 3 * 9, 2);
  std::vector<float> y(4 * 25, -777.0f);
  f32_conv_nchw(p, x.data(), w.data(), nullptr, y.data(), 1, 3);
  const std::vector<float> full = run(p, x, w, nullptr);
  for (int i = 0; i < 100; ++i) {
    if (i < 25 || i >= 75) {
      EXPECT_EQ(y[i], -777.0f) << i;
    } else {
      EXPECT_EQ(y[i], full[i]) << i;
    }
  }
}

// Naive convolution: for every output, the sum over every input channel of its group and
// every tap, in double; also returns a tolerance per output from the sum's arithmetic.
std::vector<double> naive_conv(const ConvParams& p, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& b,
                               std::vector<double>* tol) {
  const int64_t cg = p.in_channels / p.groups, mg = p.out_channels / p.groups;
  std::vector<double> y;
  tol->clear();
  for (int64_t oc = 0; oc < p.out_channels; ++oc)
    for (int64_t od = 0; od < p.out.d; ++od)
      for (int64_t oh = 0; oh < p.out.h; ++oh)
        for (int64_t ow = 0; ow < p.out.w; ++ow) {
          double acc = b[oc], abs_sum = std::fabs(b[oc]);
          for (int64_t icg = 0; icg < cg; ++icg)
            for (int64_t kd = 0; kd < p.kernel.d; ++kd)
              for (int64_t kh = 0; kh < p.kernel.h; ++kh)
                for (int64_t kw = 0; kw < p.kernel.w; ++kw) {
                  const int64_t id = od * p.stride.d - p.pad_begin.d + kd * p.dilation.d;
                  const int64_t ih = oh * p.stride.h - p.pad_begin.h + kh * p.dilation.h;
                  const int64_t iw = ow * p.stride.w - p.pad_begin.w + kw * p.dilation.w;
                  if (id < 0 || id >= p.in.d || ih < 0 || ih >= p.in.h || iw < 0 || iw >= p.in.w) {
                    continue;
                  }
                  const int64_t ic = oc / mg * cg + icg;
                  const double xv = x[((ic * p.in.d + id) * p.in.h + ih) * p.in.w + iw];
                  const double wv =
                      w[(((oc * cg + icg) * p.kernel.d + kd) * p.kernel.h + kh) * p.kernel.w + kw];
                  acc += xv * wv;
                  abs_sum += std::fabs(xv * wv);
                }
          y.push_back(acc);
          tol->push_back(test::sum_tolerance(abs_sum, cg * p.kernel.size()));
        }
  return y;
}

std::string describe(const ConvParams& p) {
  return fmt::format(
      "C{} M{} g{} in {}x{}x{} k {}x{}x{} s {},{},{} d {},{},{} pad {},{},{} out {}x{}x{}",
      p.in_channels, p.out_channels, p.groups, p.in.d, p.in.h, p.in.w, p.kernel.d, p.kernel.h,
      p.kernel.w, p.stride.d, p.stride.h, p.stride.w, p.dilation.d, p.dilation.h, p.dilation.w,
      p.pad_begin.d, p.pad_begin.h, p.pad_begin.w, p.out.d, p.out.h, p.out.w);
}

void check_against_naive(const ConvParams& p, uint32_t seed) {
  const int64_t cg = p.in_channels / p.groups;
  const auto x = random_floats(p.in_channels * p.in.size(), seed);
  const auto w = random_floats(p.out_channels * cg * p.kernel.size(), seed + 1);
  const auto b = random_floats(p.out_channels, seed + 2);
  std::vector<double> tol;
  const std::vector<double> expected = naive_conv(p, x, w, b, &tol);
  test::expect_close(run(p, x, w, &b), expected, tol, describe(p));
}

// Output extent along one dim, or 0 when the window does not fit.
int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  const int64_t room = in + pb + pe - (d * (k - 1) + 1);
  return room < 0 ? 0 : room / s + 1;
}

TEST(RefConv, Sweep2dAgainstNaive) {
  Lcg rng(7);
  const std::vector<int64_t> channels = {1, 3, 5, 17};
  int checked = 0;
  for (int iter = 0; iter < 600; ++iter) {
    ConvParams p;
    const int64_t c = rng.pick(channels), m = rng.pick(channels);
    const int kind = rng.uniform(0, 2);  // dense, grouped, depthwise
    if (kind == 2) {
      p.in_channels = p.out_channels = p.groups = c;
    } else if (kind == 1 && c % 2 == 1 && c > 1) {
      // odd channel counts: groups of 1 input channel and 2 outputs each ("multiplier 2")
      p.in_channels = c;
      p.out_channels = 2 * c;
      p.groups = c;
    } else {
      p.in_channels = c;
      p.out_channels = m;
    }
    p.in = {1, rng.uniform(1, 13), rng.uniform(1, 13)};
    p.kernel = {1, rng.uniform(1, 3), rng.uniform(1, 3)};
    if (rng.uniform(0, 9) == 0) p.kernel.w = 5;
    p.stride = {1, rng.uniform(1, 2), rng.uniform(1, 2)};
    p.dilation = {1, rng.uniform(1, 2), rng.uniform(1, 2)};
    p.pad_begin = {0, rng.uniform(0, 2), rng.uniform(0, 2)};
    const int64_t pe_h = rng.uniform(0, 2), pe_w = rng.uniform(0, 2);
    p.out = {1, out_extent(p.in.h, p.kernel.h, p.stride.h, p.dilation.h, p.pad_begin.h, pe_h),
             out_extent(p.in.w, p.kernel.w, p.stride.w, p.dilation.w, p.pad_begin.w, pe_w)};
    if (p.out.h < 1 || p.out.w < 1) continue;
    check_against_naive(p, 100 + iter);
    ++checked;
  }
  EXPECT_GT(checked, 400);
}

TEST(RefConv, Sweep1dAnd3dAgainstNaive) {
  Lcg rng(11);
  int checked = 0;
  for (int iter = 0; iter < 200; ++iter) {
    ConvParams p;
    p.in_channels = rng.pick(std::vector<int64_t>{1, 3, 5});
    p.out_channels = rng.pick(std::vector<int64_t>{1, 2, 5});
    const bool three_d = iter % 2 == 1;
    p.in = {three_d ? rng.uniform(1, 7) : 1, three_d ? rng.uniform(1, 7) : 1, rng.uniform(1, 13)};
    p.kernel = {three_d ? rng.uniform(1, 3) : 1, three_d ? rng.uniform(1, 3) : 1,
                rng.uniform(1, 3)};
    p.stride = {rng.uniform(1, 2), rng.uniform(1, 2), rng.uniform(1, 2)};
    p.dilation = {rng.uniform(1, 2), rng.uniform(1, 2), rng.uniform(1, 2)};
    p.pad_begin = {three_d ? rng.uniform(0, 2) : 0, three_d ? rng.uniform(0, 2) : 0,
                   rng.uniform(0, 2)};
    p.out = {out_extent(p.in.d, p.kernel.d, p.stride.d, p.dilation.d, p.pad_begin.d, 1),
             out_extent(p.in.h, p.kernel.h, p.stride.h, p.dilation.h, p.pad_begin.h, 0),
             out_extent(p.in.w, p.kernel.w, p.stride.w, p.dilation.w, p.pad_begin.w, 2)};
    if (p.out.size() < 1) continue;
    check_against_naive(p, 5000 + iter);
    ++checked;
  }
  EXPECT_GT(checked, 120);
}

TEST(RefConv, LargeChannelCountsAndWideRows) {
  // Rows longer than any vector width, channel counts around the block of 4.
  for (int64_t c : {4, 7, 8, 9, 33}) {
    check_against_naive(params_2d(c, 3, 1, 9, 37, 3, 1, 1, 1, 1), 300 + c);
    check_against_naive(params_2d(c, 2, 1, 11, 40, 3, 2, 1, 1, 0), 400 + c);
  }
}

}  // namespace
}  // namespace tern::kernels::ref
