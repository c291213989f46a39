// The fused epilogue on SIMD vectors (Highway, per target): what the NCHWc conv kernels
// do with a finished accumulator vector, still in a register, before the one store to y:
// residual add (before or after the activation), the activation, zeroed padded lanes.
// The paper's memory-access merging (DESIGN.md): the bias is added to the accumulators in
// registers (their initial value in the depthwise kernel, added after the first cache
// pass in the direct kernel) and the activation happens here, so no separate pass over y
// exists. Semantics are those of kernels/reference/epilogue.h; every activation but
// Sigmoid and SiLU gives the reference's float result bit for bit (Relu, Clip and the
// clamp of HardSigmoid and HardSwish on x86 through max and min, the others the
// reference's expression); those two use Highway's Exp (within 1 ULP of std::exp) and
// differ from the reference by a few ULP (and below -88.7, where the reference's exp(-v)
// overflows to 0, by the vector's e^v, under 1.2e-38).
//
// Per-target header: include it after hwy/highway.h inside a foreach_target translation
// unit (the include guard toggles with HWY_TARGET_TOGGLE, as Highway's -inl.h headers do).
#if defined(TERN_KERNELS_SIMD_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TERN_KERNELS_SIMD_EPILOGUE_INL_H_
#undef TERN_KERNELS_SIMD_EPILOGUE_INL_H_
#else
#define TERN_KERNELS_SIMD_EPILOGUE_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/reference/epilogue.h"
#include "kernels/reference/fused_conv.h"
#include "kernels/simd/base_register.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Where and how a conv kernel stores its output vectors. One image.
/// y: NCHWc ([ceil(M/c), H, W, c], y_block = c), NCHW ([M, H, W], y_block = 1) or NHWC
/// ([H, W, M], y_block = 1, nhwc); z, the residual, has y's layout (read when
/// e->residual). plane: pixels between channel blocks (planes) of y, H * W unless p.y_plane sets
/// it. One vector holds the c = Lanes output channels [ob * c, ob * c + c) of one pixel.
struct OutputTarget {
  const ref::Epilogue* e = nullptr;
  float* y = nullptr;
  const float* z = nullptr;
  int64_t y_block = 1;
  bool nhwc = false;  ///< y (and z) NHWC: p.y_nhwc, or an NCHW y of one pixel (output_target)
  int64_t plane = 0;
  int64_t channels = 0;  ///< M: lanes of channels >= M are written as 0 (NCHWc) or skipped
};

/// The output of one image of fused conv `p`: y and the residual z in p.y_block's layout.
/// An NCHW y of one pixel is its NHWC layout too (channel ch at ch): it takes NHWC's
/// stores, one vector per block, instead of one scalar per channel (ppocr's SE convs on a
/// 1 x 1 map, whose outputs scale NCHW planes: 96 -> 384 took 2.1 us, a third of it in
/// those stores).
inline OutputTarget output_target(const ref::FusedConvParams& p, const float* z, float* y) {
  OutputTarget o;
  o.e = &p.epilogue;
  o.y = y;
  o.z = z;
  o.y_block = p.y_block;
  o.plane = p.y_plane > 0 ? p.y_plane : p.conv.out.h * p.conv.out.w;
  o.nhwc = p.y_nhwc || (p.y_block == 1 && o.plane == 1 && p.conv.out.h * p.conv.out.w == 1);
  o.channels = p.conv.out_channels;
  return o;
}

/// Whether Highway's Max and Min are x86's max and min instructions on this target (SSE4,
/// AVX2, AVX-512): they return their second operand when either is NaN and when both are
/// zeros, so Max and Min with the vector second compute the reference's compares exactly
/// (ActivationOnlyAs' Relu and Clip, and UnitClamp, rely on it). The scalar and EMU128
/// targets return the operand that is not NaN instead, and NEON's max gives NaN.
inline constexpr bool kX86MaxMin =
    HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128;

