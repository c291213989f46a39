// Pointwise convolution with the input channels along the vectors; see dot_conv.h and
// README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dot/dot_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
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
// of a pixel.
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
  int64_t full;   // whole input channel blocks: C / lanes
  int64_t rem;    // input channels of the last, partial block: C % lanes
  int64_t plane;  // H * W of x and y
};

// The kOut dot products of kPixels pixels with weight rows w + j * ws (j < kOut) over the
// whole blocks, plus the partial block against `tail` ([kOut][lanes], zero past rem) when
// rem > 0: sums[i] holds pixel s0 + i's kOut outputs. kUniform: the pixels are s0 ..
// s0 + kPixels - 1, at constant offsets from one pointer; otherwise pixels past the plane
// repeat its last one (a plane of fewer than kPixels pixels).
template <bool kUniform>
HWY_INLINE void DotTile(const Dot& k, int64_t s0, const float* w, int64_t ws, const float* tail,
                        V4 (&sums)[kPixels]) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t step = k.plane * lanes;  // one input channel block
  V acc[kPixels][kOut];
  const float* xp[kPixels];
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
    xp[i] = k.x + (kUniform ? s0 + i : std::min(s0 + i, k.plane - 1)) * lanes;
    HWY_UNROLL(4) for (int m = 0; m < kOut; ++m) acc[i][m] = hn::Zero(d);
  }
  for (int64_t cb = 0; cb < k.full; ++cb) {
    V xv[kPixels];
    HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) xv[i] = hn::LoadU(d, xp[i] + cb * step);
    HWY_UNROLL(4) for (int m = 0; m < kOut; ++m) {
      const V wv = hn::LoadU(d, w + m * ws + cb * lanes);
      HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) acc[i][m] = hn::MulAdd(xv[i], wv, acc[i][m]);
    }
  }
  if (k.rem > 0) {
    // The padded lanes of x may hold anything (NaN): zeroed before the multiply.
    const auto valid = hn::FirstN(d, static_cast<size_t>(k.rem));
    V xv[kPixels];
    HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
      xv[i] = hn::IfThenElseZero(valid, hn::LoadU(d, xp[i] + k.full * step));
    }
    HWY_UNROLL(4) for (int m = 0; m < kOut; ++m) {
      const V wv = hn::LoadU(d, tail + m * lanes);
      HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) acc[i][m] = hn::MulAdd(xv[i], wv, acc[i][m]);
    }
  }
  HWY_UNROLL(4) for (int i = 0; i < kPixels; ++i) {
    const V u = PairSum(d, acc[i][0], acc[i][1]);
    const V v = PairSum(d, acc[i][2], acc[i][3]);
    sums[i] = SumBlocks(d, QuadSum(d, u, v));
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
    if (e.activation != ref::Activation::kNone || e.residual) {
      v = EpilogueVector(D4(), e, v, z + o.off);
    }
    hn::StoreU(hn::IfThenElseZero(real, v), D4(), y + o.off);
    return;
  }
  StoreSumsSlow(p, o, std::min<int64_t>(kOut, p.conv.out_channels - m0), v, z, y);
}

}  // namespace

bool DotConvSupported(const ref::FusedConvParams& p) {
  const ref::ConvParams& c = p.conv;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  const bool pointwise = ref::pointwise_window(c) && c.in.d == 1;  // 2-D
  const bool y_ok = p.y_nhwc ? p.y_block == 1 : p.y_block == 1 || p.y_block == lanes;
  return pointwise && c.groups == 1 && p.x_block == lanes && p.w_block == 1 && y_ok;
}

WorkGrid DotConvWork(const ref::FusedConvParams& p) {
  const int64_t plane = p.conv.out.h * p.conv.out.w;
  if (p.conv.out_channels <= 0 || plane <= 0) return {0, 0};
  return {1, (plane + kPixels - 1) / kPixels};
}

