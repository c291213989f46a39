// Reference pooling (kernels/reference/pool.h): hand-checked cases and sweeps against a
// naive loop over every window tap.
#include "kernels/reference/pool.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

using test::Lcg;
using test::random_floats;

PoolParams params_1d(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, int64_t out) {
  PoolParams p;
  p.in = {1, 1, in};
  p.kernel = {1, 1, k};
  p.stride = {1, 1, s};
  p.pad_begin = {0, 0, pb};
  p.pad_end = {0, 0, pe};
  p.out = {1, 1, out};
  return p;
}

std::vector<float> max_pool(const PoolParams& p, const std::vector<float>& x, int64_t planes = 1) {
  std::vector<float> y(planes * p.out.size(), -777.0f);
  f32_max_pool(p, x.data(), y.data(), 0, planes);
  return y;
}

std::vector<float> avg_pool(const PoolParams& p, const std::vector<float>& x, int64_t planes = 1) {
  std::vector<float> y(planes * p.out.size(), -777.0f);
  f32_average_pool(p, x.data(), y.data(), 0, planes);
  return y;
}

TEST(RefPool, HandMax2x2Stride2) {
  PoolParams p;
  p.in = {1, 4, 4};
  p.kernel = {1, 2, 2};
  p.stride = {1, 2, 2};
  p.out = {1, 2, 2};
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  EXPECT_EQ(max_pool(p, x), (std::vector<float>{6, 8, 14, 16}));
}

TEST(RefPool, HandMaxPaddingNeverWins) {
  // All inputs negative; zero padding must not appear in the max.
  PoolParams p;
  p.in = p.out = {1, 3, 3};
  p.kernel = {1, 3, 3};
  p.pad_begin = p.pad_end = {0, 1, 1};
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = -static_cast<float>(i + 1);
  EXPECT_EQ(max_pool(p, x), (std::vector<float>{-1, -1, -2, -1, -1, -2, -4, -4, -5}));
}

TEST(RefPool, HandAverageCountIncludePad) {
  PoolParams p;
  p.in = p.out = {1, 3, 3};
  p.kernel = {1, 3, 3};
  p.pad_begin = p.pad_end = {0, 1, 1};
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = static_cast<float>(i + 1);
  // Without the pad taps: corner (1+2+4+5)/4 = 3, edge (1+2+3+4+5+6)/6 = 3.5, centre 5.
  EXPECT_EQ(avg_pool(p, x), (std::vector<float>{3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f, 7}));
  // With them every divisor is 9: corner 12/9, edge 21/9, centre 45/9.
  p.count_include_pad = true;
  test::expect_near_all(
      avg_pool(p, x), {12 / 9.f, 21 / 9.f, 16 / 9.f, 3, 5, 33 / 9.f, 24 / 9.f, 39 / 9.f, 28 / 9.f},
      1e-6f);
}

TEST(RefPool, HandCeilModeWindowClippedAtPadEnd) {
  // in 4, k 3, s 2, pads 1 + 1, ceil_mode: 3 windows starting at -1, 1, 3; the last one
  // covers x3, the end pad and one position past it.
  const PoolParams p = params_1d(4, 3, 2, 1, 1, 3);
  const std::vector<float> x = {1, 2, 3, 4};
  EXPECT_EQ(max_pool(p, x), (std::vector<float>{2, 4, 4}));
  EXPECT_EQ(avg_pool(p, x), (std::vector<float>{1.5f, 3, 4}));
  PoolParams inc = p;
  inc.count_include_pad = true;  // divisors 3, 3, 2 (clipped at in + pad_end = 5)
  EXPECT_EQ(avg_pool(inc, x), (std::vector<float>{1, 3, 2}));
}

TEST(RefPool, HandMaxDilation) {
  PoolParams p = params_1d(5, 2, 1, 0, 0, 3);
  p.dilation = {1, 1, 2};
  EXPECT_EQ(max_pool(p, {1, 5, 2, 4, 3}), (std::vector<float>{2, 5, 3}));
}

TEST(RefPool, HandGlobal) {
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -6};
  std::vector<float> y(2);
  f32_global_average_pool(x.data(), y.data(), 4, 0, 2);
  EXPECT_EQ(y, (std::vector<float>{2.5f, -3}));
  f32_global_max_pool(x.data(), y.data(), 4, 0, 2);
  EXPECT_EQ(y, (std::vector<float>{4, -1}));
  // Only the requested planes are written.
  std::vector<float> z = {-777, -777};
  f32_global_max_pool(x.data(), z.data(), 4, 1, 2);
  EXPECT_EQ(z, (std::vector<float>{-777, -1}));
}

TEST(RefPool, GlobalAverageOfALargePlaneIsAccurate) {
  // 2^20 copies of 0.1f: a float accumulator would drift by ~1e-3 relative.
  const std::vector<float> x(1 << 20, 0.1f);
  float y = 0;
  f32_global_average_pool(x.data(), &y, static_cast<int64_t>(x.size()), 0, 1);
  EXPECT_FLOAT_EQ(y, 0.1f);
}

