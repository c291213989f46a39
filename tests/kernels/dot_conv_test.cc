// The dot-product convolution (kernels/dot: f32_dot_conv from NCHWc, 1x1 on OIHW weights
// and any 2-D window on OHWI ones) against the reference fused convolution, on every SIMD
// target this machine can dispatch to: input channels below, at and past the vector width
// (the partial last block, whose padded lanes hold NaN), output channels around the
// 4-channel tile (partial tiles, NCHWc's padded channels), plane sizes that leave a
// partial pixel tile, kernels of 1 to 5 taps a side with strides, padding (taps in it for
// some or all pixels of a tile) and dilation, NHWC, NCHW and NCHWc outputs, every
// activation, the residual before and after it, with and without bias, and the work
// items split in three pieces as threads would split them.
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

// Runs case t from NCHWc, on OHWI weights when `ohwi` (else OIHW); false when the target
// cannot run the kernel (the scalar baseline: one lane, no 4-lane sums).
bool run_dot_conv(const std::string& target, NchwcConvCase t, int64_t c, uint32_t seed,
                  bool ohwi = false) {
  t.x_block = 0;
  const FusedConvParams p = test::oihw_conv_params(t, c, ohwi);
  if (target == "SCALAR") {
    EXPECT_FALSE(kernels::dot_conv_supported(p)) << t.str();
    return false;
  }
  EXPECT_TRUE(kernels::dot_conv_supported(p)) << t.str();
  test::check_oihw_conv(t, c, kernels::dot_conv_work(p).items(), kernels::f32_dot_conv, seed, ohwi);
  return true;
}

// A 1x1 stride-1 unpadded case.
NchwcConvCase pointwise_case() {
  NchwcConvCase t;
  t.k = 1;
  return t;
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
          NchwcConvCase t = pointwise_case();
          t.h = h;
          t.w = w;
          t.c_in = c_in[i % c_in.size()];
          t.c_out = c_out[i / 3 % c_out.size()];  // every M with every y layout
          t.y_block = yl;
          t.activation = test::kActivations[i / 3 % 8];
          t.residual = i % 4 == 1;
          t.residual_before = i / 4 % 2 == 0;
          t.bias = i % 5 != 3;
          t.affine = i % 13 % 4 == 1;
          runs += run_dot_conv(target, t, c, 700 + i, i % 7 == 0);  // OHWI is OIHW at 1x1
          ++i;
        }
      }
    }
  });
  EXPECT_GT(runs, 0);
}

// Windows with taps on OHWI weights: 1 to 5 taps a side, strides 1 and 2, padding 0 to 2
// (asymmetric too), dilation 1 and 2, planes from 1 x 1 (every tap but the centre in the
// padding) to 33 x 33.
TEST(DotConv, WindowsMatchReferenceOverSweep) {
  int runs = 0;
  test::for_each_simd_target([&](const std::string& target, int c) {
    const std::array<int64_t, 7> c_in = {1, c - 1, c, c + 3, 2 * c, 37, 70};
    const std::array<int64_t, 7> c_out = {1, 3, 4, 6, 9, 12, 30};
    const std::array<int64_t, 3> y_layouts = {0, 1, test::kNhwc};
    int i = 0;
    for (int64_t k : {3, 1, 5, 2}) {
      for (int64_t h : {1, 4, 5, 9, 33}) {
        for (int64_t w : {1, 5, 6, 13}) {
          NchwcConvCase t;
          t.k = k;
          t.h = h;
          t.w = h == 33 ? 33 : w;
          t.stride = 1 + i % 2;
          t.pad = (i / 2) % 3;
          t.pad_end = i % 5 == 2 ? 0 : -1;
          t.dilation = 1 + (i / 3) % 2;
          t.c_in = h == 33 ? c + 3 : c_in[i % c_in.size()];
          t.c_out = c_out[i / 2 % c_out.size()];
          t.y_block = y_layouts[i / 5 % y_layouts.size()];
          t.activation = test::kActivations[i % 8];
          t.residual = i % 4 == 1;
          t.residual_before = i / 4 % 2 == 0;
          t.bias = i % 6 != 3;
          ++i;
          if (!t.fits() || (k == 1 && t.stride == 1 && t.pad == 0)) continue;
          runs += run_dot_conv(target, t, c, 1300 + i, true);
        }
      }
    }
  });
  EXPECT_GT(runs, 0);
}

