// Register-blocked direct convolution into NCHWc; see direct_conv.h and README.md.
//
// Register blocking: one tile = B output-channel blocks x R output pixels of one row,
// B * R accumulator vectors kept in registers over every input channel and tap; the tiles
// per ISA and their derivation are in kernels/simd/register_tile-inl.h.
// Border pixels (whose taps reach the padding) skip those taps, in tiles of consecutive
// pixels that skip the same ones; in chunks of 4 blocks, in column tiles of one border
// column's rows instead (ColumnBorder).
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/direct/direct_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include "base/cpu.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/direct/direct_conv.h"
#include "kernels/reference/spatial.h"
#include "kernels/simd/base_register.h"
#include "kernels/simd/conv_window.h"
#include "kernels/simd/epilogue-inl.h"
#include "kernels/simd/register_tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// The tiles hold arrays of vectors and use MaxLanes as the vector width: fixed-width
// targets only (CMake disables SVE).
static_assert(!HWY_HAVE_SCALABLE, "tern's NCHWc kernels need a fixed vector width");
constexpr int kLanes = static_cast<int>(hn::MaxLanes(hn::ScalableTag<float>()));


// Output pixels per work item at most: enough tiles to amortise a row's setup, small
// enough that a pointwise layer's flattened image splits across threads.
constexpr int64_t kSegment = 8 * kTileMaxPixels<1>;

// Bytes of partial sums that a run of work items keeps in cache (L2) between its cache
// passes over the input channels (see DirectConv): a quarter of a 1 MiB L2 (the
// development machine's Zen 5 core; Cortex-A72's, shared by 4 cores) or an eighth of
// Sapphire Rapids' 2 MiB.
constexpr int64_t kPartialSumBytes = 256 * 1024;

// One convolution, one image, resolved for the tiles.
struct Direct : ConvWindow {
  const float* x;
  const float* w;
  const float* bias;
  OutputTarget out;
  int64_t c;             // lanes = block
  int64_t cg;            // input channels per group
  int64_t group_blocks;  // output blocks per group
  int64_t chunks_per_group;
  int64_t segment;      // output pixels per work item at most
  int64_t segments;     // pieces of an output row, one work item each
  ref::Range inner;     // output columns whose window lies inside the row (the interior)
  int64_t seg_origin;   // the first interior column: segments s >= 1 start at origin + s * segment
  int64_t xb;           // x block: 1 (NCHW) or c
  int64_t x_cb_stride;  // floats between x's channel blocks (channel planes when xb = 1)
  int64_t w_ob_stride;  // floats between the packed weights of two output blocks
  int64_t pass_budget;  // bytes of weights per cache pass (pass_channels)
  bool pointwise;       // 1x1, stride 1, no padding, one group, NCHWc input: PointwiseTile
};

// What one tile call covers besides its pixels: taps kh in [kh0, kh1) and kw in
// [kw0, kw1) (those inside the input), and input channels [ic_begin, ic_end) of the group
// (one cache pass). The first pass starts from -0 and adds the bias after its FMAs, later
// ones start from the partial sums in y; the last applies the epilogue.
struct Span {
  int64_t kh0, kh1, kw0, kw1;
  int64_t ic_begin, ic_end;
  bool first, last;
  // x block and lane of the pass's first input channel, g * cg + ic_begin (computed once
  // per pass: a 64-bit division per tile cost 3 % of a pointwise layer).
  int64_t x_block0, x_lane0;
};

// One tap of one input channel: B weight vectors (ws, ws + w_ob_stride, ...) times R
// broadcast inputs (xs[r * pixel_step]), B * R independent FMAs into acc. kFirst: the
// products start the sums instead (acc is not read): the same numbers as FMAs into the
// -0 of StartSums, bit for bit, without its B * R register moves.
template <int B, int R, bool kFirst = false, class D, class V>
HWY_INLINE void TapStep(D d, V (&acc)[B][R], const float* xs, int64_t pixel_step, const float* ws,
                        int64_t w_ob_stride) {
  V wv[B];
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) wv[b] = hn::LoadU(d, ws + b * w_ob_stride);
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
    const V xv = hn::Set(d, xs[r * pixel_step]);
    HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
      acc[b][r] = kFirst ? hn::Mul(wv[b], xv) : hn::MulAdd(wv[b], xv, acc[b][r]);
    }
  }
}

// TapStep for B blocks whose last holds at most half a vector of output channels: that
// block's R FMAs run on half-width vectors (dh), into hacc; the B - 1 others as TapStep's.
// The upper lanes would only multiply the zero weights of padded output channels. On AMD
// Zen 4, which runs a 512-bit FMA as two 256-bit halves, a half-width FMA costs half;
// Intel's 512-bit FMA ports, AVX2 and NEON run as many FMAs either way (README.md).
template <int B, int R, bool kFirst = false, class D, class DH, class V, class VH>
HWY_INLINE void TapStepHalf(D d, DH dh, V (&acc)[B][R], VH (&hacc)[R], const float* xs,
                            int64_t pixel_step, const float* ws, int64_t w_ob_stride) {
  V wv[B];
  HWY_UNROLL(16) for (int b = 0; b + 1 < B; ++b) wv[b] = hn::LoadU(d, ws + b * w_ob_stride);
  const VH wh = hn::LoadU(dh, ws + (B - 1) * w_ob_stride);
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
    VH xh;
    if constexpr (B > 1) {
      const V xv = hn::Set(d, xs[r * pixel_step]);
      HWY_UNROLL(16) for (int b = 0; b + 1 < B; ++b) {
        acc[b][r] = kFirst ? hn::Mul(wv[b], xv) : hn::MulAdd(wv[b], xv, acc[b][r]);
      }
      xh = hn::LowerHalf(dh, xv);
    } else {
      xh = hn::Set(dh, xs[r * pixel_step]);
    }
    hacc[r] = kFirst ? hn::Mul(wh, xh) : hn::MulAdd(wh, xh, hacc[r]);
  }
}

// One tap of one input channel into a tile's sums: TapStepHalf when kHalf (block B - 1's
// sums in hacc), else TapStep (hacc unused).
template <bool kHalf, int B, int R, bool kFirst = false, class D, class DH, class V, class VH>
HWY_INLINE void TileTap(D d, DH dh, V (&acc)[B][R], VH (&hacc)[R], const float* xs,
                        int64_t pixel_step, const float* ws, int64_t w_ob_stride) {
  if constexpr (kHalf) {
    TapStepHalf<B, R, kFirst>(d, dh, acc, hacc, xs, pixel_step, ws, w_ob_stride);
  } else {
    TapStep<B, R, kFirst>(d, acc, xs, pixel_step, ws, w_ob_stride);
  }
}

// The three taps of one row of a 3-wide window for R stride-2 pixels of an NCHW input
// (xr: the row at the first pixel's first tap; ws: tap 0's weights, taps 1 and 2 follow
// c floats apart): input 2r + 2 is pixel r's tap 2 and pixel r + 1's tap 0, so one
// broadcast serves both: 2R + 1 broadcasts for 3R FMAs per block instead of 3R. Each
// pixel's sums still add taps 0, 1, 2 in order (TileTap's, bit for bit). kHalf: block
// B - 1 on half-width vectors, as TapStepHalf. The 3B weight vectors stay in registers:
// only where B * R + 3B + 2 vectors fit (kRow3Stride2).
template <bool kHalf, int B, int R, class D, class DH, class V, class VH>
HWY_INLINE void TapRow3Stride2(D d, DH dh, V (&acc)[B][R], VH (&hacc)[R], const float* xr,
                               const float* ws, int64_t w_ob_stride) {
  constexpr int kFull = kHalf ? B - 1 : B;  // blocks on full vectors
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  V w[3][B];
  [[maybe_unused]] VH wh[3];
  HWY_UNROLL(3) for (int j = 0; j < 3; ++j) {
    HWY_UNROLL(16)
    for (int b = 0; b < kFull; ++b) w[j][b] = hn::LoadU(d, ws + b * w_ob_stride + j * c);
    if constexpr (kHalf) wh[j] = hn::LoadU(dh, ws + (B - 1) * w_ob_stride + j * c);
  }
  // Input x into the sums of pixel r by tap j.
  const auto fma = [&](int j, int r, const float* x) HWY_ATTR {
    const V xv = hn::Set(d, *x);
    HWY_UNROLL(16) for (int b = 0; b < kFull; ++b) acc[b][r] = hn::MulAdd(w[j][b], xv, acc[b][r]);
    if constexpr (kHalf) {
      const VH xh = kFull > 0 ? hn::LowerHalf(dh, xv) : hn::Set(dh, *x);
      hacc[r] = hn::MulAdd(wh[j], xh, hacc[r]);
    }
  };
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
    // Input 2r: pixel r's tap 0 and pixel r - 1's tap 2, then input 2r + 1.
    const V xv = hn::Set(d, xr[2 * r]);
    HWY_UNROLL(16) for (int b = 0; b < kFull; ++b) {
      acc[b][r] = hn::MulAdd(w[0][b], xv, acc[b][r]);
      if (r > 0) acc[b][r - 1] = hn::MulAdd(w[2][b], xv, acc[b][r - 1]);
    }
    if constexpr (kHalf) {
      const VH xh = kFull > 0 ? hn::LowerHalf(dh, xv) : hn::Set(dh, xr[2 * r]);
      hacc[r] = hn::MulAdd(wh[0], xh, hacc[r]);
      if (r > 0) hacc[r - 1] = hn::MulAdd(wh[2], xh, hacc[r - 1]);
    }
    fma(1, r, xr + 2 * r + 1);
  }
  fma(2, R - 1, xr + 2 * R);
}

// Whether a tile of B blocks x R pixels runs TapRow3Stride2: its accumulators, 3B weight
// vectors and 2 inputs fit the target's registers.
template <int B, int R>
inline constexpr bool kRow3Stride2 = B* R + 3 * B + 2 <= kVectorRegisters;

// With kHalf, block B - 1's finished half-width sums widened into acc (upper lanes 0), for
// AddBias, the epilogue or a pass's store; nothing otherwise.
template <bool kHalf, int B, int R, class D, class V, class VH>
HWY_INLINE void WidenHalf(D d, V (&acc)[B][R], VH (&hacc)[R]) {
#if HWY_TARGET != HWY_SCALAR  // no ZeroExtendVector; the tiles never run there (DirectConv)
  if constexpr (kHalf) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) acc[B - 1][r] = hn::ZeroExtendVector(d, hacc[r]);
  }
#else
  (void)d, (void)acc, (void)hacc;
#endif
}

// The start of a first cache pass's sums: -0, the identity of float addition (+0 would
// turn a sum of -0 into +0). The bias comes after the pass's FMAs (AddBias): with the
// bias as the starting value, each tile's first FMAs waited on its loads. Every tile
// adds in this order but the short ones of the channels-inside order (kChains, TileImpl),
// so an interior pixel's sum does not depend on the tile that computes it (a ConvChain
// band's height can shorten the segments, and move the tail tiles' pixels).
template <int B, int R, class D, class V>
HWY_INLINE void StartSums(D d, V (&acc)[B][R]) {
  const V neg_zero = hn::Set(d, -0.0f);
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) acc[b][r] = neg_zero;
  }
}

