// Register-blocked matrix multiply; see gemm.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <vector>

#include "hwy/highway.h"
#include "kernels/gemm/gemm.h"
#include "kernels/simd/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// The register tile: kRows rows of A x kVectors vectors of B's columns. Per k it loads
// kVectors vectors and broadcasts kRows elements of A for kRows * kVectors FMAs, which
// need at least 8 (AVX-512, NEON) or 10 (AVX2: latency 5, 2 per cycle) independent
// accumulators to keep both FMA pipes busy (the derivation for the conv tiles is in
// kernels/simd/register_tile-inl.h). 32 vector registers: 24 accumulators + 4 B vectors +
// 1 broadcast; 16 (AVX2, SSE4): 12 + 3 + 1.
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

struct Product {
  const ref::GemmParams* p;
  const float* a;
  const float* b;
  float* y;
  GemmOutput out;
  int64_t lanes;
};

// How a tile finishes its accumulators (bias already in them): a plain store, Relu then
// store, or the general path (alpha, beta, residual, any activation) per vector.
enum class Finish { kStore, kRelu, kGeneral };

Finish finish_mode(const Product& g) {
  const ref::GemmParams& p = *g.p;
  if (p.alpha != 1.0f || p.beta != 0.0f) return Finish::kGeneral;
  const ref::Epilogue* e = g.out.e;
  if (e == nullptr || (!e->residual && e->activation == ref::Activation::kNone)) {
    return Finish::kStore;
  }
  if (!e->residual && e->activation == ref::Activation::kRelu) return Finish::kRelu;
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

// The general finish of one vector of row i at columns [j, j + lanes).
template <class D>
HWY_NOINLINE void FinishVector(D d, const Product& g, int64_t i, int64_t j, hn::Vec<D> acc) {
  const ref::GemmParams& p = *g.p;
  const ref::Epilogue* e = g.out.e;
  if (e != nullptr && needs_scalar_activation(*e)) {
    HWY_ALIGN float lanes[hn::MaxLanes(d)];
    hn::Store(acc, d, lanes);
    for (int64_t l = 0; l < g.lanes; ++l) FinishScalar(g, i, j + l, lanes[l]);
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

// Rows [i0, i0 + R) x columns [j0, j0 + V * lanes) over all of K.
template <int R, int V>
HWY_NOINLINE void Tile(const Product& g, int64_t i0, int64_t j0, Finish mode) {
  const hn::ScalableTag<float> d;
  using Vec = hn::Vec<decltype(d)>;
  const ref::GemmParams& p = *g.p;
  const int64_t lanes = g.lanes;
  // Every loop over acc carries HWY_UNROLL so that GCC keeps the array in registers (see
  // kernels/direct/direct_conv.cc).
  Vec acc[R][V];
  HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
    const Vec init = g.out.row_bias ? hn::Set(d, g.out.row_bias[i0 + r]) : hn::Zero(d);
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) acc[r][v] = init;
  }
  const int64_t row_step = RowStep(p), k_step = KStep(p);
  const float* a0 = g.a + i0 * row_step;
  const float* bk = g.b + j0;
  for (int64_t k = 0; k < p.k; ++k, a0 += k_step, bk += p.ldb) {
    Vec bv[V];
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) bv[v] = hn::LoadU(d, bk + v * lanes);
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      const Vec av = hn::Set(d, a0[r * row_step]);
      HWY_UNROLL(8) for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(bv[v], av, acc[r][v]);
    }
  }
  if (mode == Finish::kGeneral) {
    HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
      HWY_UNROLL(8)
      for (int v = 0; v < V; ++v) FinishVector(d, g, i0 + r, j0 + v * lanes, acc[r][v]);
    }
    return;
  }
  HWY_UNROLL(8) for (int r = 0; r < R; ++r) {
    float* yr = g.y + (i0 + r) * p.ldy + j0;
    HWY_UNROLL(8) for (int v = 0; v < V; ++v) {
      Vec out = acc[r][v];
      if (mode == Finish::kRelu) out = ActivateAs<ref::Activation::kRelu>(d, *g.out.e, out);
      hn::StoreU(out, d, yr + v * lanes);
    }
  }
}

// Tile<r, v> for run-time r in [1, kRows] and v in [1, kVectors].
template <int R = 1, int V = 1>
HWY_INLINE void TileN(int64_t r, int64_t v, const Product& g, int64_t i0, int64_t j0, Finish mode) {
  HWY_DASSERT(1 <= r && r <= kRows && 1 <= v && v <= kVectors);
  if constexpr (R <= kRows && V <= kVectors) {
    if (r == R && v == V) return Tile<R, V>(g, i0, j0, mode);
    if (v == V) return TileN<R + 1, 1>(r, v, g, i0, j0, mode);
    TileN<R, V + 1>(r, v, g, i0, j0, mode);
  }
}

// Columns [whole, n) of rows [i0, i1), fewer than a vector: B's tail is copied into a
// zero-padded K x lanes strip, the vector tile runs on it into a row buffer, and each real
// element is finished from there, so no load or store goes past a row of B or Y (a 1x1
// conv of 15 pixels would otherwise run all its products one float at a time).
void TailColumns(const Product& g, int64_t i0, int64_t i1, int64_t whole) {
  const ref::GemmParams& p = *g.p;
  const int64_t lanes = g.lanes, tail = p.n - whole;
  thread_local std::vector<float> strip, rows;
  strip.assign(static_cast<size_t>(p.k * lanes), 0.0f);
  for (int64_t k = 0; k < p.k; ++k) {
    for (int64_t j = 0; j < tail; ++j) strip[k * lanes + j] = g.b[k * p.ldb + whole + j];
  }
  rows.resize(static_cast<size_t>((i1 - i0) * lanes));
  ref::GemmParams q = p;  // the strip: rows of `lanes` columns, finished later
  q.n = q.ldb = q.ldy = lanes;
  q.alpha = 1.0f;
  q.beta = 0.0f;
  GemmOutput out;
  out.row_bias = g.out.row_bias ? g.out.row_bias + i0 : nullptr;
  const Product t{&q, g.a + i0 * RowStep(p), strip.data(), rows.data(), out, lanes};
  for (int64_t i = 0; i < i1 - i0; i += kRows) {
    TileN(std::min<int64_t>(kRows, i1 - i0 - i), 1, t, i, 0, Finish::kStore);
  }
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = 0; j < tail; ++j) FinishScalar(g, i, whole + j, rows[(i - i0) * lanes + j]);
  }
}

int64_t Panels(const ref::GemmParams& p, int64_t lanes) {
  const int64_t width = kPanelTiles * kVectors * lanes;
  return (p.n + width - 1) / width;
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
  const Product g{&p, a, b, y, out, lanes};
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
      for (int64_t i = i0; i < i1; i += kRows) {
        TileN(std::min<int64_t>(kRows, i1 - i), vectors, g, i, j, mode);
      }
    }
    if (c1 > whole) TailColumns(g, i0, i1, whole);
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

}  // namespace tern::kernels
#endif  // HWY_ONCE
