// Einsum: matmul, batched matmul, transpose, sums, inner / outer products, diagonals,
// ellipsis broadcasting and the implicit output, against naive loops; every dtype; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

Tensor einsum(const std::string& eq, const std::vector<Tensor>& in) {
  return run1("Einsum", in, AttrMap().s("equation", eq), 12);
}

TEST(Einsum, MatmulFamilyAgainstNaive) {
  const Tensor a = random_tensor<float>({2, 3, 5}, 1);
  const Tensor b = random_tensor<float>({2, 5, 4}, 2);
  const Tensor y = einsum("bij, bjk -> bik", {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  for_each_index(y.shape(), [&](const Shape& o) {
    double want = 0;
    for (int64_t j = 0; j < 5; ++j)
      want += a.item_as_double({o[0], o[1], j}) * b.item_as_double({o[0], j, o[2]});
    ASSERT_NEAR(y.item_as_double(o), want, 1e-4);
  });
  // Implicit output of "ij,jk": "ik".
  const Tensor m =
      einsum("ij,jk", {random_tensor<float>({3, 5}, 3), random_tensor<float>({5, 2}, 4)});
  EXPECT_EQ(m.shape(), (Shape{3, 2}));
  // Outer product.
  const Tensor outer = einsum("i,j->ij", {f32({1, 2}, {2}), f32({3, 4, 5}, {3})});
  EXPECT_EQ(outer.to_float_vector(), (std::vector<float>{3, 4, 5, 6, 8, 10}));
}

TEST(Einsum, TransposeSumInnerDiagonal) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(einsum("ij->ji", {x}).to_float_vector(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(einsum("ji", {x}).to_float_vector(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(einsum("ij->i", {x}).to_float_vector(), (std::vector<float>{6, 15}));
  EXPECT_EQ(einsum("ij->", {x}).to_float_vector(), (std::vector<float>{21}));
  EXPECT_EQ(einsum("i,i", {f32({1, 2, 3}, {3}), f32({4, 5, 6}, {3})}).to_float_vector(),
            (std::vector<float>{32}));
  const Tensor sq = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_EQ(einsum("ii->i", {sq}).to_float_vector(), (std::vector<float>{1, 5, 9}));
  EXPECT_EQ(einsum("ii", {sq}).to_float_vector(), (std::vector<float>{15}));
  // Batched diagonal with an ellipsis.
  const Tensor bd = random_tensor<float>({2, 3, 4, 4}, 5);
  const Tensor d = einsum("...ii ->...i", {bd});
  ASSERT_EQ(d.shape(), (Shape{2, 3, 4}));
  for_each_index(d.shape(), [&](const Shape& o) {
    ASSERT_EQ(d.item_as_double(o), bd.item_as_double({o[0], o[1], o[2], o[2]}));
  });
}

TEST(Einsum, EllipsisBroadcastAndDtypes) {
  const Tensor a = random_tensor<float>({2, 1, 3, 4}, 6);
  const Tensor b = random_tensor<float>({5, 4, 2}, 7);
  const Tensor y = einsum("...ij,...jk->...ik", {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 5, 3, 2}));
  for_each_index(y.shape(), [&](const Shape& o) {
    double want = 0;
    for (int64_t j = 0; j < 4; ++j) {
      want += a.item_as_double({o[0], 0, o[2], j}) * b.item_as_double({o[1], j, o[3]});
    }
    ASSERT_NEAR(y.item_as_double(o), want, 1e-4);
  });
  EXPECT_EQ(einsum("ij,j->i", {i64({1, 2, 3, 4}, {2, 2}), i64({5, 6}, {2})}).to_int64_vector(),
            (std::vector<int64_t>{17, 39}));
  EXPECT_EQ(einsum("ij,j->i", {i32({1, 2, 3, 4}, {2, 2}), i32({5, 6}, {2})}).to_int64_vector(),
            (std::vector<int64_t>{17, 39}));
  EXPECT_EQ(einsum("i->", {make<double>({0.5, 0.25}, {2})}).to_float_vector(),
            (std::vector<float>{0.75f}));
}

TEST(Einsum, Errors) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error<ShapeError>([&] { einsum("ijk->i", {x}); }, {"Einsum 'test_node'", "rank 2"});
  expect_error<ShapeError>(
      [&] {
        einsum("ij,ij->i", {x, f32({1, 2}, {1, 2})});
      },
      {"Einsum 'test_node'", "label 'i' has sizes 2 and 1"});
  expect_error<ModelError>([&] { einsum("i1->i", {x}); }, {"Einsum 'test_node'", "bad equation"});
  expect_error<ModelError>([&] { einsum("ij->k", {x}); }, {"Einsum 'test_node'", "'k'"});
  expect_error<ModelError>([&] { einsum("ij,jk->ik", {x}); }, {"Einsum 'test_node'", "2 operands"});
  expect_error<UnsupportedOpError>([&] { einsum("i->i", {make<uint8_t>({1}, {1})}); },
                                   {"Einsum 'test_node'", "uint8"});
}

// S2 and D10: a repeated output label is a ModelError; more than 2^32 loop iterations is
// an UnsupportedOpError naming the node (checked before running).
TEST(Einsum, RepeatedOutputLabelAndIterationCap) {
  expect_error<ModelError>(
      [] {
        einsum("ii->ii", {f32({1, 2, 3, 4}, {2, 2})});
      },
      {"Einsum 'test_node'", "more than once"});
  expect_error<ModelError>(
      [] {
        einsum("ij->iji", {f32({1, 2, 3, 4}, {2, 2})});
      },
      {"Einsum 'test_node'", "more than once"});
  const Tensor big = Tensor::empty(DType::kFloat32, {1 << 12});
  expect_error<UnsupportedOpError>(
      [&] {
        einsum("a,b,c->", {big, big, big});
      },
      {"Einsum 'test_node'", "2^32"});
  // 2^24 iterations are still fine, and a zero-size label means no iterations at all.
  const Tensor ones = f32(std::vector<float>(1 << 12, 1.0f), {1 << 12});
  EXPECT_EQ(einsum("a,b->", {ones, ones}).to_float_vector(), (std::vector<float>{16777216.0f}));
  EXPECT_EQ(einsum("a,b,c->", {big, big, Tensor::empty(DType::kFloat32, {0})}).to_float_vector(),
            (std::vector<float>{0}));
}

}  // namespace
}  // namespace tern::test