void DotConvRun(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                const float* z, float* y, int64_t begin, int64_t end) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  const int64_t c = p.conv.in_channels, m = p.conv.out_channels;
  const int64_t plane = p.conv.out.h * p.conv.out.w;
  HWY_ASSERT(static_cast<int64_t>(p.x_block) == lanes && p.w_block == 1);
  const Dot k{x, c / lanes, c % lanes, plane};
  const int64_t tiles = (m + kOut - 1) / kOut;
  // Prepared once per call: the last tile's weight rows when M % 4 != 0, a copy with zero
  // rows past M (their sums are not stored); and when C % lanes != 0, every tile's weights
  // of the last input block, zero padded ([tiles][kOut][lanes]).
  thread_local std::vector<float> rows, tails;
  if (m % kOut != 0) {
    rows.assign(static_cast<size_t>(kOut * c), 0.0f);
    std::copy(w + (tiles - 1) * kOut * c, w + m * c, rows.begin());
  }
  if (k.rem > 0) {
    tails.assign(static_cast<size_t>(tiles * kOut * lanes), 0.0f);
    for (int64_t row = 0; row < m; ++row) {
      std::copy(w + row * c + k.full * lanes, w + (row + 1) * c, tails.begin() + row * lanes);
    }
  }
  // NCHWc: every channel of the last block, padded ones as 0.
  const int64_t stored = p.y_block == 1 ? m : (m + lanes - 1) / lanes * lanes;
  const int64_t pass_tiles = std::max<int64_t>(1, kPassPixels / kPixels);
  for (int64_t t0 = begin; t0 < end; t0 += pass_tiles) {
    const int64_t t1 = std::min(end, t0 + pass_tiles);
    for (int64_t m0 = 0; m0 < stored; m0 += kOut) {
      const bool whole = (p.y_block == lanes || (p.y_nhwc && m0 + kOut <= m)) &&
                         !needs_scalar_activation(p.epilogue);
      const auto real = hn::FirstN(D4(), static_cast<size_t>(std::clamp<int64_t>(m - m0, 0, kOut)));
      if (m0 >= m) {  // padded channels of an NCHWc y only: zeros
        for (int64_t s = t0 * kPixels; s < std::min(plane, t1 * kPixels); ++s) {
          hn::StoreU(hn::Zero(D4()), D4(), y + OutputLanes(p, lanes, plane, s, m0).off);
        }
        continue;
      }
      const float* wt = m0 + kOut > m ? rows.data() : w + m0 * c;
      const float* tail = k.rem > 0 ? tails.data() + m0 * lanes : nullptr;
      HWY_ALIGN float b4[kOut];
      for (int j = 0; j < kOut; ++j) b4[j] = bias != nullptr && m0 + j < m ? bias[m0 + j] : 0.0f;
      const V4 bv = hn::Load(D4(), b4);
      for (int64_t t = t0; t < t1; ++t) {
        // The last tile of a plane that leaves a partial one ends at the plane's end and
        // recomputes pixels of the tile before it, which it does not store again (y may be
        // z, updated in place).
        const int64_t first = t * kPixels;
        const int64_t s0 = plane >= kPixels ? std::min(first, plane - kPixels) : 0;
        V4 sums[kPixels];
        if (plane >= kPixels) {
          DotTile<true>(k, s0, wt, c, tail, sums);
        } else {
          DotTile<false>(k, s0, wt, c, tail, sums);
        }
        for (int i = static_cast<int>(first - s0); i < kPixels && s0 + i < plane; ++i) {
          StoreSums(p, lanes, plane, s0 + i, m0, whole, real, hn::Add(sums[i], bv), z, y);
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

bool dot_conv_preferred(int64_t in_channels, int64_t out_channels, int64_t block) {
  if (in_channels <= 0 || out_channels <= 0 || block < 16) return false;
  const int64_t pointwise = (out_channels + block - 1) / block * in_channels;
  const int64_t dot = (out_channels + 3) / 4 * (4 * in_channels / block + kDotReduceCost);
  return dot < pointwise;
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
