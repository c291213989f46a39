// The register-blocked direct convolution (kernels/direct) against the reference fused
// convolution, on every SIMD target this machine can dispatch to: H and W over 1..33,
// pads 0..2, strides 1 and 2, dilation 2, kernel sizes 1, 3, 5 and 7, channel counts that
// are not multiples of the block, groups, NCHW input (the first layer), NCHW and NHWC
// outputs (the heads, also with a residual), asymmetric padding, rows long enough to split into
// segments, every activation, residual before/after the activation, with and without bias.
#include "kernels/direct/direct_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "kernels/nchwc_conv_test_util.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using test::NchwcConvCase;

using test::kActivations;

// f32_direct_conv over the work items of direct_conv_work(p, min_units).
test::NchwcConvKernel direct_kernel(int64_t min_units = kernels::kDirectMinSpatialUnits) {
  return [min_units](const kernels::ref::FusedConvParams& p, const float* x, const float* w,
                     const float* bias, const float* z, float* y, int64_t begin, int64_t end) {
    kernels::f32_direct_conv(p, x, w, bias, z, y, begin, end, min_units);
  };
}

void run_direct(const NchwcConvCase& t, int64_t c, uint32_t seed,
                int64_t min_units = kernels::kDirectMinSpatialUnits) {
  const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
  ASSERT_TRUE(kernels::direct_conv_supported(p)) << t.str();
  test::check_nchwc_conv(t, c, kernels::direct_conv_work(p, min_units).items(),
                         direct_kernel(min_units), seed);
}

// The scalar baseline (1 lane, while its NCHWc block is 4) has no fast kernel.
bool has_fast_kernels(const std::string& target) { return target != "SCALAR"; }

// The sweep: every H in 1..33 with each pad and stride; W, the kernel, the channels, the
// layouts and the epilogue vary with the case index so that every combination class
// appears on each target.
TEST(DirectConv, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;  // the reference runs there
    int i = 0;
    for (int64_t h = 1; h <= 33; ++h) {
      for (int64_t pad = 0; pad <= 2; ++pad) {
        for (int64_t stride = 1; stride <= 2; ++stride, ++i) {
          NchwcConvCase t;
          t.h = h;
          t.w = 1 + (h * 13 + pad * 5 + stride * 3) % 33;
          t.k = std::array<int64_t, 6>{3, 1, 3, 5, 3, 7}[i % 6];
          // The first layers' 3x3 (and 5x5) at stride 2 (below), whose interior tiles
          // share a broadcast input between two pixels.
          if (i % 8 == 3) t.k = std::array<int64_t, 3>{3, 3, 5}[i / 8 % 3];
          t.dilation = i % 7 == 3 ? 2 : 1;
          t.stride = stride;
          t.pad = pad;
          if (i % 10 == 7) t.pad_end = pad + 1;  // asymmetric: ONNX pads [p, p, p+1, p+1]
          if (!t.fits()) t.k = 1, t.dilation = 1;
          // The first layer's NCHW input, at stride 1 (i % 4 == 0) and 2 (i % 8 == 3).
          t.x_block = i % 4 == 0 || i % 8 == 3;
          t.y_block = i % 6 == 4;  // a head's NCHW output
          // A head whose Transpose(0, 2, 3, 1) was fused in: NHWC, without (i % 12 == 2
          // and 9: every activation over the sweep) and with (i % 12 == 7) a residual.
          if (i % 12 == 2 || i % 12 == 7 || i % 12 == 9) t.y_block = test::kNhwc;
          t.c_in = t.x_block ? 3 + i / 8 % 2 : std::array<int64_t, 4>{5, c, 2 * c + 3, 1}[i % 4];
          t.c_out = std::array<int64_t, 5>{7, c, 3 * c + 1, 5 * c - 2, 2}[i % 5];
          if (i % 9 == 2) {  // groups whose output channels fill blocks (x NCHW or NCHWc)
            t.groups = 2 + i % 2;
            t.c_in = t.groups * std::array<int64_t, 3>{3, c + 1, 2 * c + 5}[i % 3];
            t.c_out = t.groups * c * (1 + i % 2);
          }
          // Periods chosen so that the residual cases (i % 3 == 1) on NCHWc outputs meet
          // every activation with the residual both before and after it.
          t.activation = kActivations[i / 2 % 8];
          t.residual = i % 3 == 1;
          t.residual_before = i / 5 % 2 == 0;
          t.bias = i % 11 != 4;
          t.affine = i % 13 % 4 == 1;  // with every activation, residual order and layout
          run_direct(t, c, 100 + i);
        }
      }
    }
  });
}