/// exp(v) on a vector, as std::exp gives it at the ends of Highway's Exp's range: +inf
/// above the largest float whose exp is finite (88.72283172607422; ln(FLT_MAX) is
/// 88.7228391 and the next float's exp overflows; Highway's Exp is defined up to +104
/// only), and NaN for NaN (Highway's Exp gives 0). That largest exp is about 122 ULP
/// below FLT_MAX, so Highway's 1-ULP error cannot overflow it. Used by kernels/unary (Exp)
/// and kernels/softmax.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpVector(D d, V v) {
  const V big = hn::Set(d, 88.72283172607422f);
  const V e = hn::Exp(d, hn::Min(v, big));
  const V r = hn::IfThenElse(hn::Gt(v, big), hn::Inf(d), e);
  return hn::IfThenElse(hn::IsNaN(v), v, r);
}

/// Sigmoid 1 / (1 + exp(-v)) on a vector, as exp(-|v|) (whose argument is never above 0,
/// inside Highway's Exp range, which ends at +104): sigmoid(|v|) = 1 / (1 + t) and
/// sigmoid(-|v|) = t / (1 + t). NaN stays NaN; -inf gives 0 and +inf 1, as the reference.
/// The scalar std::exp per lane cost ppocr's last conv (98304 outputs) 0.5 ms.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V SigmoidVector(D d, V v) {
  const V one = hn::Set(d, 1.0f);
  const V t = hn::Exp(d, hn::Neg(hn::Abs(v)));
  const V r = hn::Div(one, hn::Add(one, t));
  const V s = hn::IfThenElse(hn::Ge(v, hn::Zero(d)), r, hn::Mul(t, r));
  return hn::IfThenElse(hn::IsNaN(v), v, s);
}

/// The reference's std::max(0, std::min(1, t)) on a vector (HardSigmoid's and HardSwish's
/// clamp): std::min(1, t) is t < 1 ? t : 1 (NaN gives 1), std::max(0, u) is 0 < u ? u : 0
/// (-0 gives +0). With x86's min and max (kX86MaxMin) that is Max(Min(t, 1), 0), two
/// instructions, where each compare and blend is two on the ports the FMAs use.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V UnitClamp(D d, V t) {
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  if constexpr (kX86MaxMin) return hn::Max(hn::Min(t, one), zero);
  const V u = hn::IfThenElse(hn::Lt(t, one), t, one);
  return hn::IfThenElse(hn::Lt(zero, u), u, zero);
}

/// Activation A of `e` alone on a vector, A known at compile time (the tile stores pick it once
/// per tile). Each gives the reference's result bit for bit (NaN and signed zeros
/// included): the reference's expression, or on x86 Relu, Clip and HardSigmoid's and
/// HardSwish's clamp (UnitClamp) through max and min (kX86MaxMin); but Sigmoid and SiLU
/// (SigmoidVector). A must have a vector form (see needs_scalar_activation); other kinds
/// return v.
template <ref::Activation A, class D, class V = hn::Vec<D>>
HWY_INLINE V ActivationOnlyAs(D d, const ref::Epilogue& e, V v) {
  const V zero = hn::Zero(d);
  if constexpr (A == ref::Activation::kSigmoid) {
    return SigmoidVector(d, v);
  } else if constexpr (A == ref::Activation::kSilu) {
    return hn::Mul(v, SigmoidVector(d, v));
  } else if constexpr (A == ref::Activation::kRelu) {
    // With x86's max (kX86MaxMin): max(v, 0) is exactly the reference's v > 0 ? v : 0
    // (NaN and -0 give +0), one instruction instead of a compare and a blend, both on the
    // ports the FMAs use (a pointwise tile's epilogue took 8 % of their slots that way).
    if constexpr (kX86MaxMin) return hn::Max(v, zero);
    return hn::IfThenElseZero(hn::Gt(v, zero), v);
  } else if constexpr (A == ref::Activation::kClip) {
    const V lo = hn::Set(d, e.alpha), hi = hn::Set(d, e.beta);
    // The reference's v < lo ? lo : v, then v > hi ? hi : v: with x86's max and min, a
    // NaN v passes and so does a zero of the other sign than lo or hi.
    if constexpr (kX86MaxMin) return hn::Min(hi, hn::Max(lo, v));
    v = hn::IfThenElse(hn::Lt(v, lo), lo, v);
    return hn::IfThenElse(hn::Gt(v, hi), hi, v);
  } else if constexpr (A == ref::Activation::kLeakyRelu) {
    return hn::IfThenElse(hn::Ge(v, zero), v, hn::Mul(hn::Set(d, e.alpha), v));
  } else if constexpr (A == ref::Activation::kHardSigmoid) {
    return UnitClamp(d, hn::Add(hn::Mul(hn::Set(d, e.alpha), v), hn::Set(d, e.beta)));
  } else if constexpr (A == ref::Activation::kHardSwish) {
    return hn::Mul(v, UnitClamp(d, hn::Add(hn::Mul(v, hn::Set(d, 1.0f / 6.0f)), hn::Set(d, 0.5f))));
  } else {
    return v;
  }
}

