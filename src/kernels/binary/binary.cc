// Elementwise binary arithmetic on float32 runs with Highway; see binary.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/binary/binary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>
#include <type_traits>

#include "base/check.h"
#include "hwy/highway.h"
#include "kernels/binary/binary.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using ref::BinaryKind;

// One lane's operation, as ref::binary's (the same IEEE operation, so the same bits).
template <BinaryKind K>
HWY_INLINE V Apply(D d, V a, V b) {
  if constexpr (K == BinaryKind::kAdd) {
    return hn::Add(a, b);
  } else if constexpr (K == BinaryKind::kSub) {
    return hn::Sub(a, b);
  } else if constexpr (K == BinaryKind::kMul) {
    return hn::Mul(a, b);
  } else if constexpr (K == BinaryKind::kDiv) {
    return hn::Div(a, b);
  } else if constexpr (K == BinaryKind::kMax) {
    // b where it is larger or NaN, else a (a NaN a stays): not hn::Max, whose choice for
    // NaN and for -0 against +0 differs by target.
    return hn::IfThenElse(hn::Or(hn::Lt(a, b), hn::IsNaN(b)), b, a);
  } else if constexpr (K == BinaryKind::kMin) {
    return hn::IfThenElse(hn::Or(hn::Lt(b, a), hn::IsNaN(b)), b, a);
  } else {
    static_assert(K == BinaryKind::kPRelu);
    return hn::IfThenElse(hn::Lt(a, hn::Zero(d)), hn::Mul(a, b), a);
  }
}

// Whole vectors, then the tail through vector-sized buffers (Highway's masked loads and
// stores may touch a whole vector on SSE4, past the end). kA, kB: the operand's stride
// (1: contiguous, 0: one value, broadcast).
template <BinaryKind K, int kA, int kB>
void Map(int64_t n, const float* a, const float* b, float* y) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const V a0 = kA == 0 ? hn::Set(d, *a) : hn::Zero(d);
  const V b0 = kB == 0 ? hn::Set(d, *b) : hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V va = kA == 0 ? a0 : hn::LoadU(d, a + i);
    const V vb = kB == 0 ? b0 : hn::LoadU(d, b + i);
    hn::StoreU(Apply<K>(d, va, vb), d, y + i);
  }
  if (i < n) {
    HWY_ALIGN float ta[hn::MaxLanes(D())] = {};
    HWY_ALIGN float tb[hn::MaxLanes(D())] = {};
    if constexpr (kA == 1) std::copy(a + i, a + n, ta);
    if constexpr (kB == 1) std::copy(b + i, b + n, tb);
    const V va = kA == 0 ? a0 : hn::Load(d, ta);
    const V vb = kB == 0 ? b0 : hn::Load(d, tb);
    hn::Store(Apply<K>(d, va, vb), d, ta);
    std::copy(ta, ta + (n - i), y + i);
  }
}

template <BinaryKind K>
void MapStrides(int64_t n, const float* a, int64_t sa, const float* b, int64_t sb, float* y) {
  if (sa == 1 && sb == 1) return Map<K, 1, 1>(n, a, b, y);
  if (sa == 1) return Map<K, 1, 0>(n, a, b, y);
  if (sb == 1) return Map<K, 0, 1>(n, a, b, y);
  return Map<K, 0, 0>(n, a, b, y);
}

// fn(std::integral_constant<BinaryKind, K>()) for the run-time kind K (one of the vector
// kinds: f32_binary_supported).
template <class Fn>
HWY_INLINE void VisitKind(BinaryKind kind, Fn&& fn) {
  using K = BinaryKind;
  switch (kind) {
    case K::kAdd:
      return fn(std::integral_constant<K, K::kAdd>());
    case K::kSub:
      return fn(std::integral_constant<K, K::kSub>());
    case K::kMul:
      return fn(std::integral_constant<K, K::kMul>());
    case K::kDiv:
      return fn(std::integral_constant<K, K::kDiv>());
    case K::kMax:
      return fn(std::integral_constant<K, K::kMax>());
    case K::kMin:
      return fn(std::integral_constant<K, K::kMin>());
    default:
      return fn(std::integral_constant<K, K::kPRelu>());
  }
}