// Layer shapes of the models (RetinaFace's first layer, MobileNet's 3x3 and 1x1 layers) at
// reduced spatial size: many channels, every tile width, the tails of a row, runs of rows
// taken cache pass by cache pass.
TEST(DirectConv, MatchesReferenceOnModelShapes) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;  // the reference runs there
    struct Shape {
      int64_t c_in, c_out, h, w, k, stride, pad, x_plain;
    };
    // The pointwise layers run PointwiseTile where their input channels are one cache
    // pass (32 -> 64, 48 -> 24, 128 -> 256 at 16 lanes) and TileImpl's passes where they
    // are not (2100 -> 72 on AVX-512 with an L2 of up to 2 MiB, whose quarter holds the
    // weights of 2048 channels for 4 blocks: 3 passes for a chunk of 4 blocks with a 1 MiB
    // L2 (1024 + 1024 + 52 channels), 2 with a 2 MiB one; one for the fifth block, with a
    // partial input block). 32 -> 64 3x3 at 24 x 120: two cache
    // passes (3x3 over 32 channels at 16 lanes) over 48 row segments, whose partial sums
    // (24 KiB each: 96 pixels, 4 blocks) outgrow the kernel's 256 KiB within each of the
    // three pieces, so the passes start again for its later rows (on
    // AVX-512; with 8 or 4 lanes the groups are larger than a piece, and the shapes above
    // give those targets their several passes). 1 -> 24, 3 -> 16 and 6 -> 40 pointwise
    // from NCHWc: fewer input channels than a block (PointwiseTile's first channel starts
    // the sums, but a single one, and the rest are the partial block's; with 4 lanes, 6
    // is a block and 2 more). Half-width last blocks (M mod c in 1 .. c/2): 64 -> 8 (RFB's
    // branch convs), 48 -> 24, 200 -> 72 and 3 -> 8 (RetinaFace's first layer) at 16 lanes;
    // 17 output channels (17 mod c = 1 at 16, 8 and 4 lanes) on every target: 40 -> 17
    // pointwise (PointwiseTile, 2, 3 or 1 + 4 blocks per chunk), 3 -> 17 at stride 2 from
    // NCHW (a first layer: taps inside), and 300 -> 17 at stride 2 from NCHW (channels
    // inside, over several cache passes, so the half block's partial sums are reloaded).
    const Shape shapes[] = {
        {3, 8, 31, 29, 3, 2, 1, 1},    {3, 32, 17, 23, 3, 1, 1, 1},   {64, 64, 13, 11, 3, 1, 1, 0},
        {32, 64, 9, 27, 1, 1, 0, 0},   {128, 256, 5, 7, 1, 1, 0, 0},  {16, 24, 21, 19, 3, 2, 1, 0},
        {64, 128, 10, 10, 3, 1, 1, 0}, {24, 40, 3, 200, 3, 1, 1, 0},  {48, 24, 2, 211, 1, 1, 0, 0},
        {3, 16, 5, 230, 3, 2, 1, 1},   {32, 64, 24, 120, 3, 1, 1, 0}, {2100, 72, 7, 9, 1, 1, 0, 0},
        {1, 24, 2, 37, 1, 1, 0, 0},    {3, 16, 4, 29, 1, 1, 0, 0},    {6, 40, 3, 31, 1, 1, 0, 0},
        {64, 8, 6, 50, 1, 1, 0, 0},    {200, 72, 7, 9, 1, 1, 0, 0},   {40, 17, 5, 40, 1, 1, 0, 0},
        {3, 17, 9, 30, 3, 2, 1, 1},    {300, 17, 9, 30, 3, 2, 1, 1}};
    int i = 0;
    for (const Shape& s : shapes) {
      NchwcConvCase t;
      t.c_in = s.c_in;
      t.c_out = s.c_out;
      t.h = s.h;
      t.w = s.w;
      t.k = s.k;
      t.stride = s.stride;
      t.pad = s.pad;
      t.x_block = s.x_plain;
      t.activation = Activation::kRelu;
      t.residual = i % 2 == 1;
      run_direct(t, c, 500 + i);
      t.y_block = 1;  // the same layer writing NCHW (a detection head)
      t.residual = i % 3 == 1;
      run_direct(t, c, 600 + i);
      t.y_block = test::kNhwc;  // and NHWC (its Transpose fused in)
      t.residual = i % 4 == 3;
      run_direct(t, c, 700 + i);
      ++i;
    }
  });
}

