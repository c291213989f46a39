// Depthwise convolution on NCHWc; see depthwise_conv.h and README.md.
//
// Register blocking: a tile is R output pixels of one row and one channel block; each
// tap loads one weight vector and R input vectors and does R independent FMAs. With
// FMA latency 4 (AVX-512, AVX2) to 7 (Cortex-A72) and 2 FMAs per cycle, 8 or more
// independent accumulators hide the latency: R = 12 on the 32-register targets (AVX-512,
// NEON: 12 accumulators + 1 weight + 1 input), R = 8 on AVX2 and SSE4 (16 registers).
// The loads (1 + 1/R per FMA) rather than the FMAs bound this kernel, as the paper notes
// for depthwise layers; the tile shape keeps the loads streaming along the row.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/depthwise/depthwise_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include "hwy/highway.h"
#include "kernels/depthwise/depthwise_conv.h"
#include "kernels/reference/spatial.h"
#include "kernels/simd/conv_window.h"
#include "kernels/simd/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

static_assert(!HWY_HAVE_SCALABLE, "tern's NCHWc kernels need a fixed vector width");

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
constexpr int kMaxPixels = 8;
#else
constexpr int kMaxPixels = 12;
#endif
constexpr int64_t kSegment = 8 * kMaxPixels;

struct Depthwise : ConvWindow {
  const float* x;
  const float* w;
  const float* bias;
  OutputTarget out;
  int64_t c;
  int64_t segments;
};

// R pixels from column ow0 of row oh of channel block cb; taps kh in [kh0, kh1), kw in
// [kw0, kw1).
// kDense: stride 1, so the R pixels' offsets are compile-time constants (r * c floats).
template <int R, bool kDense = false>
HWY_NOINLINE void Tile(const Depthwise& k, int64_t cb, int64_t oh, int64_t ow0, int64_t kh0,
                       int64_t kh1, int64_t kw0, int64_t kw1) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = k.c;
  V acc[1][R];  // one block: StoreBlocks' B x R shape
  const V bias = LoadBias(d, k.bias, k.out.channels, cb);
  for (int r = 0; r < R; ++r) acc[0][r] = bias;
  const float* xc = k.x + cb * k.h * k.wd * c;
  const float* wc = k.w + cb * k.kh * k.kw * c;
  const int64_t col0 = ow0 * k.sw - k.pw;
  const int64_t step = kDense ? static_cast<int64_t>(hn::MaxLanes(d)) : k.sw * c;
  for (int64_t i = kh0; i < kh1; ++i) {
    const float* xr = xc + (oh * k.sh - k.ph + i * k.dh) * k.wd * c;
    for (int64_t j = kw0; j < kw1; ++j) {
      const V wv = hn::LoadU(d, wc + (i * k.kw + j) * c);
      const float* xp = xr + (col0 + j * k.dw) * c;
      for (int r = 0; r < R; ++r) {
        acc[0][r] = hn::MulAdd(hn::LoadU(d, xp + r * step), wv, acc[0][r]);
      }
    }
  }
  StoreBlocks(d, k.out, cb, oh * k.ow + ow0, acc);
}

template <bool kDense, int R = 1>
HWY_INLINE void TileN(int64_t r, const Depthwise& k, int64_t cb, int64_t oh, int64_t ow0,
                      int64_t kh0, int64_t kh1, int64_t kw0, int64_t kw1) {
  if constexpr (R <= kMaxPixels) {
    if (r == R) return Tile<R, kDense>(k, cb, oh, ow0, kh0, kh1, kw0, kw1);
    TileN<kDense, R + 1>(r, k, cb, oh, ow0, kh0, kh1, kw0, kw1);
  }
}

// Pixels [o0, o1) of output row oh of channel block cb.
void Row(const Depthwise& k, int64_t cb, int64_t oh, int64_t o0, int64_t o1) {
  const ref::Range rows = ref::valid_range(k.kh, k.dh, oh * k.sh - k.ph, k.h);
  const int64_t kh0 = rows.begin, kh1 = std::max(rows.begin, rows.end);
  const ref::Range inner = ref::valid_range(k.ow, k.sw, -k.pw, k.wd - (k.kw - 1) * k.dw);
  const int64_t ia = std::clamp<int64_t>(inner.begin, o0, o1);
  const int64_t ib = std::clamp<int64_t>(inner.end, ia, o1);
  auto border = [&](int64_t o) {
    const ref::Range cols = ref::valid_range(k.kw, k.dw, o * k.sw - k.pw, k.wd);
    Tile<1>(k, cb, oh, o, kh0, kh1, cols.begin, std::max(cols.begin, cols.end));
  };
  for (int64_t o = o0; o < ia; ++o) border(o);
  int64_t o = ia;
  if (k.sw == 1) {
    for (; o + kMaxPixels <= ib; o += kMaxPixels)
      Tile<kMaxPixels, true>(k, cb, oh, o, kh0, kh1, 0, k.kw);
    if (o < ib) TileN<true>(ib - o, k, cb, oh, o, kh0, kh1, 0, k.kw);
  } else {
    for (; o + kMaxPixels <= ib; o += kMaxPixels) Tile<kMaxPixels>(k, cb, oh, o, kh0, kh1, 0, k.kw);
    if (o < ib) TileN<false>(ib - o, k, cb, oh, o, kh0, kh1, 0, k.kw);
  }
  for (o = ib; o < o1; ++o) border(o);
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
  return k;
}

}  // namespace

bool DepthwiseSupported(const ref::FusedConvParams& p) {
  const hn::ScalableTag<float> d;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  const ref::ConvParams& cp = p.conv;
  if (c < 4 || p.w_block != c || p.x_block != c) return false;
  if (p.y_block != 1 && p.y_block != c) return false;
  if (cp.in.d != 1 || cp.out.d != 1 || cp.kernel.d != 1) return false;
  return cp.groups == cp.in_channels && cp.groups == cp.out_channels;
}

int64_t DepthwiseWorkItems(const ref::FusedConvParams& p) {
  const Depthwise k = resolve(p, nullptr, nullptr, nullptr, nullptr, nullptr);
  return (p.conv.out_channels + k.c - 1) / k.c * k.oh * k.segments;
}

void DepthwiseConv(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                   const float* z, float* y, int64_t begin, int64_t end) {
  const Depthwise k = resolve(p, x, w, bias, z, y);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t cb = item / (k.oh * k.segments);
    const int64_t oh = item / k.segments % k.oh, seg = item % k.segments;
    Row(k, cb, oh, seg * kSegment, std::min(k.ow, (seg + 1) * kSegment));
  }
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(DepthwiseSupported);
HWY_EXPORT(DepthwiseWorkItems);
HWY_EXPORT(DepthwiseConv);

bool depthwise_conv_supported(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(DepthwiseSupported)(p);
}

int64_t depthwise_conv_work_items(const ref::FusedConvParams& p) {
  return HWY_DYNAMIC_DISPATCH(DepthwiseWorkItems)(p);
}

void f32_depthwise_conv(const ref::FusedConvParams& p, const float* x, const float* w,
                        const float* bias, const float* z, float* y, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(DepthwiseConv)(p, x, w, bias, z, y, begin, end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
