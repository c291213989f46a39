// One fused convolution case for the NCHWc kernel tests (direct_conv_test.cc,
// depthwise_conv_test.cc): random inputs, the reference kernel (kernels/reference/
// fused_conv.h, plain NCHW/OIHW) as the oracle, the fast kernel on NCHWc inputs whose
// padded lanes hold NaN (never read, or read and masked), and a tolerance from the
// arithmetic: the two kernels sum the same products in different orders.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/ref_test_util.h"
#include "kernels/reference/fused_conv.h"

namespace tern::test {

/// Every activation of the fused epilogue, for the kernel sweeps.
inline constexpr kernels::ref::Activation kActivations[] = {
    kernels::ref::Activation::kNone,      kernels::ref::Activation::kRelu,
    kernels::ref::Activation::kClip,      kernels::ref::Activation::kLeakyRelu,
    kernels::ref::Activation::kHardSwish, kernels::ref::Activation::kHardSigmoid,
    kernels::ref::Activation::kSigmoid,   kernels::ref::Activation::kSilu};

/// A 2-D convolution case. x_block / y_block: 1 (NCHW) or 0 (NCHWc with the target's c);
/// y_block kNhwc: y and z NHWC (FusedConvParams::y_nhwc).
inline constexpr int64_t kNhwc = 2;
struct NchwcConvCase {
  int64_t c_in = 1, c_out = 1, groups = 1;
  int64_t h = 1, w = 1, k = 3, stride = 1, pad = 0, dilation = 1;
  int64_t pad_end = -1;  ///< trailing padding (both dims); -1: the same as pad
  int64_t x_block = 0, y_block = 0;
  kernels::ref::Activation activation = kernels::ref::Activation::kNone;
  bool residual = false, residual_before = false;
  bool bias = true;
  bool affine = false;  ///< the epilogue's affine map after the activation: * kScale + kShift
  static constexpr float kScale = -1.25f, kShift = 0.375f;

  int64_t end_pad() const { return pad_end < 0 ? pad : pad_end; }
  /// Output extent along H or W for input extent `in`.
  int64_t out_extent(int64_t in) const {
    return (in + pad + end_pad() - dilation * (k - 1) - 1) / stride + 1;
  }
  /// Whether the window fits in the padded input along both dims.
  bool fits() const {
    const int64_t window = dilation * (k - 1) + 1;
    return h + pad + end_pad() >= window && w + pad + end_pad() >= window;
  }

  std::string str() const {
    std::ostringstream s;
    s << "C" << c_in << " M" << c_out << " g" << groups << " " << h << "x" << w << " k" << k << " s"
      << stride << " p" << pad << " d" << dilation << " x" << (x_block ? "NCHW" : "NCHWc") << " y"
      << (y_block == kNhwc ? "NHWC"
          : y_block        ? "NCHW"
                           : "NCHWc")
      << " act" << static_cast<int>(activation)
      << (residual ? (residual_before ? " z-before" : " z-after") : "") << (bias ? "" : " nobias")
      << (affine ? " affine" : "");
    return s.str();
  }
};

/// A case of a model layer's shape: C -> M on an h x w input, a k x k kernel with padding
/// `pad` on every side, stride 1, the other fields at their defaults.
inline NchwcConvCase layer_case(int64_t c_in, int64_t c_out, int64_t h, int64_t w, int64_t k = 3,
                                int64_t pad = 1) {
  NchwcConvCase t;
  t.c_in = c_in;
  t.c_out = c_out;
  t.h = h;
  t.w = w;
  t.k = k;
  t.pad = pad;
  return t;
}

/// The kernel parameters of case `t` with block c (x_block/y_block 1 or c, packed weights).
inline kernels::ref::FusedConvParams nchwc_conv_params(const NchwcConvCase& t, int64_t c) {
  kernels::ref::FusedConvParams p;
  p.conv.in_channels = t.c_in;
  p.conv.out_channels = t.c_out;
  p.conv.groups = t.groups;
  p.conv.in = {1, t.h, t.w};
  p.conv.kernel = {1, t.k, t.k};
  p.conv.stride = {1, t.stride, t.stride};
  p.conv.dilation = {1, t.dilation, t.dilation};
  p.conv.pad_begin = {0, t.pad, t.pad};
  p.conv.out = {1, t.out_extent(t.h), t.out_extent(t.w)};
  p.x_block = t.x_block ? 1 : c;
  p.y_block = t.y_block ? 1 : c;
  p.y_nhwc = t.y_block == kNhwc;
  p.w_block = c;
  return p;
}

/// The OIHW weights [M, C/g, k, k] behind packed ones [ceil(M/c), C/g, k, k, c], for the
/// kernels that read OIHW weights (kernels/gemm, kernels/dot).
inline Tensor unpack_conv_weights(const Tensor& packed, int64_t m) {
  const int64_t c = packed.dim(4), taps = packed.dim(1) * packed.dim(2) * packed.dim(3);
  std::vector<float> w(static_cast<size_t>(m * taps));
  const float* p = packed.data<float>();
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t t = 0; t < taps; ++t) w[o * taps + t] = p[((o / c) * taps + t) * c + o % c];
  }
  return Tensor::from_vector(w, {m, packed.dim(1), packed.dim(2), packed.dim(3)});
}

