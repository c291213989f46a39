// Winograd F(4x4, 3x3) (kernels/winograd, and its reference twin kernels/reference/
// winograd) against the reference direct convolution, on every SIMD target this machine
// can dispatch to: H over 1..33 with W varying, pads 0..2 and asymmetric pads, dilations
// 1, 2, 3 and 5, channel
// counts that are not multiples of the block, NCHW output, every activation, residual
// before/after, with and without bias; model layer shapes; the support rules.
//
// Tolerance, from the arithmetic (first-order forward error analysis): the kernel rounds
// U = G g G^T once, each B^T d B entry after at most 6 operations, each GEMM sum after C
// FMAs, each A^T m A entry after at most 10 operations; every rounded value is at most
// its magnitude computed with |B^T|, |G|, |A^T| and |x|, |w|. So
//   |error| <= (C + 20) * 2^-24 * E,  E = |A^T| (sum_ci (|G||g||G^T|) . (|B^T||d||B|)) |A|,
// taken twice for the margin, plus the direct reference's own bound (nchwc_conv_test_util).
#include "kernels/winograd/winograd_conv.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "kernels/nchwc_conv_test_util.h"
#include "kernels/reference/winograd.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using kernels::ref::kWinogradAT;
using kernels::ref::kWinogradBT;
using kernels::ref::kWinogradG;
using test::NchwcConvCase;

using test::kActivations;

// The winograd error bound of case t per output [M, oH, oW] (see the file comment).
test::ExtraTolerance winograd_tolerance(const NchwcConvCase& t) {
  return [t](const std::vector<float>& x, const std::vector<float>& w) {
    const int64_t cin = t.c_in, m = t.c_out, h = t.h, wd = t.w;
    const int64_t oh = t.out_extent(h), ow = t.out_extent(wd);
    std::vector<double> ua(m * cin * 36);  // |G| |g| |G^T|
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t ci = 0; ci < cin; ++ci) {
        const float* g = w.data() + (o * cin + ci) * 9;
        for (int64_t i = 0; i < 6; ++i) {
          for (int64_t j = 0; j < 6; ++j) {
            double s = 0;
            for (int64_t a = 0; a < 3; ++a)
              for (int64_t b = 0; b < 3; ++b)
                s += std::fabs(kWinogradG[i][a]) * std::fabs(g[a * 3 + b]) *
                     std::fabs(kWinogradG[j][b]);
            ua[(o * cin + ci) * 36 + i * 6 + j] = s;
          }
        }
      }
    }
    std::vector<double> tol(m * oh * ow), va(cin * 36);
    const kernels::ref::WinogradAxis ah = kernels::ref::winograd_axis(oh, t.dilation, t.pad);
    const kernels::ref::WinogradAxis aw = kernels::ref::winograd_axis(ow, t.dilation, t.pad);
    for (int64_t th = 0; th < ah.tiles; ++th) {
      for (int64_t tw = 0; tw < aw.tiles; ++tw) {
        for (int64_t ci = 0; ci < cin; ++ci) {  // |B^T| |d| |B|
          double d[6][6];
          for (int64_t a = 0; a < 6; ++a) {
            for (int64_t b = 0; b < 6; ++b) {
              const int64_t r = ah.input(th, a), col = aw.input(tw, b);
              d[a][b] = r < 0 || r >= h || col < 0 || col >= wd
                            ? 0.0
                            : std::fabs(x[(ci * h + r) * wd + col]);
            }
          }
          for (int64_t i = 0; i < 6; ++i) {
            for (int64_t j = 0; j < 6; ++j) {
              double s = 0;
              for (int64_t a = 0; a < 6; ++a)
                for (int64_t b = 0; b < 6; ++b)
                  s += std::fabs(kWinogradBT[i][a]) * d[a][b] * std::fabs(kWinogradBT[j][b]);
              va[ci * 36 + i * 6 + j] = s;
            }
          }
        }
        for (int64_t o = 0; o < m; ++o) {
          double ma[36] = {};
          for (int64_t ci = 0; ci < cin; ++ci)
            for (int64_t q = 0; q < 36; ++q) ma[q] += ua[(o * cin + ci) * 36 + q] * va[ci * 36 + q];
          for (int64_t i = 0; i < ah.valid(th); ++i) {
            for (int64_t j = 0; j < aw.valid(tw); ++j) {
              double e = 0;
              for (int64_t a = 0; a < 6; ++a)
                for (int64_t b = 0; b < 6; ++b)
                  e += std::fabs(kWinogradAT[i][a]) * ma[a * 6 + b] * std::fabs(kWinogradAT[j][b]);
              tol[(o * oh + ah.output(th, i)) * ow + aw.output(tw, j)] =
                  2.0 * static_cast<double>(cin + 20) * std::ldexp(e, -24);
            }
          }
        }
      }
    }
    return tol;
  };
}

