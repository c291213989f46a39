// Register-blocked matrix multiply; see gemm.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
#include <vector>

#include "base/cpu.h"
#include "hwy/highway.h"
#include "kernels/gemm/gemm.h"
#include "kernels/simd/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// The register tile: kRows rows of A x kVectors vectors of B's columns. Per k it loads
// kVectors vectors and broadcasts kRows elements of A for kRows * kVectors FMAs, which
// need at least 8 independent accumulators (AVX-512, and AVX2 on Zen and Skylake: latency
// 4, 2 per cycle; 10 on Haswell's latency 5; 8 to 14 on Cortex-A72's NEON) to keep both
// FMA pipes busy (the derivation for the conv tiles is in kernels/simd/register_tile-inl.h).
// 32 vector registers: 24 accumulators + 4 B vectors + 1 broadcast; 16 (AVX2, SSE4): 12 +
// 3 + 1.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
constexpr int kRows = 4;
constexpr int kVectors = 3;
#else
constexpr int kRows = 6;
constexpr int kVectors = 4;
#endif
// An item: kChunkTiles row tiles x kPanelTiles tile widths of columns. Items are small
// enough that a 1-row product (a fully connected layer) splits across threads by
// columns, and large enough that each strip of B (K x one tile width) serves 8 row tiles.
constexpr int64_t kChunkTiles = 8;
constexpr int64_t kPanelTiles = 4;

// One product: A, B, Y and the epilogue. B's row k = c * taps + t (channel c, tap t)
// starts at tile b + c * plane + tap_off[t]: a GEMM has one tap at 0 and plane = ldb; a
// conv's implicit GEMM (ConvGemmRun) has a tap per kernel position, each a shift of the
// zero-padded input rows, so no im2col matrix exists.
struct Product {
  const ref::GemmParams* p;
  const float* a;  // A as p says; for the implicit GEMM, one chunk's rows packed (PackRows)
  float* y;
  GemmOutput out;
  int64_t lanes;
  int64_t channels;        // K / taps
  int64_t taps;            // >= 1
  const int64_t* tap_off;  // [taps]
  int64_t plane;           // B's stride between channels
};

// Where one tile's vectors are: vector v starts at b + col_b[v] in every B row and at
// column col_y[v] of every Y row, with valid[v] real lanes (the rest are computed from
// B's padding and not stored). kVectors is the most any tile has.
struct TileCols {
  const float* b;
  int64_t col_b[kVectors];
  int64_t col_y[kVectors];
  int64_t valid[kVectors];
};

// The input channels [c0, c1) of K that one call of a tile covers. The implicit GEMM
// takes a tile's K in cache passes (ConvGemmRun): the first pass starts from the bias,
// later ones from the partial sums the pass before stored to `partial` ([R][V][lanes],
// aligned), and only the last finishes and stores to Y. The sums add in K's order either
// way, so the results do not depend on the passes.
struct Pass {
  int64_t c0 = 0, c1 = 0;
  float* partial = nullptr;  // nullptr when the pass is the only one
  bool first = true, last = true;
};

// How a tile finishes its accumulators (bias already in them): a plain store, Relu then
// store, or the general path (alpha, beta, residual, any activation, the affine map) per
// vector.
enum class Finish { kStore, kRelu, kGeneral };

Finish finish_mode(const Product& g) {
  const ref::GemmParams& p = *g.p;
  if (p.alpha != 1.0f || p.beta != 0.0f) return Finish::kGeneral;
  const ref::Epilogue* e = g.out.e;
  if (e == nullptr || (!e->residual && !e->maps_values())) return Finish::kStore;
  if (!e->residual && !e->affine && e->activation == ref::Activation::kRelu) {
    return Finish::kRelu;
  }
  return Finish::kGeneral;
}

// Element (i, j) of the residual z, or nullptr without one (z may be null then).
inline const float* Residual(const Product& g, int64_t i, int64_t j) {
  return g.out.e != nullptr && g.out.e->residual ? g.out.z + i * g.p->ldy + j : nullptr;
}

// The general finish of one element: v = alpha * acc + beta * y (acc includes the row
// bias, which is only given with alpha = 1), then the epilogue.
inline float FinishScalar(const Product& g, int64_t i, int64_t j, float acc) {
  const ref::GemmParams& p = *g.p;
  float* yp = g.y + i * p.ldy + j;
  float v = p.alpha * acc;
  if (p.beta != 0.0f) v += p.beta * *yp;
  if (g.out.e != nullptr) {
    ref::f32_epilogue(*g.out.e, 1, &v, 1, nullptr, 0, Residual(g, i, j), 1, &v, 1);
  }
  return *yp = v;
}

