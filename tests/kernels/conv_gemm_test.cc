// The implicit-GEMM convolution (kernels/gemm: f32_conv_gemm, stride 1, NCHW in and out,
// OIHW weights) against the reference fused convolution, on every SIMD target this
// machine can dispatch to: H and W over 1..33 (rows of a partial vector, of whole ones,
// and tiles spanning two rows), pads 0..2 and asymmetric ones, dilation 2, kernel sizes
// 1, 3, 5 and 7, channel counts across the register tile's rows and its chunks of 8
// tiles, every activation, the residual before and after it, with and without bias, and
// the work items split in three pieces as threads would split them.
#include <gtest/gtest.h>

#include <array>

#include "kernels/gemm/gemm.h"
#include "kernels/nchwc_conv_test_util.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using kernels::ref::FusedConvParams;
using test::NchwcConvCase;

using test::kActivations;

void run_conv_gemm(NchwcConvCase t, int64_t c, uint32_t seed) {
  t.stride = 1;
  t.x_block = t.y_block = 1;
  const FusedConvParams p = test::oihw_conv_params(t, c);
  ASSERT_TRUE(kernels::conv_gemm_supported(p)) << t.str();
  test::check_oihw_conv(t, c, kernels::conv_gemm_work(p).items(), kernels::f32_conv_gemm, seed);
}

TEST(ConvGemm, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string&, int c) {
    int i = 0;
    for (int64_t h = 1; h <= 33; ++h) {
      for (int64_t pad = 0; pad <= 2; ++pad, ++i) {
        NchwcConvCase t;
        t.h = h;
        t.w = 1 + (h * 13 + pad * 5) % 33;
        t.k = std::array<int64_t, 6>{3, 1, 3, 5, 3, 7}[i % 6];
        t.dilation = i % 7 == 3 ? 2 : 1;
        t.pad = pad;
        if (i % 10 == 7) t.pad_end = pad + 1;  // asymmetric: ONNX pads [p, p, p+1, p+1]
        if (i % 10 == 2) t.pad_end = 0;
        if (!t.fits()) t.k = 1, t.dilation = 1;
        t.c_in = std::array<int64_t, 5>{5, c, 2 * c + 3, 1, 37}[i % 5];
        t.c_out = std::array<int64_t, 7>{7, 1, 24, 6, 53, 3, 49}[i % 7];
        t.activation = kActivations[i / 2 % 8];
        t.residual = i % 3 == 1;
        t.residual_before = i / 5 % 2 == 0;
        t.bias = i % 11 != 4;
        t.affine = i % 13 % 4 == 1;
        run_conv_gemm(t, c, 100 + i);
      }
    }
  });
}

// Layer shapes of ppocr's head (96 -> 24, 3x3, NCHW after its SE blocks) at reduced and
// full width, and bands of several rows.
TEST(ConvGemm, MatchesReferenceOnModelShapes) {
  test::for_each_simd_target([](const std::string&, int c) {
    struct Shape {
      int64_t c_in, c_out, h, w, k, pad;
    };
    // The last: 256 channels of 70-pixel rows pass the 256 KiB band buffer at 2 rows, so
    // its bands are 1 row.
    const Shape shapes[] = {{96, 24, 8, 12, 3, 1}, {96, 24, 16, 24, 3, 1}, {96, 24, 5, 96, 3, 1},
                            {24, 96, 40, 7, 3, 1}, {64, 16, 33, 17, 3, 1}, {32, 8, 3, 200, 5, 2},
                            {256, 8, 5, 70, 3, 1}};
    int i = 0;
    for (const Shape& s : shapes) {
      NchwcConvCase t;
      t.c_in = s.c_in;
      t.c_out = s.c_out;
      t.h = s.h;
      t.w = s.w;
      t.k = s.k;
      t.pad = s.pad;
      t.activation = i % 2 ? Activation::kRelu : Activation::kHardSwish;
      t.residual = i % 3 == 1;
      run_conv_gemm(t, c, 500 + i);
      ++i;
    }
  });
}

TEST(ConvGemm, SupportRulesAndWork) {
  NchwcConvCase t;
  t.c_in = 8;
  t.c_out = 100;
  t.h = 64;
  t.w = 20;
  t.x_block = t.y_block = 1;
  test::for_each_simd_target([&](const std::string&, int c) {
    FusedConvParams p = test::oihw_conv_params(t, c);
    EXPECT_TRUE(kernels::conv_gemm_supported(p));
    // Output channels in chunks of 8 register tiles (48 or 32 rows), rows in 16 bands.
    const kernels::WorkGrid g = kernels::conv_gemm_work(p);
    EXPECT_EQ(g.inner, 16);
    EXPECT_GE(g.outer, 2);
    // 256 channels of 70-pixel rows: bands of 1 row, more than kConvGemmBandsPerImage.
    FusedConvParams wide = p;
    wide.conv.in_channels = 256;
    wide.conv.in.w = wide.conv.out.w = 70;
    wide.conv.out.h = 64;
    EXPECT_EQ(kernels::conv_gemm_work(wide).inner, 64);
    FusedConvParams q = p;
    q.conv.stride.w = 2;
    EXPECT_FALSE(kernels::conv_gemm_supported(q));
    q = p;
    q.conv.groups = 2;
    EXPECT_FALSE(kernels::conv_gemm_supported(q));
    q = p;
    q.x_block = c;
    EXPECT_FALSE(kernels::conv_gemm_supported(q));
    q = p;
    q.w_block = c;
    EXPECT_FALSE(kernels::conv_gemm_supported(q));
    q = p;
    q.y_nhwc = true;
    EXPECT_FALSE(kernels::conv_gemm_supported(q));
    q = p;  // a 3-D conv of depth 1 padded in depth reads zeros there
    q.conv.pad_begin.d = 1;
    EXPECT_FALSE(kernels::conv_gemm_supported(q));
  });
}

}  // namespace
}  // namespace tern
