// Depthwise convolution on NCHWc; see depthwise_conv.h and README.md.
//
// Register blocking: a tile is R output pixels of one row and one channel block, R
// independent accumulators. With FMA latency 4 (AVX-512, AVX2) to 7 (Cortex-A72) and 2
// FMAs per cycle, 8 or more independent accumulators hide the latency. The 3x3 tiles
// (sliding window, see Tile) hold R accumulators + 3 weights + 1 input: R = 16 on the
// 32-register targets (AVX-512, NEON), R = 12 on AVX2 and SSE4 (16 registers, all used).
// The 5x5 tiles hold R + 5 + 1 (22 of 32 on AVX-512 and NEON; on AVX2 and SSE4 the
// weights stay in memory, one load per FMA: SlidingRow).
// With R = 8, AVX2's 8 accumulators x 9 taps were exactly 2 FMAs per cycle of latency 4,
// no slack for the loads, the epilogue and the call: on AMD Zen 3, f32_depthwise_conv
// took 1.08 to 1.23 times as long on UltraFace's 3x3 layers (stride 1 and 2, 15 x 20 to
// 120 x 160), and 2.7 times on its 8 x 10 rows (two 5-pixel general tiles). Their
// loads, (R - 1) * stride + 3 inputs per kernel row for 3R FMAs, no longer bound them;
// with one load per FMA (the general tiles), the loads do, as the paper notes for
// depthwise layers.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/depthwise/depthwise_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include "hwy/highway.h"
#include "kernels/depthwise/depthwise_conv.h"
#include "kernels/reference/spatial.h"
#include "kernels/simd/base_register.h"
#include "kernels/simd/conv_window.h"
#include "kernels/simd/epilogue-inl.h"
#include "kernels/simd/register_tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

static_assert(!HWY_HAVE_SCALABLE, "tern's NCHWc kernels need a fixed vector width");

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
constexpr int kMaxPixels = 12;
#else
constexpr int kMaxPixels = 16;
#endif
constexpr int64_t kSegment = 8 * kMaxPixels;

struct Depthwise : ConvWindow {
  const float* x;
  const float* w;
  const float* bias;
  OutputTarget out;
  int64_t c;
  int64_t segments;
  int64_t x_plane;   // pixels between x's channel blocks
  ref::Range inner;  // output columns whose taps all land inside the input row
  // Row's tiling of a full segment (min(ow, kSegment) pixels), found once per call:
  // its divisions per row took 12 % of a 30 x 40 layer's time.
  int64_t full = 0, full_tiles = 0, full_base = 0;
};

// The tiling of an n-pixel run: `tiles` tiles of `base` or base + 1 pixels (the first
// n % tiles are the longer ones).
struct Tiling {
  int64_t tiles, base;
};

Tiling tiling(int64_t n) {
  const int64_t tiles = (n + kMaxPixels - 1) / kMaxPixels;
  return {tiles, n / tiles};
}

// R pixels from column ow0 of row oh of channel block cb; taps kh in [kh0, kh1).
// kStride: the stride along the row when 1 or 2 (the models' depthwise layers), so the R
// pixels' offsets from the tap's pointer are compile-time constants (r * kStride * c
// floats) and every load addresses as [register + displacement] (base_register); 0 for
// any other stride, known at run time, whose rows take the general tiles only (see Row).
// kBorder: which pixels may be border pixels (outside k.inner), whose taps outside the
// row are skipped: kNoBorder, kEnds (only the first and the last pixel) or kAnyBorder
// (a branch per FMA). Border pixels thus run in the row's tiles: a one-pixel tile per
// border pixel cost more than the pixel's FMAs.
// K > 0: a K x K kernel without dilation (3x3 with kNoBorder or kEnds, 5x5 with kNoBorder
// or kAnyBorder), kStride 1 or 2: the sliding window below, its loops along a kernel row
// unrolled at compile time. K = 0: run-time tap loops, one load per FMA.
// kHalf: the block holds at most half a vector of channels (RetinaFace's 8 in 16 lanes):
// the tile loads and computes the lower halves only (TileVectors), and widens its sums
// (upper lanes 0) for the epilogue. Only the full-width interior tiles have this variant
// (Row): on AMD Zen 4, whose 512-bit loads and FMAs are two 256-bit halves, it makes
// them cheaper; elsewhere it runs as many instructions (README.md).
enum Border { kNoBorder, kEnds, kAnyBorder };

