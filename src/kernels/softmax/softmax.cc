// Softmax and log-softmax with Highway's vector Exp; see softmax.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softmax/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
#include <cmath>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/simd/epilogue-inl.h"
#include "kernels/softmax/softmax.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Floats of the short-row path's chunk: x - max of a few hundred rows, exponentiated in
// one pass (on the stack; 4 KiB).
constexpr int64_t kChunk = 1024;

// v[0, n) = exp(v[0, n)) in place: whole vectors, the tail through a vector-sized copy
// (Highway's masked loads and stores may touch the whole vector on SSE4, past the end).
void ExpInPlace(float* v, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(ExpVector(d, hn::LoadU(d, v + i)), d, v + i);
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(D())] = {};
    std::copy(v + i, v + n, tail);
    hn::Store(ExpVector(d, hn::Load(d, tail)), d, tail);
    std::copy(tail, tail + (n - i), v + i);
  }
}

// The row's max as the reference takes it. Where the max meets a NaN does not matter:
// the NaN's own exp is NaN, so its row's sum and every output of the row are NaN, as in
// the reference.
float RowMax(const float* x, int64_t n) {
  float m = x[0];
  for (int64_t j = 1; j < n; ++j) m = std::max(m, x[j]);
  return m;
}

// One contiguous row of n >= lanes floats.
void LongRow(const float* x, float* y, int64_t n, bool log) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V vmax = hn::LoadU(d, x);
  for (int64_t j = lanes; j + lanes <= n; j += lanes) vmax = hn::Max(vmax, hn::LoadU(d, x + j));
  float m = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (int64_t j = n - n % lanes; j < n; ++j) m = std::max(m, x[j]);
  const V vm = hn::Set(d, m);
  V vsum = hn::Zero(d);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    const V t = hn::Sub(hn::LoadU(d, x + j), vm);
    const V e = ExpVector(d, t);
    vsum = hn::Add(vsum, e);
    hn::StoreU(log ? t : e, d, y + j);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; j < n; ++j) {
    const float t = x[j] - m;
    const float e = std::exp(t);
    sum += e;
    y[j] = log ? t : e;
  }
  if (log) {
    const V shift = hn::Set(d, std::log(sum));
    for (j = 0; j + lanes <= n; j += lanes)
      hn::StoreU(hn::Sub(hn::LoadU(d, y + j), shift), d, y + j);
    for (; j < n; ++j) y[j] -= std::log(sum);
  } else {
    const V inv = hn::Set(d, 1.0f / sum);
    for (j = 0; j + lanes <= n; j += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, y + j), inv), d, y + j);
    for (; j < n; ++j) y[j] *= 1.0f / sum;
  }
}

// Rows [0, rows) of 2 floats (the detection heads' two classes): each vector holds
// lanes / 2 rows, and a row's partner lane comes from Reverse2 (swapped pairs), so the
// max, exp, sum and scaling all run on whole vectors. The tail goes through a copy.
void PairRows(const float* x, float* y, int64_t rows, bool log) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto pairs = [&](V v) {
    const V t = hn::Sub(v, hn::Max(v, hn::Reverse2(d, v)));  // NaNs: see RowMax
    const V e = ExpVector(d, t);
    const V sum = hn::Add(e, hn::Reverse2(d, e));
    if (log) return hn::Sub(t, hn::IfThenElse(hn::IsNaN(sum), sum, hn::Log(d, sum)));
    return hn::Div(e, sum);
  };
  const int64_t n = 2 * rows;
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(pairs(hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(D())] = {};
    std::copy(x + i, x + n, tail);
    hn::Store(pairs(hn::Load(d, tail)), d, tail);
    std::copy(tail, tail + (n - i), y + i);
  }
}