/// Kernel under test: computes work items [begin, end) of one image.
using NchwcConvKernel =
    std::function<void(const kernels::ref::FusedConvParams&, const float* x, const float* w,
                       const float* bias, const float* z, float* y, int64_t begin, int64_t end)>;

/// The weights the kernel reads, made from the packed ones (identity when empty).
using WeightTransform = std::function<Tensor(const Tensor& packed)>;

/// Extra tolerance per output [M, oH, oW] of a kernel whose arithmetic differs from a
/// direct convolution's (winograd): called with x [C, H, W] and w [M, C/g, k, k] plain.
using ExtraTolerance = std::function<std::vector<double>(const std::vector<float>& x,
                                                         const std::vector<float>& w)>;

/// Plain [C, H, W] -> [ceil(C/c), H, W, c], padded lanes set to `pad`.
inline std::vector<float> to_blocked(const std::vector<float>& plain, int64_t channels,
                                     int64_t plane, int64_t c, float pad) {
  const int64_t blocks = (channels + c - 1) / c;
  std::vector<float> out(blocks * plane * c, pad);
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t i = 0; i < plane; ++i)
      out[((ch / c) * plane + i) * c + ch % c] = plain[ch * plane + i];
  return out;
}

/// `kernel` run with x, z and y copied into buffers whose channel blocks (channel planes
/// when the block is 1) lie `gap` pixels further apart than the image's extent
/// (p.x_plane, p.y_plane), the gaps holding NaN, and y copied back: the results match only
/// if the kernel addresses the blocks through the planes; and a gap written (not NaN
/// any more) fails the test. For an NCHWc or NCHW y (not NHWC).
inline NchwcConvKernel with_plane_gaps(NchwcConvKernel kernel, int64_t gap) {
  return [kernel, gap](const kernels::ref::FusedConvParams& q, const float* x, const float* w,
                       const float* bias, const float* z, float* y, int64_t begin, int64_t end) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const int64_t in_plane = q.conv.in.h * q.conv.in.w, out_plane = q.conv.out.h * q.conv.out.w;
    const int64_t x_planes = (q.conv.in_channels + q.x_block - 1) / q.x_block;
    const int64_t y_planes = (q.conv.out_channels + q.y_block - 1) / q.y_block;
    // Dense [planes, plane * block] <-> gapped [planes, (plane + gap) * block].
    auto spread = [&](const float* dense, int64_t planes, int64_t plane, int64_t block) {
      std::vector<float> out(planes * (plane + gap) * block, nan);
      for (int64_t i = 0; i < planes; ++i) {
        std::copy(dense + i * plane * block, dense + (i + 1) * plane * block,
                  out.begin() + i * (plane + gap) * block);
      }
      return out;
    };
    const std::vector<float> xg = spread(x, x_planes, in_plane, q.x_block);
    const std::vector<float> zg = spread(z, y_planes, out_plane, q.y_block);
    std::vector<float> yg = spread(y, y_planes, out_plane, q.y_block);
    kernels::ref::FusedConvParams g = q;
    g.x_plane = in_plane + gap;
    g.y_plane = out_plane + gap;
    kernel(g, xg.data(), w, bias, zg.data(), yg.data(), begin, end);
    int written = 0;
    for (int64_t i = 0; i < y_planes; ++i) {
      const float* src = yg.data() + i * (out_plane + gap) * q.y_block;
      std::copy(src, src + out_plane * q.y_block, y + i * out_plane * q.y_block);
      for (int64_t k = out_plane * q.y_block; k < (out_plane + gap) * q.y_block; ++k) {
        written += !std::isnan(src[k]);
      }
    }
    EXPECT_EQ(written, 0) << "elements written between the output's blocks";
  };
}