// Outputs of one pixel (ppocr's SE convs: 1x1 on a 1 x 1 map; a 3x3 over a 3 x 3 input):
// NCHW y is then stored as NHWC, one vector per block, whatever the activation. Every
// activation, with and without the affine map and a residual (which takes the lane-by-lane
// path), output channels that fill a last block by 1 lane, half of it or all of it. The 1x1
// ones run MatVecTile: chunks of 1 to 4 blocks (1, c / 2; 2c; 2c + 1 and 6c as 3 + 3; 8c
// as 4 + 4 where chunks have 4), input channels split between its copies of the sums with
// a partial block (7, 2c + 3) or none (6c), into NCHWc, NCHW and NHWC.
TEST(DirectConv, OnePixelOutputs) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;  // the reference runs there
    int i = 0;
    for (const int64_t c_out : {1, c / 2, 2 * c, 2 * c + 1, 6 * c, 8 * c}) {
      for (const int64_t c_in : {7, 2 * c + 3, 6 * c}) {
        for (const int64_t k : {1, 3}) {
          for (const int64_t y_block : {int64_t{0}, int64_t{1}, test::kNhwc}) {
            NchwcConvCase t = test::layer_case(c_in, c_out, k, k, k, 0);
            t.y_block = y_block;
            // y_block cycles with i: the others step with i / 3, so that each layout
            // meets every activation, the affine map and both residual orders.
            t.activation = kActivations[i / 3 % 8];
            t.affine = i / 3 % 3 == 1;
            t.residual = i % 5 == 2;
            t.residual_before = i / 3 % 2 == 0;
            run_direct(t, c, 900 + i);
            ++i;
          }
        }
      }
    }
  });
}

// Dilated 3x3 convs with pad = dilation (RFB's branches): the first and last d pixels of
// a row skip the same taps and run as tiles of several pixels, at most a tile's width (a
// dilation of 13 is more than AVX-512's 12 pixels per tile); stride 2, an NCHW input
// (taps inside), 1 to 4 output blocks, widths around the border runs.
TEST(DirectConv, DilatedBorderRuns) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    int i = 0;
    for (int64_t dilation : {3, 5, 7, 13}) {
      for (int64_t stride : {1, 2}) {
        for (int64_t extra : {1, 9}) {
          NchwcConvCase t;
          t.k = 3;
          t.dilation = dilation;
          t.pad = dilation;
          t.stride = stride;
          t.h = 3 + i % 5;
          t.w = 2 * dilation + extra;
          t.x_block = i % 3 == 0;
          t.c_in = t.x_block ? 3 : c + 2;
          t.c_out = (1 + i % 4) * c - i % 2;
          t.activation = Activation::kRelu;
          t.residual = i % 2 == 1;
          run_direct(t, c, 1000 + i);
          ++i;
        }
      }
    }
  });
}

// x_plane and y_plane (the bands of tern.ConvChain): blocks (or NCHW planes) farther
// apart than the image, NaN in between; the first layer (NCHW input, stride 2), a
// pointwise conv (flattened rows), a 3x3 conv with more input channels than one cache
// pass (partial sums in y), an NCHW output, a residual.
TEST(DirectConv, BlocksFartherApartThanTheImage) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    std::vector<NchwcConvCase> cases;
    NchwcConvCase first = test::layer_case(3, c + 5, 9, 20);
    first.x_block = true;
    first.stride = 2;
    cases.push_back(first);
    // A half block, 8 x 66, in a band: on 16 lanes, in min_units 1's segments, each row's 32
    // interior pixels run one PixelVectorTile, whose last loads end at the row's last
    // column.
    NchwcConvCase half = test::layer_case(3, std::max(1, c / 2), 8, 66);
    half.x_block = true;
    half.stride = 2;
    cases.push_back(half);
    NchwcConvCase pointwise = test::layer_case(c + 1, 2 * c + 3, 5, 11, 1, 0);
    pointwise.residual = true;
    cases.push_back(pointwise);
    NchwcConvCase deep = test::layer_case(64 * c, c, 4, 6);
    cases.push_back(deep);
    NchwcConvCase nchw = test::layer_case(c, 5, 6, 7);
    nchw.y_block = true;
    cases.push_back(nchw);
    // Also in the full-length segments of a ConvChain's one call per band (min_units 1).
    for (size_t i = 0; i < cases.size(); ++i) {
      const kernels::ref::FusedConvParams p = test::nchwc_conv_params(cases[i], c);
      ASSERT_TRUE(kernels::direct_conv_supported(p)) << cases[i].str();
      for (const int64_t min_units : {kernels::kDirectMinSpatialUnits, int64_t{1}}) {
        test::check_nchwc_conv(cases[i], c, kernels::direct_conv_work(p, min_units).items(),
                               test::with_plane_gaps(direct_kernel(min_units), 3),
                               950 + static_cast<uint32_t>(i));
      }
    }
  });
}