// The general finish of one vector of row i at columns [j, j + valid).
template <class D>
HWY_NOINLINE void FinishVector(D d, const Product& g, int64_t i, int64_t j, hn::Vec<D> acc,
                               int64_t valid) {
  const ref::GemmParams& p = *g.p;
  const ref::Epilogue* e = g.out.e;
  if (valid < g.lanes || (e != nullptr && needs_scalar_activation(*e))) {
    // A partial vector (a conv row's last one) or an activation without a vector form:
    // element by element, so nothing past the row is read or written.
    HWY_ALIGN float lanes[hn::MaxLanes(d)];
    hn::Store(acc, d, lanes);
    for (int64_t l = 0; l < valid; ++l) FinishScalar(g, i, j + l, lanes[l]);
    return;
  }
  float* yp = g.y + i * p.ldy + j;
  auto v = p.alpha == 1.0f ? acc : hn::Mul(hn::Set(d, p.alpha), acc);
  if (p.beta != 0.0f) v = hn::MulAdd(hn::Set(d, p.beta), hn::LoadU(d, yp), v);
  if (e != nullptr) v = EpilogueVector(d, *e, v, Residual(g, i, j));
  hn::StoreU(v, d, yp);
}

// A(i, k) = a[i * RowStep(p) + k * KStep(p)].
inline int64_t RowStep(const ref::GemmParams& p) { return p.trans_a ? 1 : p.lda; }
inline int64_t KStep(const ref::GemmParams& p) { return p.trans_a ? p.lda : 1; }

// Rows [i0, i0 + R) x the V vectors of `cols` over all of K, or for kTaps over the input
// channels of `pass` (A then packed, PackRows). kTaps: B's rows are
// channel planes plus tap offsets (the implicit GEMM); otherwise one row every ldb
// floats from cols.b, vector v at v * lanes (a GEMM: its own loop, which keeps the
// offsets immediate; with the tap loop a 24-deep GEMM ran 1.28x slower).
template <int R, int V, bool kTaps>
HWY_NOINLINE void Tile(const Product& g, int64_t i0, const TileCols& cols, Finish mode,
                       const Pass& pass) {
  const hn::ScalableTag<float> d;
  using Vec = hn::Vec<decltype(d)>;
  const ref::GemmParams& p = *g.p;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Every loop over acc carries HWY_UNROLL so that GCC keeps the array in registers (see
  // kernels/direct/direct_conv.cc).
  Vec acc[R][V];
  if (pass.first) {
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      const Vec init = g.out.row_bias ? hn::Set(d, g.out.row_bias[i0 + r]) : hn::Zero(d);
      HWY_UNROLL(8) for (int v = 0; v < V; ++v) acc[r][v] = init;
    }
  } else {
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      HWY_UNROLL(8) for (int v = 0; v < V; ++v) {
        acc[r][v] = hn::Load(d, pass.partial + (r * V + v) * lanes);
      }
    }
  }
  // The implicit GEMM's A is packed in row tiles (PackRows): k's kRows elements are
  // adjacent, so the broadcasts take immediate offsets instead of a register per row
  // (with lda strides, GCC reloaded 4 of them from the stack every k).
  const int64_t row_step = kTaps ? 1 : RowStep(p), k_step = kTaps ? kRows : KStep(p);
  const float* a0 = kTaps ? g.a + i0 % (kChunkTiles * kRows) * p.k + pass.c0 * g.taps * kRows
                          : g.a + i0 * row_step;
  // One k: V loads of B's row at bk, R broadcasts of A, R * V FMAs.
  auto step = [&](const float* bk, const int64_t* col) HWY_ATTR {
    Vec bv[V];
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) bv[v] = hn::LoadU(d, bk + col[v]);
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      const Vec av = hn::Set(d, a0[r * row_step]);
      HWY_UNROLL(8) for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(bv[v], av, acc[r][v]);
    }
    a0 += k_step;
  };
  if constexpr (kTaps) {
    int64_t col[V];
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) col[v] = cols.col_b[v];
    const float* bc = cols.b + pass.c0 * g.plane;
    for (int64_t c = pass.c0; c < pass.c1; ++c, bc += g.plane) {
      for (int64_t t = 0; t < g.taps; ++t) step(bc + g.tap_off[t], col);
    }
  } else {
    int64_t col[V];
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) col[v] = v * static_cast<int64_t>(hn::Lanes(d));
    const float* bk = cols.b;
    for (int64_t k = 0; k < p.k; ++k, bk += p.ldb) step(bk, col);
  }
  if (!pass.last) {
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      HWY_UNROLL(8) for (int v = 0; v < V; ++v) {
        hn::Store(acc[r][v], d, pass.partial + (r * V + v) * lanes);
      }
    }
    return;
  }
  if (mode == Finish::kGeneral) {
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      HWY_UNROLL(8) for (int v = 0; v < V; ++v) {
        FinishVector(d, g, i0 + r, cols.col_y[v], acc[r][v], cols.valid[v]);
      }
    }
    return;
  }
  // A GEMM tile's vectors are whole and consecutive (GemmCols): no per-vector lookups.
  HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
    float* yr = g.y + (i0 + r) * p.ldy;
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) {
      Vec out = acc[r][v];
      if (mode == Finish::kRelu) out = ActivationOnlyAs<ref::Activation::kRelu>(d, *g.out.e, out);
      if (!kTaps) {
        hn::StoreU(out, d, yr + cols.col_y[0] + v * lanes);
      } else if (cols.valid[v] == lanes) {
        hn::StoreU(out, d, yr + cols.col_y[v]);
      } else {
        // Only the real lanes: the rest of the row's memory may be another thread's
        // (BlendedStore is a read-modify-write on some targets).
        HWY_ALIGN float part[hn::MaxLanes(d)];
        hn::Store(out, d, part);
        std::copy(part, part + cols.valid[v], yr + cols.col_y[v]);
      }
    }
  }
}