// Naive pooling over every tap of every window of every plane.
void naive(const PoolParams& p, const std::vector<float>& x, int64_t planes,
           std::vector<double>* max_out, std::vector<double>* avg_out) {
  max_out->clear();
  avg_out->clear();
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t od = 0; od < p.out.d; ++od)
      for (int64_t oh = 0; oh < p.out.h; ++oh)
        for (int64_t ow = 0; ow < p.out.w; ++ow) {
          double m = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t kd = 0; kd < p.kernel.d; ++kd)
            for (int64_t kh = 0; kh < p.kernel.h; ++kh)
              for (int64_t kw = 0; kw < p.kernel.w; ++kw) {
                const int64_t id = od * p.stride.d - p.pad_begin.d + kd * p.dilation.d;
                const int64_t ih = oh * p.stride.h - p.pad_begin.h + kh * p.dilation.h;
                const int64_t iw = ow * p.stride.w - p.pad_begin.w + kw * p.dilation.w;
                const bool in_padded = id < p.in.d + p.pad_end.d && ih < p.in.h + p.pad_end.h &&
                                       iw < p.in.w + p.pad_end.w;
                padded += in_padded ? 1 : 0;
                if (id < 0 || id >= p.in.d || ih < 0 || ih >= p.in.h || iw < 0 || iw >= p.in.w) {
                  continue;
                }
                const double v = x[((c * p.in.d + id) * p.in.h + ih) * p.in.w + iw];
                m = std::max(m, v);
                sum += v;
                ++inside;
              }
          max_out->push_back(m);
          // A window without a tap inside the input (dilation past the padding) gives
          // -inf for max and, by the kernel's contract, 0 for the mean.
          const int64_t count = p.count_include_pad ? padded : inside;
          avg_out->push_back(count == 0 ? 0.0 : sum / static_cast<double>(count));
        }
}

// Output extent along one dim as ONNX MaxPool-12 defines it (ceil_mode drops a last
// window that would start in the end padding).
int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                   bool ceil_mode) {
  const int64_t room = in + pb + pe - (d * (k - 1) + 1);
  if (room < 0) return 0;
  int64_t out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

TEST(RefPool, SweepAgainstNaive) {
  Lcg rng(31);
  int checked = 0;
  for (int iter = 0; checked < 400 && iter < 5000; ++iter) {
    PoolParams p;
    const int spatial = rng.uniform(1, 3);
    const bool ceil_mode = rng.uniform(0, 1) == 1;
    p.count_include_pad = rng.uniform(0, 1) == 1;
    const bool dilated = rng.uniform(0, 2) == 0;
    auto dim = [&](int which, int64_t* in, int64_t* k, int64_t* s, int64_t* dl, int64_t* pb,
                   int64_t* pe) {
      if (which <= 3 - spatial) return;
      *in = rng.uniform(1, which == 1 ? 6 : 13);
      *k = rng.uniform(1, 3);
      *s = rng.uniform(1, 3);
      *dl = dilated ? rng.uniform(1, 2) : 1;
      // Pads smaller than the kernel (as ONNX Runtime and PyTorch require).
      *pb = rng.uniform(0, static_cast<int>(*k) - 1);
      *pe = rng.uniform(0, static_cast<int>(*k) - 1);
    };
    dim(1, &p.in.d, &p.kernel.d, &p.stride.d, &p.dilation.d, &p.pad_begin.d, &p.pad_end.d);
    dim(2, &p.in.h, &p.kernel.h, &p.stride.h, &p.dilation.h, &p.pad_begin.h, &p.pad_end.h);
    dim(3, &p.in.w, &p.kernel.w, &p.stride.w, &p.dilation.w, &p.pad_begin.w, &p.pad_end.w);
    p.out = {out_extent(p.in.d, p.kernel.d, p.stride.d, p.dilation.d, p.pad_begin.d, p.pad_end.d,
                        ceil_mode),
             out_extent(p.in.h, p.kernel.h, p.stride.h, p.dilation.h, p.pad_begin.h, p.pad_end.h,
                        ceil_mode),
             out_extent(p.in.w, p.kernel.w, p.stride.w, p.dilation.w, p.pad_begin.w, p.pad_end.w,
                        ceil_mode)};
    if (p.out.size() == 0) continue;
    const int64_t planes = rng.uniform(1, 3);
    const auto x = random_floats(planes * p.in.size(), 7000 + iter);
    std::vector<double> expected_max, expected_avg;
    naive(p, x, planes, &expected_max, &expected_avg);
    const std::string what = fmt::format(
        "in {}x{}x{} k {}x{}x{} s {},{},{} d {},{},{} pads {},{},{} / {},{},{} ceil {} inc {}",
        p.in.d, p.in.h, p.in.w, p.kernel.d, p.kernel.h, p.kernel.w, p.stride.d, p.stride.h,
        p.stride.w, p.dilation.d, p.dilation.h, p.dilation.w, p.pad_begin.d, p.pad_begin.h,
        p.pad_begin.w, p.pad_end.d, p.pad_end.h, p.pad_end.w, ceil_mode, p.count_include_pad);
    // Max is exact; the mean of n values in [-1, 1] rounds within (n + 1) * 2^-24.
    test::expect_close(max_pool(p, x, planes), expected_max,
                       std::vector<double>(expected_max.size(), 0.0), "max " + what);
    test::expect_close(
        avg_pool(p, x, planes), expected_avg,
        std::vector<double>(expected_avg.size(), test::sum_tolerance(1.0, p.kernel.size())),
        "avg " + what);
    ++checked;
  }
  EXPECT_EQ(checked, 400);
}

}  // namespace
}  // namespace tern::kernels::ref