/// Runs `kernel` on case `t` with block c and compares it with the reference. The work
/// range is split in three pieces (as threads would split it). Checks that padded output
/// lanes are exactly 0 and that every element is written. `weights` turns the packed
/// weights into the kernel's; `extra` adds to the tolerance.
inline void check_nchwc_conv(const NchwcConvCase& t, int64_t c, int64_t items,
                             const NchwcConvKernel& kernel, uint32_t seed,
                             const WeightTransform& weights = {},
                             const ExtraTolerance& extra = {}) {
  SCOPED_TRACE(t.str());
  using kernels::ref::FusedConvParams;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(t.fits());
  // The oracle runs on plain layouts.
  FusedConvParams p = nchwc_conv_params(t, c);
  p.x_block = p.y_block = p.w_block = 1;
  p.y_nhwc = false;
  p.epilogue.activation = t.activation;
  p.epilogue.alpha = t.activation == kernels::ref::Activation::kClip ? -0.25f : 0.1f;
  p.epilogue.beta = t.activation == kernels::ref::Activation::kClip ? 0.75f : 0.5f;
  p.epilogue.residual = t.residual;
  p.epilogue.residual_before_activation = t.residual_before;
  p.epilogue.affine = t.affine;
  p.epilogue.scale = NchwcConvCase::kScale;
  p.epilogue.shift = NchwcConvCase::kShift;

  const int64_t cg = t.c_in / t.groups;
  const int64_t in_plane = t.h * t.w, out_plane = p.conv.out.size();
  const std::vector<float> x = random_floats(t.c_in * in_plane, seed);
  const std::vector<float> w = random_floats(t.c_out * cg * t.k * t.k, seed + 1);
  const std::vector<float> bias = random_floats(t.c_out, seed + 2);
  const std::vector<float> z = random_floats(t.c_out * out_plane, seed + 3);

  // The oracle (plain layouts), and the sums of absolute values for the tolerance.
  std::vector<float> expected(t.c_out * out_plane), abs_sum(t.c_out * out_plane);
  kernels::ref::f32_fused_conv(p, x.data(), w.data(), t.bias ? bias.data() : nullptr, z.data(),
                               expected.data(), 0, t.c_out);
  {
    FusedConvParams a = p;
    a.epilogue = {};
    auto absv = [](std::vector<float> v) {
      for (float& e : v) e = std::fabs(e);
      return v;
    };
    kernels::ref::f32_fused_conv(a, absv(x).data(), absv(w).data(),
                                 t.bias ? absv(bias).data() : nullptr, nullptr, abs_sum.data(), 0,
                                 t.c_out);
  }

  // The kernel's layouts: NCHWc with NaN in the padded lanes, packed weights.
  FusedConvParams q = nchwc_conv_params(t, c);
  q.epilogue = p.epilogue;
  const std::vector<float> xk = q.x_block == 1 ? x : to_blocked(x, t.c_in, in_plane, c, nan);
  // Element (channel ch, pixel i) of y and z in the kernel's layout.
  auto y_at = [&](int64_t ch, int64_t i) {
    return q.y_nhwc ? i * t.c_out + ch : q.y_block == 1 ? ch * out_plane + i
                                                         : ((ch / c) * out_plane + i) * c + ch % c;
  };
  std::vector<float> zk = q.y_block == 1 ? z : to_blocked(z, t.c_out, out_plane, c, nan);
  if (q.y_nhwc) {
    for (int64_t ch = 0; ch < t.c_out; ++ch)
      for (int64_t i = 0; i < out_plane; ++i) zk[y_at(ch, i)] = z[ch * out_plane + i];
  }
  const Tensor wt = Tensor::from_vector(w, {t.c_out, cg, t.k, t.k});
  Tensor packed = kernels::ref::pack_conv_weights(wt, static_cast<int>(c));
  if (weights) packed = weights(packed);
  const std::vector<double> more = extra ? extra(x, w) : std::vector<double>();
  const int64_t y_size =
      q.y_block == 1 ? t.c_out * out_plane : (t.c_out + c - 1) / c * c * out_plane;
  std::vector<float> y(y_size, nan);
  const int64_t cut1 = items / 3, cut2 = 2 * items / 3;
  for (auto [b, e] : {std::pair{int64_t{0}, cut1}, {cut1, cut2}, {cut2, items}}) {
    kernel(q, xk.data(), packed.data<float>(), t.bias ? bias.data() : nullptr, zk.data(), y.data(),
           b, e);
  }

  // Back to plain; padded lanes must be 0.
  std::vector<float> actual(t.c_out * out_plane);
  std::vector<double> want(actual.size()), tol(actual.size());
  int bad_pad = 0;
  for (int64_t ch = 0; ch < (q.y_block == 1 ? t.c_out : (t.c_out + c - 1) / c * c); ++ch) {
    for (int64_t i = 0; i < out_plane; ++i) {
      const float v = y[y_at(ch, i)];
      if (ch >= t.c_out) {
        bad_pad += v != 0.0f;
        continue;
      }
      const int64_t j = ch * out_plane + i;
      actual[j] = v;
      want[j] = expected[j];
      // Both kernels round each of the cg*k*k products and sums (plus the bias and the
      // residual); the activations here are 1-Lipschitz except HardSwish (<= 1.5) and
      // keep the bound up to a factor 2 and one rounding of the result. The affine map
      // scales that by |kScale| and rounds twice more, each at most an ULP of
      // |expected| + |kShift| (the product's size).
      const double terms = static_cast<double>(cg * t.k * t.k + 2);
      const double scale = t.affine ? std::fabs(NchwcConvCase::kScale) : 1.0;
      tol[j] = 2.0 * scale *
                   sum_tolerance(abs_sum[j] + (t.residual ? std::fabs(z[j]) : 0.0),
                                 static_cast<int64_t>(terms)) +
               std::ldexp(std::fabs(expected[j]) + (t.affine ? NchwcConvCase::kShift : 0.0), -22) +
               (more.empty() ? 0.0 : scale * more[j]);
    }
  }
  EXPECT_EQ(bad_pad, 0) << "padded output lanes that are not 0";
  expect_close(actual, want, tol, t.str());
}

