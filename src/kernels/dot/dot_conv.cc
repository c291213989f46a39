// Convolution with the input channels along the vectors (1x1 on OIHW weights, any 2-D
// window on OHWI ones); see dot_conv.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dot/dot_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
#include <optional>
#include <vector>

#include "hwy/highway.h"
#include "kernels/dot/dot_conv.h"
#include "kernels/simd/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
// One lane: no 4-lane sums; the scalar target runs the other kernels (NCHWc block 1).
bool DotConvSupported(const ref::FusedConvParams&) { return false; }
WorkGrid DotConvWork(const ref::FusedConvParams&) { return {0, 0}; }
void DotConvRun(const ref::FusedConvParams&, const float*, const float*, const float*, const float*,
                float*, int64_t, int64_t) {}
#else
namespace {

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using D4 = hn::Full128<float>;
using V4 = hn::Vec<D4>;

// The register tile: kPixels pixels x kOut output channels, one accumulator vector each.
// Per input channel block it loads kPixels input vectors and kOut weight vectors for
// kPixels * kOut FMAs, each into its own accumulator: 16 independent chains cover the
// FMA latency of both pipes (4 cycles x 2 on AVX-512 and Zen 5, 8 needed). 32 vector
// registers hold 16 accumulators + 4 input + 4 weight vectors; with 16 registers (AVX2,
// SSE4) 2 pixels: 8 + 2 + 4.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
constexpr int kPixels = 2;
#else
constexpr int kPixels = 4;
#endif
// Output channels of a tile: after the reduction, one 128-bit vector holds the kOut sums
// of a pixel. A layer's last tile of 1 or 2 channels (M mod 4: UltraFace's 6-channel
// heads) computes 2 (kM = 2), not 4 of which 2 or 3 repeat the last channel.
constexpr int kOut = 4;
// Pixels whose input is reused from L1 by every tile of output channels: 32 pixels of
// 256 channels are 32 KiB.
constexpr int64_t kPassPixels = 32;

// Lanes (a0 + a2, b0 + b2, a1 + a3, b1 + b3) of each 128-bit block of a and b.
HWY_INLINE V PairSum(D d, V a, V b) {
  return hn::Add(hn::InterleaveLower(d, a, b), hn::InterleaveUpper(d, a, b));
}

// Of two PairSums u (of a, b) and v (of c, d): each block's (sum a, sum b, sum c, sum d).
HWY_INLINE V QuadSum(D d, V u, V v) {
  const hn::Repartition<uint64_t, D> du;
  const auto ub = hn::BitCast(du, u), vb = hn::BitCast(du, v);
  return hn::Add(hn::BitCast(d, hn::InterleaveLower(du, ub, vb)),
                 hn::BitCast(d, hn::InterleaveUpper(du, ub, vb)));
}

// The sum of the 128-bit blocks of v: half-vector adds down to one block.
template <class DV>
HWY_INLINE V4 SumBlocks(DV, hn::Vec<DV> v) {
  if constexpr (hn::MaxLanes(DV()) <= 4) {
    return v;
  } else {
    const hn::Half<DV> dh;
    return SumBlocks(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
}

// One layer's constants.
struct Dot {
  const float* x;
  int64_t full;      // whole input channel blocks: C / lanes
  int64_t rem;       // input channels of the last, partial block: C % lanes
  int64_t in_plane;  // H * W of x
  int64_t plane;     // oH * oW of y
  int64_t cin;       // C
};

// The weights of one tile of kOut output channels: channel j's block cb of tap t at
// w[j] + t * C + cb * lanes (OHWI rows), its partial block's (when C % lanes != 0, zero
// padded) at tail[j] + t * lanes. Channels past M repeat channel M - 1: their sums are
// never stored (or stored as 0 in NCHWc's padded lanes).
struct Rows {
  const float* w[kOut];
  const float* tail[kOut];
};

// A block of `lanes` zeros: what a tap in the padding reads, at every channel block.
HWY_ALIGN constexpr float kZeroBlock[HWY_MAX_BYTES / sizeof(float)] = {};

// acc[i][m] += the lane-wise products over the input channel blocks of pixel i's input
// (block cb at x_at(i, cb)) and tap t's weights of channel m (t_w = t * C, t_tail = t *
// lanes); the partial block's input lanes past rem are zeroed first (x's padded lanes may
// hold anything, NaN).
template <int kM, class XAt>
HWY_INLINE void AccumulateBlocks(const Dot& k, const XAt& x_at, const Rows& r, int64_t t_w,
                                 int64_t t_tail, V (&acc)[kPixels][kM]) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float* w[kOut];
  HWY_UNROLL(4) for (int m = 0; m < kM; ++m) w[m] = r.w[m] + t_w;
  for (int64_t cb = 0; cb < k.full; ++cb) {
    V xv[kPixels];
    HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) xv[i] = hn::LoadU(d, x_at(i, cb));
    HWY_UNROLL(4) for (int m = 0; m < kM; ++m) {
      const V wv = hn::LoadU(d, w[m] + cb * lanes);
      HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) acc[i][m] = hn::MulAdd(xv[i], wv, acc[i][m]);
    }
  }
  if (k.rem > 0) {
    const auto valid = hn::FirstN(d, static_cast<size_t>(k.rem));
    V xv[kPixels];
    HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
      xv[i] = hn::IfThenElseZero(valid, hn::LoadU(d, x_at(i, k.full)));
    }
    HWY_UNROLL(4) for (int m = 0; m < kM; ++m) {
      const V wv = hn::LoadU(d, r.tail[m] + t_tail);
      HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) acc[i][m] = hn::MulAdd(xv[i], wv, acc[i][m]);
    }
  }
}