// Copies of the sums a tile of kAccumulators vectors alternates its input channels between
// (TileImpl's channels-inside order, NchwEdgePixel): fewer than 4 accumulators would chain
// every FMA on the one before (4 cycles each on AVX-512, while loads allow one per cycle).
template <int kAccumulators>
inline constexpr int kSumCopies = kAccumulators >= 4 ? 1 : (4 + kAccumulators - 1) / kAccumulators;

// acc += the bias of output blocks ob0 .. ob0 + B - 1.
template <int B, int R, class D, class V>
HWY_INLINE void AddBias(D d, const Direct& k, int64_t ob0, V (&acc)[B][R]) {
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    const V bias = LoadBias(d, k.bias, k.out.channels, ob0 + b);
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) acc[b][r] = hn::Add(acc[b][r], bias);
  }
}

// B output blocks from ob0 (all in group g) x R pixels from column ow0 of row oh.
// kStep: the floats between the R pixels' inputs when known at compile time (0: run
// time, r * stride * x_block). Known offsets take no registers, so such tiles reach
// kTileMaxPixels<B> pixels: consecutive pixels of an NCHWc input (stride 1, kStep = c)
// and stride-2 pixels of an NCHW input (the first layers, kStep = 2).
// kTapsInside: the loop order for an NCHW input with no more channels than taps per row
// (below). Each order is its own function: with both loop nests in one, GCC kept the
// accumulators in memory outside the FMA loops (48 vector stores and loads per tile).
// kColumn: the R pixels are rows oh .. oh + R - 1 of column ow0 instead (ColumnBorder):
// k.ow output pixels and k.sh input rows apart.
// kHalf: block B - 1 holds at most half a vector of output channels; its FMAs run on
// half-width vectors (TapStepHalf), its sums widened (upper lanes 0) before the epilogue
// or a pass's store. Row runs it for the interior tiles of an NCHW input: the first
// layers at stride 2 (RetinaFace's 3 -> 8, whose interior runs PixelVectorTile on 16
// lanes but for a segment's last pixels), ppocr's 96 -> 24 at stride 1 (the full tiles
// and NchwTailN's), and for the full tiles of a dense NCHWc row outside one cache pass.
// PointwiseTile's kHalf is PointwisePairTile instead (README.md, "Half blocks").
template <int B, int R, int kStep, bool kTapsInside, bool kColumn = false, bool kHalf = false>
HWY_NOINLINE void TileImpl(const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t ow0,
                           const Span& sp) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = k.c;
  const int64_t pix0 = oh * k.ow + ow0;
  const int64_t out_step = kColumn ? k.ow * c : c;  // floats between the R pixels of y
  // Every loop over acc, here and in TapStep and StoreBlocks, carries HWY_UNROLL: GCC
  // scalarises an array into registers only if all its indices are constants when its
  // SRA pass runs, which is before the loops it would unroll on its own. Without the
  // pragmas, acc lived on the stack outside the FMA loop: 48 vector moves and 24 loads
  // per tile of the 4x6 pointwise tile (UltraFace slim-320: 2.63 -> 2.49 ms, median of 5
  // alternated runs).
  V acc[B][R];
  [[maybe_unused]] const hn::Half<decltype(d)> dh;
  hn::Vec<decltype(dh)> hacc[R];  // block B - 1's sums when kHalf (TapStepHalf)
  if (sp.first) {
    StartSums(d, acc);
    if constexpr (kHalf) HWY_UNROLL(16) for (int r = 0; r < R; ++r) hacc[r] = hn::Set(dh, -0.0f);
  } else {
    HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
      const float* yp = k.out.y + ((ob0 + b) * k.out.plane + pix0) * c;
      HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
        if (kHalf && b == B - 1) {
          hacc[r] = hn::LoadU(dh, yp + r * out_step);
        } else {
          acc[b][r] = hn::LoadU(d, yp + r * out_step);
        }
      }
    }
  }
  const float* wb = k.w + ob0 * k.w_ob_stride;
  const int64_t w_ic_stride = k.kh * k.kw * c;  // packed: [ob][icg][kh][kw][c]
  const int64_t ic0 = g * k.cg;
  const int64_t col0 = ow0 * k.sw - k.pw;
  const int64_t pixel_step = kColumn     ? k.sh * k.wd * k.xb
                             : kStep > 0 ? int64_t{kStep}
                                         : k.sw * k.xb;
  if constexpr (kTapsInside) {
    // NCHW input with no more channels than taps per row (the first layers: 3 channels
    // with 3x3, 3 or 4 with 5x5 and 7x7; a border pixel or a short cache pass may
    // switch order, see Tile): channels outside, taps inside, so the innermost loop walks
    // a row of taps (x + dilation, w + c per tap); a 3-channel run per tap cost as much
    // loop as FMAs. Equal counts (3 channels, 3x3) take this order too: in conv_bench,
    // RetinaFace 640's first layer went from 1520 to 847 us, UltraFace slim-320's from 236
    // to 148 and MobileNetV2's from 210 to 146 (channels inside before). ppocr's NCHW
    // 3x3 convs over 96 channels keep channels inside: 80 us against 145 this way.
    //
    // A 3x3 window without dilation whose taps are all inside (the interior of the first
    // layers) unrolls its taps at compile time: with the run-time tap loops, a 12-pixel
    // tile of UltraFace's first layer took 1.2x as long on a 24 x 320 input in L2.
    const bool full3x3 = k.kh == 3 && k.kw == 3 && k.dh == 1 && k.dw == 1 && sp.kh0 == 0 &&
                         sp.kh1 == 3 && sp.kw0 == 0 && sp.kw1 == 3;
    for (int64_t icg = sp.ic_begin; full3x3 && icg < sp.ic_end; ++icg) {
      const float* xc = k.x + (ic0 + icg) * k.x_cb_stride + col0 + (oh * k.sh - k.ph) * k.wd;
      const float* wc = wb + icg * w_ic_stride;
      HWY_UNROLL(3) for (int i = 0; i < 3; ++i) {
        const float* xr = base_register(xc + i * k.wd);
        if constexpr (kStep == 2 && !kColumn && kRow3Stride2<B, R>) {
          TapRow3Stride2<kHalf>(d, dh, acc, hacc, xr, wc + i * 3 * c, k.w_ob_stride);
          continue;
        }
        HWY_UNROLL(3) for (int j = 0; j < 3; ++j) {
          // On the 16-register targets each tap reads through a pointer of its own: GCC
          // otherwise shares the broadcasts that two taps load (at stride 2, pixel r's tap 2
          // is pixel r + 1's tap 0), keeps them live across taps and spills the
          // accumulators. AVX2's 2 x 6 tile of UltraFace's first layer read or wrote the
          // stack 126 times per 120 FMAs; on AMD Zen 3, the 3 -> 8, 3 -> 16 and 3 -> 32
          // first layers of RetinaFace 640, UltraFace and MobileNetV2 took 0.68 to 0.70 of
          // their time this way (f32_direct_conv, mins of 5 alternated runs of 200 calls).
          const float* xj = xr + j;
          if constexpr (kVectorRegisters < 32) xj = base_register(xj);
          TileTap<kHalf>(d, dh, acc, hacc, xj, pixel_step, wc + (i * 3 + j) * c, k.w_ob_stride);
        }
      }
    }
    for (int64_t icg = sp.ic_begin; !full3x3 && icg < sp.ic_end; ++icg) {
      const float* xc = k.x + (ic0 + icg) * k.x_cb_stride + col0 + sp.kw0 * k.dw;
      const float* wc = wb + icg * w_ic_stride + sp.kw0 * c;
      for (int64_t i = sp.kh0; i < sp.kh1; ++i) {
        const float* xs = xc + (oh * k.sh - k.ph + i * k.dh) * k.wd;
        const float* ws = wc + i * k.kw * c;
        for (int64_t j = sp.kw0; j < sp.kw1; ++j, xs += k.dw, ws += c) {
          TileTap<kHalf>(d, dh, acc, hacc, xs, pixel_step, ws, k.w_ob_stride);
        }
      }
    }
  } else {
    // Taps outside, input channels inside: the innermost loop walks a run of channels
    // (x + x_step, w + kH*kW*c per channel) with no index arithmetic beyond two pointer
    // increments. Channels of one run are x_step floats apart in x: the lanes of one
    // NCHWc block, or the planes of an NCHW input (whose "blocks" are single channels).
    // The pass's first (block, lane) is the same for every tap: its division stays out.
    //
    // In this loop order, a tile of fewer than 4 accumulators (most border pixels, R = 1,
    // and the narrowest interior tails) would chain every FMA on the one before (4 cycles
    // each on AVX-512, while loads allow one per cycle): channels then alternate between
    // kChains copies of the accumulators, summed at the end. UltraFace's heads (3x3 over
    // 256 channels at 4x5 pixels, 14 of them border pixels) went from 33 to 25 us in
    // conv_bench.
    constexpr int kChains = kSumCopies<B * R>;
    static_assert(!kHalf || kChains == 1, "half-width tiles have one chain");
    V part[kChains][B][R];
    HWY_UNROLL(16) for (int q = 1; q < kChains; ++q) StartSums(d, part[q]);
    const int64_t x_step = k.xb == 1 ? k.x_cb_stride : 1;
    const int64_t cb0 = sp.x_block0, lane0 = sp.x_lane0;
    for (int64_t i = sp.kh0; i < sp.kh1; ++i) {
      const int64_t row = (oh * k.sh - k.ph + i * k.dh) * k.wd;
      for (int64_t j = sp.kw0; j < sp.kw1; ++j) {
        const float* xt = k.x + (row + col0 + j * k.dw) * k.xb;
        const float* wt = wb + (i * k.kw + j) * c;
        int64_t icg = sp.ic_begin;
        int64_t cb = cb0, lane = lane0;
        while (icg < sp.ic_end) {
          const int64_t n =
              k.xb == 1 ? sp.ic_end - icg : std::min(k.xb - lane, sp.ic_end - icg);
          const float* xs = xt + cb * k.x_cb_stride + lane;
          const float* ws = wt + icg * w_ic_stride;
          int64_t l = 0;
          if constexpr (kChains > 1) {
            for (; l + kChains <= n; l += kChains) {
              HWY_UNROLL(16) for (int q = 0; q < kChains; ++q, xs += x_step, ws += w_ic_stride) {
                TapStep<B, R>(d, q == 0 ? acc : part[q], xs, pixel_step, ws, k.w_ob_stride);
              }
            }
            // The rest of the run, one channel per copy: a first layer's border pixel
            // (3 channels per tap) would otherwise chain all its FMAs.
            HWY_UNROLL(16) for (int q = 0; q < kChains - 1; ++q) {
              if (l == n) break;
              TapStep<B, R>(d, q == 0 ? acc : part[q], xs, pixel_step, ws, k.w_ob_stride);
              ++l, xs += x_step, ws += w_ic_stride;
            }
          }
          for (; l < n; ++l, xs += x_step, ws += w_ic_stride) {
            TileTap<kHalf>(d, dh, acc, hacc, xs, pixel_step, ws, k.w_ob_stride);
          }
          icg += n;
          lane = 0;
          cb += k.xb == 1 ? n : 1;
        }
      }
    }
    HWY_UNROLL(16) for (int q = 1; q < kChains; ++q) {
      HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
        HWY_UNROLL(16) for (int r = 0; r < R; ++r) acc[b][r] = hn::Add(acc[b][r], part[q][b][r]);
      }
    }
  }
  WidenHalf<kHalf>(d, acc, hacc);
  if (sp.first) AddBias(d, k, ob0, acc);
  if (sp.last) {
    if constexpr (kColumn) {
      // One pixel at a time: the epilogue's stores take consecutive pixels.
      HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
        V one[B][1];
        HWY_UNROLL(16) for (int b = 0; b < B; ++b) one[b][0] = acc[b][r];
        StoreBlocks(d, k.out, ob0, pix0 + r * k.ow, one);
      }
    } else {
      StoreBlocks(d, k.out, ob0, pix0, acc);
    }
    return;
  }
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    float* yp = k.out.y + ((ob0 + b) * k.out.plane + pix0) * c;
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) hn::StoreU(acc[b][r], d, yp + r * out_step);
  }
}

