// ReverseSequence: time-major and batch-major layouts, every length from 0 to time, extra
// trailing dims, against a naive reference; errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(ReverseSequence, SweepAgainstNaive) {
  for (int batch_axis = 0; batch_axis < 2; ++batch_axis) {
    const int time_axis = 1 - batch_axis;
    Shape shape = {0, 0, 3};
    shape[batch_axis] = 5;
    shape[time_axis] = 4;
    const Tensor x = random_tensor<float>(shape, 21);
    const Tensor lens = i64v({0, 1, 4, 3, 2});
    const Tensor y = run1("ReverseSequence", {x, lens},
                          AttrMap().i("batch_axis", batch_axis).i("time_axis", time_axis), 10);
    ASSERT_EQ(y.shape(), shape);
    for_each_index(shape, [&](const Shape& o) {
      const int64_t b = o[batch_axis], t = o[time_axis];
      const int64_t n = lens.to_int64_vector()[b];
      std::vector<int64_t> src(o.begin(), o.end());
      src[time_axis] = t < n ? n - 1 - t : t;
      ASSERT_EQ(y.item_as_double(o), x.item_as_double(src)) << shape_str(o);
    });
  }
  EXPECT_EQ(run1("ReverseSequence", {i32({1, 2, 3, 4}, {2, 2}), i64v({2, 1})},
                 AttrMap().i("batch_axis", 0).i("time_axis", 1), 10)
                .to_int64_vector(),
            (std::vector<int64_t>{2, 1, 3, 4}));
}

TEST(ReverseSequence, Errors) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ModelError>(
      [&] {
        run1("ReverseSequence", {x, i64v({1, 1})}, AttrMap().i("batch_axis", 1).i("time_axis", 1),
             10);
      },
      {"ReverseSequence 'test_node'", "batch_axis"});
  expect_error<InvalidArgument>(
      [&] {
        run1("ReverseSequence", {x, i64v({3, 1})}, {}, 10);
      },
      {"ReverseSequence 'test_node'", "sequence_lens[0] = 3"});
  expect_error<ShapeError>(
      [&] {
        run1("ReverseSequence", {x, i64v({1})}, {}, 10);
      },
      {"ReverseSequence 'test_node'", "sequence_lens [batch]"});
}

}  // namespace
}  // namespace tern::test