// Per 128-bit block, the sums of its lanes of acc[0] .. acc[kM - 1] (one pixel's
// accumulators) in lanes 0 .. kM - 1 (kM = 2: added as the first two of a 4-channel tile,
// bit for bit).
template <int kM>
HWY_INLINE V BlockSums(V (&acc)[kM]) {
  const D d;
  const V u = PairSum(d, acc[0], acc[1]);
  const V v = kM == 4 ? PairSum(d, acc[kM - 2], acc[kM - 1]) : u;
  return QuadSum(d, u, v);
}

// sums[i] = the kM lane sums of acc[i]: pixel i's kM outputs.
template <int kM>
HWY_INLINE void ReduceTile(V (&acc)[kPixels][kM], V4 (&sums)[kPixels]) {
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) sums[i] = SumBlocks(D(), BlockSums(acc[i]));
}

// Whether a vector has one 128-bit block per pixel of a tile (AVX-512: 4, AVX2: 2): the
// tile's sums then end in one vector, pixel i's in block i (ReduceTileBlocks), which gets
// the bias once and, for a whole tile without residual, the activation and stores once
// (TileOutputs). 128-bit targets (SSE4, NEON) keep one 4-lane vector per pixel
// (ReduceTile).
constexpr bool kBlockPerPixel = HWY_HAVE_SCALABLE == 0 && hn::MaxLanes(D()) == 4 * kPixels;

// The kM lane sums of every acc[i] in one vector, pixel i's in block i (kBlockPerPixel):
// each pixel's QuadSum leaves per block the partial sums of its 4 channels; then pairs of
// pixels are folded across blocks, adjacent blocks first (AVX-512 only), halves last. 4
// pixels: 11 blends, shuffles and adds across blocks, where ReduceTile's SumBlocks takes 16.
template <int kM>
HWY_INLINE V ReduceTileBlocks(V (&acc)[kPixels][kM]) {
  const D d;
  V q[kPixels];
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) q[i] = BlockSums(acc[i]);
  if constexpr (kPixels == 4) {
    // (p0 b0 + b1, p1 b1 + b0, p0 b2 + b3, p1 b3 + b2): pixels 0 and 1 alternate blocks.
    const V r01 = hn::Add(hn::OddEvenBlocks(q[1], q[0]),
                          hn::SwapAdjacentBlocks(hn::OddEvenBlocks(q[0], q[1])));
    const V r23 = hn::Add(hn::OddEvenBlocks(q[3], q[2]),
                          hn::SwapAdjacentBlocks(hn::OddEvenBlocks(q[2], q[3])));
    // Lower half of r01 plus its upper half: pixels 0 and 1; of r23: pixels 2 and 3.
    return hn::Add(hn::ConcatUpperLower(d, r23, r01), hn::ConcatLowerUpper(d, r23, r01));
  } else {  // 2 pixels (AVX2)
    return hn::Add(hn::ConcatUpperLower(d, q[1], q[0]), hn::ConcatLowerUpper(d, q[1], q[0]));
  }
}