// Input channels per group up to which an NCHW layer prefetches the next output row's input
// (PrefetchNextRow): the network input's 3 (RGB: every model measured) or 4 (RGBA or
// padded, allowed, not measured).
constexpr int64_t kPrefetchMaxChannels = 4;

// PrefetchNextRow's loop: columns [col0, col1] of the input rows below row oh's window
// that row oh + 1 reads, for the span's channels of group g, one prefetch per 64-byte line.
// Inline: out of line (HWY_NOINLINE, less code in every Tile), GCC dropped every call to it,
// since to GCC a function whose only effect is a prefetch has none (no call was left in
// PixelVectorTile's code; a 10-line test at -O3 keeps neither the call nor the function),
// and RetinaFace 640's first ConvChain took 2.13 to 2.62 ms again, against 1.15 to 1.47
// inline (3 alternated `--per-layer` rounds).
HWY_INLINE void PrefetchRows(const Direct& k, int64_t g, const Span& sp, int64_t oh, int64_t col0,
                             int64_t col1) {
  const int64_t done = oh * k.sh - k.ph + (k.kh - 1) * k.dh;  // row oh's window's last row
  constexpr uintptr_t kLine = 64;
  for (int64_t i = 0; i < k.kh; ++i) {
    const int64_t row = (oh + 1) * k.sh - k.ph + i * k.dh;
    if (row <= done || row < 0) continue;
    for (int64_t icg = sp.ic_begin; icg < sp.ic_end; ++icg) {
      const uintptr_t plane =
          reinterpret_cast<uintptr_t>(k.x) + (g * k.cg + icg) * k.x_cb_stride * sizeof(float);
      const uintptr_t a0 = plane + (row * k.wd + col0) * sizeof(float);
      const uintptr_t a1 = plane + (row * k.wd + col1) * sizeof(float);
      for (uintptr_t a = a0 & ~(kLine - 1); a <= a1; a += kLine) {
        hwy::Prefetch(reinterpret_cast<const float*>(a));
      }
    }
  }
}

// Prefetches the input rows below row oh's window that output row oh + 1 reads (2 at
// stride 2 for a 3x3 or 7x7 window, 1 at stride 1), over the columns of output pixels
// [ow0, ow0 + n), for the span's input channels of group g: the first layers (an NCHW
// input, at most kPrefetchMaxChannels channels per group, a window larger than 1x1; a 1x1
// NCHW conv is flattened into one row by resolve). A first layer reads the graph input,
// evicted by the rest of the model since the last run, and the hardware prefetchers pick
// each 2.5 KB row of RetinaFace 640's up only after its first misses (README.md: its first
// ConvChain took twice the time without). Within a layer or a ConvChain band the lines are
// its next row's; at a band's last row, the next band's first rows. Past the image's last
// row they are the next channel's first rows, or for the last channel up to kh rows past
// the tensor: a prefetch never faults and writes nothing, and the addresses are integers
// because a pointer past the tensor would be undefined behaviour.
HWY_INLINE void PrefetchNextRow(const Direct& k, int64_t g, int64_t oh, int64_t ow0, int64_t n,
                                const Span& sp) {
  if (k.xb != 1 || k.cg > kPrefetchMaxChannels || k.kh * k.kw == 1) return;
  const int64_t col0 = std::max<int64_t>(ow0 * k.sw - k.pw, 0);
  const int64_t col1 = std::min((ow0 + n - 1) * k.sw - k.pw + (k.kw - 1) * k.dw, k.wd - 1);
  if (col1 >= col0) PrefetchRows(k, g, sp, oh, col0, col1);
}

#if HWY_MAX_BYTES == 64  // PixelVectorTile: 16-lane vectors only (AVX-512)
// Output channels a PixelVectorTile computes: half a vector (the lanes of a half block).
constexpr int kPixelTileChannels = kLanes / 2;

// The 16 x 8 transpose behind PixelVectorTile (16 lanes only): a[o] holds output channel o
// of 16 consecutive pixels; out[p] gets pixel p's 8 channels in lanes 0 .. 7 and 0 in the
// upper 8, as a half block's sums are laid out in NCHWc (WidenHalf). 40 lane shuffles:
// the 256-bit halves of channels o and o + 4 are paired (8), interleaved by 32 and by 64
// bits within 128-bit blocks (16), which leaves each block with 4 channels of one pixel,
// then one lane table per two pixels (8) and an upper half (8).
template <class D, class V>
HWY_INLINE void PixelsFromChannels(D d, const V (&a)[8], V (&out)[16]) {
  const hn::Half<D> dh;
  const hn::Repartition<double, D> dd;
  alignas(64) static constexpr int32_t kBlocks[16] = {0, 1, 2, 3, 8,  9,  10, 11,
                                                      4, 5, 6, 7, 12, 13, 14, 15};
  const auto blocks = hn::SetTableIndices(d, kBlocks);
  HWY_UNROLL(2) for (int half = 0; half < 2; ++half) {
    // s[o]: [channel o | channel o + 4] of pixels 8 half .. 8 half + 7.
    V s[4];
    HWY_UNROLL(4) for (int o = 0; o < 4; ++o) {
      s[o] = half == 0 ? hn::ConcatLowerLower(d, a[o + 4], a[o])
                       : hn::ConcatUpperUpper(d, a[o + 4], a[o]);
    }
    const V t0 = hn::InterleaveLower(d, s[0], s[1]), t1 = hn::InterleaveUpper(d, s[0], s[1]);
    const V t2 = hn::InterleaveLower(d, s[2], s[3]), t3 = hn::InterleaveUpper(d, s[2], s[3]);
    // q[j]'s blocks: pixel j's channels 0-3, pixel 4 + j's 0-3, pixel j's 4-7, pixel 4 + j's 4-7.
    const V q[4] = {
        hn::BitCast(d, hn::InterleaveLower(dd, hn::BitCast(dd, t0), hn::BitCast(dd, t2))),
        hn::BitCast(d, hn::InterleaveUpper(dd, hn::BitCast(dd, t0), hn::BitCast(dd, t2))),
        hn::BitCast(d, hn::InterleaveLower(dd, hn::BitCast(dd, t1), hn::BitCast(dd, t3))),
        hn::BitCast(d, hn::InterleaveUpper(dd, hn::BitCast(dd, t1), hn::BitCast(dd, t3)))};
    HWY_UNROLL(4) for (int j = 0; j < 4; ++j) {
      const V pair = hn::TableLookupLanes(q[j], blocks);  // [pixel j | pixel 4 + j]
      out[8 * half + j] = hn::ZeroExtendVector(d, hn::LowerHalf(dh, pair));
      out[8 * half + 4 + j] = hn::ZeroExtendVector(d, hn::UpperHalf(dh, pair));
    }
  }
}

// 16 * NV output pixels from column ow0 of row oh of a 3x3, stride-2 conv of an NCHW input
// into one block of at most half a vector of output channels (RetinaFace's first layer,
// 3 -> 8), on 16-lane vectors only: the lanes hold 16 pixels of one output channel
// instead of the 16 channels of one pixel, so every FMA lane computes an output
// (TileImpl's kHalf tile runs 8 of 16 lanes, and on AMD Zen 5 and Intel a half-width FMA
// takes a full one's slot). For each input row, ConcatEven and ConcatOdd of two loads
// give the 16 pixels' taps 0 and 1 (input columns 2p and 2p + 1), and ConcatOdd of two
// loads 1 column on, tap 2 (no load reads past the last tap); each tap's 8 weights are
// broadcast. The sums go back to pixels
// (PixelsFromChannels) for the bias and the epilogue (StoreBlocks). Each pixel adds its
// channels, rows and taps in TileImpl's order from -0 (bit for bit its sums): the pixels TileImpl
// computes in the same segment and row (its tails) add alike. Needs every tap inside (the rows' and
// columns') and one cache pass. Register blocking (AVX-512: 2 FMA pipes of 4 cycles'
// latency, 32 vector registers): NV = 2 keeps 8 x 2 = 16 independent sums, twice the 8 FMAs in
// flight that cover the latency, beside the 3 x 2 tap vectors and a weight (23 registers), and
// every broadcast weight feeds 2 FMAs; NV = 1 takes a row's remaining 16 pixels.
template <int NV>
HWY_NOINLINE void PixelVectorTile(const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t ow0,
                                  const Span& sp) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int kM = kPixelTileChannels;
  const int64_t c = k.c;
  V acc[kM][NV];
  HWY_UNROLL(16) for (int o = 0; o < kM; ++o) {
    HWY_UNROLL(4) for (int v = 0; v < NV; ++v) acc[o][v] = hn::Set(d, -0.0f);
  }
  PrefetchNextRow(k, g, oh, ow0, 16 * NV, sp);
  const float* wb = k.w + ob0 * k.w_ob_stride;
  const int64_t col0 = ow0 * 2 - k.pw;
  for (int64_t icg = sp.ic_begin; icg < sp.ic_end; ++icg) {
    const float* xc = k.x + (g * k.cg + icg) * k.x_cb_stride + col0 + (oh * k.sh - k.ph) * k.wd;
    const float* wc = wb + icg * 9 * c;
    HWY_UNROLL(3) for (int i = 0; i < 3; ++i) {
      const float* xr = xc + i * k.wd;
      V x[3][NV];
      HWY_UNROLL(4) for (int v = 0; v < NV; ++v) {
        const V lo = hn::LoadU(d, xr + 32 * v), hi = hn::LoadU(d, xr + 32 * v + 16);
        x[0][v] = hn::ConcatEven(d, hi, lo);
        x[1][v] = hn::ConcatOdd(d, hi, lo);
        // Tap 2 (columns 2p + 2) as the odd lanes of loads one column on: the last load ends
        // at the last tap's column, never past it.
        const V lo2 = hn::LoadU(d, xr + 32 * v + 1), hi2 = hn::LoadU(d, xr + 32 * v + 17);
        x[2][v] = hn::ConcatOdd(d, hi2, lo2);
      }
      HWY_UNROLL(3) for (int j = 0; j < 3; ++j) {
        const float* ws = wc + (i * 3 + j) * c;
        HWY_UNROLL(16) for (int o = 0; o < kM; ++o) {
          const V w = hn::Set(d, ws[o]);
          HWY_UNROLL(4) for (int v = 0; v < NV; ++v) acc[o][v] = hn::MulAdd(w, x[j][v], acc[o][v]);
        }
      }
    }
  }
  HWY_UNROLL(4) for (int v = 0; v < NV; ++v) {
    V a[kM], pixels[1][16];
    HWY_UNROLL(16) for (int o = 0; o < kM; ++o) a[o] = acc[o][v];
    PixelsFromChannels(d, a, pixels[0]);
    AddBias(d, k, ob0, pixels);
    StoreBlocks(d, k.out, ob0, oh * k.ow + ow0 + 16 * v, pixels);
  }
}
#endif  // HWY_MAX_BYTES == 64