// Groups of 24 tiles (the most), 12 and 6 (small layers split over threads) and 5 (a
// remainder in every register tile), by the seed.
void run_winograd(const NchwcConvCase& t, int64_t c, uint32_t seed) {
  const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
  ASSERT_TRUE(kernels::winograd_conv_supported(p)) << t.str();
  const int64_t group_tiles = std::array<int64_t, 4>{24, 12, 6, 5}[seed % 4];
  SCOPED_TRACE(testing::Message() << group_tiles << " tiles per group");
  test::check_nchwc_conv(
      t, c, kernels::winograd_conv_work(p, group_tiles).items(),
      [&](const kernels::ref::FusedConvParams& q, const float* x, const float* w,
          const float* bias, const float* z, float* y, int64_t begin, int64_t end) {
        kernels::f32_winograd_conv(q, x, w, bias, z, y, group_tiles, begin, end);
      },
      seed, kernels::ref::winograd_transform_weights, winograd_tolerance(t));
}

// The reference twin with block c: work "items" are output channels.
void run_reference_winograd(const NchwcConvCase& t, int64_t c, uint32_t seed) {
  const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
  ASSERT_TRUE(kernels::ref::winograd_applicable(p)) << t.str();
  test::check_nchwc_conv(t, c, kernels::ref::fused_conv_padded_channels(p),
                         kernels::ref::f32_winograd_conv, seed,
                         kernels::ref::winograd_transform_weights, winograd_tolerance(t));
}

// Case i of the sweep: H = h, pad, W, channels, layouts and epilogue varying with i.
NchwcConvCase sweep_case(int i, int64_t h, int64_t pad, int64_t c) {
  NchwcConvCase t;
  t.k = 3;
  t.h = h;
  t.w = 1 + (h * 13 + pad * 5) % 33;
  t.pad = pad;
  if (i % 7 == 3) t.pad_end = pad == 2 ? 0 : pad + 1;  // asymmetric
  // Dilation by i / 3, so that NCHW outputs (i % 5 == 4) meet dilations 2, 3 and 5 too.
  t.dilation = std::array<int64_t, 5>{1, 2, 1, 3, 5}[i / 3 % 5];
  if (!t.fits()) t.dilation = 1;
  if (!t.fits()) t.pad = t.pad_end = 1;
  t.y_block = i % 5 == 4;  // a head's NCHW output
  t.c_in = std::array<int64_t, 4>{5, c, 2 * c + 3, 1}[i % 4];
  t.c_out = std::array<int64_t, 5>{7, c, 3 * c + 1, 5 * c - 2, 2}[i % 5];
  t.activation = kActivations[i % 8];
  t.residual = i % 3 == 1;
  t.residual_before = i / 8 % 2 == 0;  // both orders with every activation
  t.bias = i % 11 != 4;
  t.affine = i % 13 % 4 == 1;
  return t;
}

// The sweep on the SIMD kernel: every H in 1..33 with each pad.
TEST(WinogradConv, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;  // no fast kernel: the reference runs there
    int i = 0;
    for (int64_t h = 1; h <= 33; ++h)
      for (int64_t pad = 0; pad <= 2; ++pad, ++i) run_winograd(sweep_case(i, h, pad, c), c, 100 + i);
  });
}

// The reference twin over the same sweep with blocks 4 and 5 (any block), NCHW input too.
TEST(WinogradConv, ReferenceTwinMatchesDirectReference) {
  int i = 0;
  for (int64_t c : {4, 5}) {
    for (int64_t h = 1; h <= 33; h += 2) {
      for (int64_t pad = 0; pad <= 2; ++pad, ++i) {
        NchwcConvCase t = sweep_case(i, h, pad, c);
        t.x_block = i % 4 == 2;
        run_reference_winograd(t, c, 300 + i);
      }
    }
  }
}

