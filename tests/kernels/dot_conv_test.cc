// The dot-product pointwise convolution (kernels/dot: f32_dot_conv, 1x1 from NCHWc on OIHW
// weights) against the reference fused convolution, on every SIMD target this machine can
// dispatch to: input channels below, at and past the vector width (the partial last block,
// whose padded lanes hold NaN), output channels around the 4-channel tile (partial tiles,
// NCHWc's padded channels), plane sizes that leave a partial pixel tile, NHWC, NCHW and
// NCHWc outputs, every activation, the residual before and after it, with and without
// bias, and the work items split in three pieces as threads would split them.
#include "kernels/dot/dot_conv.h"

#include <gtest/gtest.h>

#include <array>

#include "kernels/nchwc_conv_test_util.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using kernels::ref::FusedConvParams;
using test::NchwcConvCase;

// Runs case t; false when the target cannot run the kernel (the scalar baseline: one
// lane, no 4-lane sums).
bool run_dot_conv(const std::string& target, NchwcConvCase t, int64_t c, uint32_t seed) {
  t.k = 1;
  t.stride = 1;
  t.pad = 0;
  t.x_block = 0;
  const FusedConvParams p = test::oihw_conv_params(t, c);
  if (target == "SCALAR") {
    EXPECT_FALSE(kernels::dot_conv_supported(p)) << t.str();
    return false;
  }
  EXPECT_TRUE(kernels::dot_conv_supported(p)) << t.str();
  test::check_oihw_conv(t, c, kernels::dot_conv_work(p).items(), kernels::f32_dot_conv, seed);
  return true;
}

TEST(DotConv, MatchesReferenceOverSweep) {
  int runs = 0;
  test::for_each_simd_target([&](const std::string& target, int c) {
    const std::array<int64_t, 8> c_in = {1, 3, c, c + 1, 2 * c - 1, 4 * c, 37, 70};
    const std::array<int64_t, 9> c_out = {1, 2, 3, 4, 5, 8, 13, 20, 30};
    const std::array<int64_t, 3> y_layouts = {0, 1, test::kNhwc};
    int i = 0;
    for (int64_t h = 1; h <= 33; h += 4) {
      for (int64_t w : {1, 2, 7, 33}) {
        for (int64_t yl : y_layouts) {
          NchwcConvCase t;
          t.h = h;
          t.w = w;
          t.c_in = c_in[i % c_in.size()];
          t.c_out = c_out[i / 3 % c_out.size()];  // every M with every y layout
          t.y_block = yl;
          t.activation = test::kActivations[i / 3 % 8];
          t.residual = i % 4 == 1;
          t.residual_before = i / 4 % 2 == 0;
          t.bias = i % 5 != 3;
          runs += run_dot_conv(target, t, c, 700 + i);
          ++i;
        }
      }
    }
  });
  EXPECT_GT(runs, 0);
}

// The detection heads' shapes (UltraFace, FD-1MB): 128 or 256 channels to 4, 8 or 20, NHWC.
TEST(DotConv, MatchesReferenceOnModelShapes) {
  test::for_each_simd_target([](const std::string& target, int c) {
    struct Shape {
      int64_t c_in, c_out, h, w;
    };
    const Shape shapes[] = {
        {128, 4, 15, 20}, {128, 8, 15, 20}, {256, 4, 8, 10}, {256, 20, 8, 10}, {128, 20, 15, 20}};
    int i = 0;
    for (const Shape& s : shapes) {
      NchwcConvCase t;
      t.c_in = s.c_in;
      t.c_out = s.c_out;
      t.h = s.h;
      t.w = s.w;
      t.y_block = test::kNhwc;
      t.activation = i % 2 ? Activation::kNone : Activation::kRelu;
      run_dot_conv(target, t, c, 900 + i);
      ++i;
    }
  });
}