#if HWY_TARGET != HWY_SCALAR  // the tiles never run there (DirectConv)
// PointwisePairTile's lane tables: lane i of the interleaved pair weights takes lane
// i / 2 of channel (i & 1)'s weights (order, for TableLookupLanes over [w_l | w_l+1]),
// and the even lanes (1) where a lone last channel goes.
struct PairLanes {
  alignas(64) int32_t order[kLanes];
  alignas(64) float even[kLanes];
};
constexpr PairLanes MakePairLanes() {
  PairLanes t{};
  for (int i = 0; i < kLanes; ++i) {
    t.order[i] = (i & 1) * (kLanes / 2) + i / 2;
    t.even[i] = (i & 1) ? 0.0f : 1.0f;
  }
  return t;
}
alignas(64) constexpr PairLanes kPairLanes = MakePairLanes();

// PointwisePairTile's step: input channels l and l + 1 (kPair; l alone otherwise, its
// partner's lanes 0) at xs (pixel r at xs + r * c), weights ws (channel l + 1's at ws + c):
// the full blocks channel by channel, then the half block on the pair.
template <int B, int R, bool kPair, class D, class V, class I>
HWY_INLINE void PairStep(D d, V (&acc)[B][R], const float* xs, const float* ws, int64_t wob,
                         I interleave) {
  constexpr int kFull = B - 1;
  constexpr int64_t c = kLanes;
  HWY_UNROLL(2) for (int j = 0; j < (kPair ? 2 : 1); ++j) {
    if constexpr (kFull > 0) {
      V wv[kFull];
      HWY_UNROLL(16) for (int b = 0; b < kFull; ++b) wv[b] = hn::LoadU(d, ws + j * c + b * wob);
      HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
        const V xv = hn::Set(d, xs[r * c + j]);
        HWY_UNROLL(16) for (int b = 0; b < kFull; ++b) acc[b][r] = hn::MulAdd(wv[b], xv, acc[b][r]);
      }
    }
  }
  const V w0 = hn::LoadU(d, ws + kFull * wob);
  const V w1 = kPair ? hn::LoadU(d, ws + c + kFull * wob) : hn::Zero(d);
  const V wp = hn::TableLookupLanes(hn::ConcatLowerLower(d, w1, w0), interleave);
  const hn::Repartition<uint64_t, D> d64;
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
    V xp;
    if constexpr (kPair) {
      uint64_t bits;  // x[l] and x[l + 1], adjacent
      std::memcpy(&bits, xs + r * c, sizeof bits);
      xp = hn::BitCast(d, hn::Set(d64, bits));
    } else {
      xp = hn::IfThenElseZero(hn::Gt(hn::Load(d, kPairLanes.even), hn::Zero(d)),
                              hn::Set(d, xs[r * c]));
    }
    acc[kFull][r] = hn::MulAdd(wp, xp, acc[kFull][r]);
  }
}

// PointwiseTile with a last block of at most half a vector of output channels (kHalf):
// the B - 1 full blocks as PointwiseTile's (channel by channel, TapStep's order), and the
// half block's h <= c/2 outputs on full vectors of channel pairs: lanes 2j and 2j + 1 hold
// output j's sums over the even and the odd input channels. Per pixel and channel pair
// one 64-bit broadcast (x[l], x[l + 1], which are adjacent in NCHWc) and one full-width
// FMA, where half-width FMAs take two broadcasts and two FMAs: on AMD Zen 5 and Intel, a
// 256-bit FMA takes an FMA port's slot as a 512-bit one does, so that block ran at half
// the peak. The pair's weights are interleaved once per channel pair and tile (two lane
// shuffles), and each pixel's two sums added at the end (even + odd) and packed into the lower
// lanes (the upper ones 0, as the padded output channels). In a layer of one cache pass every pixel
// goes through this tile (Row's pointwise tail too, PointwisePairTail), so that it adds
// alike in any tile; the even/odd split reassociates the reference's channel-order sum. On
// 16 lanes a layer of one block from 32 to 256 channels runs GroupTile instead (below).
template <int B, int R>
HWY_INLINE void PointwisePairTile(const Direct& k, int64_t ob0, int64_t pix0) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t c = kLanes;
  constexpr int kFull = B - 1;
  V acc[B][R];
  StartSums(d, acc);
  const int64_t wob = k.w_ob_stride;
  const float* x = k.x + pix0 * c;
  const float* w = k.w + ob0 * wob;  // packed [ob][ic][c]
  const auto interleave = hn::SetTableIndices(d, kPairLanes.order);
  const int64_t whole = k.cg / c;
  for (int64_t cb = 0; cb < whole; ++cb) {
    const float* xs = x + cb * k.x_cb_stride;
    const float* ws = w + cb * c * c;
    for (int l = 0; l < c; l += 2)
      PairStep<B, R, true>(d, acc, xs + l, ws + l * c, wob, interleave);
  }
  const float* xs = x + whole * k.x_cb_stride;
  const float* ws = w + whole * c * c;
  const int64_t rest = k.cg - whole * c;
  int64_t l = 0;
  for (; l + 1 < rest; l += 2) PairStep<B, R, true>(d, acc, xs + l, ws + l * c, wob, interleave);
  if (l < rest) PairStep<B, R, false>(d, acc, xs + l, ws + l * c, wob, interleave);
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
    const V sums = hn::Add(acc[kFull][r], hn::Reverse2(d, acc[kFull][r]));
    acc[kFull][r] = hn::ConcatEven(d, hn::Zero(d), sums);
  }
  AddBias(d, k, ob0, acc);
  StoreBlocks<true>(d, k.out, ob0, pix0, acc);
}
#endif  // HWY_TARGET != HWY_SCALAR

#if HWY_MAX_BYTES == 64  // GroupTile: 16-lane vectors only (AVX-512)
// A pointwise layer with at most 12 or with 17 to 20 output channels, from 32 to 256 input
// channels (the detection heads 64 -> 12, 48 -> 12 and 64 -> 6, ppocr's 96 -> 18, RFB's
// 64 -> 8 branch convs) runs GroupTile instead of PointwiseTile, whose lanes are a block's
// 16 output channels (12 of 16 busy for 12) or, for at most 8 in a block,
// PointwisePairTile's channel pairs (6 of 8 for 6, with a broadcast per FMA; 16 + 2 of
// 16 + 8 for 18). Here lane 4a + b of vector v holds output channel 4v + a's sum over
// input channels b mod 4: per pixel and 4 input channels, one 128-bit broadcast
// (LoadDup128, a load with no shuffle) and V = ceil(M / 4) FMAs, every lane working when M
// is a multiple of 4. GroupVectors: V, or 0 when the layer is not GroupTile's
// (direct_group_tile: 13 to 16 outputs fill one block's 16 lanes anyway; more than 20 take
// other tiles; fewer than kGroupTileMinChannels inputs: measured from 48 up, and with few
// channels the per-pixel reduction is a larger share: 16 -> 12 would take 12 FMAs and about
// 10 shuffles and adds per pixel, against PointwiseTile's 16 FMAs; more than
// kGroupTileMaxChannels: the interleaved weights live on the stack).
constexpr int kGroupMaxVectors = 5;  // 20 outputs
int GroupVectors(const Direct& k) {
  const int64_t m = k.out.channels;
  if (!k.pointwise || k.chunks_per_group != 1 || !direct_group_tile(m, k.cg, kLanes)) return 0;
  return static_cast<int>((m + 3) / 4);
}

// GroupTile's weights, once per call: wg[(s * V + v) * 16 + 4a + b] = the weight of output
// channel 4v + a and input channel 4s + b (0 past M or C), from the packed [ob][ic][c]
// weights (a GroupVectors layer is one chunk: its blocks start at 0). Scalar code, C * 4V
// stores per call (one per ConvChain band and thread).
void InterleaveGroupWeights(const Direct& k, int v_count, float* wg) {
  const float* w = k.w;
  const int64_t steps = (k.cg + 3) / 4;
  for (int64_t s = 0; s < steps; ++s) {
    for (int v = 0; v < v_count; ++v) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const int64_t m = 4 * v + lane / 4, ic = 4 * s + lane % 4;
        wg[(s * v_count + v) * kLanes + lane] =
            m < k.out.channels && ic < k.cg
                ? w[m / kLanes * k.w_ob_stride + ic * kLanes + m % kLanes]
                : 0.0f;
      }
    }
  }
}

// Lane i's position in its 128-bit block (i mod 4): which input channel of a step it holds.
alignas(64) constexpr float kBlockLane[kLanes] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};

// One step of GroupTile: input channels 4s .. 4s + 3 of R pixels (xs, pixel r at xs + 16 r),
// their V interleaved weight vectors at ws. kMasked: only the first `rest` channels of the
// step exist (the input's padded lanes may hold anything, NaN: zeroed before the multiply).
template <int V, int R, bool kMasked = false, class D, class Vec>
HWY_INLINE void GroupStep(D d, Vec (&acc)[V][R], const float* xs, const float* ws,
                          int64_t rest = 4) {
  Vec w[V];
  HWY_UNROLL(8) for (int v = 0; v < V; ++v) w[v] = hn::Load(d, ws + v * kLanes);
  [[maybe_unused]] const auto valid =
      hn::Lt(hn::Load(d, kBlockLane), hn::Set(d, static_cast<float>(rest)));
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
    Vec xb = hn::LoadDup128(d, xs + r * kLanes);
    if constexpr (kMasked) xb = hn::IfThenElseZero(valid, xb);
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) acc[v][r] = hn::MulAdd(w[v], xb, acc[v][r]);
  }
}

