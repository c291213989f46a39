// The NCHWc pooling kernel (kernels/pool) against the reference pooling on the same 3-D
// window ([H, W, c] with kernel [kH, kW, 1]), on every SIMD target this machine can
// dispatch to: H over 1..33 with W varying, kernels 1..3 (and a whole-plane global pool),
// strides 1 and 2, pads 0..2 with larger end pads (ceil_mode), dilation 2, both
// count_include_pad settings, several planes, NaN inputs, ties of -0 and +0. The kernel
// visits the taps in the reference's order, so the results must be equal bit for bit.
#include "kernels/pool/nchwc_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::PoolKind;
using kernels::ref::PoolParams;

struct PoolCase {
  int64_t planes = 1, h = 1, w = 1;
  int64_t kh = 1, kw = 1, stride = 1, dilation = 1, pad = 0, pad_end = 0;
  bool include_pad = false;

  std::string str() const {
    return "planes " + std::to_string(planes) + " " + std::to_string(h) + "x" +
           std::to_string(w) + " k " + std::to_string(kh) + "x" + std::to_string(kw) +
           " s " + std::to_string(stride) + " d " + std::to_string(dilation) + " pads " +
           std::to_string(pad) + "/" + std::to_string(pad_end) +
           (include_pad ? " count_include_pad" : "");
  }
};

int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t dil, int64_t p0, int64_t p1) {
  return (in + p0 + p1 - ((k - 1) * dil + 1)) / s + 1;
}

PoolParams nchwc_params(const PoolCase& t, int64_t c) {
  PoolParams p;
  p.in = {t.h, t.w, c};
  p.out = {out_extent(t.h, t.kh, t.stride, t.dilation, t.pad, t.pad_end),
           out_extent(t.w, t.kw, t.stride, t.dilation, t.pad, t.pad_end), c};
  p.kernel = {t.kh, t.kw, 1};
  p.stride = {t.stride, t.stride, 1};
  p.dilation = {t.dilation, t.dilation, 1};
  p.pad_begin = {t.pad, t.pad, 0};
  p.pad_end = {t.pad_end, t.pad_end, 0};
  p.count_include_pad = t.include_pad;
  return p;
}

// Runs both kinds of t through the kernel (its work items split in two calls) and the
// reference; the outputs must have equal bits.
void check_pool(const PoolCase& t, int64_t c, uint32_t seed) {
  SCOPED_TRACE(t.str());
  const PoolParams p = nchwc_params(t, c);
  ASSERT_GE(p.out.d, 1);
  ASSERT_GE(p.out.h, 1);
  ASSERT_TRUE(kernels::nchwc_pool_supported(p));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> x(t.planes * p.in.size());
  for (float& v : x) v = u(rng);
  // A NaN now and then: max must skip it as std::max does; average propagates it.
  for (size_t i = seed % 97; i < x.size(); i += 211) x[i] = std::numeric_limits<float>::quiet_NaN();
  // Every other seed: no positive value and a third of them zeros of either sign, so that
  // most max windows tie between -0 and +0 (the reference keeps the first).
  if (seed % 2 == 0) {
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = i % 3 == 0 ? (i / 3 % 2 == 0 ? -0.0f : 0.0f) : -std::fabs(x[i]);
    }
  }
  const int64_t items = kernels::nchwc_pool_work(p, t.planes).items();
  ASSERT_EQ(items, t.planes * p.out.d);
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage}) {
    SCOPED_TRACE(kind == PoolKind::kMax ? "max" : "average");
    std::vector<float> want(t.planes * p.out.size()), got(want.size(), 12345.0f);
    if (kind == PoolKind::kMax) {
      kernels::ref::f32_max_pool(p, x.data(), want.data(), 0, t.planes);
    } else {
      kernels::ref::f32_average_pool(p, x.data(), want.data(), 0, t.planes);
    }
    const int64_t mid = items / 3;
    kernels::f32_nchwc_pool(p, kind, x.data(), got.data(), 0, mid);
    kernels::f32_nchwc_pool(p, kind, x.data(), got.data(), mid, items);
    for (size_t i = 0; i < want.size(); ++i) {
      const bool same = std::memcmp(&want[i], &got[i], sizeof(float)) == 0 ||
                        (std::isnan(want[i]) && std::isnan(got[i]));
      ASSERT_TRUE(same) << "output " << i << ": want " << want[i] << ", got " << got[i];
    }
  }
}