/// The activation stage of `e` with activation A on a vector: ActivationOnlyAs, then the
/// affine map when e.affine as the reference computes it (a product, then a sum: ONNX's
/// Mul and Add, two roundings; no FMA, which would round once).
template <ref::Activation A, class D, class V = hn::Vec<D>>
HWY_INLINE V ActivateAs(D d, const ref::Epilogue& e, V v) {
  v = ActivationOnlyAs<A>(d, e, v);
  if (e.affine) v = hn::Add(hn::Mul(v, hn::Set(d, e.scale)), hn::Set(d, e.shift));
  return v;
}

/// Calls f(std::integral_constant<ref::Activation, A>{}) with A = a, and returns its
/// result: a run-time activation as a compile-time one, for code instantiated once per
/// activation (a value outside the enumeration gives kNone).
template <class F>
HWY_INLINE decltype(auto) WithActivation(ref::Activation a, F&& f) {
  using ref::Activation;
  switch (a) {
    case Activation::kRelu:
      return f(std::integral_constant<Activation, Activation::kRelu>{});
    case Activation::kClip:
      return f(std::integral_constant<Activation, Activation::kClip>{});
    case Activation::kLeakyRelu:
      return f(std::integral_constant<Activation, Activation::kLeakyRelu>{});
    case Activation::kHardSigmoid:
      return f(std::integral_constant<Activation, Activation::kHardSigmoid>{});
    case Activation::kHardSwish:
      return f(std::integral_constant<Activation, Activation::kHardSwish>{});
    case Activation::kSigmoid:
      return f(std::integral_constant<Activation, Activation::kSigmoid>{});
    case Activation::kSilu:
      return f(std::integral_constant<Activation, Activation::kSilu>{});
    default:
      return f(std::integral_constant<Activation, Activation::kNone>{});
  }
}

/// The activation of `e` on a vector, chosen at run time, for the activations with a
/// vector form (every one today; see needs_scalar_activation).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ActivateVector(D d, const ref::Epilogue& e, V v) {
  return WithActivation(e.activation,
                        [&](auto a) HWY_ATTR { return ActivateAs<decltype(a)::value>(d, e, v); });
}

/// Whether the activation goes through the scalar reference: every one ActivateVector
/// does not implement (none today; any activation added later until it has one).
inline bool needs_scalar_activation(const ref::Epilogue& e) {
  switch (e.activation) {
    case ref::Activation::kNone:
    case ref::Activation::kRelu:
    case ref::Activation::kClip:
    case ref::Activation::kLeakyRelu:
    case ref::Activation::kHardSigmoid:
    case ref::Activation::kHardSwish:
    case ref::Activation::kSigmoid:
    case ref::Activation::kSilu:
      return false;
    default:
      return true;
  }
}

/// The epilogue of `e` on a finished vector v (bias included): the residual (the vector
/// at z, read only when e.residual) before or after the activation. The activation must
/// have a vector form (needs_scalar_activation false).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V EpilogueVector(D d, const ref::Epilogue& e, V v, const float* z) {
  if (e.residual && e.residual_before_activation) v = hn::Add(v, hn::LoadU(d, z));
  v = ActivateVector(d, e, v);
  if (e.residual && !e.residual_before_activation) v = hn::Add(v, hn::LoadU(d, z));
  return v;
}