// R pixels from pix0 of a GroupVectors layer (V vectors, weights wg from
// InterleaveGroupWeights). The channel loop goes by input block, 4 steps each (one 128-bit
// block per step), then the last block's whole steps and a masked one. Then each pixel's
// block sums: interleaves of 32- and 64-bit lanes within each 128-bit block leave lane
// 4a + v = the sum of vector v's block a (output channel 4v + a), and one lane permutation
// puts output m in lane m (7 shuffles and 3 adds per pixel for V = 3, fewer where the zero
// vectors fold away, against V C / 4 FMAs: 48 for 64 -> 12); vector 4 (outputs 16 to 19)
// goes the same way into block 1. The bias comes after the sums, then StoreBlocks'
// epilogue, as in PointwiseTile; every pixel of the layer goes through this tile (any R),
// so all add alike. Register blocking: V R accumulators, V weights and a broadcast input
// within the 32 registers: R = 8 for V = 3 (28 registers), 12 for V = 1 and 2 (14 and 27),
// 4 for V = 5 (26). The loops over V unroll by 8: unrolled by 4, V = 5 kept its
// accumulators in memory (ppocr's 96 -> 18 took 45 us in conv_bench against 35 before
// GroupTile; 30 unrolled).
template <int V, int R>
HWY_INLINE void GroupTile(const Direct& k, const float* wg, int64_t pix0) {
  const hn::ScalableTag<float> d;
  using Vec = hn::Vec<decltype(d)>;
  constexpr int64_t c = kLanes;
  Vec acc[V][R];
  StartSums(d, acc);
  const float* x = k.x + pix0 * c;
  const int64_t whole = k.cg / c;
  for (int64_t cb = 0; cb < whole; ++cb) {
    const float* xs = x + cb * k.x_cb_stride;
    const float* ws = wg + cb * 4 * V * c;
    HWY_UNROLL(4) for (int q = 0; q < 4; ++q) GroupStep<V, R>(d, acc, xs + 4 * q, ws + q * V * c);
  }
  const float* xs = x + whole * k.x_cb_stride;
  const float* ws = wg + whole * 4 * V * c;
  const int64_t rest = k.cg - whole * c;
  int64_t q = 0;
  for (; 4 * q + 4 <= rest; ++q) GroupStep<V, R>(d, acc, xs + 4 * q, ws + q * V * c);
  if (4 * q < rest) GroupStep<V, R, true>(d, acc, xs + 4 * q, ws + q * V * c, rest - 4 * q);
  const hn::Repartition<uint64_t, decltype(d)> d64;
  // Lane m of the output takes lane 4 (m mod 4) + m / 4 of the block sums.
  alignas(64) static constexpr int32_t kOrder[kLanes] = {0, 4, 8,  12, 1, 5, 9,  13,
                                                         2, 6, 10, 14, 3, 7, 11, 15};
  const auto order = hn::SetTableIndices(d, kOrder);
  constexpr int kBlocks = (V + 3) / 4;
  Vec out[kBlocks][R];
  HWY_UNROLL(2) for (int b = 0; b < kBlocks; ++b) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
      Vec a[4];
      HWY_UNROLL(4) for (int j = 0; j < 4; ++j) {
        a[j] = 4 * b + j < V ? acc[std::min(4 * b + j, V - 1)][r] : hn::Zero(d);
      }
      // Per block: (a0 lanes 0 + 2, a1 lanes 0 + 2, a0 lanes 1 + 3, a1 lanes 1 + 3); a2's, a3's.
      const Vec u = hn::Add(hn::InterleaveLower(d, a[0], a[1]), hn::InterleaveUpper(d, a[0], a[1]));
      const Vec w = hn::Add(hn::InterleaveLower(d, a[2], a[3]), hn::InterleaveUpper(d, a[2], a[3]));
      const auto ub = hn::BitCast(d64, u), wb = hn::BitCast(d64, w);
      const Vec sums = hn::Add(hn::BitCast(d, hn::InterleaveLower(d64, ub, wb)),
                               hn::BitCast(d, hn::InterleaveUpper(d64, ub, wb)));
      out[b][r] = hn::TableLookupLanes(sums, order);
    }
  }
  AddBias(d, k, 0, out);
  StoreBlocks<true>(d, k.out, 0, pix0, out);
}

// n pixels from pix0 of a GroupVectors layer: GroupTiles of R pixels, then of 4, 2 and 1.
template <int V, int R = (V <= 2   ? 12
                          : V == 3 ? 8
                                   : 4)>
HWY_NOINLINE void GroupRun(const Direct& k, const float* wg, int64_t pix0, int64_t n) {
  if constexpr (R >= 1) {
    for (; n >= R; n -= R, pix0 += R) GroupTile<V, R>(k, wg, pix0);
    if (n > 0) GroupRun<V, (R > 4 ? 4 : R / 2)>(k, wg, pix0, n);
  }
}
#endif  // HWY_MAX_BYTES == 64

// A pointwise tile (1x1, stride 1, no padding, NCHWc input) whose input channels are
// one cache pass (sp.first and sp.last: a pointwise layer's pass is a quarter of L2,
// pass_channels; 1024 input channels for 4 output blocks on a 1 MiB L2): B blocks x R pixels from
// pixel pix0 of the flattened image, the channel loop over whole input blocks with a compile-time
// trip count. Its sums add in TileImpl's order, bit for bit (a row's tail tiles are TileImpl's):
// input channel 0's products start them (the FMAs into StartSums' -0), the bias comes after the
// FMAs (AddBias). In f32_direct_conv (2 x 12 tiles, 16 and 32 input channels) this tile took 0.90
// and 0.93 of TileImpl's time; UltraFace, RetinaFace and MobileNetV2 0.97 to 0.99 of theirs. kHalf:
// PointwisePairTile (block B - 1 on pairs of input channels), for every pixel of the layer.
template <int B, int R, bool kHalf = false>
HWY_INLINE void PointwiseTile(const Direct& k, int64_t ob0, int64_t pix0) {
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kHalf) {
    PointwisePairTile<B, R>(k, ob0, pix0);
  } else
#endif
  {
    const hn::ScalableTag<float> d;
    using V = hn::Vec<decltype(d)>;
    constexpr int64_t c = kLanes;
    V acc[B][R];
    const int64_t wob = k.w_ob_stride;
    const float* x = k.x + pix0 * c;
    const float* w = k.w + ob0 * k.w_ob_stride;  // packed [ob][ic][c]
    const int64_t whole = k.cg / c;
    int64_t tail0 = 0;  // the partial block's first channel to compute
    if (k.cg == 1) {
      // One channel: its products would meet the bias add directly, which GCC may contract
      // into one FMA (-ffp-contract=fast), rounded once where TileImpl rounds twice.
      StartSums(d, acc);
    } else {
      // Input channel 0's products start the sums (TapStep's kFirst): with the 24 moves of
      // StartSums' -0 instead, a standalone 2 x 12 loop took 1.07 times as long.
      TapStep<B, R, true>(d, acc, x, c, w, wob);
      if (whole > 0) {
        for (int l = 1; l < c; ++l) TapStep<B, R>(d, acc, x + l, c, w + l * c, wob);
      } else {
        tail0 = 1;
      }
    }
    for (int64_t cb = 1; cb < whole; ++cb) {
      const float* xs = x + cb * k.x_cb_stride;
      const float* ws = w + cb * c * c;
      for (int l = 0; l < c; ++l) TapStep<B, R>(d, acc, xs + l, c, ws + l * c, wob);
    }
    const float* xs = x + whole * k.x_cb_stride;
    const float* ws = w + whole * c * c;
    for (int64_t l = tail0; l < k.cg - whole * c; ++l) {
      TapStep<B, R>(d, acc, xs + l, c, ws + l * c, wob);
    }
    AddBias(d, k, ob0, acc);
    StoreBlocks<true>(d, k.out, ob0, pix0, acc);
  }
}

// `count` consecutive PointwiseTiles from pixel pix0, in one call. On AMD Zen 3, with a call
// per tile (its prologue and the set-up of the tile's pointers each time), pointwise 16 -> 32
// at 120 x 160, 32 -> 32 at 60 x 80, 32 -> 64 and 64 -> 64 at 30 x 40 took 1.04, 1.025, 1.025
// and 1.02 times as long (f32_direct_conv, mins of 8 alternated runs of 200 calls).
template <int B, int R, bool kHalf = false>
HWY_NOINLINE void PointwiseTiles(const Direct& k, int64_t ob0, int64_t pix0, int64_t count) {
  for (int64_t t = 0; t < count; ++t) PointwiseTile<B, R, kHalf>(k, ob0, pix0 + t * R);
}

// Copies of each block's sums that MatVecTile alternates its input channels between: B x
// kMatVecCopies<B> chains of FMAs, at least 8 (AVX-512: 2 FMA pipes x 4 cycles of latency)
// where the lanes allow; a power of 2 that divides a block's lanes, so that the copies
// take the same lanes of every input block.
template <int B>
inline constexpr int kMatVecCopies = std::min(kLanes, B >= 4   ? 2
                                                      : B >= 2 ? 4
                                                               : 8);

// Output blocks ob0 .. ob0 + B - 1 of a pointwise layer of one pixel: a matrix-vector
// product (the squeeze-and-excitation convs after a global pool, a classifier). Each
// weight vector feeds one FMA, so PointwiseTile<B, 1> chained every FMA of a block on the
// one before: B <= 4 chains where 8 FMAs in flight cover the latency, and ppocr's 96 -> 24
// and 48 -> 192 ran at 12 and 25 % of the FMA peak with their weights in L1. Here input
// channel l of each block goes into copy l mod S of the sums (S = kMatVecCopies<B>), the
// copies added pairwise at the end; all input channels in one pass (a pixel's weights are
// read once however they are split). Padded output lanes multiply the
// packed weights' zeros, as PointwiseTile's full blocks do (a half block included).
template <int B>
HWY_NOINLINE void MatVecTile(const Direct& k, int64_t ob0) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t c = kLanes;
  constexpr int S = kMatVecCopies<B>;
  V acc[S][B];
  StartSums(d, acc);
  const int64_t wob = k.w_ob_stride;
  const float* w = k.w + ob0 * wob;  // packed [ob][ic][c]
  const int64_t whole = k.cg / c;
  for (int64_t cb = 0; cb < whole; ++cb) {
    const float* xs = k.x + cb * k.x_cb_stride;
    const float* ws = w + cb * c * c;
    for (int64_t l = 0; l < c; l += S) {
      HWY_UNROLL(16) for (int s = 0; s < S; ++s) {
        const V xv = hn::Set(d, xs[l + s]);
        HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
          acc[s][b] = hn::MulAdd(hn::LoadU(d, ws + (l + s) * c + b * wob), xv, acc[s][b]);
        }
      }
    }
  }
  const float* xs = k.x + whole * k.x_cb_stride;
  const float* ws = w + whole * c * c;
  for (int64_t l = 0; l < k.cg - whole * c; ++l) {
    const V xv = hn::Set(d, xs[l]);
    HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
      acc[0][b] = hn::MulAdd(hn::LoadU(d, ws + l * c + b * wob), xv, acc[0][b]);
    }
  }
  // Pairwise: copies s and s + h for h = S / 2, S / 4, .. 1.
  if constexpr (S >= 8) {
    HWY_UNROLL(16) for (int s = 0; s < 4; ++s) {
      HWY_UNROLL(16) for (int b = 0; b < B; ++b) acc[s][b] = hn::Add(acc[s][b], acc[s + 4][b]);
    }
  }
  if constexpr (S >= 4) {
    HWY_UNROLL(16) for (int s = 0; s < 2; ++s) {
      HWY_UNROLL(16) for (int b = 0; b < B; ++b) acc[s][b] = hn::Add(acc[s][b], acc[s + 2][b]);
    }
  }
  if constexpr (S >= 2) {
    HWY_UNROLL(16) for (int b = 0; b < B; ++b) acc[0][b] = hn::Add(acc[0][b], acc[1][b]);
  }
  V sums[B][1];
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) sums[b][0] = acc[0][b];
  AddBias(d, k, ob0, sums);
  StoreBlocks(d, k.out, ob0, 0, sums);
}