/// The parameters of case `t` with block c for a kernel that reads OIHW weights
/// (w_block 1: kernels/gemm, kernels/dot), or OHWI ones when `ohwi` (kernels/dot).
inline kernels::ref::FusedConvParams oihw_conv_params(const NchwcConvCase& t, int64_t c,
                                                      bool ohwi = false) {
  kernels::ref::FusedConvParams p = nchwc_conv_params(t, c);
  p.w_block = 1;
  p.w_ohwi = ohwi;
  return p;
}

/// check_nchwc_conv for a kernel that reads OIHW weights [M, C/g, k, k], or OHWI ones [M,
/// k, k, C/g] when `ohwi`: it gets oihw_conv_params and the weights unpacked
/// (unpack_conv_weights, then kernels::ref::ohwi_conv_weights).
inline void check_oihw_conv(const NchwcConvCase& t, int64_t c, int64_t items,
                            const NchwcConvKernel& kernel, uint32_t seed, bool ohwi = false) {
  const int64_t m = t.c_out;
  check_nchwc_conv(
      t, c, items,
      [&kernel, ohwi](const kernels::ref::FusedConvParams& q, const float* x, const float* w,
                      const float* bias, const float* z, float* y, int64_t begin, int64_t end) {
        kernels::ref::FusedConvParams o = q;
        o.w_block = 1;
        o.w_ohwi = ohwi;
        kernel(o, x, w, bias, z, y, begin, end);
      },
      seed,
      [m, ohwi](const Tensor& packed) {
        const Tensor oihw = unpack_conv_weights(packed, m);
        return ohwi ? kernels::ref::ohwi_conv_weights(oihw) : oihw;
      });
}

}  // namespace tern::test
