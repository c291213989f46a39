// Exp, Sigmoid and Tanh with Highway's vector math; see unary.h and README.md.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/unary/unary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <algorithm>

#include "base/check.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/simd/epilogue-inl.h"
#include "kernels/unary/unary.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

template <ref::UnaryKind K>
HWY_INLINE V Apply(D d, V v) {
  if constexpr (K == ref::UnaryKind::kExp) {
    return ExpVector(d, v);
  } else if constexpr (K == ref::UnaryKind::kSigmoid) {
    return SigmoidVector(d, v);
  } else {
    return hn::IfThenElse(hn::IsNaN(v), v, hn::Tanh(d, v));
  }
}

// Whole vectors, then the tail through a vector-sized buffer (Highway's masked loads and
// stores may touch the whole vector on SSE4, past the end).
template <ref::UnaryKind K>
void Map(int64_t n, const float* x, float* y) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(Apply<K>(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(D())] = {};
    std::copy(x + i, x + n, tail);
    hn::Store(Apply<K>(d, hn::Load(d, tail)), d, tail);
    std::copy(tail, tail + (n - i), y + i);
  }
}

void Unary(ref::UnaryKind kind, int64_t n, const float* x, float* y) {
  switch (kind) {
    case ref::UnaryKind::kExp:
      return Map<ref::UnaryKind::kExp>(n, x, y);
    case ref::UnaryKind::kSigmoid:
      return Map<ref::UnaryKind::kSigmoid>(n, x, y);
    default:
      return Map<ref::UnaryKind::kTanh>(n, x, y);
  }
}

}  // namespace
}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tern::kernels {

HWY_EXPORT(Unary);

bool f32_unary_supported(ref::UnaryKind kind) {
  return kind == ref::UnaryKind::kExp || kind == ref::UnaryKind::kSigmoid ||
         kind == ref::UnaryKind::kTanh;
}

void f32_unary(const ref::UnaryParams& p, int64_t n, const float* x, float* y) {
  TERN_CHECK(f32_unary_supported(p.kind), InvalidArgument,
             "f32_unary: unary kind {} has no vector form", static_cast<int>(p.kind));
  HWY_DYNAMIC_DISPATCH(Unary)(p.kind, n, x, y);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