// MatVecTile<B> for a run-time B in [1, kTileMaxBlocks].
template <int B = 1>
void MatVecN(int64_t blocks, const Direct& k, int64_t ob0) {
  if constexpr (B <= kTileMaxBlocks) {
    if (blocks == B) return MatVecTile<B>(k, ob0);
    MatVecN<B + 1>(blocks, k, ob0);
  }
}

// The last n < kTileMaxPixels<B> pixels of a run of PointwisePairTiles, in PointwisePairTiles
// of 8, 4, 2 and 1 pixels: a pixel's sums take the same steps in a tile of any width, so
// these few widths (not one per n, which compiled 20 to 34 more tiles per target) keep
// every pixel of the layer adding alike.
template <int B, int R = 8>
HWY_NOINLINE void PointwisePairTail(const Direct& k, int64_t ob0, int64_t pix0, int64_t n) {
#if HWY_TARGET != HWY_SCALAR
  if constexpr (R >= 1) {
    if constexpr (R < kTileMaxPixels<B>) {
      for (; n >= R; n -= R, pix0 += R) PointwisePairTile<B, R>(k, ob0, pix0);
    }
    PointwisePairTail<B, R / 2>(k, ob0, pix0, n);
  }
#else
  (void)k, (void)ob0, (void)pix0, (void)n;
#endif
}

// One output pixel of an NCHW input whose 3x3 window (no dilation, every row inside the
// input) loses its first or last column to the padding: the left border column of the
// first layers, and the right one of a stride-1 NCHW conv. Channels outside, the 3 x 2
// taps unrolled inside, and the channels alternating between kChains copies of the sums
// (added in order at the end), as TileImpl's short tiles: its run-time tap loops and one
// channel run per tap took about 250 cycles for UltraFace's first-layer border pixel (18
// FMAs; 0.4 to 0.8 % of slim-320's samples). Only border pixels take it, always the same
// pixels, so a pixel's sum does not depend on the call that computes it.
template <int B>
HWY_NOINLINE void NchwEdgePixel(const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t ow0,
                                const Span& sp) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int kChains = kSumCopies<B>;
  const int64_t c = k.c;
  const int64_t pix0 = oh * k.ow + ow0;
  V part[kChains][B][1];
  HWY_UNROLL(16) for (int q = 0; q < kChains; ++q) StartSums(d, part[q]);
  if (!sp.first) {
    HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
      part[0][b][0] = hn::LoadU(d, k.out.y + ((ob0 + b) * k.out.plane + pix0) * c);
    }
  }
  const int64_t w_ic_stride = 9 * c;  // packed: [ob][icg][3][3][c]
  // The pass's first channel's top row at the window's first column inside the input.
  const float* x = k.x + (g * k.cg + sp.ic_begin) * k.x_cb_stride + (oh * k.sh - k.ph) * k.wd +
                   ow0 * k.sw - k.pw + sp.kw0;
  const float* w = k.w + ob0 * k.w_ob_stride + sp.ic_begin * w_ic_stride + sp.kw0 * c;
  const int64_t wd = k.wd;
  // The 6 taps of one channel into copy q.
  const auto channel = [&](V(&acc)[B][1], const float* xc, const float* wc) HWY_ATTR {
    HWY_UNROLL(3) for (int i = 0; i < 3; ++i) {
      HWY_UNROLL(2) for (int j = 0; j < 2; ++j) {
        TapStep<B, 1>(d, acc, xc + i * wd + j, 0, wc + (i * 3 + j) * c, k.w_ob_stride);
      }
    }
  };
  const int64_t n = sp.ic_end - sp.ic_begin;
  int64_t l = 0;
  for (; l + kChains <= n; l += kChains) {
    HWY_UNROLL(16) for (int q = 0; q < kChains; ++q) {
      channel(part[q], x + (l + q) * k.x_cb_stride, w + (l + q) * w_ic_stride);
    }
  }
  HWY_UNROLL(16) for (int q = 0; q < kChains - 1; ++q) {
    if (l == n) break;
    channel(part[q], x + l * k.x_cb_stride, w + l * w_ic_stride);
    ++l;
  }
  V acc[B][1];
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    acc[b][0] = part[0][b][0];
    HWY_UNROLL(16) for (int q = 1; q < kChains; ++q) acc[b][0] = hn::Add(acc[b][0], part[q][b][0]);
  }
  if (sp.first) AddBias(d, k, ob0, acc);
  if (sp.last) return StoreBlocks(d, k.out, ob0, pix0, acc);
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    hn::StoreU(acc[b][0], d, k.out.y + ((ob0 + b) * k.out.plane + pix0) * c);
  }
}

// One tile in the loop order that suits its span (see TileImpl). A dense NCHWc tile
// (kStep = lanes) always has its channels inside. kHalf: TileImpl's (block B - 1 on
// half-width vectors).
template <int B, int R, int kStep = 0, bool kHalf = false>
HWY_INLINE void Tile(const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t ow0,
                     const Span& sp) {
  if constexpr (kStep != kLanes) PrefetchNextRow(k, g, oh, ow0, R, sp);
  if constexpr (R == 1 && kStep != kLanes && !kHalf) {
    if (k.xb == 1 && k.kh == 3 && k.kw == 3 && k.dh == 1 && k.dw == 1 && sp.kh0 == 0 &&
        sp.kh1 == 3 && sp.kw1 - sp.kw0 == 2) {
      return NchwEdgePixel<B>(k, ob0, g, oh, ow0, sp);
    }
  }
  if constexpr (kStep != kLanes) {
    if (k.xb == 1 && sp.ic_end - sp.ic_begin <= sp.kw1 - sp.kw0) {
      return TileImpl<B, R, kStep, true, false, kHalf>(k, ob0, g, oh, ow0, sp);
    }
  }
  TileImpl<B, R, kStep, false, false, kHalf>(k, ob0, g, oh, ow0, sp);
}

// Tile<B, r> for a run-time r in [1, kTileMaxPixels<B>] (dense) or
// [1, min(kTileMaxPixels<B>, 6)]; kHalf: Tile's, for the tiles of one chain of sums
// (TileImpl: tiles of fewer than 4 accumulators split theirs, on full vectors).
template <int B, bool kDense, bool kHalf = false, int R = 1>
HWY_INLINE void TileN(int64_t r, const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t ow0,
                      const Span& sp) {
  if constexpr (R <= (kDense ? kTileMaxPixels<B> : std::min(kTileMaxPixels<B>, 6))) {
    constexpr bool kHalfTile = kHalf && kSumCopies<B * R> == 1;
    constexpr int kStep = kDense ? kLanes : 0;
    if (r == R) return Tile<B, R, kStep, kHalfTile>(k, ob0, g, oh, ow0, sp);
    TileN<B, kDense, kHalf, R + 1>(r, k, ob0, g, oh, ow0, sp);
  }
}

// The tail of an NCHW row at stride 1 in channels-inside order (more input channels than
// taps per row): TileImpl<B, r, 1> for a run-time r in [6, kTileMaxPixels<B> - 1], one
// tile with compile-time pixel offsets instead of run-time tiles of 6 and fewer pixels.
// ppocr's 96 -> 24 3x3 convs on 8 x 12 and 16 x 24 maps (interiors of 10 and 22 pixels,
// run as 6 + 4 and 12 + 6 + 4) took 0.81 and 0.89 of their time in conv_bench (Zen 4).
template <int B, bool kHalf, int R = 6>
HWY_INLINE void NchwTailN(int64_t r, const Direct& k, int64_t ob0, int64_t g, int64_t oh,
                          int64_t ow0, const Span& sp) {
  if constexpr (R < kTileMaxPixels<B>) {
    if (r == R) return TileImpl<B, R, 1, false, false, kHalf>(k, ob0, g, oh, ow0, sp);
    NchwTailN<B, kHalf, R + 1>(r, k, ob0, g, oh, ow0, sp);
  }
}

// Input channels per cache pass for B output blocks: the pass's weights (B * channels
// * kH * kW vectors) stay within two thirds of the L1 data cache (32 of Sapphire Rapids'
// 48 KiB, 21 of Cortex-A72's 32 KiB; the rest holds the input and output streams) while
// every tile of the work items the pass covers reuses them (DirectConv); a multiple of
// the x block. A fixed 16 KiB (half of Sapphire Rapids' L1) split pointwise layers of
// more than 64 input channels into passes, each storing and reloading the partial sums:
// the pointwise layers of RetinaFace, SqueezeNet and UltraFace took 5 to 25 % longer in
// conv_bench. An NCHW output (the heads) takes one pass: its partial sums have no vector
// layout to wait in.
// A pointwise layer's budget is a quarter of L2 instead (pass_budget, resolve): its tile
// loads B weight vectors per R broadcasts and B * R FMAs, which L2 feeds as fast, and
// one pass runs PointwiseTile instead of TileImpl's passes with their stored and
// reloaded partial sums. On Zen 4 (32 KiB L1, 1 MiB L2) the 128 -> 128 and 256 -> 256
// layers of RetinaFace and UltraFace took 0.93 to 0.96 of their time.
[[maybe_unused]] int64_t pass_channels(const Direct& k, int64_t blocks) {  // not on HWY_SCALAR
  if (k.out.y_block == 1) return k.cg;
  const int64_t per_channel = blocks * k.kh * k.kw * k.c * int64_t{sizeof(float)};
  int64_t n = std::max<int64_t>(1, k.pass_budget / per_channel);
  if (k.xb > 1) n = std::max(k.xb, n / k.xb * k.xb);
  return std::min(n, k.cg);
}

// The span of the cache pass over input channels [ic, ic + step) of group g, every tap.
Span PassSpan(const Direct& k, int64_t g, int64_t ic, int64_t step) {
  const int64_t ic_first = g * k.cg + ic;
  return Span{0,
              k.kh,
              0,
              k.kw,
              ic,
              std::min(k.cg, ic + step),
              ic == 0,
              ic + step >= k.cg,
              ic_first / k.xb,
              ic_first % k.xb};
}

