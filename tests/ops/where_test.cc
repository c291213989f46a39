// Where: three-way broadcasting sweep against a naive reference over element sizes 1..8,
// strided inputs, errors.
#include <gtest/gtest.h>

#include "ops/broadcast.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

template <typename T>
void sweep_where() {
  struct Case {
    Shape c, x, y;
  };
  const Case cases[] = {{{2, 3}, {2, 3}, {2, 3}},    {{3, 1}, {1, 4}, {}},
                        {{5}, {2, 1, 1}, {3, 1}},    {{}, {4}, {4}},
                        {{2, 1, 3}, {3}, {2, 1, 1}}, {{0, 2}, {2}, {1}}};
  uint32_t seed = 80;
  for (const Case& k : cases) {
    const Tensor c = random_bools(k.c, seed++);
    const Tensor x = random_tensor<T>(k.x, seed++, 0, 100);
    const Tensor y = random_tensor<T>(k.y, seed++, 0, 100);
    const Tensor out = run1("Where", {c, x, y}, {}, 16);
    const Shape shapes[] = {k.c, k.x, k.y};
    ASSERT_EQ(out.shape(), ops::broadcast_shapes(shapes, "test"));
    ASSERT_EQ(out.dtype(), dtype_of<T>());
    for_each_index(out.shape(), [&](const Shape& idx) {
      const double want =
          broadcast_read(c, idx) != 0 ? broadcast_read(x, idx) : broadcast_read(y, idx);
      ASSERT_EQ(out.item_as_double(idx), want) << shape_str(idx);
    });
  }
}

TEST(Where, BroadcastSweepEveryElementSize) {
  sweep_where<uint8_t>();
  sweep_where<int16_t>();
  sweep_where<float>();
  sweep_where<int64_t>();
  sweep_where<double>();
}

TEST(Where, StridedAndBool) {
  const Tensor c = make<bool>({true, false, false, true}, {2, 2}).transpose(0, 1);  // T F / F T
  const Tensor x = f32({1, 2, 3, 4}, {2, 2}).transpose(0, 1);                       // 1 3 / 2 4
  EXPECT_EQ(run1("Where", {c, x, f32({0}, {1})}).to_float_vector(),
            (std::vector<float>{1, 0, 0, 4}));
  const Tensor b = run1(
      "Where", {make<bool>({true, false}, {2}), make<bool>({false}, {1}), make<bool>({true}, {1})});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_FALSE(b.data<bool>()[0]);
  EXPECT_TRUE(b.data<bool>()[1]);
}

TEST(Where, Errors) {
  expect_error<UnsupportedOpError>(
      [] {
        run1("Where", {i32({1}, {1}), f32({1}, {1}), f32({1}, {1})});
      },
      {"Where 'test_node'", "condition", "int32"});
  expect_error<InvalidArgument>(
      [] {
        run1("Where", {make<bool>({true}, {1}), f32({1}, {1}), i32({1}, {1})});
      },
      {"Where 'test_node'", "input 2 (Y)", "float32", "int32"});
  expect_error<ShapeError>(
      [] {
        run1("Where", {make<bool>({true, true}, {2}), f32({1, 2, 3}, {3}), f32({1}, {1})});
      },
      {"Where 'test_node'", "not broadcastable"});
}

}  // namespace
}  // namespace tern::test