TEST(DirectConv, SupportRules) {
  test::for_each_simd_target([](const std::string& target, int c) {
    kernels::ref::FusedConvParams p;
    p.conv.in_channels = 8;
    p.conv.out_channels = 8;
    p.conv.kernel = {1, 3, 3};
    p.x_block = p.y_block = p.w_block = c;
    // Every target but the scalar baseline (1 lane, while its NCHWc block is 4) has a
    // fast kernel.
    const bool fast = has_fast_kernels(target);
    EXPECT_EQ(kernels::direct_conv_supported(p), fast);
    p.y_block = 1;
    p.y_nhwc = true;  // NHWC output (a fused Transpose)
    EXPECT_EQ(kernels::direct_conv_supported(p), fast);
    p.y_block = c;
    p.y_nhwc = false;
    p.w_block = c * 2;  // weights packed for another vector width
    EXPECT_FALSE(kernels::direct_conv_supported(p));
    p.w_block = c;
    p.conv.in_channels = p.conv.out_channels = c;
    p.conv.groups = 2;  // c/2 output channels per group: a block would span two groups
    EXPECT_FALSE(kernels::direct_conv_supported(p));
    p.conv.groups = 1;
    p.conv.kernel = {3, 3, 3};  // 3-D
    EXPECT_FALSE(kernels::direct_conv_supported(p));
  });
}

// A 1x1 convolution with trailing padding ("pads": [0, 0, 1, 1]) has a larger output than
// input: it must not be computed as a flattened pointwise image (the pixel i of the
// output is not the pixel i of the input), and the op must not call it pointwise.
TEST(DirectConv, OneByOneWithTrailingPadding) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    NchwcConvCase t;
    t.c_in = 2 * c + 1;
    t.c_out = c + 3;
    t.h = 5;
    t.w = 7;
    t.k = 1;
    t.pad = 0;
    t.pad_end = 1;
    run_direct(t, c, 900);
    t.pad = 1;
    t.pad_end = 0;
    run_direct(t, c, 901);
  });
}

// A pointwise layer's flattened image is cut into segments of up to 96 pixels, shorter
// ones (whole 12-pixel tiles) when that leaves fewer than 16 spatial units, so that
// parallel_grid still splits a 20x20 layer by region (ops/parallel.h) and not by
// output-channel chunks. The values are checked at each size, with tails.
TEST(DirectConv, SmallPointwiseImagesKeepSixteenSpatialUnits) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    struct Size {
      int64_t h, w, inner;
    };
    // 20x20 = 400 pixels: segments of 24, 17 units; 40x40: of 96, 17; 10x10: of 12 (the
    // shortest), 9; 13x13 = 169: of 12, 15.
    for (const Size& s : {Size{20, 20, 17}, Size{40, 40, 17}, Size{10, 10, 9}, Size{13, 13, 15}}) {
      NchwcConvCase t;
      t.c_in = 2 * c;
      t.c_out = 4 * c + 1;
      t.h = s.h;
      t.w = s.w;
      t.k = 1;
      t.pad = 0;
      const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
      EXPECT_EQ(kernels::direct_conv_work(p).inner, s.inner) << t.str();
      run_direct(t, c, 950 + static_cast<uint32_t>(s.h));
      // A caller that computes every item in one call (min_units 1) keeps segments of 96
      // pixels: 400 pixels in 5, 1600 in 17, 100 in 2, 169 in 2.
      EXPECT_EQ(kernels::direct_conv_work(p, 1).inner, (s.h * s.w + 95) / 96) << t.str();
      run_direct(t, c, 970 + static_cast<uint32_t>(s.h), 1);
    }
    // Direct 3x3: 5 rows of 7 keep one segment per row (5 units). 2 rows of 200 ask for
    // ceil(16 / 2) = 8 segments per row: the 199 pixels from the first interior column / 8
    // = 24 pixels, so 9 segments per row and 18 units.
    NchwcConvCase t;
    t.c_in = c;
    t.c_out = c;
    t.h = 5;
    t.w = 7;
    t.k = 3;
    t.pad = 1;
    EXPECT_EQ(kernels::direct_conv_work(test::nchwc_conv_params(t, c)).inner, 5) << t.str();
    t.h = 2;
    t.w = 200;
    EXPECT_EQ(kernels::direct_conv_work(test::nchwc_conv_params(t, c)).inner, 18) << t.str();
    run_direct(t, c, 990);
  });
}