// Layer shapes of the models (RetinaFace's FPN merge and SSH convs, ResNet's 3x3,
// UltraFace RFB-320's branches with dilations 2, 3 and 5 and padding equal to them) at
// reduced spatial size: many channels, full GEMM tiles, an image's last partial item.
TEST(WinogradConv, MatchesReferenceOnModelShapes) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    struct Shape {
      int64_t c_in, c_out, h, w, dilation = 1;
    };
    const Shape shapes[] = {{64, 64, 20, 20},    {64, 32, 13, 11},    {16, 16, 21, 19},
                            {32, 16, 9, 40},     {128, 128, 7, 7},    {64, 64, 3, 101},
                            {8, 16, 30, 40},     {8, 12, 30, 40},     {12, 16, 30, 40},
                            {16, 16, 30, 40, 2}, {16, 16, 30, 40, 3}, {16, 16, 30, 40, 5}};
    int i = 0;
    for (const Shape& s : shapes) {
      NchwcConvCase t = test::layer_case(s.c_in, s.c_out, s.h, s.w, 3, s.dilation);
      t.dilation = s.dilation;
      t.activation = i % 2 ? Activation::kRelu : Activation::kNone;
      t.residual = i % 3 == 1;
      run_winograd(t, c, 500 + i);
      ++i;
    }
  });
}