template <int kM>
HWY_INLINE void ZeroTile(V (&acc)[kPixels][kM]) {
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
    HWY_UNROLL(4) for (int m = 0; m < kM; ++m) acc[i][m] = hn::Zero(D());
  }
}

// The kM dot products of a 1x1 conv (stride 1, no padding) for kPixels pixels, as
// lane-wise partial sums: acc[i][m] for pixel s0 + i and output m. kUniform: the pixels
// are s0 .. s0 + kPixels - 1, at constant offsets from one pointer; otherwise pixels past
// the plane repeat its last one (a plane of fewer than kPixels pixels).
template <bool kUniform, int kM>
HWY_INLINE void DotTile(const Dot& k, int64_t s0, const Rows& r, V (&acc)[kPixels][kM]) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  const int64_t step = k.in_plane * lanes;  // one input channel block
  ZeroTile(acc);
  const float* xp[kPixels];
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
    xp[i] = k.x + (kUniform ? s0 + i : std::min(s0 + i, k.plane - 1)) * lanes;
  }
  AccumulateBlocks(
      k, [&](int i, int64_t cb) { return xp[i] + cb * step; }, r, 0, 0, acc);
}

// DotTile for any other 2-D window (kernels with taps, strides, padding, dilation) on
// OHWI weights, pixels past the plane repeating its last one: per tap, pixel i's input
// block cb at xp[i] + cb * step[i], or the zero block (step 0) where the tap lands in the
// padding. A tap in the padding for every pixel of the tile is skipped.
template <int kM>
HWY_INLINE void DotTileTaps(const Dot& k, const ref::ConvParams& c, int64_t s0, const Rows& r,
                            V (&acc)[kPixels][kM]) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  ZeroTile(acc);
  int64_t ih0[kPixels], iw0[kPixels];  // the input position of tap (0, 0)
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
    const int64_t s = std::min(s0 + i, k.plane - 1);
    ih0[i] = s / c.out.w * c.stride.h - c.pad_begin.h;
    iw0[i] = s % c.out.w * c.stride.w - c.pad_begin.w;
  }
  for (int64_t kh = 0; kh < c.kernel.h; ++kh) {
    for (int64_t kw = 0; kw < c.kernel.w; ++kw) {
      const int64_t tap = kh * c.kernel.w + kw;
      const float* xp[kPixels];
      int64_t step[kPixels];
      bool any = false;
      HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
        const int64_t ih = ih0[i] + kh * c.dilation.h, iw = iw0[i] + kw * c.dilation.w;
        const bool in = ih >= 0 && ih < c.in.h && iw >= 0 && iw < c.in.w;
        xp[i] = in ? k.x + (ih * c.in.w + iw) * lanes : kZeroBlock;
        step[i] = in ? k.in_plane * lanes : 0;
        any |= in;
      }
      if (!any) continue;
      AccumulateBlocks(
          k, [&](int i, int64_t cb) { return xp[i] + cb * step[i]; }, r, tap * k.cin, tap * lanes,
          acc);
    }
  }
}