// The vectors a tile computes on (D): a block's, or its lower half (kHalf); a block's
// vector converts to and from them.
using Block = hn::ScalableTag<float>;
template <bool kHalf>
struct TileVectors {
  using D = Block;
  static HWY_INLINE hn::Vec<D> FromBlock(hn::Vec<Block> v) { return v; }
  static HWY_INLINE hn::Vec<Block> ToBlock(hn::Vec<D> v) { return v; }
};
#if HWY_TARGET != HWY_SCALAR  // no ZeroExtendVector; the tiles never run there (DepthwiseConv)
template <>
struct TileVectors<true> {
  using D = hn::Half<Block>;
  static HWY_INLINE hn::Vec<D> FromBlock(hn::Vec<Block> v) { return hn::LowerHalf(D(), v); }
  static HWY_INLINE hn::Vec<Block> ToBlock(hn::Vec<D> v) {
    return hn::ZeroExtendVector(Block(), v);
  }
};
#endif

// One kernel row of a sliding-window tile (Tile, K > 0): along the row, input m of the
// tile's span (kSpan columns from col0, xr pointing at column col0, ws at the row's K
// weight vectors) is tap j of pixel (m - j) / kStride, so each input vector is loaded
// once, into a register, for up to K FMAs. One load per FMA (the loads folded into the
// FMAs) made the loads, not the FMAs, bound the tile: in f32_depthwise_conv on AVX-512
// (Emerald Rapids) the 3x3 stride-1 layers of UltraFace and RetinaFace took 1.05 to 1.2x
// as long. Inputs outside the row (a border pixel's padded taps) are skipped, and with
// them exactly the FMAs of those taps. With kEnds (every pixel but the first and the last
// inside) only the first K and the last K inputs can be outside; with kAnyBorder (a 5x5
// kernel's two border pixels per side) every input is checked.
template <int R, int kStride, Border kBorder, int K, class D, class V>
HWY_INLINE void SlidingRow(D d, V (&acc)[R], const float* xr, const float* ws, int64_t col0,
                           int64_t wd) {
  constexpr int kSpan = (R - 1) * kStride + K;
  constexpr int64_t kC = static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<float>()));
  // With 16 registers (AVX2, SSE4) a 5x5 tile's R accumulators, K weights and the input
  // do not fit: the weights are then loaded at each FMA (a memory operand), not spilled
  // by the compiler. ppocr's 5x5 stride-1 layers under TERN_SIMD_TARGET=AVX2 took 0.68
  // and 0.70 of the run-time taps' time this way, 0.88 and 0.95 with the spills (Zen 5,
  // conv_bench, medians of 7 alternated rounds).
  constexpr bool kWeightsInRegisters = R + K + 1 <= kVectorRegisters;
  V wv[K];
  if constexpr (kWeightsInRegisters) {
    HWY_UNROLL(16) for (int j = 0; j < K; ++j) wv[j] = hn::LoadU(d, ws + j * kC);
  }
  HWY_UNROLL(64) for (int m = 0; m < kSpan; ++m) {
    if constexpr (kBorder == kEnds) {
      if ((m < K && col0 + m < 0) || (m >= kSpan - K && col0 + m >= wd)) continue;
    } else if constexpr (kBorder == kAnyBorder) {
      if (col0 + m < 0 || col0 + m >= wd) continue;
    }
    V xv = hn::LoadU(d, xr + m * kC);
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
    // An opaque copy: GCC would fold the load back into each of the FMAs below.
    asm("" : "+v"(xv.raw));
#endif
    HWY_UNROLL(16) for (int j = 0; j < K; ++j) {
      if (m >= j && (m - j) % kStride == 0 && (m - j) / kStride < R) {
        const V w = kWeightsInRegisters ? wv[j] : hn::LoadU(d, ws + j * kC);
        acc[(m - j) / kStride] = hn::MulAdd(xv, w, acc[(m - j) / kStride]);
      }
    }
  }
}