// Tile<r, v, kTaps> for run-time r in [1, kRows] and v in [1, kVectors].
template <bool kTaps, int R = 1, int V = 1>
HWY_INLINE void TileN(int64_t r, int64_t v, const Product& g, int64_t i0, const TileCols& cols,
                      Finish mode, const Pass& pass) {
  HWY_DASSERT(1 <= r && r <= kRows && 1 <= v && v <= kVectors);
  if constexpr (R <= kRows && V <= kVectors) {
    if (r == R && v == V) return Tile<R, V, kTaps>(g, i0, cols, mode, pass);
    if (v == V) return TileN<kTaps, R + 1, 1>(r, v, g, i0, cols, mode, pass);
    TileN<kTaps, R, V + 1>(r, v, g, i0, cols, mode, pass);
  }
}

// The columns of a GEMM tile: `vectors` whole vectors from column j0 of B and Y.
TileCols GemmCols(const float* b, int64_t j0, int64_t vectors, int64_t lanes) {
  TileCols cols{b + j0, {}, {}, {}};
  for (int64_t v = 0; v < vectors; ++v) {
    cols.col_b[v] = v * lanes;
    cols.col_y[v] = j0 + v * lanes;
    cols.valid[v] = lanes;
  }
  return cols;
}

// The one tap of a GEMM's B rows.
constexpr int64_t kNoShift[1] = {0};

// Columns [whole, n) of rows [i0, i1), fewer than a vector: B's tail is copied into a
// zero-padded K x lanes strip, the vector tile runs on it into a row buffer, and each real
// element is finished from there, so no load or store goes past a row of B or Y (a 1x1
// conv of 15 pixels would otherwise run all its products one float at a time).
void TailColumns(const Product& g, const float* b, int64_t i0, int64_t i1, int64_t whole) {
  const ref::GemmParams& p = *g.p;
  const int64_t lanes = g.lanes, tail = p.n - whole;
  thread_local std::vector<float> strip, rows;
  strip.assign(static_cast<size_t>(p.k * lanes), 0.0f);
  for (int64_t k = 0; k < p.k; ++k) {
    for (int64_t j = 0; j < tail; ++j) strip[k * lanes + j] = b[k * p.ldb + whole + j];
  }
  rows.resize(static_cast<size_t>((i1 - i0) * lanes));
  ref::GemmParams q = p;  // the strip: rows of `lanes` columns, finished later
  q.n = q.ldb = q.ldy = lanes;
  q.alpha = 1.0f;
  q.beta = 0.0f;
  GemmOutput out;
  out.row_bias = g.out.row_bias ? g.out.row_bias + i0 : nullptr;
  const Product t{&q, g.a + i0 * RowStep(p), rows.data(), out, lanes, p.k, 1, kNoShift, lanes};
  const TileCols cols = GemmCols(strip.data(), 0, 1, lanes);
  for (int64_t i = 0; i < i1 - i0; i += kRows) {
    TileN<false>(std::min<int64_t>(kRows, i1 - i0 - i), 1, t, i, cols, Finish::kStore, Pass{});
  }
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = 0; j < tail; ++j) FinishScalar(g, i, whole + j, rows[(i - i0) * lanes + j]);
  }
}

