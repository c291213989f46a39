// The vector binary arithmetic (kernels/binary) against the reference (ref::binary) on
// every SIMD target this machine can dispatch to, bit for bit: each kind it covers, every
// pair of operand strides (contiguous or broadcast), lengths 0..40 and 1000 (tails of every
// size), values among NaN, the infinities, +-0, denormals, the largest float and random
// ones, and in place into either operand; rows of runs with row strides, one operand's
// run repeated or not (f32_binary_rows); the kinds and strides it refuses.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/binary/binary.h"
#include "kernels/reference/elementwise.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::BinaryKind;

constexpr BinaryKind kKinds[] = {BinaryKind::kAdd,  BinaryKind::kSub, BinaryKind::kMul,
                                 BinaryKind::kDiv,  BinaryKind::kMax, BinaryKind::kMin,
                                 BinaryKind::kPRelu};

// Random values with a special one at every third index; `second`: b's, whose specials sit
// at a's indices but cycle at another pace, so that every pair of specials meets.
std::vector<float> values(int64_t n, uint32_t seed, bool second) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> x(static_cast<size_t>(std::max<int64_t>(n, 1)));
  for (float& v : x) v = u(rng);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -1e-39f,
                            std::numeric_limits<float>::max(),
                            1.0f};
  for (size_t i = seed % 3; i < x.size(); i += 3) {
    x[i] = specials[(second ? i / 3 * 2 + seed / 9 : i + seed) % std::size(specials)];
  }
  return x;
}

// Bits equal, or both NaN (the reference and the vector instruction may quiet a NaN
// differently only in its payload).
bool same(float got, float want) {
  return (std::isnan(got) && std::isnan(want)) ||
         std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want);
}

// in_place: 0 out of place, 1 into a, 2 into b (only a contiguous operand).
void check(BinaryKind kind, int64_t n, int64_t sa, int64_t sb, int in_place, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << ", n " << n
                                  << ", strides " << sa << " " << sb << ", in place " << in_place);
  std::vector<float> a = values(n, seed, false), b = values(n, seed + 27, true);
  std::vector<float> want(static_cast<size_t>(n));
  kernels::ref::binary<float>(kind, n, a.data(), sa, b.data(), sb, want.data());
  std::vector<float> out(static_cast<size_t>(n), 12345.0f);
  float* y = in_place == 1 ? a.data() : in_place == 2 ? b.data() : out.data();
  const std::vector<float> a0 = a, b0 = b;
  kernels::f32_binary(kind, n, a.data(), sa, b.data(), sb, y);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(same(y[i], want[i])) << "i " << i << ": a " << a0[i * sa] << ", b " << b0[i * sb]
                                     << ": got " << y[i] << ", want " << want[i];
  }
}

TEST(SimdBinary, MatchesReferenceBitForBit) {
  test::for_each_simd_target([](const std::string&, int) {
    uint32_t seed = 1;
    for (BinaryKind kind : kKinds) {
      for (const auto& [sa, sb] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 0}, {0, 1}, {0, 0}}) {
        for (int64_t n = 0; n <= 40; ++n) {
          const int in_place = sa == 1 && seed % 3 == 1 ? 1 : sb == 1 && seed % 3 == 2 ? 2 : 0;
          check(kind, n, sa, sb, in_place, seed++);
        }
        check(kind, 1000, sa, sb, 0, seed++);
      }
    }
  });
}

// Operand layouts of check_rows: which operand repeats one run over all rows (stride 0,
// the other packed), or whose runs have gaps of 5 floats between them (the other packed).
enum class Rows { kARepeats, kBRepeats, kAGaps, kBGaps };

// f32_binary_rows: `rows` runs of `row` elements against the reference run by run; row a
// vector of the target (c, an NCHWc block: the one-load path), shorter, longer and not a
// multiple of it; y packed, with gaps of 3 floats between its runs (which must keep their
// values), or in place into an operand whose runs are y's.
void check_rows(BinaryKind kind, int64_t rows, int64_t row, Rows layout, bool in_place,
                uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << ", rows " << rows
                                  << ", row " << row << ", layout " << static_cast<int>(layout)
                                  << ", in place " << in_place);
  const int64_t sa = layout == Rows::kARepeats ? 0 : layout == Rows::kAGaps ? row + 5 : row;
  const int64_t sb = layout == Rows::kBRepeats ? 0 : layout == Rows::kBGaps ? row + 5 : row;
  const int64_t sy = in_place ? row : row + 3;
  const auto extent = [&](int64_t stride) { return (rows - 1) * stride + row; };
  std::vector<float> a = values(extent(sa), seed, false);
  std::vector<float> b = values(extent(sb), seed + 27, true);
  std::vector<float> want(static_cast<size_t>(extent(sy)), 12345.0f);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::ref::binary<float>(kind, row, a.data() + r * sa, 1, b.data() + r * sb, 1,
                                want.data() + r * sy);
  }
  std::vector<float> out(want.size(), 12345.0f);
  // In place: into the packed operand (its runs are y's then).
  const bool into_a = layout == Rows::kBRepeats || layout == Rows::kBGaps;
  float* y = !in_place ? out.data() : into_a ? a.data() : b.data();
  kernels::f32_binary_rows(kind, rows, row, a.data(), sa, b.data(), sb, y, sy);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(same(y[i], want[i])) << "i " << i;
}

TEST(SimdBinary, RowsMatchReferenceBitForBit) {
  test::for_each_simd_target([](const std::string&, int c) {
    uint32_t seed = 500;
    for (BinaryKind kind : kKinds) {
      for (const int64_t row : {int64_t{c}, int64_t{4}, int64_t{c + 3}, int64_t{3 * c}}) {
        for (const int64_t rows : {1, 2, 7, 33}) {
          for (const Rows layout : {Rows::kARepeats, Rows::kBRepeats, Rows::kAGaps, Rows::kBGaps}) {
            for (const bool in_place : {false, true})
              check_rows(kind, rows, row, layout, in_place, seed++);
          }
        }
      }
    }
  });
  float v[2] = {1.0f, 2.0f};
  EXPECT_THROW(kernels::f32_binary_rows(BinaryKind::kMod, 1, 1, v, 0, v, 1, v, 1), InvalidArgument);
}

TEST(SimdBinary, OtherKindsAndStridesAreRefused) {
  EXPECT_TRUE(kernels::f32_binary_supported(BinaryKind::kMul, 1, 0));
  EXPECT_FALSE(kernels::f32_binary_supported(BinaryKind::kFmod, 1, 1));
  EXPECT_FALSE(kernels::f32_binary_supported(BinaryKind::kAdd, 2, 1));
  EXPECT_FALSE(kernels::f32_binary_supported(BinaryKind::kAdd, 1, -1));
  float v[2] = {1.0f, 2.0f};
  EXPECT_THROW(kernels::f32_binary(BinaryKind::kMod, 1, v, 1, v, 1, v), InvalidArgument);
  EXPECT_THROW(kernels::f32_binary(BinaryKind::kAdd, 1, v, 2, v, 1, v), InvalidArgument);
}

}  // namespace
}  // namespace tern
