// Equal, Greater, GreaterOrEqual, Less, LessOrEqual: broadcasting sweeps against a naive
// reference for several dtypes, NaN, strided inputs, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/broadcast.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

bool ref_compare(const std::string& op, double a, double b) {
  if (op == "Equal") return a == b;
  if (op == "Greater") return a > b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "Less") return a < b;
  return a <= b;
}

template <typename T>
void sweep_compare() {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{}, {}}, {{3, 1}, {1, 4}}, {{2, 3, 5}, {5}}, {{4, 5}, {2, 1, 1}}, {{0, 3}, {3}}};
  uint32_t seed = 40;
  for (const auto& [sa, sb] : cases) {
    // Small value range so that equal values are frequent.
    const Tensor a = random_tensor<T>(sa, seed++, 0, 3);
    const Tensor b = random_tensor<T>(sb, seed++, 0, 3);
    for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
      const Tensor y = run1(op, {a, b}, {}, 16);
      ASSERT_EQ(y.dtype(), DType::kBool);
      ASSERT_EQ(y.shape(), ops::broadcast_shape(sa, sb, "test"));
      for_each_index(y.shape(), [&](const Shape& idx) {
        const bool want = ref_compare(op, broadcast_read(a, idx), broadcast_read(b, idx));
        ASSERT_EQ(y.item_as_double(idx) != 0, want) << op << " at " << shape_str(idx);
      });
    }
  }
}

TEST(Compare, BroadcastSweepEveryDtype) {
  sweep_compare<float>();
  sweep_compare<double>();
  sweep_compare<int8_t>();
  sweep_compare<int16_t>();
  sweep_compare<int32_t>();
  sweep_compare<int64_t>();
  sweep_compare<uint8_t>();
  sweep_compare<uint16_t>();
  sweep_compare<uint32_t>();
  sweep_compare<uint64_t>();
}

TEST(Compare, HandCheckedNaNBoolHalfAndStrided) {
  const float nan = std::nanf("");
  const Tensor a = f32({nan, 1.f, 2.f}, {3});
  const Tensor b = f32({nan, 1.f, 3.f}, {3});
  const auto bools = [](const Tensor& t) {
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data<bool>()[i] ? 1 : 0);
    return v;
  };
  EXPECT_EQ(bools(run1("Equal", {a, b})), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(bools(run1("GreaterOrEqual", {a, b}, {}, 16)), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(bools(run1("Less", {a, b})), (std::vector<int>{0, 0, 1}));
  // Bool Equal.
  EXPECT_EQ(bools(run1("Equal", {make<bool>({true, false}, {2}), make<bool>({true}, {1})})),
            (std::vector<int>{1, 0}));
  // float16 compares as float.
  const Tensor h = run1("Cast", {f32({0.5f, 2.f}, {2})}, AttrMap().i("to", 10));
  const Tensor g = run1("Cast", {f32({1.f}, {1})}, AttrMap().i("to", 10));
  EXPECT_EQ(bools(run1("Greater", {h, g})), (std::vector<int>{0, 1}));
  // Strided: the transpose of [[0, 1], [2, 3]] is [[0, 2], [1, 3]].
  const Tensor m = i64({0, 1, 2, 3}, {2, 2}).transpose(0, 1);
  EXPECT_EQ(bools(run1("LessOrEqual", {m, i64({1, 2}, {2})}, {}, 16)),
            (std::vector<int>{1, 1, 1, 0}));
}

TEST(Compare, Errors) {
  expect_error<InvalidArgument>(
      [] {
        run1("Equal", {f32({1}, {1}), i32({1}, {1})});
      },
      {"Equal 'test_node'", "input 1", "float32", "int32"});
  expect_error<UnsupportedOpError>(
      [] {
        run1("Less", {make<bool>({true}, {1}), make<bool>({true}, {1})});
      },
      {"Less 'test_node'", "bool", "not supported"});
  expect_error<ShapeError>(
      [] {
        run1("Greater", {f32({1, 2}, {2}), f32({1, 2, 3}, {3})});
      },
      {"Greater 'test_node'", "not broadcastable"});
}

}  // namespace
}  // namespace tern::test