int64_t Panels(const ref::GemmParams& p, int64_t lanes) {
  const int64_t width = kPanelTiles * kVectors * lanes;
  return (p.n + width - 1) / width;
}

// The implicit GEMM of a conv (conv_gemm_supported): Y [M, OH * OW] = W [M, C * kH * kW]
// x B, where B's row (c, kh, kw) is input channel c shifted by the tap. Work items are
// chunks of output channels x bands of output rows; each item copies its band's input
// rows, zero-padded (the conv's padding, and columns up to whole vectors), into a
// per-thread buffer, so every tap of every tile is a plain vector load.
struct ConvGemm {
  int64_t band_rows = 0;  // output rows per band
  int64_t bands = 0;
  int64_t row_vectors = 0;  // vectors per output row
  int64_t width = 0;        // floats per row of the band buffer
  int64_t rows = 0;         // input rows per band
};

// Bands: rows for kConvGemmBandsPerImage bands (parallel_grid's spatial split), but at
// least one tile's kVectors vectors each (a 12-pixel row is one vector: 1-row bands would
// run 1-vector tiles), and fewer rows (more bands) where a band's buffer would pass
// 256 KiB (a quarter of a 1 MiB L2).
constexpr int64_t kBandBytes = 256 * 1024;

ConvGemm conv_gemm(const ref::ConvParams& c, int64_t lanes) {
  ConvGemm k;
  k.row_vectors = (c.out.w + lanes - 1) / lanes;
  k.width = k.row_vectors * lanes + (c.kernel.w - 1) * c.dilation.w;
  const int64_t halo = (c.kernel.h - 1) * c.dilation.h;
  const int64_t row_bytes = c.in_channels * k.width * static_cast<int64_t>(sizeof(float));
  const int64_t fit = std::max<int64_t>(1, kBandBytes / std::max<int64_t>(row_bytes, 1) - halo);
  const int64_t rows = std::max((c.out.h + kConvGemmBandsPerImage - 1) / kConvGemmBandsPerImage,
                                (kVectors + k.row_vectors - 1) / k.row_vectors);
  k.band_rows = std::clamp<int64_t>(rows, 1, std::max<int64_t>(1, std::min(fit, c.out.h)));
  k.bands = (c.out.h + k.band_rows - 1) / k.band_rows;
  k.rows = k.band_rows + halo;
  return k;
}

// Input channels per cache pass of the implicit GEMM: a tile's B vectors for that many
// channels (taps * kVectors vectors each) stay within two thirds of the L1 data cache,
// as the direct conv's passes (kernels/direct), so the chunk's row tiles reuse them from
// L1. The budget counts the vectors loaded, not the lines they touch (a 3x3 tile's taps
// overlap: about a third as many), nor A's slice. ppocr's 96 -> 24 3x3 conv at 64 x 96
// took 0.98 of its time with passes of 10 or 21 channels against one pass of 96, whose
// loads (221 KB of vectors per strip) came from L2.
int64_t ConvGemmPassChannels(int64_t taps, int64_t lanes) {
  const int64_t per_channel = taps * kVectors * lanes * static_cast<int64_t>(sizeof(float));
  return std::max<int64_t>(1, l1d_cache_bytes() * 2 / 3 / per_channel);
}

// Packs rows [i0, i1) of A ([M, K], row-major) in row tiles of kRows: `out` is
// [tiles][K][kRows], element (i0 + t * kRows + r, k) at (t * K + k) * kRows + r, rows past
// i1 zero.
void PackRows(const float* a, int64_t k, int64_t i0, int64_t i1, float* out) {
  for (int64_t t0 = i0; t0 < i1; t0 += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, i1 - t0);
    if (rows < kRows) std::fill(out, out + k * kRows, 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t r = 0; r < rows; ++r) out[kk * kRows + r] = a[(t0 + r) * k + kk];
    }
    out += k * kRows;
  }
}