template <int R, int kStride, Border kBorder, int K, bool kHalf = false>
HWY_NOINLINE void Tile(const Depthwise& k, int64_t cb, int64_t oh, int64_t ow0, int64_t kh0,
                       int64_t kh1) {
  static_assert(K == 0 || kStride > 0, "no such sliding tile");
  using TV = TileVectors<kHalf>;
  const Block dv;
  const typename TV::D d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = k.c;
  V acc[1][R];
  const V bias = TV::FromBlock(LoadBias(dv, k.bias, k.out.channels, cb));
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) acc[0][r] = bias;
  const float* xc = k.x + cb * k.x_plane * c;
  const float* wc = k.w + cb * k.kh * k.kw * c;
  const int64_t col0 = ow0 * k.sw - k.pw;
  if constexpr (K > 0) {
    // Sliding window (SlidingRow), one kernel row at a time. A 3x3 tile's rows are all
    // inside the input (AnyRow), unrolled at compile time: with the row range at run time
    // and the image's top and bottom rows here too, 7 of MobileNetV2's 10 3x3 layers took
    // 1.02 to 1.17 times as long in conv_bench (Zen 5, medians of 5 alternated rounds,
    // with the rows unrolled and skipped at run time). A 5x5 tile
    // runs rows [kh0, kh1), the image's top and bottom rows included: two of a 5x5 kernel
    // on each side, half of the rows of ppocr's 8 x 12 maps.
    constexpr int64_t kC = static_cast<int64_t>(hn::MaxLanes(dv));
    const auto row = [&](int64_t i) HWY_ATTR {
      // Row i's input 0; before the row where col0 < 0 (not read).
      const float* xr = base_register(xc + ((oh * k.sh - k.ph + i) * k.wd + col0) * kC);
      SlidingRow<R, kStride, kBorder, K>(d, acc[0], xr, wc + i * K * kC, col0, k.wd);
    };
    if constexpr (K == 3) {
      HWY_UNROLL(3) for (int i = 0; i < 3; ++i) row(i);
    } else {
      for (int64_t i = kh0; i < kh1; ++i) row(i);
    }
  } else {
    const int64_t step = kStride > 0 ? kStride * static_cast<int64_t>(hn::MaxLanes(dv)) : k.sw * c;
    // Offset of pixel 0's tap (kh0, 0); before the row for a left border pixel (not read).
    const int64_t at0 = ((oh * k.sh - k.ph + kh0 * k.dh) * k.wd + col0) * c;
    for (int64_t j = 0; j < k.kw; ++j) {
      // Pixels [lo, hi) of the tile whose tap column j lands inside the row.
      int lo = 0, hi = R;
      if constexpr (kBorder == kEnds) {
        // Only pixels 0 and R - 1 may be outside: two compares, not valid_range's two
        // divisions per column, which made these tiles 1.3x an interior one.
        const int64_t first = col0 + j * k.dw, last = first + (R - 1) * k.sw;
        lo = first < 0 ? 1 : 0;
        hi = last >= k.wd ? R - 1 : R;
      } else if constexpr (kBorder == kAnyBorder) {
        const ref::Range v = ref::valid_range(R, k.sw, col0 + j * k.dw, k.wd);
        lo = static_cast<int>(v.begin);
        hi = static_cast<int>(std::max(v.begin, v.end));
      }
      for (int64_t i = kh0; i < kh1; ++i) {
        const V wv = hn::LoadU(d, wc + (i * k.kw + j) * c);
        const float* xt = base_register(xc + at0 + ((i - kh0) * k.dh * k.wd + j * k.dw) * c);
        HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
          const bool check = kBorder == kAnyBorder || (kBorder == kEnds && (r == 0 || r == R - 1));
          if (!check || (r >= lo && r < hi)) {
            acc[0][r] = hn::MulAdd(hn::LoadU(d, xt + r * step), wv, acc[0][r]);
          }
        }
      }
    }
  }
  hn::Vec<Block> out[1][R];  // one block: StoreBlocks' B x R shape
  HWY_UNROLL(16) for (int r = 0; r < R; ++r) out[0][r] = TV::ToBlock(acc[0][r]);
  StoreBlocks(dv, k.out, cb, oh * k.ow + ow0, out);
}

// Tiles narrower than this run the one general variant (any border, run-time taps):
// they occur only in rows shorter than kMinSpecialized pixels (the models' smallest
// levels, 4x5 and 8x10), and the specialised variants of every width took 40 % of the
// kernels' build time (CI builds the file three times, once under AddressSanitizer).
constexpr int kMinSpecialized = 6;