// Pixels [o0, o1) of one output row of B blocks, for the cache pass over input channels
// [ic, ic + step) of the group: the interior in tiles, border pixels in runs that skip
// the same taps, or not at all when `columns` (ColumnBorder computes them).
template <int B>
void Row(const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t o0, int64_t o1, int64_t ic,
         int64_t step, bool columns) {
  const ref::Range rows = ref::valid_range(k.kh, k.dh, oh * k.sh - k.ph, k.h);
  const int64_t ia = std::clamp<int64_t>(k.inner.begin, o0, o1);
  const int64_t ib = std::clamp<int64_t>(k.inner.end, ia, o1);
  Span sp = PassSpan(k, g, ic, step);
  sp.kh0 = rows.begin;
  sp.kh1 = std::max(rows.begin, rows.end);
  constexpr int64_t kR = kTileMaxPixels<B>;
  const bool dense = k.sw == 1 && k.xb == k.c;
  // Whether block B - 1 holds at most half a vector of output channels (the layer's last
  // block: M mod c in 1 .. c/2): the pointwise tiles and the interior tiles of an NCHW
  // input then take kHalf.
  const bool half = 2 * (k.out.channels - (ob0 + B - 1) * k.c) <= k.c;
  // A head's few outputs (one block, at most half a vector: 6 of 16 lanes) on a small
  // NCHWc map also run its border and row tails on half-width FMAs: UltraFace RFB-640's
  // 3x3 head from 256 channels to 6 at 8 x 10 has no full tile: 29 to 31 % of the FMA
  // peak on full vectors, 33 to 45 % this way (Zen 4, conv_bench, isolated runs on a noisy
  // host; that head runs the dot kernel since, kernels/dot). Only B = 1, for the build's
  // time.
  const bool half_tails = B == 1 && half && dense;
  // Border pixels [b0, b1): runs of consecutive pixels whose taps inside the row are the
  // same columns go as one tile (a dilated conv's first d pixels all skip tap 0, its last
  // d the last tap). One at a time, the border pixels of RFB's dilated 3x3 convs (pads
  // 2, 3 and 5 on 30 x 40) took a third of those layers' time in conv_bench.
  auto border = [&](int64_t b0, int64_t b1) {
    const int64_t most = dense ? kR : std::min<int64_t>(kR, 6);
    for (int64_t o = b0; o < b1;) {
      const ref::Range cols = ref::valid_range(k.kw, k.dw, o * k.sw - k.pw, k.wd);
      int64_t n = 1;
      while (o + n < b1 && n < most) {
        const ref::Range next = ref::valid_range(k.kw, k.dw, (o + n) * k.sw - k.pw, k.wd);
        if (next.begin != cols.begin || next.end != cols.end) break;
        ++n;
      }
      Span b = sp;
      b.kw0 = cols.begin;
      b.kw1 = std::max(cols.begin, cols.end);
      if (n == 1) {
        Tile<B, 1>(k, ob0, g, oh, o, b);
      } else if (half_tails) {
        TileN<B, true, B == 1>(n, k, ob0, g, oh, o, b);
      } else if (dense) {
        TileN<B, true>(n, k, ob0, g, oh, o, b);
      } else {
        TileN<B, false>(n, k, ob0, g, oh, o, b);
      }
      o += n;
    }
  };
  if (!columns) border(o0, ia);
  int64_t o = ia;
  if (dense) {
    if (k.pointwise && sp.first && sp.last) {
      const int64_t tiles = (ib - o) / kR;
      if (half) {
        PointwiseTiles<B, kR, true>(k, ob0, oh * k.ow + o, tiles);
        o += tiles * kR;
        if (o < ib) PointwisePairTail<B>(k, ob0, oh * k.ow + o, ib - o);
        o = ib;
      } else {
        PointwiseTiles<B, kR>(k, ob0, oh * k.ow + o, tiles);
        o += tiles * kR;
      }
    }
    if (half)
      for (; o + kR <= ib; o += kR) Tile<B, kR, kLanes, true>(k, ob0, g, oh, o, sp);
    for (; o + kR <= ib; o += kR) Tile<B, kR, kLanes>(k, ob0, g, oh, o, sp);
    if (o < ib) {
      if (half_tails) {
        TileN<B, true, B == 1>(ib - o, k, ob0, g, oh, o, sp);
      } else {
        TileN<B, true>(ib - o, k, ob0, g, oh, o, sp);
      }
    }
  } else {
    // Run-time pixel offsets each take a register: at most 6 pixels, so that they and
    // the loop's pointers fit in the 15 usable general registers without spilling. An
    // NCHW input at stride 2 (the first layers) or 1 (a conv behind NCHW-only ops, as
    // ppocr's narrowest head convs) has compile-time offsets: full tiles first, which halves the
    // weight loads and loop overhead per FMA for B = 1 and 2.
    constexpr int64_t kRs = kR < 6 ? kR : 6;
    if (k.xb == 1 && k.sw == 2) {
#if HWY_MAX_BYTES == 64
      if constexpr (B == 1) {
        // PixelVectorTile: every tap inside (pixels before ib), one pass in Tile's
        // taps-inside order (no more channels than taps per row).
        if (half && k.kh == 3 && k.kw == 3 && k.dh == 1 && k.dw == 1 && sp.kh0 == 0 &&
            sp.kh1 == 3 && sp.first && sp.last && sp.ic_end - sp.ic_begin <= 3) {
          for (; o + 32 <= ib; o += 32) PixelVectorTile<2>(k, ob0, g, oh, o, sp);
          for (; o + 16 <= ib; o += 16) PixelVectorTile<1>(k, ob0, g, oh, o, sp);
        }
      }
#endif
      if (half)
        for (; o + kR <= ib; o += kR) Tile<B, kR, 2, true>(k, ob0, g, oh, o, sp);
      for (; o + kR <= ib; o += kR) Tile<B, kR, 2>(k, ob0, g, oh, o, sp);
    } else if (k.xb == 1 && k.sw == 1) {
      if (half)
        for (; o + kR <= ib; o += kR) Tile<B, kR, 1, true>(k, ob0, g, oh, o, sp);
      for (; o + kR <= ib; o += kR) Tile<B, kR, 1>(k, ob0, g, oh, o, sp);
      // The tail in one tile, in the channels-inside order of Tile's choice.
      if (ib - o >= 6 && ib - o < kR && sp.ic_end - sp.ic_begin > sp.kw1 - sp.kw0) {
        if (half) {
          NchwTailN<B, true>(ib - o, k, ob0, g, oh, o, sp);
        } else {
          NchwTailN<B, false>(ib - o, k, ob0, g, oh, o, sp);
        }
        o = ib;
      }
    }
    for (; o + kRs <= ib; o += kRs) Tile<B, kRs>(k, ob0, g, oh, o, sp);
    if (o < ib) TileN<B, false>(ib - o, k, ob0, g, oh, o, sp);
  }
  if (!columns) border(ib, o1);
}

template <int B = 1>
void RowN(int64_t blocks, const Direct& k, int64_t ob0, int64_t g, int64_t oh, int64_t o0,
          int64_t o1, int64_t ic, int64_t step, bool columns) {
  if constexpr (B <= kTileMaxBlocks) {
    if (blocks == B) return Row<B>(k, ob0, g, oh, o0, o1, ic, step, columns);
    RowN<B + 1>(blocks, k, ob0, g, oh, o0, o1, ic, step, columns);
  }
}

// Rows of a column tile at most: 6 with 32 vector registers, AVX2's 3 (4 x 3 accumulators).
constexpr int kColumnTileRows = std::min(kTileMaxPixels<kTileMaxBlocks>, 6);

// Column tiles of kTileMaxBlocks output blocks: TileImpl<kTileMaxBlocks, r, 0, false, true>
// for a run-time r in [1, kColumnTileRows]; compiled only where kTileMaxBlocks is 4 (AVX-512,
// NEON and AVX2), the only targets that run them.
template <int R = 1>
HWY_INLINE void ColumnTileN(int64_t r, const Direct& k, int64_t ob0, int64_t g, int64_t oh,
                            int64_t ow, const Span& sp) {
  if constexpr (kTileMaxBlocks >= 4 && R <= kColumnTileRows) {
    if (r == R) return TileImpl<kTileMaxBlocks, R, 0, false, true>(k, ob0, g, oh, ow, sp);
    ColumnTileN<R + 1>(r, k, ob0, g, oh, ow, sp);
  }
}

// Border columns [o0, o1) of output rows [r0, r1), for the cache pass over input channels
// [ic, ic + step), in column tiles: up to kColumnTileRows consecutive rows whose taps inside the
// image are the same rows go as one tile (ColumnTileN). In a row, a border pixel is a tile of one
// pixel: kTileMaxBlocks weight loads for as many FMAs. ResNet-18's layer4 convs (7 x 7 pixels, 2 of
// each row's 7 on the border) spent 40 % of their time in those tiles. Only for chunks of 4 blocks,
// whose tiles all keep one chain of accumulators (TileImpl's kChains), so that a pixel adds in the
// same order in any tile. The rows are those of one call's items: a call of one row (2 threads on a
// 7 x 7 map, ops::parallel_grid) runs 1-row column tiles, as before.
[[maybe_unused]] void ColumnBorder(const Direct& k, int64_t ob0, int64_t g, int64_t r0, int64_t r1,
                                   int64_t o0, int64_t o1, int64_t ic, int64_t step) {
  Span sp = PassSpan(k, g, ic, step);
  for (int64_t o = o0; o < o1; ++o) {
    const ref::Range cols = ref::valid_range(k.kw, k.dw, o * k.sw - k.pw, k.wd);
    sp.kw0 = cols.begin;
    sp.kw1 = std::max(cols.begin, cols.end);
    for (int64_t oh = r0; oh < r1;) {
      const ref::Range rows = ref::valid_range(k.kh, k.dh, oh * k.sh - k.ph, k.h);
      int64_t n = 1;
      while (oh + n < r1 && n < kColumnTileRows) {
        const ref::Range next = ref::valid_range(k.kh, k.dh, (oh + n) * k.sh - k.ph, k.h);
        if (next.begin != rows.begin || next.end != rows.end) break;
        ++n;
      }
      sp.kh0 = rows.begin;
      sp.kh1 = std::max(rows.begin, rows.end);
      ColumnTileN(n, k, ob0, g, oh, o, sp);
      oh += n;
    }
  }
}

// Output columns [begin, end) of segment `seg` of a row (one work item's pixels): segments
// count from the first interior column, seg_origin, and segment 0 also holds the left
// border (resolve).
[[maybe_unused]] ref::Range SegmentColumns(const Direct& k, int64_t seg) {
  return {seg == 0 ? 0 : k.seg_origin + seg * k.segment,
          std::min(k.ow, k.seg_origin + (seg + 1) * k.segment)};
}

// The output blocks [begin, end) of chunk `chunk` of a group: its group_blocks in
// chunks_per_group chunks of at most kTileMaxBlocks, whose sizes differ by at most one. With
// full chunks first, 4 blocks (32 channels) in chunks of 3 (then AVX2's, now SSE4's) went as
// 3 + 1, the last block in 1 x 12 tiles (13 loads per 12 FMAs; 2 x 6 tiles load 8): on AMD
// Zen 3, pointwise 16 -> 32 at 120 x 160 and 32 -> 32 at 60 x 80 took 0.91 and 0.92 of their
// time as 2 + 2 (f32_direct_conv, medians of 15 alternated rounds), and UltraFace 0.97 to
// 0.98 at one thread.
[[maybe_unused]] ref::Range ChunkBlocks(const Direct& k, int64_t chunk) {
  return {chunk * k.group_blocks / k.chunks_per_group,
          (chunk + 1) * k.group_blocks / k.chunks_per_group};
}

