// The SIMD epilogue's activations (kernels/simd/epilogue-inl.h) bit for bit against the
// reference's (ref::activate) on the values where a vector form can drift from the
// reference's compares: NaN, both zeros, the infinities, denormals, and values equal to
// and next to Clip's bounds. On x86, Relu and Clip run as max and min, whose operand order
// decides NaN and signed zeros; the scalar target's Max and Min differ there. Through
// f32_gemm (every dispatchable target, the scalar one included) and f32_direct_conv
// (every target with a fast kernel), each value reaching the activation unchanged:
// -0 + 1 * v (the bias -0 keeps v's zero sign). HardSigmoid, HardSwish and the affine map
// after the activation too: their products and sums round twice in the kernels and in the
// reference alike (tern_kernels builds with -ffp-contract=off; the expected values come
// from the out-of-line ref::f32_epilogue, built there, not from an inline call here, which
// an arm64 compiler would contract into one FMA).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/direct/direct_conv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/reference/epilogue.h"
#include "kernels/reference/gemm.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using kernels::ref::Epilogue;

std::vector<float> special_values() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          inf,
                          -inf,
                          0.0f,
                          -0.0f,
                          1e-40f,
                          -1e-40f,
                          0.5f,
                          7.0f};
  // Clip's bounds below (-1, 2; 0, 6; -0, 6), HardSwish's clamp points (-3, 3) and their
  // neighbours.
  for (float b : {-3.0f, 3.0f, -1.0f, 2.0f, 6.0f}) {
    v.push_back(b);
    v.push_back(std::nextafter(b, -inf));
    v.push_back(std::nextafter(b, inf));
  }
  return v;
}

std::vector<Epilogue> epilogues() {
  std::vector<Epilogue> out;
  Epilogue e;
  e.activation = Activation::kRelu;
  out.push_back(e);
  e.activation = Activation::kClip;
  for (const auto& [lo, hi] : {std::pair{-1.0f, 2.0f}, {0.0f, 6.0f}, {-0.0f, 6.0f}}) {
    e.alpha = lo;
    e.beta = hi;
    out.push_back(e);
  }
  e = {};
  e.activation = Activation::kHardSigmoid;
  e.alpha = 0.2f;
  e.beta = 0.5f;
  out.push_back(e);
  e.activation = Activation::kHardSwish;
  out.push_back(e);
  // The affine map after the activation: zero shifts of either sign (zero signs, NaN)
  // and ones that round (1.1 and 0.3 are not exact in binary).
  for (const auto& [act, scale, shift] : {std::tuple{Activation::kRelu, 2.0f, -0.0f},
                                          {Activation::kNone, -0.5f, 0.0f},
                                          {Activation::kClip, -1.0f, -0.0f},
                                          {Activation::kNone, 1.1f, 0.3f},
                                          {Activation::kHardSwish, -1.1f, 0.3f}}) {
    e = {};
    e.activation = act;
    e.alpha = -1.0f;
    e.beta = 2.0f;
    e.affine = true;
    e.scale = scale;
    e.shift = shift;
    out.push_back(e);
  }
  return out;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

void expect_activated(const Epilogue& e, const std::vector<float>& x, const float* y,
                      int64_t stride, const char* kernel) {
  for (size_t i = 0; i < x.size(); ++i) {
    float want = 0.0f;
    kernels::ref::f32_epilogue(e, 1, &x[i], 1, nullptr, 0, nullptr, 0, &want, 1);
    EXPECT_TRUE(same_bits(y[i * stride], want))
        << kernel << ", activation " << static_cast<int>(e.activation) << " [" << e.alpha << ", "
        << e.beta << "]" << (e.affine ? " affine" : "") << " of " << x[i] << ": got "
        << y[i * stride] << ", want " << want;
  }
}

TEST(SimdEpilogue, GemmActivationsMatchTheReferenceBitForBit) {
  test::for_each_simd_target([](const std::string&, int) {
    const std::vector<float> x = special_values();
    const int64_t n = static_cast<int64_t>(x.size());
    kernels::ref::GemmParams p;
    p.m = 1;
    p.k = 1;
    p.n = n;
    p.lda = 1;
    p.ldb = n;
    p.ldy = n;
    const float a = 1.0f, bias = -0.0f;
    for (const Epilogue& e : epilogues()) {
      std::vector<float> y(n, 12345.0f);
      kernels::GemmOutput out;
      out.e = &e;
      out.row_bias = &bias;
      kernels::f32_gemm(p, &a, x.data(), y.data(), out, 0, kernels::gemm_work(p).items());
      expect_activated(e, x, y.data(), 1, "gemm");
    }
  });
}

// A 1x1 conv from `in` to `out` channels on a 1 x n image, NCHWc with blocks of c.
kernels::ref::FusedConvParams pointwise_row(int64_t in, int64_t out, int64_t n, int c) {
  kernels::ref::FusedConvParams p;
  p.conv.in_channels = in;
  p.conv.out_channels = out;
  p.conv.groups = 1;
  p.conv.in = {1, 1, n};
  p.conv.out = {1, 1, n};
  p.conv.kernel = {1, 1, 1};
  p.conv.stride = {1, 1, 1};
  p.conv.dilation = {1, 1, 1};
  p.conv.pad_begin = {0, 0, 0};
  p.x_block = p.y_block = p.w_block = c;
  return p;
}

TEST(SimdEpilogue, DirectConvActivationsMatchTheReferenceBitForBit) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;  // no fast conv kernel there
    const std::vector<float> x = special_values();
    const int64_t n = static_cast<int64_t>(x.size());
    // A pointwise conv 1 -> c channels on a 1 x n image, every weight 1, every bias -0:
    // each output lane is the input pixel.
    kernels::ref::FusedConvParams p = pointwise_row(1, c, n, c);
    ASSERT_TRUE(kernels::direct_conv_supported(p));
    std::vector<float> xs(n * c, 0.0f), w(c, 1.0f), bias(c, -0.0f);
    for (int64_t i = 0; i < n; ++i) xs[i * c] = x[i];
    for (const Epilogue& e : epilogues()) {
      p.epilogue = e;
      std::vector<float> y(n * c, 12345.0f);
      kernels::f32_direct_conv(p, xs.data(), w.data(), bias.data(), nullptr, y.data(), 0,
                               kernels::direct_conv_work(p).items());
      for (int64_t lane = 0; lane < c; ++lane) {
        expect_activated(e, x, y.data() + lane, c, "direct conv");
      }
    }
  });
}