// The detection heads' shapes (UltraFace, FD-1MB): 1x1 from 128 or 256 channels to 4, 8 or
// 20, and 3x3 (padding 1) from 256 channels to 6, 12 or 30 at 4 x 5 and 8 x 10, NHWC.
TEST(DotConv, MatchesReferenceOnModelShapes) {
  test::for_each_simd_target([](const std::string& target, int c) {
    struct Shape {
      int64_t c_in, c_out, h, w, k;
    };
    const Shape shapes[] = {{128, 4, 15, 20, 1}, {128, 8, 15, 20, 1},  {256, 4, 8, 10, 1},
                            {256, 20, 8, 10, 1}, {128, 20, 15, 20, 1}, {256, 6, 4, 5, 3},
                            {256, 12, 4, 5, 3},  {256, 30, 4, 5, 3},   {256, 12, 8, 10, 3}};
    int i = 0;
    for (const Shape& s : shapes) {
      NchwcConvCase t = test::layer_case(s.c_in, s.c_out, s.h, s.w, s.k, s.k / 2);
      t.y_block = test::kNhwc;
      t.activation = i % 2 ? Activation::kNone : Activation::kRelu;
      run_dot_conv(target, t, c, 900 + i, s.k > 1);
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
    for (const int nhwc_k : {0, 1, 2, 3}) {  // NHWC or NCHWc, 1x1 or 3x3 (OHWI)
      const bool nhwc = nhwc_k % 2 == 0;
      NchwcConvCase t =
          test::layer_case(2 * c + 3, 6, 3, 7, nhwc_k < 2 ? 1 : 3, nhwc_k < 2 ? 0 : 1);
      // 21 output pixels: 21 % 4 and 21 % 2 are 1.
      t.x_block = 0;
      t.y_block = nhwc ? test::kNhwc : 0;
      t.residual = true;
      FusedConvParams p = test::oihw_conv_params(t, c, t.k > 1);
      p.epilogue.residual = true;
      p.epilogue.activation = Activation::kRelu;
      const int64_t plane = 21, blocks_in = (t.c_in + c - 1) / c;
      const int64_t y_size = nhwc ? plane * t.c_out : (t.c_out + c - 1) / c * c * plane;
      const std::vector<float> x = test::random_floats(blocks_in * c * plane, 31);
      const std::vector<float> w = test::random_floats(t.c_out * t.c_in * t.k * t.k, 32);
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
      EXPECT_EQ(same, apart) << (nhwc ? "NHWC" : "NCHWc") << " k" << t.k;
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
    // A window with taps, or a strided 1x1 one, needs OHWI weights.
    q = p;
    q.conv.kernel = {1, 3, 3};
    q.conv.pad_begin = {0, 1, 1};
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q.w_ohwi = true;
    EXPECT_TRUE(kernels::dot_conv_supported(q));
    q.x_block = 1;
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q = p;
    q.conv.stride = {1, 2, 2};
    q.conv.out = {1, 3, 3};
    EXPECT_FALSE(kernels::dot_conv_supported(q));
    q.w_ohwi = true;
    EXPECT_TRUE(kernels::dot_conv_supported(q));
    q = p;
    q.w_ohwi = true;  // the same array as OIHW at 1x1
    EXPECT_TRUE(kernels::dot_conv_supported(q));
  });
  // The cost rule on 16 lanes, 1x1: a 128 -> 4 head runs dot (32 + 16 FMAs a pixel
  // against 128), a 64 -> 8 conv and a 96 -> 18 one the pointwise kernel (2 * (16 + 16) =
  // 64 against 64, 5 * (24 + 16) = 200 against 192). Blocks of 8 (AVX2) charge the
  // reduction 32: 128 -> 4 runs dot (64 + 32 = 96 against 128), 128 -> 8 and 64 -> 6 the
  // pointwise kernel (2 * 96 against 128, 2 * 64 against 64), and FD-1MB's 256 -> 20 head
  // too (5 * 160 = 800 against 768; it took 1.27x the pointwise kernel's time). Blocks of
  // 4 never. 3x3 heads, padding 1, 256 channels on 4 x 5 (14 of the 20 pixels on the border): to
  // 6, 12 and 30 channels, dot (2 * 592 * 20 against 2304 * (6 + 2 * 14) for 6). To 30 the
  // FMAs alone favour direct (8 * 592 = 4736 against 2 * 2304 = 4608 a pixel); its border
  // pixels do not. So at 8 x 10 (80 KiB of input, from L2: RFB-640's heads), but not with
  // more than 2 blocks of output channels (not measured), nor where the input passes
  // kDotWindowInputBytes (256 channels at 16 x 20: 320 KiB).
  struct Rule {
    int64_t c_in, c_out, k, h, w, block;
    bool dot;
  };
  const Rule rules[] = {{128, 4, 1, 15, 20, 16, true},  {128, 20, 1, 15, 20, 16, true},
                        {64, 8, 1, 15, 20, 16, false},  {96, 18, 1, 15, 20, 16, false},
                        {128, 4, 1, 15, 20, 8, true},   {128, 8, 1, 15, 20, 8, false},
                        {64, 6, 1, 30, 40, 8, false},   {256, 20, 1, 15, 20, 8, false},
                        {256, 4, 1, 15, 20, 4, false},  {0, 4, 1, 15, 20, 16, false},
                        {256, 6, 3, 4, 5, 16, true},    {256, 12, 3, 4, 5, 16, true},
                        {256, 30, 3, 4, 5, 16, true},   {256, 6, 3, 4, 5, 8, true},
                        {256, 12, 3, 4, 5, 8, true},    {256, 6, 3, 4, 5, 4, false},
                        {256, 64, 3, 4, 5, 16, false},  {256, 30, 3, 4, 5, 8, false},
                        {256, 6, 3, 8, 10, 16, true},   {256, 12, 3, 8, 10, 8, true},
                        {256, 6, 3, 16, 20, 16, false}, {256, 6, 3, 16, 20, 8, false}};
  auto geometry = [](const Rule& r) {
    return test::nchwc_conv_params(test::layer_case(r.c_in, r.c_out, r.h, r.w, r.k, r.k / 2), 16)
        .conv;
  };
  for (const Rule& r : rules) {
    EXPECT_EQ(kernels::dot_conv_preferred(geometry(r), r.block), r.dot)
        << r.c_in << " -> " << r.c_out << " " << r.k << "x" << r.k << " at " << r.h << "x" << r.w
        << " block " << r.block;
  }
  // Nor with groups.
  kernels::ref::ConvParams grouped = geometry({256, 6, 3, 4, 5, 16, true});
  grouped.groups = 2;
  EXPECT_FALSE(kernels::dot_conv_preferred(grouped, 16));
  EXPECT_FALSE(kernels::dot_conv_candidate(grouped, 16));
  // --tune's candidates: every conv the rule gives dot, and those it does not with at
  // most 2 blocks of outputs where its dot estimate is at most kDotCandidateFactor (2)
  // times the other's: 64 -> 6 (2 * 32 = 64 against 64), 64 -> 8 and 96 -> 18 on 16
  // lanes, 128 -> 8 on 8 (192 against 128); not 16 -> 32 (8 * 20 = 160 against 32), nor
  // 128 -> 64 (4 blocks), nor what the rule's limits exclude (taps on 320 KiB of input,
  // blocks of 4). 64 -> 6 on 8 lanes is the factor's edge: 2 * (32 + 32) = 128 against 64.
  const Rule candidates[] = {{64, 6, 1, 30, 40, 16, true},   {64, 8, 1, 15, 20, 16, true},
                             {96, 18, 1, 15, 20, 16, true},  {128, 8, 1, 15, 20, 8, true},
                             {128, 4, 1, 15, 20, 16, true},  {256, 6, 3, 8, 10, 16, true},
                             {16, 32, 1, 30, 40, 16, false}, {128, 64, 1, 15, 20, 16, false},
                             {256, 6, 3, 16, 20, 16, false}, {256, 4, 1, 15, 20, 4, false},
                             {64, 6, 1, 30, 40, 8, true}};
  for (const Rule& r : candidates) {
    EXPECT_EQ(kernels::dot_conv_candidate(geometry(r), r.block), r.dot)
        << r.c_in << " -> " << r.c_out << " " << r.k << "x" << r.k << " at " << r.h << "x" << r.w
        << " block " << r.block;
  }
}

}  // namespace
}  // namespace tern
