// The NCHWc channel concatenation (kernels/concat) against the reference
// (ref::f32_nchwc_copy_channels) on every SIMD target this machine can dispatch to, bit for
// bit: the target's block (the vector path) and another, inputs of 1 to 2c + 5 channels at
// offsets that put them at every kind of lane (aligned, inside one block, across two),
// every pixel range; y's other lanes keep their values and x's padded lanes (NaN) are
// never stored.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/concat/concat.h"
#include "kernels/reference/concat.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

void check(const kernels::ref::ChannelCopy& p, int64_t s0, int64_t s1) {
  SCOPED_TRACE(testing::Message() << "block " << p.block << ", channels " << p.x_channels
                                  << ", offset " << p.offset << ", pixels [" << s0 << ", " << s1
                                  << ")");
  const int64_t c = p.block, xb = (p.x_channels + c - 1) / c;
  std::vector<float> x(static_cast<size_t>(p.n * xb * p.pixels * c));
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t lane = static_cast<int64_t>(i) % c;
    const int64_t block = static_cast<int64_t>(i) / (p.pixels * c) % xb;
    x[i] = block * c + lane < p.x_channels ? static_cast<float>(i) * 0.5f - 7.0f
                                           : std::numeric_limits<float>::quiet_NaN();
  }
  std::vector<float> want(static_cast<size_t>(p.n * p.y_blocks * p.pixels * c));
  for (size_t i = 0; i < want.size(); ++i) want[i] = -1000.0f - static_cast<float>(i);
  std::vector<float> got = want;
  kernels::ref::f32_nchwc_copy_channels(p, x.data(), want.data(), s0, s1);
  kernels::f32_nchwc_copy_channels(p, x.data(), got.data(), s0, s1);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << "y element " << i << ": " << got[i] << " vs " << want[i];
  }
}

TEST(SimdConcat, CopiesChannelsLikeTheReference) {
  test::for_each_simd_target([](const std::string&, int lanes) {
    for (const int64_t c : {int64_t{lanes}, int64_t{lanes == 4 ? 8 : 4}}) {
      for (const int64_t channels : {int64_t{1}, c / 2, c - 1, c, c + 3, 2 * c + 5}) {
        for (const int64_t offset : {int64_t{0}, int64_t{1}, c / 2, c - 1, c, 2 * c + 3}) {
          kernels::ref::ChannelCopy p;
          p.n = 2;
          p.pixels = 13;
          p.block = c;
          p.x_channels = channels;
          p.offset = offset;
          for (const int64_t spare : {0, 1}) {  // y ends at the last block it needs, or after
            p.y_blocks = (offset + channels + c - 1) / c + spare;
            check(p, 0, 13);
            check(p, 3, 9);
          }
        }
      }
    }
  });
}

}  // namespace
}  // namespace tern