// The kM partial sums of the tile of pixels from s0: DotTileTaps, or DotTile for a
// pointwise window.
template <int kM>
HWY_INLINE void Tile(const Dot& k, const ref::ConvParams& c, bool pointwise, int64_t s0,
                     const Rows& r, V (&acc)[kPixels][kM]) {
  if (!pointwise) {
    DotTileTaps<kM>(k, c, s0, r, acc);
  } else if (k.plane >= kPixels) {
    DotTile<true, kM>(k, s0, r, acc);
  } else {
    DotTile<false, kM>(k, s0, r, acc);
  }
}

// Where output channels m0 .. m0 + kOut - 1 of pixel s live in y (and z): the first one's
// offset, the distance between consecutive ones, and how many to store (channels >= M:
// NCHWc's padded lanes, stored as 0; none in NCHW and NHWC).
struct Lanes4 {
  int64_t off, stride, count;
};

HWY_INLINE Lanes4 OutputLanes(const ref::FusedConvParams& p, int64_t lanes, int64_t plane,
                              int64_t s, int64_t m0) {
  const int64_t m = p.conv.out_channels;
  if (p.y_nhwc) return {s * m + m0, 1, std::min<int64_t>(kOut, m - m0)};
  if (p.y_block == 1) return {m0 * plane + s, plane, std::min<int64_t>(kOut, m - m0)};
  return {((m0 / lanes) * plane + s) * lanes + m0 % lanes, 1, kOut};
}

// StoreSums' general path, out of line: a partial tile of output channels, an NCHW y or
// an activation without a vector form.
HWY_NOINLINE void StoreSumsSlow(const ref::FusedConvParams& p, const Lanes4& o, int64_t real, V4 v,
                                const float* z, float* y) {
  const D4 d4;
  const ref::Epilogue& e = p.epilogue;
  HWY_ALIGN float zl[kOut] = {}, yl[kOut];
  if (e.residual) {
    for (int64_t l = 0; l < real; ++l) zl[l] = z[o.off + l * o.stride];
  }
  if (needs_scalar_activation(e)) {
    hn::Store(v, d4, yl);
    for (int64_t l = 0; l < real; ++l) {
      float t = yl[l];
      if (e.residual && e.residual_before_activation) t += zl[l];
      t = ref::activate(e, t);
      if (e.residual && !e.residual_before_activation) t += zl[l];
      yl[l] = t;
    }
  } else {
    hn::Store(EpilogueVector(d4, e, v, zl), d4, yl);
  }
  for (int64_t l = 0; l < o.count; ++l) y[o.off + l * o.stride] = l < real ? yl[l] : 0.0f;
}

// Stores v (the kOut sums of pixel s plus the bias) through the epilogue. `whole`: the
// kOut channels are adjacent in y (NCHWc, or NHWC with all of them real) and the
// activation has a vector form; lanes outside `real` (NCHWc's padded channels) are then
// stored as 0 after the epilogue.
HWY_INLINE void StoreSums(const ref::FusedConvParams& p, int64_t lanes, int64_t plane, int64_t s,
                          int64_t m0, bool whole, hn::Mask<D4> real, V4 v, const float* z,
                          float* y) {
  const Lanes4 o = OutputLanes(p, lanes, plane, s, m0);
  if (whole) {
    const ref::Epilogue& e = p.epilogue;
    if (e.maps_values() || e.residual) {
      v = EpilogueVector(D4(), e, v, z + o.off);
    }
    hn::StoreU(hn::IfThenElseZero(real, v), D4(), y + o.off);
    return;
  }
  StoreSumsSlow(p, o, std::min<int64_t>(kOut, p.conv.out_channels - m0), v, z, y);
}

// Block kI (128 bits) of v.
template <int kI, class DV>
HWY_INLINE V4 Block(DV, hn::Vec<DV> v) {
  if constexpr (hn::MaxLanes(DV()) <= 4) {
    return v;
  } else {
    const hn::Half<DV> dh;
    constexpr int kHalfBlocks = static_cast<int>(hn::MaxLanes(DV()) / 8);
    if constexpr (kI < kHalfBlocks)
      return Block<kI>(dh, hn::LowerHalf(dh, v));
    else
      return Block<kI - kHalfBlocks>(dh, hn::UpperHalf(dh, v));
  }
}