/// Stores the finished accumulator `acc` (bias already included) of output channel block
/// `ob` at pixel `pix` of y through the epilogue.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void StoreOutput(D d, const OutputTarget& o, int64_t ob, int64_t pix, V acc) {
  const ref::Epilogue& e = *o.e;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  const int64_t valid = o.channels - ob * c;  // lanes holding real channels
  if (o.y_block == c && !needs_scalar_activation(e)) {
    const int64_t off = (ob * o.plane + pix) * c;
    acc = EpilogueVector(d, e, acc, o.z + off);
    if (valid < c) acc = hn::IfThenElseZero(hn::FirstN(d, static_cast<size_t>(valid)), acc);
    hn::StoreU(acc, d, o.y + off);
    return;
  }
  // NCHW or NHWC output, or an activation without a vector form: lane by lane through
  // the reference.
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(acc, d, lanes);
  const int64_t n = valid < c ? valid : c;
  for (int64_t l = 0; l < c; ++l) {
    const int64_t off = o.nhwc           ? pix * o.channels + ob * c + l
                        : o.y_block == 1 ? (ob * c + l) * o.plane + pix
                                         : (ob * o.plane + pix) * c + l;
    if (l >= n) {
      if (o.y_block != 1) o.y[off] = 0.0f;
      continue;
    }
    float v = lanes[l];
    if (e.residual && e.residual_before_activation) v += o.z[off];
    v = ref::activate(e, v);
    if (e.residual && !e.residual_before_activation) v += o.z[off];
    o.y[off] = v;
  }
}

/// The epilogue of `e` with activation A on a finished vector v (bias included) of an
/// NCHWc block with `valid` channels: the residual (at z, read only when e.residual)
/// before or after A, and the lanes from `valid` on zeroed.
template <ref::Activation A, class D, class V = hn::Vec<D>>
HWY_INLINE V FinishAs(D d, const ref::Epilogue& e, V v, const float* z, int64_t valid) {
  if (e.residual && e.residual_before_activation) v = hn::Add(v, hn::LoadU(d, z));
  v = ActivateAs<A>(d, e, v);
  if (e.residual && !e.residual_before_activation) v = hn::Add(v, hn::LoadU(d, z));
  if (valid < static_cast<int64_t>(hn::Lanes(d))) {
    v = hn::IfThenElseZero(hn::FirstN(d, static_cast<size_t>(valid)), v);
  }
  return v;
}

/// StoreBlocksSlow for an NCHWc y and activation A: the B x R vectors in `buf` (as there)
/// through the residual and A, padded lanes zeroed, one store each. One switch per tile
/// instead of one per vector (StoreOutput): ppocr's pointwise layers, HardSwish
/// throughout, took 0.65 to 0.93 of their time in conv_bench, ppocr 0.95 of its own.
/// PointwiseTile keeps HardSwish without a residual in registers instead (StoreBlocks'
/// kHardSwish); the other tiles (a copy of the epilogue in each of their many
/// instantiations) and residuals come here.
template <ref::Activation A, class D>
HWY_NOINLINE void StoreVectorsAs(D d, const OutputTarget& o, int64_t ob0, int64_t pix0, int B,
                                 int R, const float* buf) {
  const ref::Epilogue e = *o.e;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  for (int b = 0; b < B; ++b) {
    const int64_t off = ((ob0 + b) * o.plane + pix0) * c;
    const int64_t valid = o.channels - (ob0 + b) * c;
    for (int r = 0; r < R; ++r) {
      const auto v = hn::Load(d, buf + (int64_t{b} * R + r) * c);
      const float* z = e.residual ? o.z + off + r * c : o.z;
      hn::StoreU(FinishAs<A>(d, e, v, z, valid), d, o.y + off + r * c);
    }
  }
}

/// Stores v's first n lanes at p (n <= lanes): a masked store where Highway's is one (no
/// lane past n is read or written: the next pixel's channels may belong to another
/// thread, and the last pixel's end is y's), else through a buffer.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void StoreFirstN(D d, V v, float* p, int64_t n) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  for (int64_t l = 0; l < n; ++l) p[l] = lanes[l];
#endif
}

