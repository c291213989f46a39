// Add, Sub, Mul, Div, Mod, BitShift, Pow, PRelu: hand-checked values, broadcasting sweeps against a
// naive index-by-index reference, exact int64 shape arithmetic, integer division, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/broadcast.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Binary, HandCheckedFloat) {
  const Tensor a = f32({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  const Tensor b = f32({10.f, 20.f, 30.f}, {3});
  EXPECT_EQ(run1("Add", {a, b}).to_float_vector(),
            (std::vector<float>{11.f, 22.f, 33.f, 14.f, 25.f, 36.f}));
  EXPECT_EQ(run1("Sub", {a, b}).to_float_vector(),
            (std::vector<float>{-9.f, -18.f, -27.f, -6.f, -15.f, -24.f}));
  EXPECT_EQ(run1("Mul", {a, b}).to_float_vector(),
            (std::vector<float>{10.f, 40.f, 90.f, 40.f, 100.f, 180.f}));
  EXPECT_EQ(run1("Div", {b, a}).to_float_vector(),
            (std::vector<float>{10.f, 10.f, 10.f, 2.5f, 4.f, 5.f}));
  // Column broadcast [2, 1] against [2, 3].
  EXPECT_EQ(run1("Sub", {a, f32({1.f, 2.f}, {2, 1})}).to_float_vector(),
            (std::vector<float>{0.f, 1.f, 2.f, 2.f, 3.f, 4.f}));
  // Scalar on the left.
  EXPECT_EQ(run1("Div", {Tensor::scalar_f32(12.f), a}).to_float_vector(),
            (std::vector<float>{12.f, 6.f, 4.f, 3.f, 2.4f, 2.f}));
  const std::vector<float> z =
      run1("Div", {f32({1.f, -1.f, 0.f}, {3}), f32({0.f}, {1})}).to_float_vector();
  EXPECT_EQ(z[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(z[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(z[2]));
}

// Broadcasting sweep: every op and dtype against the naive oracle, both operand orders,
// plus strided views and several threads.
template <typename T>
void sweep(const std::string& op, double (*f)(double, double)) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{}, {}},
      {{1}, {5}},
      {{3, 1}, {1, 4}},
      {{2, 1, 5}, {3, 1}},
      {{2, 3, 4, 5}, {3, 1, 1}},
      {{4, 5}, {2, 3, 4, 5}},
      {{1, 3, 1, 5}, {2, 1, 4, 1}},
      {{0, 3}, {1, 3}},
      {{2, 0}, {}},
      {{17, 33}, {33}},
      {{7}, {7}},
  };
  uint32_t seed = 100;
  for (const auto& [sa, sb] : cases) {
    for (int order = 0; order < 2; ++order) {
      const Shape& s0 = order == 0 ? sa : sb;
      const Shape& s1 = order == 0 ? sb : sa;
      const Tensor a = random_tensor<T>(s0, seed++, -50, 50);
      Tensor b = random_tensor<T>(s1, seed++, 1, 9);  // positive: a valid divisor / exponent
      const Tensor y = run1(op, {a, b}, {}, 13, order == 0 ? 1 : 3);
      ASSERT_EQ(y.shape(), ops::broadcast_shape(s0, s1, "test"));
      ASSERT_EQ(y.dtype(), dtype_of<T>());
      for_each_index(y.shape(), [&](const Shape& idx) {
        const double want = f(broadcast_read(a, idx), broadcast_read(b, idx));
        const double got = y.item_as_double(idx);
        if constexpr (std::is_floating_point_v<T>) {
          ASSERT_NEAR(got, want, 1e-6 * std::max(1.0, std::fabs(want)))
              << op << " at " << shape_str(idx);
        } else {
          ASSERT_EQ(got, want) << op << " at " << shape_str(idx);
        }
      });
    }
  }
}

TEST(Binary, BroadcastSweepFloat) {
  sweep<float>("Add", [](double x, double y) { return x + y; });
  sweep<float>("Sub", [](double x, double y) { return x - y; });
  sweep<float>("Mul", [](double x, double y) { return x * y; });
  sweep<float>("Div", [](double x, double y) { return x / y; });
}

TEST(Binary, BroadcastSweepInt) {
  sweep<int32_t>("Add", [](double x, double y) { return x + y; });
  sweep<int64_t>("Sub", [](double x, double y) { return x - y; });
  sweep<int64_t>("Mul", [](double x, double y) { return x * y; });
  sweep<int32_t>("Div", [](double x, double y) { return std::trunc(x / y); });
  sweep<int64_t>("Div", [](double x, double y) { return std::trunc(x / y); });
}

// Short runs taken a row of runs per call (kernels::f32_binary_rows): a per-channel NCHWc
// operand ([N or 1, Cb, 1, 1, c] against [N, Cb, H, W, c], rows of c, one of them against a
// batch of 2), runs of 6 and 45 elements, both operand orders: the bits of the same float
// operation index by index. Also 4608 rows of 16 on two threads (two threads' worth:
// BroadcastIterator::kDefaultGrain elements each, split plane by plane), 4400 on two
// threads split as a whole (planes of 64 elements, under kMinPlaneShare per thread), and
// either operand's runs 24 floats apart (a slice); the small cases run on one thread.
TEST(Binary, ShortRunsByRowsMatchElementByElement) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{1, 3, 4, 5, 16}, {1, 3, 1, 1, 16}},
                                                      {{2, 3, 9, 7, 8}, {2, 3, 1, 1, 8}},
                                                      {{2, 3, 4, 5, 8}, {1, 3, 1, 1, 8}},
                                                      {{3, 7, 6}, {3, 1, 6}},
                                                      {{2, 9, 5}, {9, 5}},
                                                      {{1, 3, 32, 48, 16}, {1, 3, 1, 1, 16}},
                                                      {{1, 1100, 2, 2, 16}, {1, 1100, 1, 1, 16}}};
  const std::pair<const char*, float (*)(float, float)> ops[] = {
      {"Add", [](float x, float y) { return x + y; }},
      {"Sub", [](float x, float y) { return x - y; }},
      {"Mul", [](float x, float y) { return x * y; }},
      {"Div", [](float x, float y) { return x / y; }}};
  uint32_t seed = 700;
  for (const auto& [full, rep] : cases) {
    for (const auto& [op, f] : ops) {
      for (int order = 0; order < 2; ++order) {
        const Tensor x = random_tensor<float>(order == 0 ? full : rep, seed++, -5, 5);
        const Tensor y = random_tensor<float>(order == 0 ? rep : full, seed++, 1, 9);
        const bool big = shape_numel(full) > 2 * ops::BroadcastIterator::kDefaultGrain;
        for (const int threads : {big ? 2 : 1}) {
          const Tensor got = run1(op, {x, y}, {}, 13, threads);
          ASSERT_EQ(got.shape(), full);
          for_each_index(full, [&](const Shape& idx) {
            const float want = f(static_cast<float>(broadcast_read(x, idx)),
                                 static_cast<float>(broadcast_read(y, idx)));
            ASSERT_EQ(static_cast<float>(got.item_as_double(idx)), want)
                << op << " " << shape_str(x.shape()) << " with " << shape_str(y.shape()) << " at "
                << shape_str(idx) << ", " << threads << " threads";
          });
        }
      }
    }
  }
  // A sliced operand, either one: its runs of 16 are 24 floats apart.
  const Tensor wide = random_tensor<float>({2, 3, 4, 5, 24}, 803, -5, 5);
  const Tensor sliced = wide.slice(4, 4, 20);
  const Tensor gate = random_tensor<float>({1, 3, 1, 1, 16}, 804, 1, 9);
  for (int order = 0; order < 2; ++order) {
    const Tensor& a = order == 0 ? sliced : gate;
    const Tensor& b = order == 0 ? gate : sliced;
    const Tensor diff = run1("Sub", {a, b});
    for_each_index(diff.shape(), [&](const Shape& idx) {
      const float want =
          static_cast<float>(broadcast_read(a, idx)) - static_cast<float>(broadcast_read(b, idx));
      ASSERT_EQ(static_cast<float>(diff.item_as_double(idx)), want) << shape_str(idx);
    });
  }
  // PRelu's slope, one value per channel and lane.
  const Tensor x = random_tensor<float>({1, 2, 3, 4, 16}, 801, -5, 5);
  const Tensor slope = random_tensor<float>({1, 2, 1, 1, 16}, 802, 0, 1);
  const Tensor got = run1("PRelu", {x, slope}, {}, 16);
  for_each_index(x.shape(), [&](const Shape& idx) {
    const float v = static_cast<float>(broadcast_read(x, idx));
    const float want = v < 0 ? v * static_cast<float>(broadcast_read(slope, idx)) : v;
    ASSERT_EQ(static_cast<float>(got.item_as_double(idx)), want) << shape_str(idx);
  });
}

