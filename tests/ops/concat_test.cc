// Concat: axes incl. negative, every dtype, zero-size and strided inputs, int64 shape
// vectors, NCHWc inputs joined at any lane (attributes block and channels), errors.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>

#include "kernels/reference/reorder.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Concat, HandChecked) {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2});
  const Tensor b = f32({5, 6}, {1, 2});
  const Tensor c = f32({7, 8, 9, 10}, {2, 2});
  EXPECT_EQ(run1("Concat", {a, b}, AttrMap().i("axis", 0)).to_float_vector(),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const Tensor y = run1("Concat", {a, c}, AttrMap().i("axis", -1));
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2, 7, 8, 3, 4, 9, 10}));
  // Narrow pieces on the last axis ([2, 1] has output stride 4 per element).
  const Tensor n =
      run1("Concat", {f32({0, 1}, {2, 1}), a, f32({9, 9}, {2, 1})}, AttrMap().i("axis", 1));
  EXPECT_EQ(n.to_float_vector(), (std::vector<float>{0, 1, 2, 9, 1, 3, 4, 9}));
}

TEST(Concat, ShapeVectorsInt64) {
  // The PyTorch export pattern: Concat of 1-element int64 tensors into a Reshape target.
  const Tensor y =
      run1("Concat", {i64v({1}), i64v({-1}), i64v({int64_t{1} << 40})}, AttrMap().i("axis", 0));
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{1, -1, int64_t{1} << 40}));
}

TEST(Concat, SweepAgainstNaive) {
  const std::vector<Shape> parts = {{2, 3, 4}, {2, 1, 4}, {2, 0, 4}, {2, 5, 4}};
  std::vector<Tensor> inputs;
  uint32_t seed = 40;
  for (const Shape& s : parts) inputs.push_back(random_tensor<float>(s, seed++));
  // One strided input: a transposed view of the right shape.
  inputs.push_back(random_tensor<float>({2, 4, 2}, seed++).transpose(1, 2));
  const Tensor y = run1("Concat", inputs, AttrMap().i("axis", 1), 13, 2);
  ASSERT_EQ(y.shape(), (Shape{2, 11, 4}));
  for_each_index(y.shape(), [&](const Shape& idx) {
    int64_t k = idx[1];
    size_t i = 0;
    while (k >= inputs[i].dim(1)) k -= inputs[i++].dim(1);
    ASSERT_EQ(y.item_as_double(idx), inputs[i].item_as_double({idx[0], k, idx[2]}));
  });
}

TEST(Concat, EveryDtype) {
  for (DType t : {DType::kFloat16, DType::kInt8, DType::kUint8, DType::kInt32, DType::kBool}) {
    Tensor a = Tensor::zeros(t, {2, 2});
    Tensor b = Tensor::empty(t, {2, 1});
    std::memset(b.raw_data(), 1, b.nbytes());
    const Tensor y = run1("Concat", {a, b}, AttrMap().i("axis", 1));
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
    const auto* bytes = static_cast<const uint8_t*>(y.raw_data());
    const size_t es = dtype_size(t);
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 3; ++c) {
        for (size_t k = 0; k < es; ++k) {
          EXPECT_EQ(bytes[(r * 3 + c) * es + k], c == 2 ? 1 : 0) << dtype_name(t);
        }
      }
    }
  }
}