// Copies input rows [y0 - pad_top, y0 - pad_top + k.rows) of every channel into `band`
// ([C, k.rows, k.width]): column j holds input column j - pad_left, 0 outside the image.
void CopyBand(const ref::ConvParams& c, const ConvGemm& k, const float* x, int64_t y0,
              float* band) {
  const int64_t h = c.in.h, w = c.in.w, left = c.pad_begin.w;
  const int64_t first = std::max<int64_t>(0, -left);           // band column of input col 0
  const int64_t begin = std::max<int64_t>(0, left);            // its buffer column
  const int64_t count = std::min(w - first, k.width - begin);  // input columns copied
  for (int64_t ch = 0; ch < c.in_channels; ++ch) {
    for (int64_t r = 0; r < k.rows; ++r) {
      float* dst = band + (ch * k.rows + r) * k.width;
      const int64_t iy = y0 - c.pad_begin.h + r;
      if (iy < 0 || iy >= h || count <= 0) {
        std::fill(dst, dst + k.width, 0.0f);
        continue;
      }
      const float* src = x + (ch * h + iy) * w + first;
      std::fill(dst, dst + begin, 0.0f);
      std::copy(src, src + count, dst + begin);
      std::fill(dst + begin + count, dst + k.width, 0.0f);
    }
  }
}

}  // namespace

bool GemmSupported(const ref::GemmParams& p) { return !p.trans_b; }

WorkGrid GemmWork(const ref::GemmParams& p) {
  if (p.m <= 0 || p.n <= 0) return {0, 0};
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t chunk = kChunkTiles * kRows;
  return {(p.m + chunk - 1) / chunk, Panels(p, lanes)};
}

void GemmRun(const ref::GemmParams& p, const float* a, const float* b, float* y,
             const GemmOutput& out, int64_t begin, int64_t end) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  HWY_DASSERT(p.alpha == 1.0f || out.row_bias == nullptr);
  const Product g{&p, a, y, out, lanes, p.k, 1, kNoShift, p.ldb};
  const Finish mode = finish_mode(g);
  const int64_t panels = Panels(p, lanes);
  const int64_t width = kVectors * lanes;
  const int64_t whole = p.n / lanes * lanes;  // columns in whole vectors
  for (int64_t item = begin; item < end; ++item) {
    const int64_t i0 = item / panels * kChunkTiles * kRows;
    const int64_t i1 = std::min(p.m, i0 + kChunkTiles * kRows);
    const int64_t c0 = item % panels * kPanelTiles * width;
    const int64_t c1 = std::min(p.n, c0 + kPanelTiles * width);
    for (int64_t j = c0; j < std::min(c1, whole); j += width) {
      const int64_t vectors = std::min(width, whole - j) / lanes;
      const TileCols cols = GemmCols(b, j, vectors, lanes);
      for (int64_t i = i0; i < i1; i += kRows) {
        TileN<false>(std::min<int64_t>(kRows, i1 - i), vectors, g, i, cols, mode, Pass{});
      }
    }
    if (c1 > whole) TailColumns(g, b, i0, i1, whole);
  }
}

bool ConvGemmSupported(const ref::FusedConvParams& p) {
  const ref::ConvParams& c = p.conv;
  return p.x_block == 1 && p.y_block == 1 && !p.y_nhwc && p.w_block == 1 && !p.w_ohwi &&
         c.groups == 1 && c.in.d == 1 && c.out.d == 1 && c.kernel.d == 1 && c.pad_begin.d == 0 &&
         c.stride.h == 1 && c.stride.w == 1;
}

WorkGrid ConvGemmWork(const ref::FusedConvParams& p) {
  const ref::ConvParams& c = p.conv;
  if (c.out_channels <= 0 || c.out.size() <= 0) return {0, 0};
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t chunk = kChunkTiles * kRows;
  return {(c.out_channels + chunk - 1) / chunk, conv_gemm(c, lanes).bands};
}