TEST(Binary, StridedOperands) {
  const Tensor base = random_tensor<float>({6, 10}, 5);
  const Tensor a = base.transpose(0, 1);                 // [10, 6]
  const Tensor b = base.slice(1, 2, 3).transpose(0, 1);  // [1, 6], strided
  const Tensor y = run1("Mul", {a, b});
  for_each_index(y.shape(), [&](const Shape& idx) {
    ASSERT_FLOAT_EQ(static_cast<float>(y.item_as_double(idx)),
                    static_cast<float>(broadcast_read(a, idx) * broadcast_read(b, idx)));
  });
}

TEST(Binary, Int64ShapeArithmeticIsExact) {
  // Values beyond float and double precision stay exact.
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_EQ(run1("Add", {i64({big}, {1}), i64({2}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{big + 2}));
  EXPECT_EQ(run1("Mul", {i64({big}, {}), i64({3}, {})}).to_int64_vector(),
            (std::vector<int64_t>{big * 3}));
  EXPECT_EQ(run1("Sub", {i64({big}, {1}), i64({big - 7}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{7}));
  // The PyTorch export pattern: Shape -> Gather -> Div / Mul -> Unsqueeze -> Concat.
  EXPECT_EQ(run1("Div", {i64({320, 240}, {2}), Tensor::scalar_i64(8)}).to_int64_vector(),
            (std::vector<int64_t>{40, 30}));
  // Overflow wraps (two's complement) rather than being undefined.
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(run1("Add", {i64({max}, {1}), i64({1}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

TEST(Binary, IntegerDivisionTruncatesLikeC) {
  const Tensor a = i32({7, -7, 7, -7, 0, 1}, {6});
  const Tensor b = i32({2, 2, -2, -2, 5, 3}, {6});
  EXPECT_EQ(run1("Div", {a, b}).to_int64_vector(), (std::vector<int64_t>{3, -3, -3, 3, 0, 0}));
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(run1("Div", {i64({min, 9}, {2}), i64({-1}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{min, -9}));
  expect_error<InvalidArgument>(
      [] {
        run1("Div", {i64({4, 5}, {2}), i64({1, 0}, {2})});
      },
      {"Div 'test_node'", "division by zero"});
}

TEST(Binary, Pow) {
  EXPECT_EQ(run1("Pow", {f32({2.f, 3.f, 4.f}, {3}), Tensor::scalar_f32(2.f)}).to_float_vector(),
            (std::vector<float>{4.f, 9.f, 16.f}));
  const std::vector<float> p =
      run1("Pow", {f32({4.f, 9.f}, {2}), f32({0.5f, -1.f}, {2})}).to_float_vector();
  EXPECT_EQ(p[0], 2.f);
  EXPECT_FLOAT_EQ(p[1], 1.f / 9.f);
  // Mixed types from opset 12: the result has the base's dtype.
  const Tensor fi = run1("Pow", {f32({2.f, 1.5f}, {2}), i64({10, 2}, {2})}, {}, 12);
  EXPECT_EQ(fi.dtype(), DType::kFloat32);
  EXPECT_EQ(fi.to_float_vector(), (std::vector<float>{1024.f, 2.25f}));
  const Tensor ii =
      run1("Pow", {i64({3, -2, 2, 1, -1, 5}, {6}), i32({39, 3, -1, -5, -3, 0}, {6})}, {}, 13);
  EXPECT_EQ(ii.dtype(), DType::kInt64);
  EXPECT_EQ(ii.to_int64_vector(), (std::vector<int64_t>{4052555153018976267LL, -8, 0, 1, -1, 1}));
  const Tensor if_ = run1("Pow", {i32({2, 10, 3}, {3}), f32({0.5f, 2.f, -1.f}, {3})}, {}, 15);
  EXPECT_EQ(if_.dtype(), DType::kInt32);
  EXPECT_EQ(if_.to_int64_vector(), (std::vector<int64_t>{1, 100, 0}));  // truncated
  expect_error<InvalidArgument>(
      [] {
        run1("Pow", {f32({2.f}, {1}), i64({2}, {1})}, {}, 11);
      },
      {"Pow 'test_node'", "input 1", "float32", "int64"});
}

TEST(Binary, PRelu) {
  const Tensor x = f32({-2.f, -1.f, 0.f, 1.f, -4.f, 4.f}, {1, 2, 3});
  // Per-channel slope [2, 1] broadcast along the last dim.
  const Tensor slope = f32({0.5f, 0.25f}, {2, 1});
  EXPECT_EQ(run1("PRelu", {x, slope}).to_float_vector(),
            (std::vector<float>{-1.f, -0.5f, 0.f, 1.f, -1.f, 4.f}));
  EXPECT_EQ(run1("PRelu", {x, Tensor::scalar_f32(0.1f)}).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(run1("PRelu", {i64({-3, 3}, {2}), i64({2}, {1})}, {}, 16).to_int64_vector(),
            (std::vector<int64_t>{-6, 3}));
  // The slope broadcasts to X only (unidirectional): [2, 2] does not fit [2].
  expect_error<ShapeError>(
      [] {
        run1("PRelu", {f32({1.f, 2.f}, {2}), f32({1, 1, 1, 1}, {2, 2})});
      },
      {"PRelu 'test_node'", "slope", "[2, 2]", "[2]"});
  expect_error<UnsupportedOpError>(
      [] {
        run1("PRelu", {i64({1}, {1}), i64({1}, {1})}, {}, 15);
      },
      {"PRelu 'test_node'", "dtype int64 is not supported (supported: float32)"});
}

TEST(Binary, Errors) {
  expect_error<ShapeError>(
      [] {
        run1("Add", {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 2}, {2})});
      },
      {"Add 'test_node'", "[2, 3]", "[2]", "not broadcastable"});
  expect_error<InvalidArgument>(
      [] {
        run1("Mul", {f32({1}, {1}), i64({1}, {1})});
      },
      {"Mul 'test_node'", "input 1", "float32", "int64"});
  expect_error<UnsupportedOpError>(
      [] {
        run1("Add", {make<bool>({true}, {1}), make<bool>({true}, {1})});
      },
      {"Add 'test_node'", "bool", "is not supported (supported: float32, float64"});
}

// Every other dtype: the same broadcasting sweep (values in [-50, 50] / [1, 9]; unsigned
// types see the negative values wrapped, so the oracle wraps too).
template <typename T>
double wrap(double v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<double>(static_cast<T>(static_cast<int64_t>(v)));
  } else {
    return v;
  }
}

TEST(Binary, BroadcastSweepEveryDtype) {
  sweep<double>("Add", [](double x, double y) { return x + y; });
  sweep<double>("Div", [](double x, double y) { return x / y; });
  sweep<int8_t>("Add", [](double x, double y) { return wrap<int8_t>(wrap<int8_t>(x) + y); });
  sweep<int16_t>("Mul", [](double x, double y) { return x * y; });
  sweep<int8_t>("Div", [](double x, double y) { return std::trunc(x / y); });
  sweep<uint8_t>("Add", [](double x, double y) { return wrap<uint8_t>(x + y); });
  sweep<uint8_t>("Sub", [](double x, double y) { return wrap<uint8_t>(x - y); });
  sweep<uint8_t>("Mul", [](double x, double y) { return wrap<uint8_t>(x * y); });
  sweep<uint8_t>("Div", [](double x, double y) { return std::trunc(x / y); });
  sweep<uint16_t>("Mul", [](double x, double y) { return wrap<uint16_t>(x * y); });
  sweep<uint32_t>("Sub", [](double x, double y) { return wrap<uint32_t>(x - y); });
  sweep<int32_t>("Mod", [](double x, double y) { return x - y * std::floor(x / y); });
  sweep<int64_t>("Mod", [](double x, double y) { return x - y * std::floor(x / y); });
}

TEST(Binary, HalfTypesRoundOnce) {
  // 1 + 2^-11 is a tie in float16 (rounds to even, 1); 1 + 3 * 2^-11 rounds up to 1 + 2^-9.
  const Tensor a = run1("Cast", {f32({1.f, 1.f, 65504.f}, {3})}, AttrMap().i("to", 10));
  const Tensor b =
      run1("Cast", {f32({0.00048828125f, 0.00146484375f, 65504.f}, {3})}, AttrMap().i("to", 10));
  const Tensor y = run1("Add", {a, b});
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.item_as_double({0}), 1.0);
  EXPECT_EQ(y.item_as_double({1}), 1.001953125);
  EXPECT_EQ(y.item_as_double({2}), std::numeric_limits<double>::infinity());
}

TEST(Binary, UnsignedWrapsWithoutPromotionOverflow) {
  // 65535 * 65535 would overflow int after integer promotion; it wraps to 1 in uint16.
  EXPECT_EQ(run1("Mul", {make<uint16_t>({65535, 300}, {2}), make<uint16_t>({65535, 300}, {2})})
                .to_int64_vector(),
            (std::vector<int64_t>{1, (300 * 300) % 65536}));
  EXPECT_EQ(run1("Sub", {make<uint8_t>({1}, {1}), make<uint8_t>({2}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{255}));
  // uint32 division by the all-ones value is an ordinary division, not a negation.
  EXPECT_EQ(run1("Div", {make<uint32_t>({4294967295u, 7}, {2}),
                         make<uint32_t>({4294967295u, 4294967295u}, {2})})
                .to_int64_vector(),
            (std::vector<int64_t>{1, 0}));
}

TEST(Binary, Mod) {
  const Tensor a = i32({-4, 7, 5, 4, -7, 8, INT32_MIN}, {7});
  const Tensor b = i32({2, -3, 8, -2, 3, 5, -1}, {7});
  // fmod = 0: the divisor's sign; fmod = 1: the dividend's sign. MIN % -1 is 0.
  EXPECT_EQ(run1("Mod", {a, b}).to_int64_vector(), (std::vector<int64_t>{0, -2, 5, 0, 2, 3, 0}));
  EXPECT_EQ(run1("Mod", {a, b}, AttrMap().i("fmod", 1)).to_int64_vector(),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3, 0}));
  const Tensor fa = f32({-4.3f, 7.2f, 5.f, -7.5f}, {4});
  const Tensor fb = f32({2.1f, -3.4f, 8.f, 2.f}, {4});
  const std::vector<float> f = run1("Mod", {fa, fb}, AttrMap().i("fmod", 1)).to_float_vector();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f[i], std::fmod(fa.data<float>()[i], fb.data<float>()[i])) << i;
  }
  EXPECT_EQ(run1("Mod", {make<uint8_t>({250, 7}, {2}), make<uint8_t>({7}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{250 % 7, 0}));
  expect_error<ModelError>(
      [&] {
        run1("Mod", {fa, fb});
      },
      {"Mod 'test_node'", "float32", "fmod = 1"});
  expect_error<ModelError>(
      [&] {
        run1("Mod", {a, b}, AttrMap().i("fmod", 2));
      },
      {"Mod 'test_node'", "'fmod' is 2"});
  expect_error<InvalidArgument>(
      [&] {
        run1("Mod", {a, i32({0}, {1})});
      },
      {"Mod 'test_node'", "division by zero"});
}

TEST(Binary, BitShift) {
  const AttrMap left = AttrMap().s("direction", "LEFT");
  const AttrMap right = AttrMap().s("direction", "RIGHT");
  EXPECT_EQ(run1("BitShift",
                 {make<uint8_t>({16, 4, 1, 255}, {4}), make<uint8_t>({1, 2, 8, 7}, {4})}, left, 11)
                .to_int64_vector(),
            (std::vector<int64_t>{32, 16, 0, 128}));
  EXPECT_EQ(
      run1("BitShift", {make<uint64_t>({16, 1}, {2}), make<uint64_t>({4, 64}, {2})}, right, 11)
          .to_int64_vector(),
      (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run1("BitShift", {make<uint16_t>({65535}, {1}), make<uint16_t>({15}, {1})}, left, 11)
                .to_int64_vector(),
            (std::vector<int64_t>{32768}));
  expect_error<ModelError>(
      [&] {
        run1("BitShift", {make<uint8_t>({1}, {1}), make<uint8_t>({1}, {1})},
             AttrMap().s("direction", "UP"), 11);
      },
      {"BitShift 'test_node'", "direction"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("BitShift", {i32({1}, {1}), i32({1}, {1})}, left, 11);
      },
      {"BitShift 'test_node'", "int32"});
}

TEST(Binary, PowUnsignedAndDoubleExponents) {
  const Tensor base = f32({1.f, 2.f, 3.f}, {3});
  EXPECT_EQ(run1("Pow", {base, make<uint32_t>({4, 5, 6}, {3})}, {}, 15).to_float_vector(),
            (std::vector<float>{1.f, 32.f, 729.f}));
  EXPECT_EQ(run1("Pow", {base, make<uint64_t>({4, 5, 6}, {3})}, {}, 15).to_float_vector(),
            (std::vector<float>{1.f, 32.f, 729.f}));
  EXPECT_EQ(run1("Pow", {i64({-2, 3}, {2}), make<uint8_t>({3, 2}, {2})}, {}, 15).to_int64_vector(),
            (std::vector<int64_t>{-8, 9}));
  const Tensor y =
      run1("Pow", {make<double>({2.0, 9.0}, {2}), make<double>({0.5, 0.5}, {2})}, {}, 15);
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(y.item_as_double({0}), std::sqrt(2.0));
  EXPECT_EQ(y.item_as_double({1}), 3.0);
}

TEST(Binary, LegacyBroadcastAxis) {
  // Opset < 7: B of shape [3] lines up with A's dim 1 when axis = 1.
  const Tensor a = f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2});
  const Tensor b = f32({10, 20, 30}, {3});
  const Tensor y = run1("Add", {a, b}, AttrMap().i("broadcast", 1).i("axis", 1), 6);
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{11, 12, 23, 24, 35, 36, 17, 18, 29, 30, 41, 42}));
  // Without an axis, B matches A's trailing dims (numpy's rule).
  EXPECT_EQ(
      run1("Mul", {a, f32({2, 3}, {2})}, AttrMap().i("broadcast", 1), 6).item_as_double({0, 0, 1}),
      6.0);
  for (int64_t axis : {int64_t{3}, int64_t{-4}, INT64_MAX, INT64_MIN + 1}) {
    expect_error<ShapeError>(
        [&] {
          run1("Add", {a, b}, AttrMap().i("broadcast", 1).i("axis", axis), 6);
        },
        {"Add 'test_node'", "broadcast axis"});
  }
}

}  // namespace
}  // namespace tern::test