/// StoreBlocks' general path, out of line: the B x R accumulator vectors of blocks
/// ob0 .. ob0 + B - 1 at pixels pix0 .. pix0 + R - 1, stored by the caller in `buf`
/// (vector b * R + r at buf + (b * R + r) * lanes; overwritten here), go through the
/// epilogue for any y layout. An NCHWc y (reaching here with the activations StoreBlocks
/// does not keep in registers) goes through StoreVectorsAs for its activation. An NHWC y
/// without a residual stores each activated vector as its pixel's run of channels. An
/// NCHW y without a residual (the detection heads) is written row-wise: the vectors are
/// activated, and each channel's R pixels stored together, instead of c scattered scalar
/// stores per pixel.
template <class D>
HWY_NOINLINE void StoreBlocksSlow(D d, const OutputTarget& o, int64_t ob0, int64_t pix0, int B,
                                  int R, float* buf) {
  const ref::Epilogue& e = *o.e;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  if (o.y_block == c && !needs_scalar_activation(e)) {
    return WithActivation(e.activation, [&](auto a) HWY_ATTR {
      StoreVectorsAs<decltype(a)::value>(d, o, ob0, pix0, B, R, buf);
    });
  }
  if (o.nhwc && !e.residual && !needs_scalar_activation(e)) {
    // NHWC: each block's channels of a pixel are one run (StoreBlocksNhwcAs' stores).
    for (int b = 0; b < B; ++b) {
      const int64_t ch = (ob0 + b) * c, n = std::min(c, o.channels - ch);
      for (int r = 0; r < R; ++r) {
        const auto v = ActivateVector(d, e, hn::Load(d, buf + (int64_t{b} * R + r) * c));
        float* p = o.y + (pix0 + r) * o.channels + ch;
        if (n == c) {
          hn::StoreU(v, d, p);
        } else {
          StoreFirstN(d, v, p, n);
        }
      }
    }
    return;
  }
  const bool rows = o.y_block == 1 && !o.nhwc && !e.residual && !needs_scalar_activation(e);
  for (int b = 0; b < B; ++b) {
    const int64_t ob = ob0 + b;
    float* vb = buf + int64_t{b} * R * c;
    if (!rows) {
      for (int r = 0; r < R; ++r) StoreOutput(d, o, ob, pix0 + r, hn::Load(d, vb + r * c));
      continue;
    }
    for (int r = 0; r < R; ++r) hn::Store(ActivateVector(d, e, hn::Load(d, vb + r * c)), d, vb + r * c);
    const int64_t n = std::min(c, o.channels - ob * c);
    for (int64_t l = 0; l < n; ++l) {
      float* row = o.y + (ob * c + l) * o.plane + pix0;
      for (int r = 0; r < R; ++r) row[r] = vb[r * c + l];
    }
  }
}

/// How a tile's store adds the residual z: not at all, before or after the activation.
enum class Residual { kNone, kBefore, kAfter };

/// StoreBlocksAs for residual mode Z (and the affine map when kAffine), with o's fields
/// passed as values: Highway's vector stores may alias anything, so GCC would reload every
/// field of o and *o.e (and test the residual flag again) after each store. Each block's R vectors
/// are stored (and z read) at displacements from one base_register pointer: left to itself, GCC
/// computed every vector's address into a register of its own, spilling some to the stack (about 80
/// scalar instructions per 2 x 12 tile); the pointwise harness took 0.94 to 0.96 of the time on
/// 2-block layers, UltraFace and FD-1MB 0.96 of theirs (`tern bench -t 1`).
template <ref::Activation A, Residual Z, int B, int R, bool kAffine = false, class D,
          class V = hn::Vec<D>>