// Rows [0, rows) of n < lanes floats each, contiguous.
void ShortRows(const float* x, float* y, int64_t rows, int64_t n, bool log) {
  const int64_t per_chunk = std::max<int64_t>(1, kChunk / n);
  float e[kChunk];
  for (int64_t r0 = 0; r0 < rows; r0 += per_chunk) {
    const int64_t r1 = std::min(rows, r0 + per_chunk);
    const float* xc = x + r0 * n;
    float* yc = y + r0 * n;
    const int64_t count = (r1 - r0) * n;
    // t = x - max (into y, or into e for log-softmax, which needs t afterwards).
    float* t = log ? yc : e;
    for (int64_t r = 0; r < r1 - r0; ++r) {
      const float m = RowMax(xc + r * n, n);
      for (int64_t j = 0; j < n; ++j) t[r * n + j] = xc[r * n + j] - m;
    }
    if (log) std::copy(t, t + count, e);
    ExpInPlace(e, count);
    for (int64_t r = 0; r < r1 - r0; ++r) {
      float sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) sum += e[r * n + j];
      if (log) {
        const float shift = std::log(sum);
        for (int64_t j = 0; j < n; ++j) yc[r * n + j] -= shift;
      } else {
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < n; ++j) yc[r * n + j] = e[r * n + j] * inv;
      }
    }
  }
}

// Columns [i0, inner) of one [n, inner] slab, one at a time (the tail narrower than a
// vector), as the reference computes them.
void ScalarColumns(const float* x, float* y, int64_t n, int64_t inner, int64_t i0, bool log) {
  for (int64_t i = i0; i < inner; ++i) {
    float m = x[i];
    for (int64_t j = 1; j < n; ++j) m = std::max(m, x[j * inner + i]);
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      const float t = x[j * inner + i] - m;
      const float e = std::exp(t);
      sum += e;
      y[j * inner + i] = log ? t : e;
    }
    const float shift = std::log(sum), inv = 1.0f / sum;
    for (int64_t j = 0; j < n; ++j) {
      y[j * inner + i] = log ? y[j * inner + i] - shift : y[j * inner + i] * inv;
    }
  }
}

// One [n, inner] slab: lanes along inner, n softmaxes of a vector of columns at once.
void Columns(const float* x, float* y, int64_t n, int64_t inner, bool log) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= inner; i += lanes) {
    const auto load = [&](const float* p) { return hn::LoadU(d, p + i); };
    const auto store = [&](V v, float* p) { hn::StoreU(v, d, p + i); };
    V m = load(x);  // NaNs: see RowMax
    for (int64_t j = 1; j < n; ++j) m = hn::Max(m, load(x + j * inner));
    V sum = hn::Zero(d);
    for (int64_t j = 0; j < n; ++j) {
      const V t = hn::Sub(load(x + j * inner), m);
      const V e = ExpVector(d, t);
      sum = hn::Add(sum, e);
      store(log ? t : e, y + j * inner);
    }
    if (log) {
      const V shift = hn::IfThenElse(hn::IsNaN(sum), sum, hn::Log(d, sum));  // Log(NaN) is not NaN
      for (int64_t j = 0; j < n; ++j) store(hn::Sub(load(y + j * inner), shift), y + j * inner);
    } else {
      const V inv = hn::Div(hn::Set(d, 1.0f), sum);
      for (int64_t j = 0; j < n; ++j) store(hn::Mul(load(y + j * inner), inv), y + j * inner);
    }
  }
  ScalarColumns(x, y, n, inner, i, log);
}

}  // namespace

void Softmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
             int64_t inner, bool log) {
  if (axis_len <= 0 || inner <= 0 || outer_end <= outer_begin) return;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  const int64_t slab = axis_len * inner;
  const float* xs = x + outer_begin * slab;
  float* ys = y + outer_begin * slab;
  if (inner > 1) {
    for (int64_t o = outer_begin; o < outer_end; ++o, xs += slab, ys += slab) {
      Columns(xs, ys, axis_len, inner, log);
    }
  } else if (axis_len >= lanes) {
    for (int64_t o = outer_begin; o < outer_end; ++o, xs += slab, ys += slab) {
      LongRow(xs, ys, axis_len, log);
    }
  } else if (axis_len == 2) {
    PairRows(xs, ys, outer_end - outer_begin, log);
  } else {
    ShortRows(xs, ys, outer_end - outer_begin, axis_len, log);
  }
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tern::kernels {

HWY_EXPORT(Softmax);

void f32_softmax(const float* x, float* y, int64_t outer_begin, int64_t outer_end, int64_t axis_len,
                 int64_t inner, bool log) {
  HWY_DYNAMIC_DISPATCH(Softmax)(x, y, outer_begin, outer_end, axis_len, inner, log);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