// Segments are counted from a row's first interior column: 16 rows of 193 pixels with one
// border pixel each side take 2 segments per row (1 + 96, then 96), where counting from
// column 0 would take 3 (96, 96, 1).
TEST(DirectConv, SegmentsStartAtTheFirstInteriorColumn) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    NchwcConvCase t;
    t.c_in = 3;
    t.c_out = c;
    t.h = 16;
    t.w = 193;
    t.k = 3;
    t.pad = 1;
    t.x_block = 1;
    EXPECT_EQ(kernels::direct_conv_work(test::nchwc_conv_params(t, c)).inner, 32) << t.str();
    run_direct(t, c, 995);
  });
}

// Output blocks go in chunks of up to 4, whose sizes differ by at most one: ceil(blocks /
// 4) chunks. 3 on SSE4 (16 registers and no FMA: no 4 x 3 tile), and for an NCHW input on
// AVX2 (its 4 x 3 tile with unrolled taps spilled).
TEST(DirectConv, ChunksOfOutputBlocks) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    for (const int64_t x_block : {int64_t{1}, int64_t{0}}) {
      const bool three =
          target == "SSE4" || target == "SSSE3" || (target == "AVX2" && x_block == 1);
      const int64_t most = three ? 3 : 4;
      for (const int64_t blocks : {1, 2, 3, 4, 5, 8}) {
        NchwcConvCase t;
        t.c_in = 3;
        t.c_out = blocks * c;
        t.h = 6;
        t.w = 7;
        t.pad = 1;
        t.x_block = x_block;
        EXPECT_EQ(kernels::direct_conv_work(test::nchwc_conv_params(t, c)).outer,
                  (blocks + most - 1) / most)
            << target << " " << t.str();
      }
    }
  });
}

// An NCHW input with more channels than one cache pass (about 56 for one output block on
// a 48 KiB L1 with 16 lanes): every channel count up to 130, so that some last pass has 1
// to 3 channels and runs the taps-inside order on the partial sums of the passes before.
TEST(DirectConv, NchwInputOverCachePasses) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    for (int64_t c_in = 1; c_in <= 130; ++c_in) {
      NchwcConvCase t;
      t.c_in = c_in;
      t.c_out = c_in % 2 ? c : 2 * c + 1;
      t.h = 3;
      t.w = 7 + c_in % 5;
      t.k = 3;
      t.pad = 1;
      t.x_block = 1;
      t.activation = kActivations[c_in % 8];
      run_direct(t, c, 1000 + static_cast<uint32_t>(c_in));
    }
  });
}

// Border pixels of chunks of 4 output blocks go in column tiles of up to 6 rows, 3 on AVX2
// (ColumnBorder), grouped within each call's share of the rows: 8 blocks, the last partial,
// make two such chunks. Each case matches the reference (over 3 calls, run_direct), and a
// pixel must add in the same order whatever its tile: one call over all items gives, bit
// for bit, what one call per item gives (every border pixel then in a column tile of 1
// row). Small maps with padding, stride 2,
// dilation, several cache passes, groups of 4 blocks each, NCHW and NHWC outputs with a
// residual, and a right border (dilation 13) wider than the row's last segment.
TEST(DirectConv, BorderColumnsAddAlikeWhateverTheSplit) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    struct Shape {
      int64_t h, w, k, stride, pad, dilation, groups, y_block;
    };
    const Shape shapes[] = {
        {7, 7, 3, 1, 1, 1, 1, 0},  {14, 14, 3, 2, 1, 1, 1, 0},  {9, 11, 3, 1, 2, 2, 1, 0},
        {6, 20, 5, 1, 2, 1, 1, 0}, {3, 40, 3, 1, 13, 13, 1, 0}, {4, 61, 3, 1, 13, 13, 1, 0},
        {8, 9, 3, 1, 1, 1, 2, 0},  {7, 7, 3, 1, 1, 1, 1, 1},    {7, 9, 3, 1, 1, 1, 1, test::kNhwc}};
    int i = 0;
    for (const Shape& sh : shapes) {
      NchwcConvCase t;
      t.groups = sh.groups;
      t.c_in = sh.groups * (2 * c + 3);
      t.c_out = sh.groups * (sh.groups > 1 ? 4 * c : 8 * c - 3);
      t.h = sh.h;
      t.w = sh.w;
      t.k = sh.k;
      t.stride = sh.stride;
      t.pad = sh.pad;
      t.dilation = sh.dilation;
      t.y_block = sh.y_block;
      t.activation = kActivations[i % 8];
      t.residual = sh.y_block != 0;
      run_direct(t, c, 2000 + i++);
      t.residual = false;
      SCOPED_TRACE(t.str());
      const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
      const int64_t in_plane = t.h * t.w, out_plane = p.conv.out.size();
      const int64_t cg = t.c_in / t.groups;
      const std::vector<float> x =
          test::to_blocked(test::random_floats(t.c_in * in_plane, 7), t.c_in, in_plane, c, 0.0f);
      const Tensor w = Tensor::from_vector(test::random_floats(t.c_out * cg * t.k * t.k, 8),
                                           {t.c_out, cg, t.k, t.k});
      const Tensor packed = kernels::ref::pack_conv_weights(w, static_cast<int>(c));
      const std::vector<float> bias = test::random_floats(t.c_out, 9);
      const int64_t items = kernels::direct_conv_work(p).items();
      const size_t y_size = static_cast<size_t>((t.c_out + c - 1) / c * c * out_plane);
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> whole(y_size, nan), split(y_size, nan);
      kernels::f32_direct_conv(p, x.data(), packed.data<float>(), bias.data(), nullptr,
                               whole.data(), 0, items);
      for (int64_t item = 0; item < items; ++item) {
        kernels::f32_direct_conv(p, x.data(), packed.data<float>(), bias.data(), nullptr,
                                 split.data(), item, item + 1);
      }
      EXPECT_EQ(0, std::memcmp(whole.data(), split.data(), y_size * sizeof(float)));
    }
  });
}