void ConvGemmRun(const ref::FusedConvParams& fp, const float* x, const float* w, const float* bias,
                 const float* z, float* y, int64_t begin, int64_t end) {
  const ref::ConvParams& c = fp.conv;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const ConvGemm k = conv_gemm(c, lanes);
  const int64_t taps = c.kernel.h * c.kernel.w;
  thread_local std::vector<int64_t> tap_off;
  tap_off.resize(static_cast<size_t>(taps));
  for (int64_t kh = 0; kh < c.kernel.h; ++kh) {
    for (int64_t kw = 0; kw < c.kernel.w; ++kw) {
      tap_off[kh * c.kernel.w + kw] = kh * c.dilation.h * k.width + kw * c.dilation.w;
    }
  }
  ref::GemmParams p;
  p.m = c.out_channels;
  p.n = c.out.h * c.out.w;
  p.k = c.in_channels * taps;
  p.lda = p.k;
  p.ldy = p.n;
  const GemmOutput out{&fp.epilogue, bias, z};
  thread_local std::vector<float> band;
  band.resize(static_cast<size_t>(c.in_channels * k.rows * k.width));
  const int64_t pass_channels = ConvGemmPassChannels(taps, lanes);
  // The partial sums of a chunk's row tiles between cache passes (12 KiB on AVX-512).
  HWY_ALIGN float partial[kChunkTiles * kRows * kVectors * hn::MaxLanes(hn::ScalableTag<float>())];
  thread_local std::vector<float> a_packed;  // one chunk's rows of w, PackRows
  const int64_t chunk_rows = std::min(kChunkTiles, (p.m + kRows - 1) / kRows) * kRows;
  a_packed.resize(static_cast<size_t>(chunk_rows * p.k));
  const Product g{
      &p, a_packed.data(), y, out, lanes, c.in_channels, taps, tap_off.data(), k.rows * k.width};
  const Finish mode = finish_mode(g);
  int64_t packed = -1;  // the chunk in a_packed
  int64_t copied = -1;  // the band in the buffer
  for (int64_t item = begin; item < end; ++item) {
    const int64_t i0 = item / k.bands * kChunkTiles * kRows;
    const int64_t i1 = std::min(p.m, i0 + kChunkTiles * kRows);
    const int64_t y0 = item % k.bands * k.band_rows;
    const int64_t y1 = std::min(c.out.h, y0 + k.band_rows);
    if (item / k.bands != packed) {
      PackRows(w, p.k, i0, i1, a_packed.data());
      packed = item / k.bands;
    }
    if (item % k.bands != copied) {
      CopyBand(c, k, x, y0, band.data());
      copied = item % k.bands;
    }
    // The band's vectors in row order, kVectors at a time (a tile may span two rows).
    const int64_t vectors = (y1 - y0) * k.row_vectors;
    for (int64_t v0 = 0; v0 < vectors; v0 += kVectors) {
      const int64_t nv = std::min<int64_t>(kVectors, vectors - v0);
      TileCols cols{band.data(), {}, {}, {}};
      for (int64_t v = 0; v < nv; ++v) {
        const int64_t row = (v0 + v) / k.row_vectors, col = (v0 + v) % k.row_vectors * lanes;
        cols.col_b[v] = row * k.width + col;
        cols.col_y[v] = (y0 + row) * c.out.w + col;
        cols.valid[v] = std::min(lanes, c.out.w - col);
      }
      for (int64_t c0 = 0; c0 < c.in_channels; c0 += pass_channels) {
        Pass pass;
        pass.c0 = c0;
        pass.c1 = std::min(c.in_channels, c0 + pass_channels);
        pass.first = c0 == 0;
        pass.last = pass.c1 == c.in_channels;
        for (int64_t i = i0; i < i1; i += kRows) {
          pass.partial = pass.first && pass.last ? nullptr : partial + (i - i0) * kVectors * lanes;
          TileN<true>(std::min<int64_t>(kRows, i1 - i), nv, g, i, cols, mode, pass);
        }
      }
    }
  }
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(GemmSupported);
HWY_EXPORT(GemmWork);
HWY_EXPORT(GemmRun);
HWY_EXPORT(ConvGemmSupported);
HWY_EXPORT(ConvGemmWork);
HWY_EXPORT(ConvGemmRun);

bool gemm_supported(const ref::GemmParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(GemmSupported)(p);
}

WorkGrid gemm_work(const ref::GemmParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(GemmWork)(p);
}

void f32_gemm(const ref::GemmParams& p, const float* a, const float* b, float* y,
              const GemmOutput& out, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(GemmRun)(p, a, b, y, out, begin, end);
}

bool conv_gemm_supported(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(ConvGemmSupported)(p);
}

WorkGrid conv_gemm_work(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(ConvGemmWork)(p);
}

void f32_conv_gemm(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                   const float* z, float* y, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(ConvGemmRun)(p, x, w, bias, z, y, begin, end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