// The stores of the pointwise tiles (PointwiseTile: whole tiles of one cache pass), which
// keep some epilogues in registers that the other tiles store through a buffer: 2 input
// channels (the value, then -0: x * 1 + -0 * 1 = x, any x), 1 to 3 output blocks, the last
// one full, more than half full or at most half full (a half-width block), its padded
// lanes written +0. The special values repeat to a multiple of 12 pixels, so that with
// the segments of 12 every pixel is in a whole tile on every target.
TEST(SimdEpilogue, PointwiseTileActivationsMatchTheReferenceBitForBit) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;  // no fast conv kernel there
    const std::vector<float> values = special_values();
    std::vector<float> x = values;
    while (x.size() % 12 != 0) x.push_back(values[x.size() % values.size()]);
    const int64_t n = static_cast<int64_t>(x.size());
    for (const int64_t m :
         {int64_t{c}, int64_t{2} * c, int64_t{c} + 1, int64_t{c} + c / 2 + 1, int64_t{2} * c + 3}) {
      SCOPED_TRACE("output channels " + std::to_string(m));
      kernels::ref::FusedConvParams p = pointwise_row(2, m, n, c);
      ASSERT_TRUE(kernels::direct_conv_supported(p));
      const int64_t blocks = (m + c - 1) / c;
      std::vector<float> xs(n * c, 0.0f), w(blocks * 2 * c, 0.0f), bias(m, -0.0f);
      for (int64_t i = 0; i < n; ++i) {
        xs[i * c] = x[i];
        xs[i * c + 1] = -0.0f;
      }
      // Packed [block][input channel][lane]: weight 1 for every real output channel.
      for (int64_t oc = 0; oc < m; ++oc) {
        for (int64_t ic = 0; ic < 2; ++ic) w[(oc / c * 2 + ic) * c + oc % c] = 1.0f;
      }
      for (const Epilogue& e : epilogues()) {
        p.epilogue = e;
        std::vector<float> y(blocks * n * c, 12345.0f);
        kernels::f32_direct_conv(p, xs.data(), w.data(), bias.data(), nullptr, y.data(), 0,
                                 kernels::direct_conv_work(p).items());
        for (int64_t oc = 0; oc < blocks * c; ++oc) {
          const float* yo = y.data() + (oc / c * n) * c + oc % c;
          if (oc < m) {
            expect_activated(e, x, yo, c, "pointwise tile");
            continue;
          }
          for (int64_t i = 0; i < n; ++i) {
            EXPECT_TRUE(same_bits(yo[i * c], 0.0f)) << "padded lane " << oc << " of pixel " << i;
          }
        }
      }
    }
  });
}

}  // namespace
}  // namespace tern