// NCHWc inputs [N, ceil(C / c), H, W, c] (their padded lanes NaN: never read) joined along
// the logical channels (attributes block and channels, as assign-layout sets them for
// counts that are not multiples of c): the NCHWc form of the NCHW Concat, bit for bit,
// padded lanes 0; blocks 4, 8 and 16 (the SIMD kernel where c is the target's vector, the
// reference elsewhere), 1 and 2 threads.
TEST(Concat, NchwcChannelsAtAnyLane) {
  const std::vector<std::vector<int64_t>> counts = {{5, 7}, {24, 24, 24, 24}, {16, 3, 9}, {1}};
  uint32_t seed = 40;
  for (const int64_t c : {4, 8, 16}) {
    for (const std::vector<int64_t>& chs : counts) {
      SCOPED_TRACE(testing::Message() << "block " << c << ", channels " << chs.size());
      std::vector<Tensor> plain, blocked;
      int64_t total = 0;
      for (const int64_t ch : chs) {
        const Tensor x = random_tensor<float>({2, ch, 5, 7}, seed++);
        plain.push_back(x);
        const kernels::ref::ReorderParams rp{2, ch, 5, 7, c};
        Tensor xb = Tensor::empty(DType::kFloat32, {2, rp.blocks(), 5, 7, c});
        kernels::ref::f32_reorder_to_nchwc(rp, x.data<float>(), xb.data<float>(), 0, rp.blocks());
        float* d = xb.data<float>();
        for (int64_t i = 0; i < xb.numel(); ++i) {
          const int64_t block = i / (35 * c) % rp.blocks(), lane = i % c;
          if (block * c + lane >= ch) d[i] = std::numeric_limits<float>::quiet_NaN();
        }
        blocked.push_back(xb);
        total += ch;
      }
      const Tensor cat = run1("Concat", plain, AttrMap().i("axis", 1));
      const kernels::ref::ReorderParams rp{2, total, 5, 7, c};
      Tensor want = Tensor::empty(DType::kFloat32, {2, rp.blocks(), 5, 7, c});
      kernels::ref::f32_reorder_to_nchwc(rp, cat.data<float>(), want.data<float>(), 0, rp.blocks());
      for (const int threads : {1, 2}) {
        const Tensor got =
            run1("Concat", blocked, AttrMap().i("axis", 1).i("block", c).ints("channels", chs), 13,
                 threads);
        ASSERT_EQ(got.shape(), want.shape());
        const std::vector<float> g = got.to_float_vector(), w = want.to_float_vector();
        for (size_t i = 0; i < g.size(); ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(g[i]), std::bit_cast<uint32_t>(w[i]))
              << "element " << i << ", " << threads << " threads: " << g[i] << " vs " << w[i];
        }
      }
    }
  }
  const Tensor a = Tensor::zeros(DType::kFloat32, {1, 2, 3, 3, 4});
  expect_error<ModelError>(
      [&] {
        run1("Concat", {a, a}, AttrMap().i("axis", 1).i("block", 4).ints("channels", {6}));
      },
      {"Concat 'test_node'", "2 inputs", "1 entries"});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, a}, AttrMap().i("axis", 1).i("block", 4).ints("channels", {6, 9}));
      },
      {"Concat 'test_node'", "input 1", "[1, 2, 3, 3, 4]", "9 channels"});
  expect_error<ModelError>(
      [&] {
        run1("Concat", {a, a}, AttrMap().i("axis", 2).i("block", 4).ints("channels", {6, 6}));
      },
      {"Concat 'test_node'", "block", "axis"});
}

TEST(Concat, Errors) {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, f32({1, 2, 3}, {1, 3})}, AttrMap().i("axis", 0));
      },
      {"Concat 'test_node'", "input 1", "[1, 3]", "[2, 2]", "axis 0"});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, f32({1, 2}, {2})}, AttrMap().i("axis", 0));
      },
      {"Concat 'test_node'", "input 1", "[2]"});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, a}, AttrMap().i("axis", 2));
      },
      {"Concat 'test_node'", "axis 2", "rank-2", "-2..1"});
  expect_error<InvalidArgument>(
      [&] {
        run1("Concat", {a, i64({1, 2}, {1, 2})}, AttrMap().i("axis", 0));
      },
      {"Concat 'test_node'", "input 1", "float32", "int64"});
  expect_error<ModelError>([&] { run1("Concat", {a, a}); }, {"Concat 'test_node'", "axis"});
}

}  // namespace
}  // namespace tern::test
