// Trilu and EyeLike: every k sign and size (incl. k beyond the matrix), batches of
// matrices, upper and lower, several dtypes, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Trilu, SweepAgainstNaive) {
  for (const Shape& shape : {Shape{3, 5}, Shape{2, 4, 3}, Shape{1, 1}, Shape{4, 1}}) {
    const Tensor x = random_tensor<float>(shape, 3);
    for (int64_t k = -6; k <= 6; ++k) {
      for (int upper = 0; upper < 2; ++upper) {
        const Tensor y = run1("Trilu", {x, i64({k}, {})}, AttrMap().i("upper", upper), 14);
        ASSERT_EQ(y.shape(), shape);
        for_each_index(shape, [&](const Shape& o) {
          const int64_t r = o[o.size() - 2], c = o.back();
          const bool keep = upper ? c - r >= k : c - r <= k;
          ASSERT_EQ(y.item_as_double(o), keep ? x.item_as_double(o) : 0.0)
              << shape_str(shape) << " k " << k << " upper " << upper;
        });
      }
    }
  }
  // k omitted: 0; int64 data.
  EXPECT_EQ(run1("Trilu", {i64({1, 2, 3, 4}, {2, 2})}, {}, 14).to_int64_vector(),
            (std::vector<int64_t>{1, 2, 0, 4}));
  EXPECT_EQ(
      run1("Trilu", {i32({1, 2, 3, 4}, {2, 2})}, AttrMap().i("upper", 0), 14).to_int64_vector(),
      (std::vector<int64_t>{1, 0, 3, 4}));
}

TEST(Trilu, Errors) {
  expect_error<ShapeError>(
      [] {
        run1("Trilu", {f32({1, 2}, {2})}, {}, 14);
      },
      {"Trilu 'test_node'", "rank >= 2"});
  expect_error<UnsupportedOpError>(
      [] {
        run1("Trilu", {f32({1, 2, 3, 4}, {2, 2}), i32({0}, {})}, {}, 14);
      },
      {"Trilu 'test_node'", "int32"});
}

TEST(EyeLike, DiagonalsAndDtypes) {
  const Tensor x = Tensor::empty(DType::kInt32, {3, 4});
  for (int64_t k = -4; k <= 5; ++k) {
    const Tensor y = run1("EyeLike", {x}, AttrMap().i("k", k), 9);
    ASSERT_EQ(y.dtype(), DType::kInt32);
    for_each_index(y.shape(), [&](const Shape& o) {
      ASSERT_EQ(y.item_as_double(o), o[1] - o[0] == k ? 1.0 : 0.0) << k;
    });
  }
  // dtype attribute: 1 = float32, 11 = float64.
  const Tensor f = run1("EyeLike", {x}, AttrMap().i("dtype", 1), 9);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.to_float_vector(), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(run1("EyeLike", {x}, AttrMap().i("dtype", 11), 9).dtype(), DType::kFloat64);
  expect_error<ShapeError>(
      [] {
        run1("EyeLike", {f32({1, 2}, {2})}, {}, 9);
      },
      {"EyeLike 'test_node'", "rank 2"});
  expect_error<UnsupportedOpError>([&] { run1("EyeLike", {x}, AttrMap().i("dtype", 8), 9); },
                                   {"EyeLike 'test_node'", "dtype 8"});
}

// D4: a k near INT64_MAX / INT64_MIN must not overflow r + k (no diagonal is in range).
TEST(EyeLike, HugeK) {
  const Tensor x = Tensor::empty(DType::kInt32, {3, 4});
  for (int64_t k : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max() - 1,
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min() + 1}) {
    EXPECT_EQ(run1("EyeLike", {x}, AttrMap().i("k", k), 9).to_int64_vector(),
              std::vector<int64_t>(12, 0))
        << k;
  }
}

}  // namespace
}  // namespace tern::test