// Stores block i of v (pixel i's 4 outputs) at out + i * pixel_stride: one store where
// the blocks are adjacent (NHWC with M = 4). (Not epilogue-inl.h's StoreBlocks, which stores
// the direct kernels' accumulator tiles.)
HWY_INLINE void StorePixelBlocks(V v, float* out, int64_t pixel_stride) {
  const D d;
  if (pixel_stride == 4) {
    hn::StoreU(v, d, out);
    return;
  }
  hn::StoreU(Block<0>(d, v), D4(), out);
  hn::StoreU(Block<1>(d, v), D4(), out + pixel_stride);
  if constexpr (kPixels == 4) {
    hn::StoreU(Block<2>(d, v), D4(), out + 2 * pixel_stride);
    hn::StoreU(Block<3>(d, v), D4(), out + 3 * pixel_stride);
  }
}

// What the tiles of output channels m0 .. m0 + kOut - 1 store. (Scalars only: on NEON a
// struct with vector members gets a constructor that GCC cannot inline into the target's
// code.)
struct TileOut {
  int64_t m0;
  bool whole;            // StoreSums' `whole`
  bool blocks;           // whole, no residual (kBlockPerPixel): the tile's pixels at once
  int64_t pixel_stride;  // y's distance between pixels: NHWC's M, NCHWc's lanes
  int64_t real;          // how many of the kOut channels are < M
  const float* bias;     // the kOut biases, repeated in every 128-bit block of a vector
};

// One tile: the kM outputs of pixels s0 .. s0 + kPixels - 1 computed, the bias added and
// stored through the epilogue from pixel `first` on (those before it are the tile
// before's, stored already: y may be z, updated in place).
template <int kM>
HWY_INLINE void TileOutputs(const ref::FusedConvParams& p, const Dot& k, bool pointwise,
                            const Rows& r, const TileOut& o, int64_t s0, int64_t first,
                            const float* z, float* y) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V acc[kPixels][kM];
  Tile<kM>(k, p.conv, pointwise, s0, r, acc);
  const int from = static_cast<int>(first - s0);
  const auto real = hn::FirstN(D4(), static_cast<size_t>(o.real));
  if constexpr (kBlockPerPixel) {
    V sums = hn::Add(ReduceTileBlocks(acc), hn::Load(d, o.bias));
    if (o.blocks && from == 0 && s0 + kPixels <= k.plane) {
      // `real` in every block: lanes whose index mod 4 is below it.
      const hn::RebindToSigned<D> di;
      const auto in_block = hn::And(hn::Iota(di, 0), hn::Set(di, 3));
      const auto real_blocks =
          hn::RebindMask(d, hn::Lt(in_block, hn::Set(di, static_cast<int32_t>(o.real))));
      sums = hn::IfThenElseZero(real_blocks, ActivateVector(d, p.epilogue, sums));
      StorePixelBlocks(sums, y + OutputLanes(p, lanes, k.plane, s0, o.m0).off, o.pixel_stride);
      return;
    }
    HWY_ALIGN float pixels[4 * kPixels];
    hn::Store(sums, d, pixels);
    for (int i = from; i < kPixels && s0 + i < k.plane; ++i) {
      StoreSums(p, lanes, k.plane, s0 + i, o.m0, o.whole, real, hn::Load(D4(), pixels + 4 * i), z,
                y);
    }
  } else {
    V4 sums[kPixels];
    ReduceTile(acc, sums);
    const V4 bias = hn::Load(D4(), o.bias);
    for (int i = from; i < kPixels && s0 + i < k.plane; ++i) {
      StoreSums(p, lanes, k.plane, s0 + i, o.m0, o.whole, real, hn::Add(sums[i], bias), z, y);
    }
  }
}

}  // namespace