// A pointwise layer whose last output block holds at most half a vector runs that block
// on pairs of input channels (PointwisePairTile), in full tiles and in its row's tail
// alike: pixel 12, a 1-pixel tail of a 1 x 13 image and inside a full tile of a 1 x 24
// one, gives the same bits from the same inputs, as do the pixels before it (the other
// tiles' short tails alternate copies of their sums: not so there). Half blocks alone
// (c/2 and c/2 - 1 channels) and after full ones, an odd channel count (its last channel
// alone), a residual and an NCHW output.
TEST(DirectConv, PointwiseHalfBlocksAddAlikeInAnyTile) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    struct Shape {
      int64_t c_in, c_out, y_block;
      bool residual;
    };
    const int64_t h = c / 2;  // the most channels a half block holds
    for (const Shape& sh : {Shape{2 * c + 3, h, 0, false}, Shape{c + 2, c + h, 0, true},
                            Shape{c - 1, h - 1, 1, false}, Shape{3 * c, 2 * c + h, 0, false}}) {
      const int64_t narrow = 13, wide = 24;
      std::vector<float> outs[2];
      const std::vector<float> values = test::random_floats(sh.c_in * wide, 31);
      const std::vector<float> z_values = test::random_floats(sh.c_out * wide, 32);
      const Tensor w = Tensor::from_vector(test::random_floats(sh.c_out * sh.c_in, 33),
                                           {sh.c_out, sh.c_in, 1, 1});
      const Tensor packed = kernels::ref::pack_conv_weights(w, c);
      const std::vector<float> bias = test::random_floats(sh.c_out, 34);
      for (int v = 0; v < 2; ++v) {
        NchwcConvCase t;
        t.c_in = sh.c_in;
        t.c_out = sh.c_out;
        t.k = 1;
        t.w = v == 0 ? narrow : wide;
        t.y_block = sh.y_block;
        t.residual = sh.residual;
        t.activation = kernels::ref::Activation::kRelu;
        SCOPED_TRACE(t.str());
        run_direct(t, c, 3000 + v);  // against the reference
        const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
        // Channel-major [C, W] of the first t.w columns, then blocked.
        auto columns = [&](const std::vector<float>& all, int64_t channels) {
          std::vector<float> out;
          for (int64_t ch = 0; ch < channels; ++ch)
            out.insert(out.end(), all.begin() + ch * wide, all.begin() + ch * wide + t.w);
          return out;
        };
        const std::vector<float> x =
            test::to_blocked(columns(values, t.c_in), t.c_in, t.w, c, 0.0f);
        std::vector<float> z = columns(z_values, t.c_out);
        if (t.y_block == 0) z = test::to_blocked(z, t.c_out, t.w, c, 0.0f);
        const size_t y_size =
            static_cast<size_t>(t.y_block == 0 ? (t.c_out + c - 1) / c * c * t.w : t.c_out * t.w);
        std::vector<float> y = t.residual ? z : std::vector<float>(y_size, 0.0f);
        kernels::f32_direct_conv(p, x.data(), packed.data<float>(), bias.data(),
                                 t.residual ? z.data() : nullptr, y.data(), 0,
                                 kernels::direct_conv_work(p).items());
        outs[v] = y;
      }
      // The narrow image's pixels, in both.
      const int64_t planes = sh.y_block == 0 ? (sh.c_out + c - 1) / c : sh.c_out;
      const int64_t lanes = sh.y_block == 0 ? c : 1;
      for (int64_t pl = 0; pl < planes; ++pl) {
        for (int64_t px = 0; px < narrow * lanes; ++px) {
          const float a = outs[0][pl * narrow * lanes + px], b = outs[1][pl * wide * lanes + px];
          ASSERT_EQ(0, std::memcmp(&a, &b, sizeof a))
              << "plane " << pl << " float " << px << ": " << a << " vs " << b << " (C " << sh.c_in
              << ", M " << sh.c_out << ")";
        }
      }
    }
  });
}

