// TopK: largest / smallest, every axis incl. negative, ties keep the lower index, k = 0 and
// k = n, every dtype, the opset-1 k attribute, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

template <typename T>
void check_topk(const Tensor& x, int64_t k, int axis, bool largest) {
  const auto outs =
      run_op("TopK", AttrMap().i("axis", axis).i("largest", largest), {x, i64v({k})}, 11, 2);
  const int a = axis < 0 ? axis + x.rank() : axis;
  Shape want = x.shape();
  want[a] = k;
  ASSERT_EQ(outs[0].shape(), want);
  ASSERT_EQ(outs[1].dtype(), DType::kInt64);
  for_each_index(want, [&](const Shape& o) {
    if (o[a] != 0) return;
    std::vector<int64_t> idx(o.begin(), o.end());
    std::vector<std::pair<double, int64_t>> row;
    for (int64_t r = 0; r < x.dim(a); ++r) {
      idx[a] = r;
      row.push_back({x.item_as_double(idx), r});
    }
    // Stable sort on the value alone: equal values keep the lower index first.
    std::stable_sort(row.begin(), row.end(), [&](const auto& p, const auto& q) {
      return largest ? p.first > q.first : p.first < q.first;
    });
    for (int64_t j = 0; j < k; ++j) {
      idx[a] = j;
      ASSERT_EQ(outs[0].item_as_double(idx), row[j].first);
      ASSERT_EQ(outs[1].item_as_double(idx), row[j].second);
    }
  });
}

TEST(TopK, SweepAgainstStableSort) {
  // Integer-valued data in a small range: many ties.
  const Tensor xf = random_tensor<float>({3, 5, 7}, 11, -3, 3);
  for (int axis : {0, 1, 2, -1, -2}) {
    const int a = axis < 0 ? axis + 3 : axis;
    for (int64_t k : {int64_t{0}, int64_t{1}, xf.dim(a)}) {
      for (bool largest : {true, false}) check_topk<float>(xf, k, axis, largest);
    }
  }
  check_topk<double>(random_tensor<double>({4, 6}, 12), 3, 1, true);
  check_topk<int32_t>(random_tensor<int32_t>({4, 6}, 13, -2, 2), 4, -1, false);
  check_topk<int64_t>(random_tensor<int64_t>({9}, 14, -2, 2), 5, 0, true);
}

TEST(TopK, HandCheckedTiesAndOpset1) {
  const Tensor x = f32({1, 3, 3, 2}, {4});
  auto o = run_op("TopK", {}, {x, i64v({2})}, 11, 2);
  EXPECT_EQ(o[0].to_float_vector(), (std::vector<float>{3, 3}));
  EXPECT_EQ(o[1].to_int64_vector(), (std::vector<int64_t>{1, 2}));
  o = run_op("TopK", AttrMap().i("k", 3), {x}, 1, 2);
  EXPECT_EQ(o[0].to_float_vector(), (std::vector<float>{3, 3, 2}));
  EXPECT_EQ(o[1].to_int64_vector(), (std::vector<int64_t>{1, 2, 3}));
}

TEST(TopK, Errors) {
  const Tensor x = f32({1, 2, 3}, {3});
  expect_error<ShapeError>(
      [&] {
        run_op("TopK", {}, {x, i64v({4})}, 11, 2);
      },
      {"TopK 'test_node'", "k = 4"});
  expect_error<ShapeError>(
      [&] {
        run_op("TopK", AttrMap().i("axis", 1), {x, i64v({1})}, 11, 2);
      },
      {"TopK 'test_node'", "axis 1"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("TopK", {}, {make<uint8_t>({1}, {1}), i64v({1})}, 11, 2);
      },
      {"TopK 'test_node'", "uint8"});
  expect_error<ModelError>([&] { run_op("TopK", {}, {x}, 1, 2); }, {"TopK 'test_node'", "k"});
}

}  // namespace
}  // namespace tern::test