HWY_INLINE void StoreBlocksWith(D d, const ref::Epilogue e, float* const y, const float* const z,
                                const int64_t plane, const int64_t channels, int64_t ob0,
                                int64_t pix0, V (&acc)[B][R]) {
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  // The activation, then the affine map (ActivateAs' product and sum) only where kAffine
  // says so at compile time, so that the tiles' stores test nothing per vector.
  const auto stage = [&](V v) HWY_ATTR {
    v = ActivationOnlyAs<A>(d, e, v);
    if constexpr (kAffine) v = hn::Add(hn::Mul(v, hn::Set(d, e.scale)), hn::Set(d, e.shift));
    return v;
  };
  // Vector r of a block whose residual starts at zb (not read without a residual, when
  // z may be null).
  const auto finish = [&](V v, const float* zb, int r) HWY_ATTR {
    if constexpr (Z == Residual::kBefore) {
      return stage(hn::Add(v, hn::LoadU(d, zb + r * c)));
    } else if constexpr (Z == Residual::kAfter) {
      return hn::Add(stage(v), hn::LoadU(d, zb + r * c));
    } else {
      return stage(v);
    }
  };
  const auto residual_at = [&](int64_t off) -> const float* {
    if constexpr (Z == Residual::kNone) return nullptr;
    return base_register(z + off);
  };
  HWY_UNROLL(16) for (int b = 0; b < B - 1; ++b) {
    const int64_t off = ((ob0 + b) * plane + pix0) * c;
    float* yb = base_register(y + off);
    const float* zb = residual_at(off);
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) hn::StoreU(finish(acc[b][r], zb, r), d, yb + r * c);
  }
  // Lanes of the last block that hold channels: all of them but in a layer whose M is
  // not a multiple of c, where the rest are written as 0. The branch is per tile: a
  // blend on every vector of the last block took FMA port slots in every tile.
  const int64_t valid = channels - (ob0 + B - 1) * c;
  const int64_t off = ((ob0 + B - 1) * plane + pix0) * c;
  float* yb = base_register(y + off);
  const float* zb = residual_at(off);
  if (HWY_LIKELY(valid >= c)) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
      hn::StoreU(finish(acc[B - 1][r], zb, r), d, yb + r * c);
    }
  } else {
    const auto mask = hn::FirstN(d, static_cast<size_t>(valid));
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
      hn::StoreU(hn::IfThenElseZero(mask, finish(acc[B - 1][r], zb, r)), d, yb + r * c);
    }
  }
}

/// StoreBlocks for an NCHWc y and activation A, without an affine map: residual and
/// activation in registers, padded lanes of the last block zeroed, one store per vector.
template <ref::Activation A, int B, int R, class D, class V = hn::Vec<D>>
HWY_INLINE void StoreBlocksAs(D d, const OutputTarget& o, int64_t ob0, int64_t pix0,
                              V (&acc)[B][R]) {
  const ref::Epilogue& e = *o.e;
  if (!e.residual) {
    StoreBlocksWith<A, Residual::kNone>(d, e, o.y, o.z, o.plane, o.channels, ob0, pix0, acc);
  } else if (e.residual_before_activation) {
    StoreBlocksWith<A, Residual::kBefore>(d, e, o.y, o.z, o.plane, o.channels, ob0, pix0, acc);
  } else {
    StoreBlocksWith<A, Residual::kAfter>(d, e, o.y, o.z, o.plane, o.channels, ob0, pix0, acc);
  }
}

/// StoreBlocks for an NHWC y (a conv whose Transpose(0, 2, 3, 1) was fused into it, as
/// in the detection heads), activation A, no residual and no affine map: output block ob
/// of pixel pix
/// is the one contiguous run y[pix * M + ob * c ...] of min(c, M - ob * c) channels.
template <ref::Activation A, int B, int R, class D, class V = hn::Vec<D>>
HWY_INLINE void StoreBlocksNhwcAs(D d, const OutputTarget& o, int64_t ob0, int64_t pix0,
                                  V (&acc)[B][R]) {
  const ref::Epilogue e = *o.e;  // copies: see StoreBlocksWith
  float* const y = o.y;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d)), m = o.channels;
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    const int64_t ch = (ob0 + b) * c, n = std::min(c, m - ch);
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
      const int64_t off = (pix0 + r) * m + ch;
      const V v = ActivationOnlyAs<A>(d, e, acc[b][r]);
      if (n == c) {
        hn::StoreU(v, d, y + off);
      } else {
        StoreFirstN(d, v, y + off, n);
      }
    }
  }
}