// A first layer (3x3, stride 2, NCHW input) whose output block holds at most half a vector
// (RetinaFace's 3 -> 8) runs its interior in pixel-vector tiles of 32 and 16 pixels on
// 16 lanes only (PixelVectorTile; on 8 and 4 lanes this checks TileImpl alone), and the
// rest of each row in TileImpl's tiles. Against the reference: 1, c/2 - 3 (5 of 16 lanes)
// and c/2 output channels, 3 input channels (the tile) and 4 (channels inside: not the
// tile), pads 0 to 2, widths whose interiors end in a 32-, a 16-pixel tile or TileImpl's
// tail, every output layout, activations, a residual. And the same bits from either tile:
// with segments of 12 pixels (min_units past the image's rows), no pixel-vector tile runs.
TEST(DirectConv, FirstLayerHalfBlockPixelVectorTiles) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    int i = 0;
    for (const int64_t c_out : {int64_t{1}, std::max<int64_t>(1, c / 2 - 3), int64_t{c / 2}}) {
      for (const int64_t w : {34, 35, 67, 70, 99, 131, 161}) {
        NchwcConvCase t;
        t.c_in = 3 + i % 2;
        t.c_out = c_out;
        t.h = 3 + i % 4;
        t.w = w;
        t.k = 3;
        t.stride = 2;
        t.pad = i % 3;
        t.x_block = 1;
        t.activation = kActivations[i % 8];
        t.y_block = std::array<int64_t, 3>{0, 1, test::kNhwc}[i % 3];
        t.residual = i % 4 == 2;  // 3 input channels (even i): through the tile
        t.bias = i % 5 != 2;
        run_direct(t, c, 4000 + i, 1);  // rows in segments of 96 (a few rows: 12 otherwise)
        ++i;
        t.y_block = 0;
        t.residual = false;
        t.activation = kernels::ref::Activation::kNone;  // no clamp to hide a difference
        SCOPED_TRACE(t.str());
        const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
        const std::vector<float> x = test::random_floats(t.c_in * t.h * t.w, 41);
        const Tensor weights = Tensor::from_vector(test::random_floats(t.c_out * t.c_in * 9, 42),
                                                   {t.c_out, t.c_in, 3, 3});
        const Tensor packed = kernels::ref::pack_conv_weights(weights, c);
        const std::vector<float> bias = test::random_floats(t.c_out, 43);
        const size_t y_size = static_cast<size_t>((t.c_out + c - 1) / c * c * p.conv.out.size());
        std::vector<float> outs[2];
        for (const int64_t min_units : {int64_t{1}, 1000 * t.h}) {
          std::vector<float> y(y_size, std::numeric_limits<float>::quiet_NaN());
          kernels::f32_direct_conv(p, x.data(), packed.data<float>(), bias.data(), nullptr,
                                   y.data(), 0, kernels::direct_conv_work(p, min_units).items(),
                                   min_units);
          outs[min_units == 1 ? 0 : 1] = y;
        }
        EXPECT_EQ(0, std::memcmp(outs[0].data(), outs[1].data(), y_size * sizeof(float)));
      }
    }
    // 8 x 66 with pad 1: the last output row's tile ends its loads at the input's last
    // float (its buffer's end: an over-read shows under ASan).
    NchwcConvCase last = test::layer_case(3, c / 2, 8, 66);
    last.stride = 2;
    last.x_block = 1;
    run_direct(last, c, 4100, 1);
  });
}