TEST(WinogradConv, SupportRules) {
  test::for_each_simd_target([](const std::string& target, int c) {
    kernels::ref::FusedConvParams p;
    p.conv.in_channels = 16;
    p.conv.out_channels = 16;
    p.conv.kernel = {1, 3, 3};
    p.conv.in = p.conv.out = {1, 8, 8};
    p.x_block = p.y_block = p.w_block = c;
    EXPECT_EQ(kernels::winograd_conv_supported(p), target != "SCALAR");
    // One work item's transformed input tiles V [36][ceil(C/c)][24][c] and products
    // M [24][ceil(M/c)][36][c], floats (16 channels in and out: a whole number of blocks).
    EXPECT_EQ(kernels::winograd_conv_workspace_bytes(p), 36 * 24 * (16 + 16) * 4);
    // 4 tiles: one group, times the chunks of 4 output blocks (3 on SSE4); the smallest
    // groups (6 tiles) when even those leave 2 threads fewer than 2 items each.
    const int64_t max_blocks = target == "SSE4" || target == "SSSE3" ? 3 : 4;
    if (target != "SCALAR") {
      const int64_t chunks = (16 / c + max_blocks - 1) / max_blocks;
      EXPECT_EQ(kernels::winograd_conv_work(p, 24).items(), chunks);
      EXPECT_EQ(kernels::winograd_group_tiles(p, 2), chunks >= 4 ? 24 : 6);
      EXPECT_EQ(kernels::winograd_group_tiles(p, 1), 24);
      kernels::ref::FusedConvParams big = p;
      big.conv.in = big.conv.out = {1, 64, 64};  // 256 tiles: 11 groups of 24 per chunk
      EXPECT_EQ(kernels::winograd_group_tiles(big, 2), 24);
      // 8 threads want 16 items: 11 groups of 24 are too few for one chunk, 22 of 12 not.
      EXPECT_EQ(kernels::winograd_group_tiles(big, 8), chunks * 11 >= 16 ? 24 : 12);
    }
    auto without = [&](auto&& change) {
      kernels::ref::FusedConvParams q = p;
      change(q);
      EXPECT_FALSE(kernels::winograd_conv_supported(q));
      EXPECT_FALSE(kernels::winograd_conv_preferred(q));
    };
    without([](auto& q) { q.conv.stride = {1, 2, 2}; });
    without([](auto& q) { q.conv.kernel = {1, 5, 5}; });
    without([](auto& q) { q.conv.groups = 2; });
    without([](auto& q) { q.x_block = 1; });          // NCHW input (a first layer)
    without([&](auto& q) { q.w_block = 2 * c; });     // weights for another vector width
    without([](auto& q) { q.conv.kernel = {3, 3, 3}; });  // 3-D
    without([](auto& q) { q.y_block = 1, q.y_nhwc = true; });  // NHWC output
    if (target == "SCALAR") return;
    // Weights that stay cached (up to 1 MiB) whatever the tiles: 16 channels at 8x8 (4
    // tiles, 36 KiB), RetinaFace 320's ssh3 (64 channels at 10x10), 32 -> 64 at 7x7
    // (295 KB). Larger ones from 12 tiles: ResNet-18's layer3 (256 channels at 14x14, 16
    // tiles, 9.4 MB), 512 channels at 13x13 (16 tiles); not its layer4 (512 channels at
    // 7x7: 4 tiles for 37.7 MB), 64 -> 256 at 7x7 (2.4 MB) or 256 channels at 12x12 (9
    // tiles), but 12x13 (12 tiles). Never under 8 input or output channels; dilated too
    // (UltraFace RFB-320's 16-channel branch convs at 30x40 with dilation 3).
    auto preferred = [&](int64_t in, int64_t out, int64_t h, int64_t w) {
      kernels::ref::FusedConvParams q = p;
      q.conv.in_channels = in;
      q.conv.out_channels = out;
      q.conv.in = q.conv.out = {1, h, w};
      EXPECT_TRUE(kernels::winograd_conv_supported(q));
      return kernels::winograd_conv_preferred(q);
    };
    EXPECT_TRUE(preferred(16, 16, 8, 8));
    EXPECT_TRUE(preferred(64, 64, 10, 10));
    EXPECT_TRUE(preferred(32, 64, 7, 7));
    EXPECT_TRUE(preferred(256, 256, 14, 14));
    EXPECT_TRUE(preferred(512, 512, 13, 13));
    EXPECT_FALSE(preferred(512, 512, 7, 7));
    EXPECT_FALSE(preferred(64, 256, 7, 7));
    EXPECT_FALSE(preferred(256, 256, 12, 12));
    EXPECT_TRUE(preferred(256, 256, 12, 13));  // 3 x 4: exactly 12 tiles
    EXPECT_TRUE(preferred(8, 64, 32, 32));
    EXPECT_TRUE(preferred(8, 12, 30, 40));
    p.y_block = 1;  // a head's NCHW output: 16 output channels or more, on every target
    EXPECT_FALSE(preferred(256, 12, 8, 10));
    EXPECT_TRUE(preferred(256, 16, 8, 10));
    p.y_block = c;
    EXPECT_FALSE(preferred(7, 64, 32, 32));
    EXPECT_FALSE(preferred(64, 7, 32, 32));
    p.conv.dilation = {1, 3, 3};
    EXPECT_TRUE(preferred(16, 16, 30, 40));  // 9 x 12 tiles: 1728 positions for 1200
    p.conv.dilation = {1, 5, 5};
    EXPECT_TRUE(preferred(16, 16, 30, 40));  // 10 x 10 tiles: 1600 positions
    EXPECT_FALSE(preferred(16, 16, 8, 8));   // 5 x 5 tiles: 400 positions for 64
    EXPECT_TRUE(preferred(16, 16, 20, 20));  // 5 x 5 tiles: 400 positions for 400
  });
}

TEST(WinogradConv, TransformWeightsShapeAndErrors) {
  const Tensor w = Tensor::from_vector(std::vector<float>(2 * 3 * 9, 1.0f), {2, 3, 3, 3});
  const Tensor packed = kernels::ref::pack_conv_weights(w, 4);
  const Tensor u = kernels::ref::winograd_transform_weights(packed);
  EXPECT_EQ(u.shape(), (Shape{36, 1, 3, 4}));
  // G g G^T of an all-ones 3x3 at point (0, 0) is (1/4)^2 * 1; padded lanes stay 0.
  EXPECT_FLOAT_EQ(u.data<float>()[0], 1.0f / 16.0f);
  EXPECT_EQ(u.data<float>()[3], 0.0f);
  EXPECT_THROW(kernels::ref::winograd_transform_weights(w), InvalidArgument);  // not packed
}

}  // namespace
}  // namespace tern