// Tile<n> for a run-time n in [1, kMaxPixels]. A 3x3 kernel's kAnyBorder tiles (more than
// one border pixel on a side: padding 2) run the run-time taps (K = 0); a 5x5 kernel's
// border tiles are kAnyBorder ones (padding 2 gives two border pixels per side; fewer
// variants to build).
template <int kStride, Border kBorder, int K, int R = 1>
HWY_INLINE void TileN(int64_t n, const Depthwise& k, int64_t cb, int64_t oh, int64_t ow0,
                      int64_t kh0, int64_t kh1) {
  if constexpr (kBorder == kAnyBorder && K == 3) {
    TileN<kStride, kAnyBorder, 0>(n, k, cb, oh, ow0, kh0, kh1);
  } else if constexpr (kBorder == kEnds && K == 5) {
    TileN<kStride, kAnyBorder, K>(n, k, cb, oh, ow0, kh0, kh1);
  } else if constexpr (R < kMinSpecialized && (kBorder != kAnyBorder || K != 0)) {
    if (n < kMinSpecialized) return TileN<kStride, kAnyBorder, 0, R>(n, k, cb, oh, ow0, kh0, kh1);
    TileN<kStride, kBorder, K, kMinSpecialized>(n, k, cb, oh, ow0, kh0, kh1);
  } else if constexpr (R <= kMaxPixels) {
    if (n == R) return Tile<R, kStride, kBorder, K>(k, cb, oh, ow0, kh0, kh1);
    TileN<kStride, kBorder, K, R + 1>(n, k, cb, oh, ow0, kh0, kh1);
  }
}

// Pixels [o0, o1) of output row oh of channel block cb, in the fewest tiles of at most
// kMaxPixels, of sizes that differ by at most 1: a short last tile (8 pixels of a
// 40-pixel row after two of 16) waits on the FMA latency, 9 taps of dependent FMAs, and
// costs about as much as a full one. A tile that holds border columns takes a border variant.
template <int kStride, int K>
void Row(const Depthwise& k, int64_t cb, int64_t oh, int64_t o0, int64_t o1, int64_t kh0,
         int64_t kh1) {
  const Tiling t = o1 - o0 == k.full ? Tiling{k.full_tiles, k.full_base} : tiling(o1 - o0);
  const int64_t tiles = t.tiles, base = t.base, longer = o1 - o0 - tiles * base;
  // Whether the block holds at most half a vector of channels (C mod c in 1 .. c/2): its
  // full-width interior tiles then take kHalf.
  const bool half = 2 * (k.out.channels - cb * k.c) <= k.c;
  int64_t o = o0;
  for (int64_t i = 0; i < tiles; ++i) {
    const int64_t n = base + (i < longer ? 1 : 0);
    // Border pixels of the tile on its left and on its right.
    const int64_t left = std::clamp<int64_t>(k.inner.begin - o, 0, n);
    const int64_t right = std::clamp<int64_t>(o + n - k.inner.end, 0, n);
    if constexpr (kStride == 0) {
      // Strides of 3 or more (no model has one): the general tiles only, which keeps
      // their instantiations few.
      TileN<0, kAnyBorder, 0>(n, k, cb, oh, o, kh0, kh1);
    } else if (left == 0 && right == 0) {
      if (n == kMaxPixels && half) {
        Tile<kMaxPixels, kStride, kNoBorder, K, true>(k, cb, oh, o, kh0, kh1);
      } else if (n == kMaxPixels) {
        Tile<kMaxPixels, kStride, kNoBorder, K>(k, cb, oh, o, kh0, kh1);
      } else {
        TileN<kStride, kNoBorder, K>(n, k, cb, oh, o, kh0, kh1);
      }
    } else if (left <= 1 && right <= 1) {
      TileN<kStride, kEnds, K>(n, k, cb, oh, o, kh0, kh1);
    } else {
      TileN<kStride, kAnyBorder, K>(n, k, cb, oh, o, kh0, kh1);
    }
    o += n;
  }
}

// Row<kStride, K> for kernels without dilation: K = 3 for a 3x3 kernel on rows whose taps
// are all inside the input, K = 5 for a 5x5 kernel on any row (the sliding window, Tile);
// K = 0 (run-time taps) otherwise.
// On the 16-register targets a 5x5 kernel at stride 2 keeps the run-time taps: its
// sliding tiles, with their weights loaded at each FMA (SlidingRow), feed each input to at
// most 3 FMAs, and ppocr's 5x5 stride-2 layer took 1.22 times as long under
// TERN_SIMD_TARGET=AVX2 (Zen 5, conv_bench, medians of 7 alternated rounds).
template <int kStride>
void AnyRow(const Depthwise& k, int64_t cb, int64_t oh, int64_t o0, int64_t o1) {
  const int64_t top = oh * k.sh - k.ph;
  const bool square = k.kh == k.kw && k.dh == 1 && k.dw == 1;
  constexpr bool kSliding5 = kStride == 1 || (kStride == 2 && kVectorRegisters >= 32);
  const bool five = square && k.kh == 5;
  if (top >= 0 && top + (k.kh - 1) * k.dh < k.h) {
    if (square && k.kh == 3) return Row<kStride, 3>(k, cb, oh, o0, o1, 0, 3);
    if constexpr (kSliding5) {
      if (five) return Row<kStride, 5>(k, cb, oh, o0, o1, 0, 5);
    }
    return Row<kStride, 0>(k, cb, oh, o0, o1, 0, k.kh);
  }
  const ref::Range rows = ref::valid_range(k.kh, k.dh, top, k.h);
  const int64_t kh1 = std::max(rows.begin, rows.end);
  if constexpr (kSliding5) {
    if (five) return Row<kStride, 5>(k, cb, oh, o0, o1, rows.begin, kh1);
  }
  Row<kStride, 0>(k, cb, oh, o0, o1, rows.begin, kh1);
}

