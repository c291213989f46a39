// Concat: axes incl. negative, every dtype, zero-size and strided inputs, int64 shape
// vectors, NCHWc inputs joined at any lane (attributes block and channels), errors.
#include <gtest/gtest.h>

#include <algorithm>
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

// Runs op `op_type` on `inputs` into an output filled with NaN beforehand, so that a lane
// the op does not write shows.
Tensor run_into_nan(const std::string& op_type, const std::vector<Tensor>& inputs,
                    const AttrMap& attrs, int threads) {
  const auto op = make_op(op_type, attrs);
  const std::vector<ops::TensorType> types = op->infer(ops::infer_inputs_from(inputs));
  std::vector<Tensor> out{Tensor::empty(types[0].dtype, types[0].shape)};
  float* d = out[0].data<float>();
  std::fill(d, d + out[0].numel(), std::numeric_limits<float>::quiet_NaN());
  op->run(inputs, out, ops::ExecContext{threads});
  return out[0];
}

// NCHWc inputs [N, ceil(C / c), H, W, c] (their padded lanes NaN: never read) joined along
// the logical channels (attributes block and channels, as assign-layout sets them for
// counts that are not multiples of c): the NCHWc form of the NCHW Concat, bit for bit,
// padded lanes 0; blocks 4, 8 and 16 (the SIMD kernel where c is the target's vector, the
// reference elsewhere), 1 and 2 threads (two only where y has two threads' worth).
TEST(Concat, NchwcChannelsAtAnyLane) {
  struct Case {
    std::vector<int64_t> channels;
    int64_t h, w;
  };
  // The last: 2 x 3 x 40 x 40 x 16 elements of y, two threads' worth at c = 16.
  const Case cases[] = {{{5, 7}, 5, 7},
                        {{24, 24, 24, 24}, 5, 7},
                        {{16, 3, 9}, 5, 7},
                        {{1}, 5, 7},
                        {{21, 19}, 40, 40}};
  uint32_t seed = 40;
  for (const int64_t c : {4, 8, 16}) {
    for (const auto& [chs, h, w] : cases) {
      SCOPED_TRACE(testing::Message()
                   << "block " << c << ", channels " << chs.size() << ", " << h << " x " << w);
      std::vector<Tensor> plain, blocked;
      int64_t total = 0;
      for (const int64_t ch : chs) {
        const Tensor x = random_tensor<float>({2, ch, h, w}, seed++);
        plain.push_back(x);
        const kernels::ref::ReorderParams rp{2, ch, h, w, c};
        Tensor xb = Tensor::empty(DType::kFloat32, {2, rp.blocks(), h, w, c});
        kernels::ref::f32_reorder_to_nchwc(rp, x.data<float>(), xb.data<float>(), 0, rp.blocks());
        float* d = xb.data<float>();
        for (int64_t i = 0; i < xb.numel(); ++i) {
          const int64_t block = i / (h * w * c) % rp.blocks(), lane = i % c;
          if (block * c + lane >= ch) d[i] = std::numeric_limits<float>::quiet_NaN();
        }
        blocked.push_back(xb);
        total += ch;
      }
      const Tensor cat = run1("Concat", plain, AttrMap().i("axis", 1));
      const kernels::ref::ReorderParams rp{2, total, h, w, c};
      Tensor want = Tensor::empty(DType::kFloat32, {2, rp.blocks(), h, w, c});
      kernels::ref::f32_reorder_to_nchwc(rp, cat.data<float>(), want.data<float>(), 0, rp.blocks());
      for (const int threads : {1, 2}) {
        const Tensor got = run_into_nan(
            "Concat", blocked, AttrMap().i("axis", 1).i("block", c).ints("channels", chs), threads);
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
  expect_error<ModelError>(
      [&] {
        run1("Concat", {a, a}, AttrMap().i("axis", 1).i("block", 4));
      },
      {"Concat 'test_node'", "channels and block go together"});
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
