// And, Or, Xor, Not: every truth-table entry, broadcasting sweeps against a naive
// reference, strided inputs, errors.
#include <gtest/gtest.h>

#include "ops/broadcast.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Logical, TruthTables) {
  const Tensor a = make<bool>({false, false, true, true}, {4});
  const Tensor b = make<bool>({false, true, false, true}, {4});
  const auto ints = [](const Tensor& t) {
    EXPECT_EQ(t.dtype(), DType::kBool);
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data<bool>()[i] ? 1 : 0);
    return v;
  };
  EXPECT_EQ(ints(run1("And", {a, b}, {}, 7)), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(ints(run1("Or", {a, b}, {}, 7)), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(ints(run1("Xor", {a, b}, {}, 7)), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(ints(run1("Not", {a}, {}, 1)), (std::vector<int>{1, 1, 0, 0}));
  // Not of a strided view: every other element.
  EXPECT_EQ(ints(run1("Not", {b.slice(0, 0, 4, 2)}, {}, 1)), (std::vector<int>{1, 1}));
}

TEST(Logical, BroadcastSweep) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4}}, {{3, 4, 5}, {4, 1}}, {{2, 1, 3}, {1, 4, 1}}, {{}, {7}}};
  uint32_t seed = 60;
  for (const auto& [sa, sb] : cases) {
    const Tensor a = random_bools(sa, seed++);
    const Tensor b = random_bools(sb, seed++);
    for (const char* op : {"And", "Or", "Xor"}) {
      const Tensor y = run1(op, {a, b}, {}, 7);
      ASSERT_EQ(y.shape(), ops::broadcast_shape(sa, sb, "test"));
      for_each_index(y.shape(), [&](const Shape& idx) {
        const bool x = broadcast_read(a, idx) != 0, z = broadcast_read(b, idx) != 0;
        const bool want = std::string(op) == "And"  ? (x && z)
                          : std::string(op) == "Or" ? (x || z)
                                                    : (x != z);
        ASSERT_EQ(y.item_as_double(idx) != 0, want) << op << " at " << shape_str(idx);
      });
    }
  }
}

TEST(Logical, Errors) {
  expect_error<UnsupportedOpError>(
      [] {
        run1("And", {i32({1}, {1}), i32({1}, {1})}, {}, 7);
      },
      {"And 'test_node'", "int32", "supported: bool"});
  expect_error<UnsupportedOpError>([] { run1("Not", {f32({1}, {1})}, {}, 1); },
                                   {"Not 'test_node'", "float32"});
  expect_error<ShapeError>(
      [] {
        run1("Or", {make<bool>({true, true}, {2}), make<bool>({true, true, true}, {3})}, {}, 7);
      },
      {"Or 'test_node'", "not broadcastable"});
}

}  // namespace
}  // namespace tern::test