/// Stores the finished accumulators acc[b][r] (bias included) of output blocks ob0 ..
/// ob0 + B - 1 at the consecutive output pixels pix0 .. pix0 + R - 1 through the
/// epilogue. The common case (NCHWc y; no activation, Relu or Clip; no affine map) stays
/// in registers with one switch per tile; the others (NCHW y, the other activations, an
/// affine map) go through a buffer to StoreBlocksSlow, but for kHardSwish's case below. Keeping
/// every per-vector branch and call out of the tile lets the compiler keep a tile's accumulators
/// and weights in registers: with a switch and a possible call per vector, GCC 12 spilled a weight
/// vector of the pointwise 2x12 tile into the FMA loop. kHardSwish (PointwiseTile): an NCHWc y with
/// HardSwish and no residual, with or without the affine map after it (ppocr's backbone:
/// PaddlePaddle's LearnableAffineBlock), stays in registers too. Against the buffer path (with
/// UnitClamp in both), ppocr's pointwise layers took 0.85 to 0.99 of their time in conv_bench
/// (median 0.955; 32 -> 48 at 64 x 96 0.90), ppocr 0.98 of its own (`tern bench -t 1`; Zen 4, 7 and
/// 11 alternated rounds).
template <bool kHardSwish = false, int B, int R, class D, class V = hn::Vec<D>>
HWY_INLINE void StoreBlocks(D d, const OutputTarget& o, int64_t ob0, int64_t pix0, V (&acc)[B][R]) {
  const bool fast = !o.e->affine;
  if constexpr (kHardSwish) {
    const ref::Epilogue& e = *o.e;
    if (e.activation == ref::Activation::kHardSwish && !e.residual &&
        o.y_block == static_cast<int64_t>(hn::Lanes(d))) {
      if (e.affine) {
        return StoreBlocksWith<ref::Activation::kHardSwish, Residual::kNone, B, R, true>(
            d, e, o.y, o.z, o.plane, o.channels, ob0, pix0, acc);
      }
      return StoreBlocksWith<ref::Activation::kHardSwish, Residual::kNone, B, R, false>(
          d, e, o.y, o.z, o.plane, o.channels, ob0, pix0, acc);
    }
  }
  if (fast && o.y_block == static_cast<int64_t>(hn::Lanes(d))) {
    switch (o.e->activation) {
      case ref::Activation::kNone:
        return StoreBlocksAs<ref::Activation::kNone>(d, o, ob0, pix0, acc);
      case ref::Activation::kRelu:
        return StoreBlocksAs<ref::Activation::kRelu>(d, o, ob0, pix0, acc);
      case ref::Activation::kClip:
        return StoreBlocksAs<ref::Activation::kClip>(d, o, ob0, pix0, acc);
      default:
        break;
    }
  } else if (fast && o.nhwc && !o.e->residual) {
    switch (o.e->activation) {
      case ref::Activation::kNone:
        return StoreBlocksNhwcAs<ref::Activation::kNone>(d, o, ob0, pix0, acc);
      case ref::Activation::kRelu:
        return StoreBlocksNhwcAs<ref::Activation::kRelu>(d, o, ob0, pix0, acc);
      case ref::Activation::kClip:
        return StoreBlocksNhwcAs<ref::Activation::kClip>(d, o, ob0, pix0, acc);
      default:
        break;
    }
  }
  HWY_ALIGN float buf[B * R * hn::MaxLanes(d)];
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) hn::Store(acc[b][r], d, buf + (b * R + r) * c);
  }
  StoreBlocksSlow(d, o, ob0, pix0, B, R, buf);
}

/// The bias of output channel block `ob` as a vector: bias[ob * c + l], 0 past M or
/// without a bias (added to the accumulators in registers: "bias on the first pass").
template <class D, class V = hn::Vec<D>>
HWY_INLINE V LoadBias(D d, const float* bias, int64_t channels, int64_t ob) {
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  if (bias == nullptr) return hn::Zero(d);
  if ((ob + 1) * c <= channels) return hn::LoadU(d, bias + ob * c);
#if !HWY_MEM_OPS_MIGHT_FAULT
  // A masked load (AVX-512): the lanes past M read nothing. The stack copy costs a
  // call to memcpy and a failed store-to-load forward on every tile of such a layer (11%
  // of RetinaFace's first layer, whose 8 channels fill half a block).
  return hn::MaskedLoad(hn::FirstN(d, static_cast<size_t>(channels - ob * c)), d, bias + ob * c);
#else
  HWY_ALIGN float lanes[hn::MaxLanes(d)] = {};
  for (int64_t l = 0; ob * c + l < channels; ++l) lanes[l] = bias[ob * c + l];
  return hn::Load(d, lanes);
#endif
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
