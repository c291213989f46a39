// The NCHWc -> NCHW reorder (kernels/reorder) against the reference
// (ref::f32_reorder_to_nchw), bit for bit, on every SIMD target this machine can dispatch
// to: blocks 4, 8 and 16 (the 4 x 4 transposes) and 1 and 6 (the element loop), channel
// counts that leave 1, 2, c / 2 + 1 and c - 1 lanes in the last block (1 to 3 real lanes in
// its last group of 4), planes of 1 to 13 x 1 to 13 pixels (whole groups of 4 and tails),
// pixel ranges that start and end anywhere, 1 and 2 images. x's padded lanes hold NaN
// (never stored); y's pixels outside the range and a guard of floats past y's end hold a
// sentinel (never written: a store to a padded channel of the last block lands there).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/reorder/reorder.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::ReorderParams;

// x: [N, ceil(C/c), H, W, c], real lanes random, padded lanes NaN.
std::vector<float> blocked_input(const ReorderParams& p, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t hw = p.h * p.w;
  std::vector<float> x(static_cast<size_t>(p.n * p.blocks() * hw * p.block));
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t lane = static_cast<int64_t>(i) % p.block;
    const int64_t b = static_cast<int64_t>(i) / (hw * p.block) % p.blocks();
    x[i] = b * p.block + lane < p.channels ? u(rng) : NAN;
  }
  return x;
}

// Runs the kernel and the reference on pixels [begin, end) and expects the same bits in
// every element of y (the sentinel outside the range).
void check(const ReorderParams& p, int64_t begin, int64_t end, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "N " << p.n << ", C " << p.channels << ", H x W " << p.h
                                  << " x " << p.w << ", c " << p.block << ", pixels [" << begin
                                  << ", " << end << ")");
  const std::vector<float> x = blocked_input(p, seed);
  const size_t numel = static_cast<size_t>(p.n * p.channels * p.h * p.w);
  const size_t guard = static_cast<size_t>(4 * p.h * p.w);  // 4 planes past y
  std::vector<float> want(numel + guard, test::kSentinel), got(numel + guard, test::kSentinel);
  kernels::ref::f32_reorder_to_nchw(p, x.data(), want.data(), begin, end);
  kernels::f32_reorder_to_nchw(p, x.data(), got.data(), begin, end);
  ASSERT_EQ(std::memcmp(want.data(), got.data(), (numel + guard) * sizeof(float)), 0);
  // The reference itself: every pixel in the range written, none outside.
  const int64_t hw = p.h * p.w;
  for (size_t i = 0; i < numel; ++i) {
    const int64_t s = static_cast<int64_t>(i) % hw;
    ASSERT_EQ(got[i] == test::kSentinel, s < begin || s >= end) << "element " << i;
  }
}

TEST(SimdReorder, ToNchwMatchesReferenceOnEveryTarget) {
  test::for_each_simd_target([](const std::string&, int lanes) {
    for (int64_t c : {4, 8, 16, 1, 6}) {
      for (int64_t channels : {c, 2 * c, c + 1, c + 2, 2 * c - 1, c / 2 + 1, 3 * c + 3}) {
        if (channels < 1) continue;
        for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1},
                            {1, 3},
                            {2, 2},
                            {3, 5},
                            {7, 1},
                            {13, 11},
                            {4, 17}}) {
          for (int64_t n : {1, 2}) {
            const ReorderParams p{n, channels, h, w, c};
            const int64_t hw = h * w;
            check(p, 0, hw, static_cast<uint32_t>(channels * 31 + hw + lanes));
            if (hw > 2) {
              check(p, 1, hw - 1, 7);  // starts and ends off a group of 4
              check(p, hw / 2, hw, 8);
            }
          }
        }
      }
    }
  });
}

TEST(SimdReorder, ToNchwRunsOfManyPixels) {
  // 150 pixels: two whole runs of kernels::ref::kReorderRun (64) and a tail of 22, split
  // as the op splits them (multiples of 16) and arbitrarily.
  test::for_each_simd_target([](const std::string&, int lanes) {
    const ReorderParams p{1, 37, 10, 15, lanes};
    check(p, 0, 150, 1);
    check(p, 0, 64, 2);
    check(p, 48, 150, 3);
    check(p, 5, 133, 4);
    check(p, 70, 70, 5);  // empty
  });
}

}  // namespace
}  // namespace tern