Depthwise resolve(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                  const float* z, float* y) {
  const ref::ConvParams& cp = p.conv;
  Depthwise k;
  static_cast<ConvWindow&>(k) = conv_window(cp);
  k.x = x;
  k.w = w;
  k.bias = bias;
  k.out = output_target(p, z, y);
  k.c = p.w_block;
  k.segments = (k.ow + kSegment - 1) / kSegment;
  k.x_plane = p.x_plane > 0 ? p.x_plane : k.h * k.wd;
  k.inner = ref::valid_range(k.ow, k.sw, -k.pw, k.wd - (k.kw - 1) * k.dw);
  k.inner.end = std::max(k.inner.begin, k.inner.end);
  k.full = std::min(k.ow, kSegment);
  if (k.full > 0) {
    const Tiling t = tiling(k.full);
    k.full_tiles = t.tiles;
    k.full_base = t.base;
  }
  return k;
}

}  // namespace

bool DepthwiseSupported(const ref::FusedConvParams& p) {
  const hn::ScalableTag<float> d;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  const ref::ConvParams& cp = p.conv;
  if (c < 4 || p.w_block != c || p.x_block != c) return false;
  if (p.y_block != 1 && p.y_block != c) return false;
  if (p.y_nhwc) return false;  // NHWC output: the direct kernel and the reference
  if (cp.in.d != 1 || cp.out.d != 1 || cp.kernel.d != 1) return false;
  return cp.groups == cp.in_channels && cp.groups == cp.out_channels;
}

WorkGrid DepthwiseWork(const ref::FusedConvParams& p) {
  const Depthwise k = resolve(p, nullptr, nullptr, nullptr, nullptr, nullptr);
  return {(p.conv.out_channels + k.c - 1) / k.c, k.oh * k.segments};
}

void DepthwiseConv(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                   const float* z, float* y, int64_t begin, int64_t end) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: depthwise_conv_supported is false here, and the tiles are not compiled for this
  // target (they were half of this file's build time).
  (void)p, (void)x, (void)w, (void)bias, (void)z, (void)y, (void)begin, (void)end;
  HWY_ABORT("f32_depthwise_conv: no SIMD target (block 1)");
#else
  const Depthwise k = resolve(p, x, w, bias, z, y);
  // Work item -> (channel block, row, segment) once, then an odometer: no divisions per row.
  int64_t cb = begin / (k.oh * k.segments);
  int64_t oh = begin / k.segments % k.oh, seg = begin % k.segments;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t o0 = seg * kSegment, o1 = std::min(k.ow, o0 + kSegment);
    if (k.sw == 1) {
      AnyRow<1>(k, cb, oh, o0, o1);
    } else if (k.sw == 2) {
      AnyRow<2>(k, cb, oh, o0, o1);
    } else {
      AnyRow<0>(k, cb, oh, o0, o1);
    }
    if (++seg == k.segments) {
      seg = 0;
      if (++oh == k.oh) {
        oh = 0;
        ++cb;
      }
    }
  }
#endif  // HWY_TARGET == HWY_SCALAR
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(DepthwiseSupported);
HWY_EXPORT(DepthwiseWork);
HWY_EXPORT(DepthwiseConv);

bool depthwise_conv_supported(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(DepthwiseSupported)(p);
}

WorkGrid depthwise_conv_work(const ref::FusedConvParams& p) {
  return HWY_DYNAMIC_DISPATCH(DepthwiseWork)(p);
}

void f32_depthwise_conv(const ref::FusedConvParams& p, const float* x, const float* w,
                        const float* bias, const float* z, float* y, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(DepthwiseConv)(p, x, w, bias, z, y, begin, end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