Direct resolve(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
               const float* z, float* y, int64_t min_units) {
  const ref::ConvParams& cp = p.conv;
  Direct k;
  static_cast<ConvWindow&>(k) = conv_window(cp);
  k.x = x;
  k.w = w;
  k.bias = bias;
  k.out = output_target(p, z, y);
  k.c = p.w_block;
  k.cg = cp.in_channels / cp.groups;
  const int64_t blocks = (cp.out_channels + k.c - 1) / k.c;
  k.group_blocks = cp.groups == 1 ? blocks : cp.out_channels / cp.groups / k.c;
  // An NCHW input (the first layers) on AVX2 keeps chunks of at most 3 blocks: with its
  // taps unrolled (TileImpl's kTapsInside), the 4 x 3 tile spilled 122 vectors per 108
  // FMAs, and SqueezeNet's and MobileNetV2's first layers (3 -> 64 and 3 -> 32) took 1.41
  // and 1.45 times the time of 3 + 3 + 2 and 2 + 2 blocks (conv_bench, least of 30 runs).
  const int64_t max_blocks = kVectorRegisters < 32 && p.x_block == 1 ? 3 : kTileMaxBlocks;
  k.chunks_per_group = (k.group_blocks + max_blocks - 1) / max_blocks;
  // A 1x1 convolution with stride 1 and no padding (pointwise) maps output pixel i to
  // input pixel i: the image is one row of H * W pixels, so tiles run across row ends.
  // (The output must also have the input's extent: trailing padding would add pixels.)
  k.pointwise = false;
  if (k.kh == 1 && k.kw == 1 && k.sh == 1 && k.sw == 1 && k.ph == 0 && k.pw == 0 && k.oh == k.h &&
      k.ow == k.wd) {
    k.pointwise = cp.groups == 1 && p.x_block == p.w_block;
    k.wd = k.h * k.wd;
    k.h = 1;
    k.ow = k.oh * k.ow;
    k.oh = 1;
  }
  // A small image (a pointwise layer at 20x20: one flattened row of 400 pixels, 5
  // segments) takes shorter segments, whole tiles of 12 pixels (on AVX-512 the 3-block
  // tiles of 8 pixels leave a tail of 4; every other tile divides 12), so that its rows x
  // segments reach min_units (kDirectMinSpatialUnits for a layer that threads split)
  // where they can. With 5 units, parallel_grid split its
  // output-channel chunks across the threads instead, and the depthwise layer after it,
  // split by rows, read half its input from the other thread's caches: RetinaFace 640's
  // stage3.1 depthwise (20x20, 256 channels) took 0.048 to 0.059 ms at 2 threads against
  // 0.021 to 0.027 at 1 (the two vCPUs on different core complexes).
  //
  // Segments are counted from the row's first interior column (seg_origin): segment 0 also
  // holds the left border pixels, so that every segment's interior is whole tiles but the
  // row's last. Counted from column 0, a first layer's row (160 pixels, one border pixel)
  // ended its first segment 95 pixels into the interior, in tiles of 6 and 5 after the 12s:
  // three tail tiles per row instead of one, 13 % of UltraFace's first layer's time (perf,
  // f32_direct_conv on 24 x 320) against 4 % now; the layer took 0.92 of its time.
  k.inner = ref::valid_range(k.ow, k.sw, -k.pw, k.wd - (k.kw - 1) * k.dw);
  k.seg_origin = std::clamp<int64_t>(k.inner.begin, 0, k.ow - 1);
  const int64_t span = k.ow - k.seg_origin;
  k.segment = kSegment;
  if (k.oh * ((span + kSegment - 1) / kSegment) < min_units) {
    constexpr int64_t kTile = kTileMaxPixels<1>;
    const int64_t per_row = (min_units + k.oh - 1) / k.oh;
    k.segment = std::clamp<int64_t>(span / per_row / kTile * kTile, kTile, kSegment);
  }
  k.segments = (span + k.segment - 1) / k.segment;
  k.xb = p.x_block;
  k.x_cb_stride = p.x_block * (p.x_plane > 0 ? p.x_plane : cp.in.h * cp.in.w);
  k.w_ob_stride = k.cg * k.kh * k.kw * k.c;
  k.pass_budget = k.pointwise ? l2_cache_bytes() / 4 : l1d_cache_bytes() * 2 / 3;
  return k;
}

}  // namespace

bool DirectSupported(const ref::FusedConvParams& p) {
  const hn::ScalableTag<float> d;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  const ref::ConvParams& cp = p.conv;
  if (c < 4 || p.w_block != c) return false;
  if (cp.in.d != 1 || cp.out.d != 1 || cp.kernel.d != 1) return false;
  if (p.x_block != 1 && p.x_block != c) return false;
  if (p.y_block != 1 && p.y_block != c) return false;
  if (p.y_nhwc && p.y_block != 1) return false;  // NHWC has no channel blocks
  return cp.groups == 1 || (cp.out_channels / cp.groups) % c == 0;
}

WorkGrid DirectWork(const ref::FusedConvParams& p, int64_t min_units) {
  const Direct k = resolve(p, nullptr, nullptr, nullptr, nullptr, nullptr, min_units);
  return {p.conv.groups * k.chunks_per_group, k.oh * k.segments};
}

void DirectConv(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                const float* z, float* y, int64_t begin, int64_t end, int64_t min_units) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: direct_conv_supported is false here, and the tiles are not compiled for this
  // target (they were half of this file's build time).
  (void)p, (void)x, (void)w, (void)bias, (void)z, (void)y, (void)begin, (void)end, (void)min_units;
  HWY_ABORT("f32_direct_conv: no SIMD target (block 1)");
#else
  // The caller checked direct_conv_supported on this target; a plan whose block is not
  // this target's vector width would read and write past its buffers.
  HWY_ASSERT(hn::Lanes(hn::ScalableTag<float>()) == static_cast<size_t>(p.w_block));
  const Direct k = resolve(p, x, w, bias, z, y, min_units);
  if (k.pointwise && k.ow == 1) {
    // One pixel (one group, one row of one segment): each item is a chunk of output blocks.
    for (int64_t u = begin; u < end; ++u) {
      const ref::Range blocks = ChunkBlocks(k, u);
      MatVecN(blocks.end - blocks.begin, k, blocks.begin);
    }
    return;
  }
#if HWY_MAX_BYTES == 64
  if (const int v = GroupVectors(k); v > 0) {
    // One block, one cache pass, no border: each item is a segment of the flattened image.
    alignas(64) float wg[kGroupTileMaxChannels / 4 * kGroupMaxVectors * kLanes];
    InterleaveGroupWeights(k, v, wg);
    for (int64_t u = begin; u < end; ++u) {
      const ref::Range cols = SegmentColumns(k, u % k.segments);
      const int64_t pix0 = u / k.segments * k.ow + cols.begin, n = cols.end - cols.begin;
      if (v == 1) GroupRun<1>(k, wg, pix0, n);
      if (v == 2) GroupRun<2>(k, wg, pix0, n);
      if (v == 3) GroupRun<3>(k, wg, pix0, n);
      if (v == 5) GroupRun<5>(k, wg, pix0, n);
    }
    return;
  }
#endif
  // A run of consecutive items (row segments) of one chunk, one thread's share, goes cache
  // pass by cache pass: each pass's weights (two thirds of L1; a pointwise layer's, a
  // quarter of L2: pass_channels) serve every item of the run from there before the next pass, in
  // groups of items whose partial sums stay within kPartialSumBytes. Item by item, each one read
  // all of the chunk's weights again, from L2 or, past L2's size, from L3: ResNet-18's
  // layer4.0.conv2 (512 channels at 7x7, 1.2 MB of weights per chunk) took 1868 us in conv_bench
  // against 1323 this way, layer3.0.conv2 1576 against 1261.
  const int64_t units = k.oh * k.segments;
  const int64_t unit_pixels = std::min(k.segment, k.ow);
  const ref::Range& inner = k.inner;
  for (int64_t item = begin; item < end;) {
    const int64_t chunk = item / units;
    const int64_t u0 = item % units, u1 = std::min(units, u0 + (end - item));
    const int64_t g = chunk / k.chunks_per_group;
    const ref::Range chunk_blocks = ChunkBlocks(k, chunk % k.chunks_per_group);
    const int64_t first = chunk_blocks.begin, blocks = chunk_blocks.end - chunk_blocks.begin;
    const int64_t ob0 = g * k.group_blocks + first;
    const int64_t step = pass_channels(k, blocks);
    // Border pixels in column tiles (ColumnBorder): chunks of 4 blocks (AVX-512, NEON and
    // AVX2; SSE4's chunks of 3 would sum a 1-pixel tile in two chains, TileImpl's kChains,
    // and a longer one in one) of an NCHWc input with an interior in every row.
    const bool columns = kTileMaxBlocks >= 4 && blocks == kTileMaxBlocks && k.xb == k.c &&
                         !k.pointwise && inner.begin < inner.end &&
                         (inner.begin > 0 || inner.end < k.ow);
    const int64_t unit_bytes = unit_pixels * blocks * k.c * int64_t{sizeof(float)};
    const int64_t group = std::max<int64_t>(1, kPartialSumBytes / unit_bytes);
    for (int64_t ga = u0; ga < u1; ga += group) {
      const int64_t gb = std::min(u1, ga + group);
      for (int64_t ic = 0; ic < k.cg; ic += step) {
        for (int64_t u = ga; u < gb; ++u) {
          const ref::Range cols = SegmentColumns(k, u % k.segments);
          RowN(blocks, k, ob0, g, u / k.segments, cols.begin, cols.end, ic, step, columns);
        }
        if (columns) {
          // The left border of the rows whose first segment is in [ga, gb) (all of it lies
          // in segment 0, which starts the interior), the right border of those whose last
          // segment is (also its pixels in earlier segments, where a wide border reaches).
          const int64_t s = k.segments;
          ColumnBorder(k, ob0, g, (ga + s - 1) / s, (gb + s - 1) / s, 0, inner.begin, ic, step);
          ColumnBorder(k, ob0, g, ga / s, gb / s, inner.end, k.ow, ic, step);
        }
      }
    }
    item += u1 - u0;
  }
#endif  // HWY_TARGET == HWY_SCALAR
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(DirectSupported);
HWY_EXPORT(DirectWork);
HWY_EXPORT(DirectConv);

bool direct_conv_supported(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(DirectSupported)(p);
}

WorkGrid direct_conv_work(const ref::FusedConvParams& p, int64_t min_units) {
  return HWY_DYNAMIC_DISPATCH(DirectWork)(p, min_units);
}

void f32_direct_conv(const ref::FusedConvParams& p, const float* x, const float* w,
                     const float* bias, const float* z, float* y, int64_t begin, int64_t end,
                     int64_t min_units) {
  HWY_DYNAMIC_DISPATCH(DirectConv)(p, x, w, bias, z, y, begin, end, min_units);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
