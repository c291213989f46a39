// Transpose: default and explicit perms checked index by index, every dtype, strided
// input, threads, errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

// Bytes of the element of `t` at `idx` (any dtype; NaN patterns compare by bits).
std::vector<uint8_t> element_bytes(const Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides()[d];
  const size_t es = dtype_size(t.dtype());
  const auto* p = static_cast<const uint8_t*>(t.raw_data()) + off * static_cast<int64_t>(es);
  return std::vector<uint8_t>(p, p + es);
}

// out[i0, i1, ...] must equal x[index with out dim k at position perm[k]].
void check_transpose(const Tensor& x, const std::vector<int64_t>& perm, const Tensor& y) {
  for_each_index(y.shape(), [&](const Shape& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = idx[k];
    ASSERT_EQ(element_bytes(y, idx), element_bytes(x, src)) << shape_str(idx);
  });
}

TEST(Transpose, HandChecked2D) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = run1("Transpose", {x});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_TRUE(y.is_contiguous());
}

TEST(Transpose, SweepOfPerms) {
  const Tensor x = random_tensor<float>({2, 3, 5, 7}, 9);
  const std::vector<std::vector<int64_t>> perms = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2},
                                                   {3, 2, 1, 0}, {1, 0, 3, 2}, {2, 0, 3, 1}};
  for (const auto& perm : perms) {
    const Tensor y = run1("Transpose", {x}, AttrMap().ints("perm", perm), 13, 2);
    Shape want(4);
    for (int k = 0; k < 4; ++k) want[k] = x.shape()[perm[k]];
    ASSERT_EQ(y.shape(), want);
    check_transpose(x, perm, y);
  }
  // Default: reversed dims.
  check_transpose(x, {3, 2, 1, 0}, run1("Transpose", {x}));
}

TEST(Transpose, EveryDtypeAndStridedInput) {
  for (DType t :
       {DType::kFloat16, DType::kInt8, DType::kUint8, DType::kInt32, DType::kInt64, DType::kBool}) {
    Tensor x = Tensor::empty(t, {3, 4, 5});
    auto* bytes = static_cast<uint8_t*>(x.raw_data());
    for (size_t i = 0; i < x.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    if (t == DType::kBool) {
      for (size_t i = 0; i < x.nbytes(); ++i) bytes[i] &= 1;
    }
    const Tensor y = run1("Transpose", {x}, AttrMap().ints("perm", {1, 2, 0}));
    EXPECT_EQ(y.dtype(), t);
    check_transpose(x, {1, 2, 0}, y);
  }
  const Tensor base = random_tensor<float>({6, 8}, 2);
  const Tensor view = base.slice(0, 1, 6, 2);  // [3, 8], strided
  check_transpose(view, {1, 0}, run1("Transpose", {view}));
  // Large: split over threads.
  const Tensor big = random_tensor<float>({64, 48, 40}, 3);
  check_transpose(big, {2, 0, 1},
                  run1("Transpose", {big}, AttrMap().ints("perm", {2, 0, 1}), 13, 4));
}

TEST(Transpose, BadPermIsShapeError) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error<ShapeError>([&] { run1("Transpose", {x}, AttrMap().ints("perm", {0})); },
                           {"Transpose 'test_node'", "perm", "rank 2"});
  expect_error<ShapeError>(
      [&] {
        run1("Transpose", {x}, AttrMap().ints("perm", {0, 0}));
      },
      {"Transpose 'test_node'", "not a permutation"});
  expect_error<ShapeError>(
      [&] {
        run1("Transpose", {x}, AttrMap().ints("perm", {0, 2}));
      },
      {"Transpose 'test_node'", "not a permutation"});
}

}  // namespace
}  // namespace tern::test