TEST(NchwcPool, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;  // 1 lane: the reference runs there
    int i = 0;
    for (int64_t h = 1; h <= 33; ++h) {
      for (int64_t pad = 0; pad <= 2; ++pad) {
        for (int64_t stride = 1; stride <= 2; ++stride, ++i) {
          PoolCase t;
          t.h = h;
          t.w = 1 + (h * 7 + pad * 11 + stride * 5) % 33;
          t.kh = 1 + i % 3;
          t.kw = 1 + (i / 3) % 3;
          t.dilation = i % 5 == 2 ? 2 : 1;
          t.stride = stride;
          t.pad = pad;
          t.pad_end = i % 4 == 3 ? pad + 1 : pad;  // ceil_mode adds end padding
          t.include_pad = i % 2 == 1;
          t.planes = 1 + i % 3;
          // Keep at least one output per dim.
          while (out_extent(t.h, t.kh, t.stride, t.dilation, t.pad, t.pad_end) < 1 ||
                 out_extent(t.w, t.kw, t.stride, t.dilation, t.pad, t.pad_end) < 1) {
            if (t.dilation > 1) {
              t.dilation = 1;
            } else if (t.kh > 1 || t.kw > 1) {
              t.kh = t.kw = 1;
            }
          }
          check_pool(t, c, 100 + i);
        }
      }
    }
  });
}

// The models' layers (SqueezeNet and ResNet 3x3/2 max pools, ceil_mode end pads) and
// global pools (kernel = the whole plane, as assign-layout turns GlobalAveragePool).
TEST(NchwcPool, MatchesReferenceOnModelShapes) {
  test::for_each_simd_target([](const std::string& target, int c) {
    if (target == "SCALAR") return;
    const PoolCase cases[] = {
        {.planes = 4, .h = 111, .w = 111, .kh = 3, .kw = 3, .stride = 2},
        {.planes = 8, .h = 55, .w = 55, .kh = 3, .kw = 3, .stride = 2, .pad_end = 1},
        {.planes = 4, .h = 112, .w = 112, .kh = 3, .kw = 3, .stride = 2, .pad = 1, .pad_end = 1},
        {.planes = 63, .h = 13, .w = 13, .kh = 13, .kw = 13},
        {.planes = 5, .h = 7, .w = 7, .kh = 7, .kw = 7},
        {.planes = 3,
         .h = 9,
         .w = 9,
         .kh = 3,
         .kw = 3,
         .pad = 1,
         .pad_end = 1,
         .include_pad = true},
        // One output pixel per plane (the planes go 8, 4, 2 and 1 at a time) with windows
        // that reach into the padding, dilated, counting the padding or not.
        {.planes = 11, .h = 2, .w = 2, .kh = 3, .kw = 3, .stride = 2, .pad = 1, .pad_end = 1},
        {.planes = 11,
         .h = 3,
         .w = 2,
         .kh = 3,
         .kw = 3,
         .stride = 3,
         .pad = 1,
         .pad_end = 1,
         .include_pad = true},
        {.planes = 13, .h = 3, .w = 3, .kh = 2, .kw = 2, .stride = 3, .dilation = 2, .pad = 1},
        {.planes = 9, .h = 5, .w = 5, .kh = 2, .kw = 2, .stride = 4},
    };
    uint32_t seed = 900;
    for (const PoolCase& t : cases) check_pool(t, c, seed++);
  });
}

TEST(NchwcPool, SupportRules) {
  test::for_each_simd_target([](const std::string& target, int c) {
    PoolCase t;
    t.h = t.w = 8;
    t.kh = t.kw = 3;
    const PoolParams ok = nchwc_params(t, c);
    EXPECT_EQ(kernels::nchwc_pool_supported(ok), target != "SCALAR");
    PoolParams p = ok;
    p.in.w = p.out.w = c * 2;  // lanes are not the target's vector
    EXPECT_FALSE(kernels::nchwc_pool_supported(p));
    p = ok;
    p.kernel.w = 2;  // a window across lanes
    EXPECT_FALSE(kernels::nchwc_pool_supported(p));
    p = ok;
    p.pad_begin.w = 1;
    EXPECT_FALSE(kernels::nchwc_pool_supported(p));
    p = ok;
    p.stride.w = 2;
    EXPECT_FALSE(kernels::nchwc_pool_supported(p));
  });
}

}  // namespace
}  // namespace tern