// Pointwise layers with few output channels (the heads: on 16 lanes, for at most 12 or 17
// to 20 outputs from 32 to 256 input channels, GroupTile, whose lanes are 4 outputs x 4
// input channels; otherwise the usual tiles): every M from 1 to 24; input channels
// around the 4-channel steps and the 16-lane blocks (a last step of 1 to 3 channels reads
// NaN in the padded lanes next to them), below 32 and past 256 (the usual tiles again);
// pixel counts that leave each tail tile (1, 2, 4 and the 4, 8 or 12 of a full tile); every
// output layout, residuals before and after the activation, the affine map; in the
// default 12-pixel segments and in min_units 1's 96-pixel ones, and with blocks farther
// apart than the image. Where GroupTile runs, each case also runs in both segmentations
// without epilogue and compares the bits: every pixel adds alike whatever tile it lands in
// (not so for every other tile: NEON's 3 blocks of 4 for 12 outputs differ).
TEST(DirectConv, PointwiseHeadsOnGroupedLanes) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (!has_fast_kernels(target)) return;
    const int64_t c_ins[] = {1, 5, 18, 31, 32, 33, 35, 48, 64, 100, 253, 255, 256, 260};
    const int64_t widths[] = {1, 7, 13, 23, 31, 40, 50};
    int i = 0;
    for (int64_t m = 1; m <= 24; ++m) {
      for (size_t j = 0; j < std::size(c_ins); j += 1 + m % 2) {
        NchwcConvCase t;
        t.c_in = c_ins[(j + m) % std::size(c_ins)];
        t.c_out = m;
        t.k = 1;
        t.pad = 0;
        t.h = 1 + i % 3;
        t.w = widths[i % std::size(widths)];
        t.y_block = std::array<int64_t, 3>{0, 1, test::kNhwc}[i / 2 % 3];
        t.residual = i % 4 == 1 || i % 8 == 6;
        t.residual_before = i % 8 == 6;
        t.affine = i % 7 == 4;
        t.bias = i % 5 != 3;
        t.activation = kActivations[i % 8];
        const kernels::ref::FusedConvParams p = test::nchwc_conv_params(t, c);
        ASSERT_TRUE(kernels::direct_conv_supported(p)) << t.str();
        const int64_t min_units = i % 2 == 0 ? kernels::kDirectMinSpatialUnits : 1;
        const bool gaps = t.y_block != test::kNhwc && i / 3 % 2 == 1;  // planes, not NHWC's pixels
        test::check_nchwc_conv(
            t, c, kernels::direct_conv_work(p, min_units).items(),
            gaps ? test::with_plane_gaps(direct_kernel(min_units), 5) : direct_kernel(min_units),
            5000 + static_cast<uint32_t>(i));
        // The same bits in 12-pixel segments and in 96-pixel ones (no activation to hide a
        // difference).
        const bool group_tile = kernels::direct_group_tile(m, t.c_in, c);
        ++i;
        if (!group_tile) continue;
        t.y_block = 0;
        t.residual = t.residual_before = t.affine = false;
        t.activation = kernels::ref::Activation::kNone;
        SCOPED_TRACE(t.str());
        const kernels::ref::FusedConvParams q = test::nchwc_conv_params(t, c);
        const std::vector<float> x = test::to_blocked(test::random_floats(t.c_in * t.h * t.w, 61),
                                                      t.c_in, t.h * t.w, c, 0.0f);
        const Tensor weights =
            Tensor::from_vector(test::random_floats(t.c_out * t.c_in, 62), {t.c_out, t.c_in, 1, 1});
        const Tensor packed = kernels::ref::pack_conv_weights(weights, c);
        const std::vector<float> bias = test::random_floats(t.c_out, 63);
        const size_t y_size = static_cast<size_t>((t.c_out + c - 1) / c * c * t.h * t.w);
        std::vector<float> outs[2];
        for (const int64_t units : {int64_t{1}, kernels::kDirectMinSpatialUnits}) {
          std::vector<float> y(y_size, std::numeric_limits<float>::quiet_NaN());
          kernels::f32_direct_conv(q, x.data(), packed.data<float>(), bias.data(), nullptr,
                                   y.data(), 0, kernels::direct_conv_work(q, units).items(), units);
          outs[units == 1 ? 0 : 1] = y;
        }
        EXPECT_EQ(0, std::memcmp(outs[0].data(), outs[1].data(), y_size * sizeof(float)));
      }
    }
  });
}

}  // namespace
}  // namespace tern