bool DotConvSupported(const ref::FusedConvParams& p) {
  const ref::ConvParams& c = p.conv;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  const bool two_d = c.in.d == 1 && c.out.d == 1 && c.kernel.d == 1;
  // OHWI weights for any window; a pointwise window's OIHW weights are the same array.
  const bool weights = p.w_block == 1 && (p.w_ohwi || ref::pointwise_window(c));
  const bool y_ok = p.y_nhwc ? p.y_block == 1 : p.y_block == 1 || p.y_block == lanes;
  return two_d && weights && c.groups == 1 && p.x_block == lanes && y_ok;
}

WorkGrid DotConvWork(const ref::FusedConvParams& p) {
  const int64_t plane = p.conv.out.h * p.conv.out.w;
  if (p.conv.out_channels <= 0 || plane <= 0) return {0, 0};
  return {1, (plane + kPixels - 1) / kPixels};
}

void DotConvRun(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                const float* z, float* y, int64_t begin, int64_t end) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const ref::ConvParams& conv = p.conv;
  const int64_t c = conv.in_channels, m = conv.out_channels;
  const int64_t plane = conv.out.h * conv.out.w;
  HWY_ASSERT(DotConvSupported(p));
  const bool pointwise = ref::pointwise_window(conv);
  const int64_t taps = conv.kernel.h * conv.kernel.w;
  const Dot k{x, c / lanes, c % lanes, conv.in.h * conv.in.w, plane, c};
  // When C % lanes != 0: each channel's and tap's weights of the last input block, zero
  // padded ([M][taps][lanes]), prepared once per call.
  thread_local std::vector<float> tails;
  if (k.rem > 0) {
    tails.assign(static_cast<size_t>(m * taps * lanes), 0.0f);
    for (int64_t r = 0; r < m * taps; ++r) {  // (output channel, tap)
      const float* src = w + r * c + k.full * lanes;
      std::copy(src, src + k.rem, tails.begin() + r * lanes);
    }
  }
  const int64_t pass_tiles = std::max<int64_t>(1, kPassPixels / kPixels);
  // NCHWc: every channel of the last block, padded ones as 0.
  const int64_t stored = p.y_block == 1 ? m : (m + lanes - 1) / lanes * lanes;
  for (int64_t t0 = begin; t0 < end; t0 += pass_tiles) {
    const int64_t t1 = std::min(end, t0 + pass_tiles);
    for (int64_t m0 = 0; m0 < stored; m0 += kOut) {
      if (m0 >= m) {  // padded channels of an NCHWc y only: zeros
        for (int64_t s = t0 * kPixels; s < std::min(plane, t1 * kPixels); ++s) {
          hn::StoreU(hn::Zero(D4()), D4(), y + OutputLanes(p, lanes, plane, s, m0).off);
        }
        continue;
      }
      Rows rows;
      HWY_ALIGN float b4[HWY_MAX_BYTES / sizeof(float)];  // the bias in every block
      for (int j = 0; j < kOut; ++j) {
        const int64_t ch = std::min(m0 + j, m - 1);
        rows.w[j] = w + ch * taps * c;
        rows.tail[j] = k.rem > 0 ? tails.data() + ch * taps * lanes : nullptr;
        b4[j] = bias != nullptr && m0 + j < m ? bias[m0 + j] : 0.0f;
      }
      for (int64_t j = kOut; j < lanes; ++j) b4[j] = b4[j % kOut];
      TileOut o;
      o.m0 = m0;
      o.whole = (p.y_block == lanes || (p.y_nhwc && m0 + kOut <= m)) &&
                !needs_scalar_activation(p.epilogue);
      o.blocks = kBlockPerPixel && o.whole && !p.epilogue.residual;
      o.pixel_stride = p.y_nhwc ? m : lanes;
      o.real = std::min<int64_t>(m - m0, kOut);
      o.bias = b4;
      const bool two = m - m0 <= 2;  // the last tile: 2 channels (kM) are enough
      for (int64_t t = t0; t < t1; ++t) {
        // The last tile of a plane that leaves a partial one ends at the plane's end and
        // recomputes pixels of the tile before it, which it does not store again.
        const int64_t first = t * kPixels;
        const int64_t s0 = plane >= kPixels ? std::min(first, plane - kPixels) : 0;
        if (two) {
          TileOutputs<2>(p, k, pointwise, rows, o, s0, first, z, y);
        } else {
          TileOutputs<kOut>(p, k, pointwise, rows, o, s0, first, z, y);
        }
      }
    }
  }
}