// The residual updated in place (y is z, as the in-place pass makes it) on a plane whose
// last pixel tile is partial, the items split in three: the same bits as with a separate
// y (which MatchesReferenceOverSweep checks against the reference). The last tile
// recomputes pixels of the tile before it and must not store them again.
TEST(DotConv, ResidualInPlaceOnPartialTiles) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    for (const bool nhwc : {true, false}) {
      NchwcConvCase t;
      t.c_in = 2 * c + 3;
      t.c_out = 6;
      t.h = 3;
      t.w = 7;  // 21 pixels: 21 % 4 and 21 % 2 are 1
      t.k = 1;
      t.x_block = 0;
      t.y_block = nhwc ? test::kNhwc : 0;
      t.residual = true;
      FusedConvParams p = test::oihw_conv_params(t, c);
      p.epilogue.residual = true;
      p.epilogue.activation = Activation::kRelu;
      const int64_t plane = 21, blocks_in = (t.c_in + c - 1) / c;
      const int64_t y_size = nhwc ? plane * t.c_out : (t.c_out + c - 1) / c * c * plane;
      const std::vector<float> x = test::random_floats(blocks_in * c * plane, 31);
      const std::vector<float> w = test::random_floats(t.c_out * t.c_in, 32);
      const std::vector<float> b = test::random_floats(t.c_out, 33);
      const std::vector<float> z = test::random_floats(y_size, 34);
      const int64_t items = kernels::dot_conv_work(p).items();
      const int64_t cuts[] = {0, items / 3, 2 * items / 3, items};
      std::vector<float> apart(y_size), same = z;
      for (int i = 0; i < 3; ++i) {
        kernels::f32_dot_conv(p, x.data(), w.data(), b.data(), z.data(), apart.data(), cuts[i],
                              cuts[i + 1]);
        kernels::f32_dot_conv(p, x.data(), w.data(), b.data(), same.data(), same.data(), cuts[i],
                              cuts[i + 1]);
      }
      EXPECT_EQ(same, apart) << (nhwc ? "NHWC" : "NCHWc");
    }
  });
}

TEST(DotConv, SupportRulesAndPreference) {
  NchwcConvCase t;
  t.c_in = 64;
  t.c_out = 4;
  t.h = 5;
  t.w = 6;
  t.k = 1;
  t.x_block = 0;
  t.y_block = test::kNhwc;
  test::for_each_simd_target([&](const std::string& target, int c) {
    if (target == "SCALAR") return;
    const FusedConvParams p = test::oihw_conv_params(t, c);
    EXPECT_TRUE(kernels::dot_conv_supported(p));
    // One chunk of pixel tiles: 30 pixels in tiles of 2 or 4.
    const kernels::WorkGrid g = kernels::dot_conv_work(p);
    EXPECT_EQ(g.outer, 1);
    EXPECT_TRUE(g.inner == 8 || g.inner == 15) << g.inner;
    FusedConvParams q = p;
    q.w_block = c;  // packed weights: the pointwise kernel's
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q = p;
    q.x_block = 1;
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q = p;
    q.conv.groups = 2;
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q = p;
    q.conv.kernel = {1, 3, 3};
    q.conv.pad_begin = {0, 1, 1};
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q = p;
    q.conv.stride = {1, 2, 2};
    q.conv.out = {1, 3, 3};
    EXPECT_FALSE(kernels::dot_conv_supported(q));
  });
  // The cost rule on 16 lanes: a 128 -> 4 head runs dot (32 + 16 FMAs a pixel against
  // 128), a 64 -> 8 conv and a 96 -> 18 one the pointwise kernel (2 * (16 + 16) = 64
  // against 64, 5 * (24 + 16) = 200 against 192); blocks of 8 and 4 never (not measured
  // faster on AVX2: FD-1MB's 256 -> 20 head took 1.27x the pointwise kernel's time).
  EXPECT_TRUE(kernels::dot_conv_preferred(128, 4, 16));
  EXPECT_TRUE(kernels::dot_conv_preferred(128, 20, 16));
  EXPECT_FALSE(kernels::dot_conv_preferred(64, 8, 16));
  EXPECT_FALSE(kernels::dot_conv_preferred(96, 18, 16));
  EXPECT_FALSE(kernels::dot_conv_preferred(128, 4, 8));
  EXPECT_FALSE(kernels::dot_conv_preferred(256, 4, 4));
  EXPECT_FALSE(kernels::dot_conv_preferred(0, 4, 16));
}

}  // namespace
}  // namespace tern
