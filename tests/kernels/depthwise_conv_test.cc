// The NCHWc depthwise convolution (kernels/depthwise) against the reference fused
// convolution, on every SIMD target this machine can dispatch to: H and W over 1..33,
// pads 0..2, strides 1 and 2 (3 and 4 on a few shapes), 3x3 and 5x5 (and 7x7, dilation 2), channel
// counts that are not multiples of the block (the padded input lanes hold NaN: read, and masked to
// 0), NCHW output, every activation, residual before/after, with and without bias.
#include "kernels/depthwise/depthwise_conv.h"

#include <gtest/gtest.h>

#include <array>

#include "kernels/nchwc_conv_test_util.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using test::NchwcConvCase;

void run_depthwise(const NchwcConvCase& t, int64_t c, uint32_t seed) {
  const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
  ASSERT_TRUE(kernels::depthwise_conv_supported(p)) << t.str();
  test::check_nchwc_conv(t, c, kernels::depthwise_conv_work(p).items(), kernels::f32_depthwise_conv,
                         seed);
}

TEST(DepthwiseConv, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;  // 1 lane: the reference runs there
    constexpr Activation kActivations[] = {Activation::kRelu,      Activation::kNone,
                                           Activation::kClip,      Activation::kHardSwish,
                                           Activation::kLeakyRelu, Activation::kSigmoid};
    int i = 0;
    for (int64_t h = 1; h <= 33; ++h) {
      for (int64_t pad = 0; pad <= 2; ++pad) {
        for (int64_t stride = 1; stride <= 2; ++stride, ++i) {
          NchwcConvCase t;
          t.h = h;
          t.w = 1 + (h * 7 + pad * 11 + stride * 5) % 33;
          t.k = std::array<int64_t, 4>{3, 5, 3, 7}[i % 4];
          t.dilation = i % 5 == 2 ? 2 : 1;
          t.stride = stride;
          t.pad = pad;
          if (i % 8 == 3) t.pad_end = pad + 1;
          if (!t.fits()) t.k = 1, t.dilation = 1;
          t.c_in = t.c_out = t.groups = std::array<int64_t, 5>{c, 5, 2 * c + 3, 3 * c, 1}[i % 5];
          t.y_block = i % 6 == 4;  // NCHW output, with and without a residual
          // Periods chosen so that the residual cases (i % 3 == 1) on NCHWc outputs meet
          // every activation with the residual both before and after it.
          t.activation = kActivations[i / 7 % 6];
          t.residual = i % 3 == 1;
          t.residual_before = i / 5 % 2 == 0;
          t.bias = i % 7 != 3;
          t.affine = i % 13 % 4 == 1;
          run_depthwise(t, c, 300 + i);
        }
      }
    }
  });
}

// Rows longer than a segment (8 tiles) and MobileNet-like shapes.
TEST(DepthwiseConv, MatchesReferenceOnWideRows) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    int i = 0;
    for (int64_t w : {97, 150, 301}) {
      for (int64_t stride : {1, 2}) {
        NchwcConvCase t;
        t.c_in = t.c_out = t.groups = 2 * c + 5;
        t.h = 4;
        t.w = w;
        t.k = 3 + 2 * (i % 2);
        t.stride = stride;
        t.pad = t.k / 2;
        t.activation = Activation::kClip;
        t.residual = i % 2 == 0;
        run_depthwise(t, c, 700 + i++);
      }
    }
  });
}

// The sliding-window tiles at strides 1 and 2: 3x3 and 5x5, every tile width (6 to 16
// pixels on AVX-512 and NEON, rows of 6 to 40), pads 0 to K - 1 on the left with 0 to K - 1
// on the right (ONNX pads [p, p, q, q]), so that the first or the last one to four input
// columns of a tile fall outside the row or none do; 5x5 tiles also run the image's top
// and bottom rows (K - 1 - p of their kernel rows outside the input at pad p).
TEST(DepthwiseConv, SlidingWindowAtEveryWidthAndPad) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    int i = 0;
    for (int64_t k : {3, 5}) {
      for (int64_t stride : {1, 2}) {
        for (int64_t pad = 0; pad < k; ++pad) {
          for (int64_t pad_end = 0; pad_end < k; ++pad_end) {
            for (int64_t w = 6 * stride + k - 3; w <= 40; w += 5 + pad_end) {
              NchwcConvCase t;
              t.c_in = t.c_out = t.groups = i % 2 ? c : c + 3;
              t.h = k + i % 3;
              t.w = w;
              t.k = k;
              t.stride = stride;
              t.pad = pad;
              t.pad_end = pad_end;
              t.activation = Activation::kRelu;
              t.residual = i % 5 == 1;
              t.bias = i % 7 != 3;
              ASSERT_TRUE(t.fits()) << t.str();
              run_depthwise(t, c, 900 + i++);
            }
          }
        }
      }
    }
  });
}

// Strides 3 and 4, which take the kernel's general tiles (run-time stride): borders,
// padding, 3x3 and 5x5, rows of one to two tiles.
TEST(DepthwiseConv, MatchesReferenceAtLargerStrides) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    int i = 0;
    for (int64_t stride : {3, 4}) {
      for (int64_t w : {1, 7, 26, 40}) {
        NchwcConvCase t;
        t.c_in = t.c_out = t.groups = i % 2 ? c : c + 3;
        t.h = 3 + w % 9;
        t.w = w;
        t.k = i % 3 == 2 ? 5 : 3;
        t.stride = stride;
        t.pad = i % 3;
        if (!t.fits()) t.k = 1;
        t.activation = Activation::kRelu;
        t.residual = i % 4 == 1;
        run_depthwise(t, c, 800 + i++);
      }
    }
  });
}

// x_plane and y_plane (the bands of tern.ConvChain): blocks farther apart than the
// image, NaN in between; stride 1 and 2, padding, NCHW output, a residual.
TEST(DepthwiseConv, BlocksFartherApartThanTheImage) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    int i = 0;
    for (int64_t stride : {1, 2}) {
      for (bool nchw : {false, true}) {
        NchwcConvCase t = test::layer_case(2 * c + 3, 2 * c + 3, 7, 13);
        t.groups = t.c_in;
        t.stride = stride;
        t.y_block = nchw;
        t.residual = i % 2 == 1;
        const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
        test::check_nchwc_conv(t, c, kernels::depthwise_conv_work(p).items(),
                               test::with_plane_gaps(kernels::f32_depthwise_conv, 5), 900 + i);
        ++i;
      }
    }
  });
}

TEST(DepthwiseConv, SupportRules) {
  test::for_each_simd_target([](const std::string& target, int c) {
    kernels::ref::FusedConvParams p;
    p.conv.in_channels = p.conv.out_channels = p.conv.groups = 8;
    p.conv.kernel = {1, 3, 3};
    p.x_block = p.y_block = p.w_block = c;
    EXPECT_EQ(kernels::depthwise_conv_supported(p), target != "SCALAR");
    p.x_block = 1;  // a plain input: the direct kernel's job
    EXPECT_FALSE(kernels::depthwise_conv_supported(p));
    p.x_block = c;
    p.y_block = 1;
    p.y_nhwc = true;  // NHWC output (a fused Transpose): the direct kernel's job
    EXPECT_FALSE(kernels::depthwise_conv_supported(p));
    p.y_block = c;
    p.y_nhwc = false;
    p.conv.out_channels = 16;  // channel multiplier 2
    EXPECT_FALSE(kernels::depthwise_conv_supported(p));
  });
}

}  // namespace
}  // namespace tern
