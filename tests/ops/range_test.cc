// Range: every dtype, positive / negative delta, empty ranges, non-integral steps, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

template <typename T>
Tensor scalar(T v) {
  return make<T>({v}, {});
}

template <typename T>
void check_range(T start, T limit, T delta) {
  const Tensor y = run1("Range", {scalar<T>(start), scalar<T>(limit), scalar<T>(delta)}, {}, 11);
  const double n = std::ceil((static_cast<double>(limit) - start) / static_cast<double>(delta));
  const int64_t want_n = n > 0 ? static_cast<int64_t>(n) : 0;
  ASSERT_EQ(y.shape(), (Shape{want_n}));
  ASSERT_EQ(y.dtype(), dtype_of<T>());
  for (int64_t i = 0; i < want_n; ++i) {
    const double want = static_cast<double>(start) + static_cast<double>(i) * delta;
    EXPECT_NEAR(y.item_as_double({i}), want,
                std::is_floating_point_v<T> ? 1e-5 * (1 + std::fabs(want)) : 0)
        << i;
  }
}

TEST(Range, EveryDtypeAndDirection) {
  check_range<float>(1, 5, 0.5f);
  check_range<float>(3, -1, -0.7f);
  check_range<double>(0, 1, 0.1);
  check_range<int16_t>(-3, 10, 4);
  check_range<int32_t>(10, 4, -3);
  check_range<int64_t>(0, 7, 1);
  check_range<int64_t>(int64_t{1} << 40, (int64_t{1} << 40) + 5, 2);
}

TEST(Range, EmptyRanges) {
  check_range<float>(5, 1, 1);
  check_range<int32_t>(1, 5, -2);
  check_range<int64_t>(3, 3, 1);
  EXPECT_EQ(
      run1("Range", {scalar<int32_t>(4), scalar<int32_t>(4), scalar<int32_t>(-1)}, {}, 11).shape(),
      (Shape{0}));
}

TEST(Range, HandChecked) {
  EXPECT_EQ(run1("Range", {scalar<int32_t>(10), scalar<int32_t>(4), scalar<int32_t>(-3)}, {}, 11)
                .to_int64_vector(),
            (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(run1("Range", {scalar<float>(3), scalar<float>(9), scalar<float>(3)}, {}, 11)
                .to_float_vector(),
            (std::vector<float>{3, 6}));
}

TEST(Range, Errors) {
  expect_error<InvalidArgument>(
      [] {
        run1("Range", {scalar<float>(0), scalar<float>(1), scalar<float>(0)}, {}, 11);
      },
      {"Range 'test_node'", "delta"});
  expect_error<InvalidArgument>(
      [] {
        run1("Range", {scalar<float>(0), scalar<int32_t>(1), scalar<float>(1)}, {}, 11);
      },
      {"Range 'test_node'", "dtype"});
  expect_error<UnsupportedOpError>(
      [] {
        run1("Range", {scalar<uint8_t>(0), scalar<uint8_t>(1), scalar<uint8_t>(1)}, {}, 11);
      },
      {"Range 'test_node'", "uint8"});
  expect_error<ShapeError>(
      [] {
        run1("Range", {f32({0, 1}, {2}), scalar<float>(1), scalar<float>(1)}, {}, 11);
      },
      {"Range 'test_node'", "scalar"});
}

// D2/D3: integer ranges are exact: no signed overflow in start + i * delta, and an int64
// count above 2^53 is not rounded through double.
TEST(Range, IntegerExtremes) {
  EXPECT_EQ(
      run1("Range",
           {scalar<int32_t>(-2000000000), scalar<int32_t>(2000000000), scalar<int32_t>(1000000000)},
           {}, 11)
          .to_int64_vector(),
      (std::vector<int64_t>{-2000000000, -1000000000, 0, 1000000000}));
  constexpr int64_t k62 = int64_t{1} << 62;
  EXPECT_EQ(
      run1("Range", {scalar<int64_t>(kInt64Min), scalar<int64_t>(kInt64Max), scalar<int64_t>(k62)},
           {}, 11)
          .to_int64_vector(),
      (std::vector<int64_t>{kInt64Min, kInt64Min + k62, 0, k62}));
  EXPECT_EQ(
      run1("Range", {scalar<int64_t>(kInt64Max), scalar<int64_t>(kInt64Min), scalar<int64_t>(-k62)},
           {}, 11)
          .to_int64_vector(),
      (std::vector<int64_t>{kInt64Max, kInt64Max - k62, -1, -k62 - 1}));
  constexpr int64_t k53 = int64_t{1} << 53;
  EXPECT_EQ(
      run1("Range", {scalar<int64_t>(0), scalar<int64_t>(k53 + 1), scalar<int64_t>(k53)}, {}, 11)
          .to_int64_vector(),
      (std::vector<int64_t>{0, k53}));
  // A count that does not fit is a ShapeError naming the node.
  expect_error<ShapeError>(
      [&] {
        run1("Range", {scalar<int64_t>(kInt64Min), scalar<int64_t>(kInt64Max), scalar<int64_t>(1)},
             {}, 11);
      },
      {"Range 'test_node'", "too many elements"});
}

}  // namespace
}  // namespace tern::test