void Binary(BinaryKind kind, int64_t n, const float* a, int64_t sa, const float* b, int64_t sb,
            float* y) {
  VisitKind(kind, [&](auto k) HWY_ATTR { MapStrides<decltype(k)::value>(n, a, sa, b, sb, y); });
}

// `rows` runs of `row` contiguous elements, each operand's runs sa, sb and sy elements
// apart. A run of one vector (an NCHWc block's lanes) takes one load per operand, and an
// operand whose one run every run reuses (stride 0) stays in a register.
template <BinaryKind K>
void MapRows(int64_t rows, int64_t row, const float* a, int64_t sa, const float* b, int64_t sb,
             float* y, int64_t sy) {
  const D d;
  if (row != static_cast<int64_t>(hn::Lanes(d))) {
    for (int64_t r = 0; r < rows; ++r) Map<K, 1, 1>(row, a + r * sa, b + r * sb, y + r * sy);
    return;
  }
  if (sa == 0) {
    const V va = hn::LoadU(d, a);
    for (int64_t r = 0; r < rows; ++r) {
      hn::StoreU(Apply<K>(d, va, hn::LoadU(d, b + r * sb)), d, y + r * sy);
    }
  } else if (sb == 0) {
    const V vb = hn::LoadU(d, b);
    for (int64_t r = 0; r < rows; ++r) {
      hn::StoreU(Apply<K>(d, hn::LoadU(d, a + r * sa), vb), d, y + r * sy);
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      hn::StoreU(Apply<K>(d, hn::LoadU(d, a + r * sa), hn::LoadU(d, b + r * sb)), d, y + r * sy);
    }
  }
}

void BinaryRows(BinaryKind kind, int64_t rows, int64_t row, const float* a, int64_t sa,
                const float* b, int64_t sb, float* y, int64_t sy) {
  VisitKind(kind,
            [&](auto k) HWY_ATTR { MapRows<decltype(k)::value>(rows, row, a, sa, b, sb, y, sy); });
}

}  // namespace
}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tern::kernels {

HWY_EXPORT(Binary);
HWY_EXPORT(BinaryRows);

bool f32_binary_supported(ref::BinaryKind kind, int64_t a_stride, int64_t b_stride) {
  using K = ref::BinaryKind;
  const bool kind_ok = kind == K::kAdd || kind == K::kSub || kind == K::kMul || kind == K::kDiv ||
                       kind == K::kMax || kind == K::kMin || kind == K::kPRelu;
  return kind_ok && (a_stride == 0 || a_stride == 1) && (b_stride == 0 || b_stride == 1);
}

void f32_binary(ref::BinaryKind kind, int64_t n, const float* a, int64_t a_stride, const float* b,
                int64_t b_stride, float* y) {
  TERN_CHECK(f32_binary_supported(kind, a_stride, b_stride), InvalidArgument,
             "f32_binary: binary kind {} with strides {} and {} has no vector form",
             static_cast<int>(kind), a_stride, b_stride);
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(Binary)(kind, n, a, a_stride, b, b_stride, y);
}

void f32_binary_rows(ref::BinaryKind kind, int64_t rows, int64_t row, const float* a,
                     int64_t a_row_stride, const float* b, int64_t b_row_stride, float* y,
                     int64_t y_row_stride) {
  TERN_CHECK(f32_binary_supported(kind, 1, 1), InvalidArgument,
             "f32_binary_rows: binary kind {} has no vector form", static_cast<int>(kind));
  if (rows <= 0 || row <= 0) return;
  HWY_DYNAMIC_DISPATCH(BinaryRows)
  (kind, rows, row, a, a_row_stride, b, b_row_stride, y, y_row_stride);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