#endif  // HWY_TARGET == HWY_SCALAR
}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(DotConvSupported);
HWY_EXPORT(DotConvWork);
HWY_EXPORT(DotConvRun);

bool dot_conv_supported(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(DotConvSupported)(p);
}

namespace {

// dot_conv_preferred's estimate for the 2-D conv `c` with one group, in FMA instructions
// per image: the dot kernel's and the kernels' with output channels along the vectors.
struct DotCosts {
  int64_t dot = 0, others = 0;
};

// The estimate, or nothing where neither function takes `c`: not a 2-D conv with one
// group, blocks under 8 lanes, or a window with taps on an input of more than
// kDotWindowInputBytes or to more than 2 blocks of outputs.
std::optional<DotCosts> dot_costs(const ref::ConvParams& c, int64_t block) {
  const int64_t m = c.out_channels, reduction = c.in_channels * c.kernel.size();
  const int64_t plane = c.out.size();
  if (c.groups != 1 || c.in.d != 1 || c.kernel.d != 1 || block < 8 || m <= 0 || reduction <= 0 ||
      plane <= 0) {
    return std::nullopt;
  }
  const int64_t input_bytes = c.in_channels * c.in.size() * static_cast<int64_t>(sizeof(float));
  if (!ref::pointwise_window(c) && (input_bytes > kDotWindowInputBytes || m > 2 * block)) {
    return std::nullopt;
  }
  // Output pixels whose window lies inside the input along one dim (as the direct and
  // depthwise kernels find their interior): the first tap valid within an input shortened
  // by the window's extent.
  auto inside = [](int64_t out, int64_t in, int64_t stride, int64_t k, int64_t dilation,
                   int64_t pad) {
    const ref::Range r = ref::valid_range(out, stride, -pad, in - (k - 1) * dilation);
    return std::max<int64_t>(0, r.end - r.begin);
  };
  const int64_t interior =
      inside(c.out.h, c.in.h, c.stride.h, c.kernel.h, c.dilation.h, c.pad_begin.h) *
      inside(c.out.w, c.in.w, c.stride.w, c.kernel.w, c.dilation.w, c.pad_begin.w);
  DotCosts costs;
  costs.others =
      (m + block - 1) / block * reduction * (interior + kDirectBorderCost * (plane - interior));
  // A last tile of 1 or 2 channels costs its 4-channel tile's here: charged its 2 R /
  // block FMAs instead, UltraFace's 64 -> 6 head at 30 x 40 and ppocr's 96 -> 18 at 32 x 48
  // went to the dot kernel and took 1.7 and 1.09 times as long (conv_bench, Zen 4).
  const int64_t reduce = block >= 16 ? kDotReduceCost : kDotReduceCost8;
  costs.dot = (m + 3) / 4 * (4 * reduction / block + reduce) * plane;
  return costs;
}

}  // namespace

bool dot_conv_preferred(const ref::ConvParams& c, int64_t block) {
  const std::optional<DotCosts> costs = dot_costs(c, block);
  return costs && costs->dot < costs->others;
}

bool dot_conv_candidate(const ref::ConvParams& c, int64_t block) {
  const std::optional<DotCosts> costs = dot_costs(c, block);
  if (!costs) return false;
  return costs->dot < costs->others ||
         (c.out_channels <= 2 * block && costs->dot <= kDotCandidateFactor * costs->others);
}

WorkGrid dot_conv_work(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(DotConvWork)(p);
}

void f32_dot_conv(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                  const float* z, float* y, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(DotConvRun)(p, x, w, bias, z, y, begin, end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
