// Broadcast shapes and the broadcast iterator, against a naive index-by-index oracle.
#include "ops/broadcast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

#include "kernels/reference/elementwise.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

using ops::broadcast_shape;
using ops::broadcast_shapes;
using ops::BroadcastIterator;
using ops::broadcasts_to;
using ops::StridedOperand;

TEST(BroadcastShape, NumpyRules) {
  EXPECT_EQ(broadcast_shape({2, 3, 4, 5}, {}, "t"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(broadcast_shape({2, 3, 4, 5}, {5}, "t"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(broadcast_shape({4, 5}, {2, 3, 4, 5}, "t"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(broadcast_shape({1, 4, 5}, {2, 3, 1, 1}, "t"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(broadcast_shape({3, 4, 5}, {2, 1, 1, 1}, "t"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(broadcast_shape({3, 1}, {1, 4}, "t"), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shape({}, {}, "t"), (Shape{}));
  // A 0 pairs with 0 or 1 and wins over 1.
  EXPECT_EQ(broadcast_shape({0, 3}, {1, 3}, "t"), (Shape{0, 3}));
  EXPECT_EQ(broadcast_shape({2, 0}, {1}, "t"), (Shape{2, 0}));
  const std::vector<Shape> many = {{2, 1, 5}, {3, 1}, {1}};
  EXPECT_EQ(broadcast_shapes(many, "t"), (Shape{2, 3, 5}));
  EXPECT_EQ(broadcast_shapes(std::vector<Shape>{}, "t"), (Shape{}));
}

TEST(BroadcastShape, MismatchIsShapeErrorNamingBothShapes) {
  expect_error<ShapeError>(
      [] {
        broadcast_shape({2, 3}, {4}, "Add 'n1'");
      },
      {"Add 'n1'", "[2, 3]", "[4]", "not broadcastable", "3", "4"});
  expect_error<ShapeError>([] { broadcast_shape({0}, {2}, "Mul 'm'"); }, {"Mul 'm'"});
  const std::vector<Shape> many = {{2, 3}, {3}, {2, 1, 4}};
  expect_error<ShapeError>([&] { broadcast_shapes(many, "Sum 's'"); }, {"Sum 's'", "[2, 1, 4]"});
}

TEST(BroadcastShape, Unidirectional) {
  EXPECT_TRUE(broadcasts_to({3, 1, 1}, {2, 3, 4, 5}));
  EXPECT_TRUE(broadcasts_to({}, {2, 3}));
  EXPECT_TRUE(broadcasts_to({2, 3}, {2, 3}));
  EXPECT_FALSE(broadcasts_to({3}, {2, 3, 4}));
  EXPECT_FALSE(broadcasts_to({2, 3}, {3}));
  EXPECT_FALSE(broadcasts_to({2, 1}, {1, 1}));
}

// Runs the iterator over out = f(a, b) with f(x, y) = 1000 * x + y, so every output tells
// which elements it read, and compares with the naive broadcasting oracle.
void check_pair(const Tensor& a, const Tensor& b, int threads = 1, int64_t grain = 1) {
  const Shape out_shape = broadcast_shape(a.shape(), b.shape(), "test");
  Tensor out = Tensor::empty(DType::kFloat32, out_shape);
  const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(a), StridedOperand::of(b)};
  ASSERT_EQ(it.numel(), out.numel());
  it.parallel_for_each(
      threads,
      [](char* const* p, const int64_t* s, int64_t n) {
        float* o = reinterpret_cast<float*>(p[0]);
        const float* x = reinterpret_cast<const float*>(p[1]);
        const float* y = reinterpret_cast<const float*>(p[2]);
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = 1000.f * x[i * s[1]] + y[i * s[2]];
      },
      grain);
  for_each_index(out_shape, [&](const Shape& idx) {
    const double want = 1000.0 * broadcast_read(a, idx) + broadcast_read(b, idx);
    ASSERT_EQ(out.item_as_double(idx), want) << "a " << shape_str(a.shape()) << " b "
                                             << shape_str(b.shape()) << " at " << shape_str(idx);
  });
}

// Small integers so 1000 * x + y is exact in float.
Tensor small_ints(const Shape& shape, uint32_t seed) {
  Tensor t = random_tensor<float>(shape, seed);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::round(p[i] * 20.f);
  return t;
}

TEST(BroadcastIterator, SweepAgainstNaiveOracle) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{}, {}},
      {{1}, {1}},
      {{7}, {}},
      {{}, {7}},
      {{3, 1}, {1, 4}},
      {{3, 1}, {3, 5}},
      {{2, 1, 5}, {3, 1}},
      {{2, 1, 5}, {5}},
      {{2, 3, 4, 5}, {3, 1, 1}},
      {{2, 3, 4, 5}, {1, 3, 1, 1}},
      {{2, 3, 4, 5}, {4, 5}},
      {{2, 3, 4, 5}, {2, 3, 4, 5}},
      {{1, 3, 1, 5}, {2, 1, 4, 1}},
      {{5, 1, 1, 1, 3}, {1, 2, 3, 1, 1}},
      {{0, 3}, {1, 3}},
      {{2, 0, 4}, {4}},
      {{17, 33}, {33}},
      {{17, 33}, {17, 1}},
      {{1, 1, 1}, {1}},
  };
  uint32_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    const Tensor a = small_ints(sa, seed++);
    const Tensor b = small_ints(sb, seed++);
    check_pair(a, b);
    check_pair(b, a);
    check_pair(a, b, /*threads=*/3, /*grain=*/1);
  }
}

TEST(BroadcastIterator, StridedAndReversedOperands) {
  // A transposed view, a stepped slice, and a reversed view (negative strides).
  const Tensor base = small_ints({4, 6}, 11);
  const Tensor t = base.transpose(0, 1);    // [6, 4], strides [1, 6]
  const Tensor s = base.slice(1, 1, 6, 2);  // [4, 3], strides [6, 2]
  check_pair(t, small_ints({6, 1}, 12));
  check_pair(s, small_ints({3}, 13));
  check_pair(t.slice(0, 0, 6, 3), t.slice(0, 1, 6, 3), 2, 1);

  const Shape shape = {4, 6};
  const Shape rev_strides = {-6, -1};
  StridedOperand rev;
  rev.data = const_cast<float*>(base.data<float>()) + 23;  // last element
  rev.shape = shape;
  rev.strides = rev_strides;
  rev.elem_size = 4;
  Tensor out = Tensor::empty(DType::kFloat32, shape);
  const BroadcastIterator it{StridedOperand::of(out), rev};
  it.for_each(0, it.numel(), [](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      reinterpret_cast<float*>(p[0])[i * st[0]] = reinterpret_cast<const float*>(p[1])[i * st[1]];
    }
  });
  // Reversed in both dims, the merged view is one run with stride -1.
  EXPECT_EQ(it.rank(), 1);
  EXPECT_EQ(it.inner_stride(1), -1);
  const std::vector<float> src = base.to_float_vector();
  const std::vector<float> got = out.to_float_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], src[src.size() - 1 - i]);
}

TEST(BroadcastIterator, MergesContiguousDims) {
  Tensor out = Tensor::empty(DType::kFloat32, {2, 3, 4, 5});
  const Tensor a = Tensor::zeros(DType::kFloat32, {2, 3, 4, 5});
  const Tensor c = Tensor::zeros(DType::kFloat32, {1, 3, 1, 1});
  const Tensor w = Tensor::zeros(DType::kFloat32, {5});
  {
    const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(a)};
    EXPECT_EQ(it.rank(), 1);
    EXPECT_EQ(it.inner_size(), 120);
    EXPECT_EQ(it.inner_stride(0), 1);
    EXPECT_EQ(it.inner_stride(1), 1);
  }
  {
    // Per-channel operand: [2, 3, 20] with the channel value broadcast along 20.
    const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(a),
                               StridedOperand::of(c)};
    EXPECT_EQ(it.rank(), 3);
    EXPECT_EQ(it.inner_size(), 20);
    EXPECT_EQ(it.inner_stride(2), 0);
  }
  {
    const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(w)};
    EXPECT_EQ(it.rank(), 2);
    EXPECT_EQ(it.inner_size(), 5);
    EXPECT_EQ(it.inner_stride(1), 1);
  }
  {
    // Size-1 dims vanish entirely.
    Tensor o = Tensor::empty(DType::kFloat32, {1, 1, 1});
    const BroadcastIterator it{StridedOperand::of(o), StridedOperand::of(Tensor::scalar_f32(2))};
    EXPECT_EQ(it.rank(), 1);
    EXPECT_EQ(it.inner_size(), 1);
    EXPECT_EQ(it.numel(), 1);
  }
}

TEST(BroadcastIterator, ForEachCoversExactlyTheRange) {
  // Count visits per output element for ranges that start and end inside runs.
  Tensor out = Tensor::zeros(DType::kInt32, {3, 5, 7});
  const Tensor b = Tensor::zeros(DType::kInt32, {5, 1});
  const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(b)};
  ASSERT_EQ(it.inner_size(), 7);
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 105}, {3, 4},     {6, 8}, {5, 100},
                                                           {49, 50}, {104, 105}, {0, 0}, {20, 20}};
  for (const auto& [begin, end] : ranges) {
    int32_t* o = out.data<int32_t>();
    std::fill(o, o + out.numel(), 0);
    it.for_each(begin, end, [](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<int32_t*>(p[0])[i * s[0]] += 1;
    });
    for (int64_t i = 0; i < out.numel(); ++i) {
      ASSERT_EQ(o[i], (i >= begin && i < end) ? 1 : 0) << "range " << begin << ".." << end;
    }
  }
}

TEST(BroadcastIterator, ForEachRowsCoversExactlyTheRuns) {
  // [3, 5, 7] out with a [5, 1] operand: runs of 7 along the last dim, rows of up to 5
  // runs along the middle one. Each visit adds 1 to the output element and records the
  // operand's element (its row index) so that the row strides are checked too.
  Tensor out = Tensor::zeros(DType::kInt32, {3, 5, 7});
  Tensor b = Tensor::zeros(DType::kInt32, {5, 1});
  for (int i = 0; i < 5; ++i) b.data<int32_t>()[i] = 100 * (i + 1);
  const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(b)};
  ASSERT_EQ(it.num_runs(), 15);
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 15}, {3, 4}, {4, 6},  {1, 14},
                                                           {5, 10}, {14, 15}, {0, 0}, {7, 7}};
  for (const auto& [begin, end] : ranges) {
    int32_t* o = out.data<int32_t>();
    std::fill(o, o + out.numel(), 0);
    int64_t max_m = 0;
    it.for_each_rows(begin, end,
                     [&](char* const* p, const int64_t* s, int64_t n, const int64_t* rb,
                         int64_t m) {
                       max_m = std::max(max_m, m);
                       for (int64_t i = 0; i < m; ++i) {
                         auto* y = reinterpret_cast<int32_t*>(p[0] + i * rb[0]);
                         const auto* x = reinterpret_cast<const int32_t*>(p[1] + i * rb[1]);
                         for (int64_t j = 0; j < n; ++j) y[j * s[0]] += 1 + x[j * s[1]];
                       }
                     });
    EXPECT_LE(max_m, 5);
    for (int64_t i = 0; i < out.numel(); ++i) {
      const int64_t run = i / 7;
      const int32_t want = (run >= begin && run < end) ? 1 + 100 * static_cast<int32_t>(run % 5 + 1) : 0;
      ASSERT_EQ(o[i], want) << "runs " << begin << ".." << end << " element " << i;
    }
  }
}

// copy_strided against the naive oracle: short runs (by rows), long runs, broadcast,
// transposed and reversed sources, 1, 2, 4 and 8 byte elements, 1 and 2 threads.
TEST(CopyStrided, MatchesNaiveCopy) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 4420, 2}, {1, 4420, 2}}, {{3, 5, 3}, {5, 1}}, {{2, 3, 4}, {4}},   {{40000, 2}, {40000, 2}},
      {{7, 33}, {7, 33}},           {{9}, {1}},          {{2, 1, 3}, {2, 1, 3}}, {{0, 3}, {3}}};
  uint32_t seed = 40;
  for (const auto& [so, ss] : cases) {
    for (int threads : {1, 2}) {
      const Tensor src = small_ints(ss, seed++);
      Tensor out = Tensor::zeros(DType::kFloat32, so);
      ops::copy_strided(StridedOperand::of(out), StridedOperand::of(src), threads);
      for_each_index(so, [&](const Shape& idx) {
        ASSERT_EQ(out.item_as_double(idx), broadcast_read(src, idx))
            << shape_str(ss) << " -> " << shape_str(so) << " at " << shape_str(idx);
      });
    }
  }
  // A slice of the last axis ([4420, 4] -> [4420, 2] from column 1) and a transpose, on
  // every element size.
  for (DType dt : {DType::kUint8, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
    const Tensor f = small_ints({4420, 4}, seed++);
    Tensor base = Tensor::zeros(dt, f.shape());
    kernels::ref::cast(f.numel(), DType::kFloat32, f.data<float>(), 1, dt, base.raw_data());
    const Tensor sl = base.slice(1, 1, 3);
    Tensor out = Tensor::zeros(dt, {4420, 2});
    ops::copy_strided(StridedOperand::of(out), StridedOperand::of(sl), 2);
    const Tensor tr = base.slice(0, 0, 6).transpose(0, 1);  // [4, 6], strides [1, 4]
    Tensor out_t = Tensor::zeros(dt, {4, 6});
    ops::copy_strided(StridedOperand::of(out_t), StridedOperand::of(tr), 1);
    for (int64_t i = 0; i < 4420; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        ASSERT_EQ(out.item_as_double({i, j}), base.item_as_double({i, j + 1})) << i << "," << j;
      }
    }
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 6; ++j) ASSERT_EQ(out_t.item_as_double({i, j}), base.item_as_double({j, i}));
    }
  }
  // Last-axis slices of 1 to 40 floats from rows of 43: rows of every byte count the
  // fixed-size copies take (4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80), of the others below
  // kShortRun (one memcpy per row) and runs of kShortRun or more (a copy call per run).
  for (int64_t width = 1; width <= 40; ++width) {
    const Tensor base = small_ints({37, 43}, seed++);
    const Tensor sl = base.slice(1, 1, 1 + width);
    Tensor out = Tensor::zeros(DType::kFloat32, {37, width});
    ops::copy_strided(StridedOperand::of(out), StridedOperand::of(sl), 1);
    for (int64_t i = 0; i < 37; ++i) {
      for (int64_t j = 0; j < width; ++j) {
        ASSERT_EQ(out.data<float>()[i * width + j], base.data<float>()[i * 43 + 1 + j])
            << "width " << width << " at " << i << "," << j;
      }
    }
  }
  // A last-axis slice big enough for two threads' row chunks (80000 elements): the
  // threaded for_each_rows path.
  {
    const Tensor base = small_ints({40000, 4}, seed++);
    const Tensor sl = base.slice(1, 2, 4);
    Tensor out = Tensor::zeros(DType::kFloat32, {40000, 2});
    ops::copy_strided(StridedOperand::of(out), StridedOperand::of(sl), 2);
    const float* b = base.data<float>();
    const float* o = out.data<float>();
    for (int64_t i = 0; i < 40000; ++i) {
      ASSERT_EQ(o[2 * i], b[4 * i + 2]) << i;
      ASSERT_EQ(o[2 * i + 1], b[4 * i + 3]) << i;
    }
  }
  // Reversed rows and columns of a [5, 3] source.
  const Tensor base = small_ints({5, 3}, seed++);
  const Shape shape = {5, 3};
  const Shape rev_strides = {-3, -1};
  StridedOperand rev{const_cast<float*>(base.data<float>()) + 14, shape, rev_strides, 4};
  Tensor out = Tensor::empty(DType::kFloat32, shape);
  ops::copy_strided(StridedOperand::of(out), rev, 1);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(out.data<float>()[i], base.data<float>()[14 - i]);
}

TEST(CopyStrided, DifferentElementSizesAreInvalidArgument) {
  Tensor out = Tensor::zeros(DType::kFloat32, {4});
  const Tensor src = Tensor::zeros(DType::kInt64, {4});
  expect_error<InvalidArgument>(
      [&] { ops::copy_strided(StridedOperand::of(out), StridedOperand::of(src), 1); },
      {"element sizes differ", "4", "8"});
}

// A float tensor of NaNs (a destination whose unwritten elements show).
Tensor nan_tensor(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  std::fill(t.data<float>(), t.data<float>() + t.numel(), std::nanf(""));
  return t;
}

// NaN destinations shaped like `srcs`, and the operand lists copy_strided_parts takes.
struct NanCopies {
  std::vector<Tensor> outs;
  std::vector<StridedOperand> dst_ops, src_ops;

  explicit NanCopies(const std::vector<Tensor>& srcs) {
    outs.reserve(srcs.size());  // the operands' spans point into these tensors
    for (const Tensor& src : srcs) {
      outs.push_back(nan_tensor(src.shape()));
      dst_ops.push_back(StridedOperand::of(outs.back()));
      src_ops.push_back(StridedOperand::of(src));
    }
  }
};

// copy_strided_parts: a Split of an NHWC head output along its last axis (short runs and
// one long part, all over the same pixels), a Concat's inputs of different lengths (long
// runs), with an empty part, on 1, 2 and 3 threads (122880 elements and more: 3 x 32 Ki,
// so that as many threads as the machine has run), against the naive copy; destinations
// start as NaN.
TEST(CopyStridedParts, MatchesNaiveCopies) {
  const Tensor head = small_ints({1, 96, 40, 32}, 50);
  const std::vector<std::pair<int64_t, int64_t>> cuts = {{0, 8}, {8, 12}, {12, 12}, {12, 32}};
  const Tensor long_a = small_ints({1, 3000, 4}, 51), long_b = small_ints({1, 700, 4}, 52);
  for (bool with_long : {false, true}) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, long parts " << with_long);
      std::vector<Tensor> srcs;
      srcs.reserve(cuts.size() + 2);
      for (const auto& [b, e] : cuts) srcs.push_back(head.slice(3, b, e));
      if (with_long) {
        srcs.push_back(long_a);
        srcs.push_back(long_b);
      }
      NanCopies c(srcs);
      ops::copy_strided_parts(c.dst_ops, c.src_ops, threads);
      for (size_t k = 0; k < srcs.size(); ++k) {
        for_each_index(srcs[k].shape(), [&](const Shape& idx) {
          ASSERT_EQ(c.outs[k].item_as_double(idx), srcs[k].item_as_double(idx))
              << "part " << k << " at " << shape_str(idx);
        });
      }
    }
  }
  Tensor out = Tensor::zeros(DType::kFloat32, {4});
  const Tensor wide = Tensor::zeros(DType::kInt64, {4});
  const StridedOperand d[] = {StridedOperand::of(out), StridedOperand::of(out)};
  const StridedOperand s1[] = {StridedOperand::of(out)};
  const StridedOperand s2[] = {StridedOperand::of(out), StridedOperand::of(wide)};
  expect_error<InvalidArgument>([&] { ops::copy_strided_parts(d, s1, 2); },
                                {"2 destinations but 1 sources"});
  expect_error<InvalidArgument>([&] { ops::copy_strided_parts(d, s2, 2); },
                                {"element sizes differ", "4", "8", "pair 1"});
}

// Runs every share t of nt of copy_strided_parts over `srcs` into NaN destinations and
// returns, per part and element, the share that wrote it (-1: none); fails on an element
// written twice.
std::vector<std::vector<int>> owners(const std::vector<Tensor>& srcs, int64_t nt) {
  std::vector<std::vector<int>> owner;
  for (const Tensor& src : srcs) owner.emplace_back(static_cast<size_t>(src.numel()), -1);
  for (int64_t t = 0; t < nt; ++t) {
    NanCopies c(srcs);
    ops::copy_strided_parts_share(c.dst_ops, c.src_ops, t, nt);
    for (size_t k = 0; k < srcs.size(); ++k) {
      const float* o = c.outs[k].data<float>();
      for (size_t i = 0; i < owner[k].size(); ++i) {
        if (std::isnan(o[i])) continue;
        EXPECT_EQ(owner[k][i], -1) << "part " << k << " element " << i << " written twice";
        owner[k][i] = static_cast<int>(t);
      }
    }
  }
  return owner;
}

// The parts of RetinaFace's merged heads ([1, 80, 80, 32] NHWC cut into 8, 4 and 20
// channels): share t of nt copies the same contiguous fraction of the pixels of every part,
// the pixels thread t wrote in the convolution before (to within one pixel at the cuts:
// parts of fewer than kShortRun channels go by runs of one pixel, others by elements).
// The 20-channel part used to take a fraction of every image row instead.
TEST(CopyStridedParts, EveryThreadCopiesTheSamePixelsOfEveryPart) {
  const Tensor head = small_ints({1, 80, 80, 32}, 53);
  const std::vector<std::pair<int64_t, int64_t>> cuts = {{0, 8}, {8, 12}, {12, 32}};
  std::vector<Tensor> srcs;
  srcs.reserve(cuts.size());
  for (const auto& [b, e] : cuts) srcs.push_back(head.slice(3, b, e));
  // The share t of nt whose fraction [count t / nt, count (t + 1) / nt) holds i.
  const auto share_of = [](int64_t i, int64_t count, int64_t nt) {
    int t = 0;
    while (count * (t + 1) / nt <= i) ++t;
    return t;
  };
  for (int64_t nt : {2, 3}) {
    const std::vector<std::vector<int>> owner = owners(srcs, nt);
    for (size_t k = 0; k < cuts.size(); ++k) {
      const int64_t channels = cuts[k].second - cuts[k].first;
      const int64_t numel = 6400 * channels;
      for (int64_t i = 0; i < numel; ++i) {
        const int expected =
            channels < ops::kShortRun ? share_of(i / channels, 6400, nt) : share_of(i, numel, nt);
        ASSERT_EQ(owner[k][static_cast<size_t>(i)], expected)
            << nt << " shares, part " << k << ", pixel " << i / channels;
      }
    }
  }
}

// Parts that all go by long runs (a channel Concat of NCHW or NCHWc tensors): each share
// takes parallel_for_each's split of every part, the same band of every plane (planes of
// at least kMinPlaneShare elements per share here).
TEST(CopyStridedParts, LongRunPartsTakeTheSameBandOfEveryPlane) {
  const std::vector<Tensor> srcs = {small_ints({1, 2, 30, 30}, 54),
                                    small_ints({1, 3, 8, 8, 16}, 55)};
  for (int64_t nt : {2, 3}) {
    const std::vector<std::vector<int>> owner = owners(srcs, nt);
    for (size_t k = 0; k < srcs.size(); ++k) {
      const Shape& s = srcs[k].shape();
      const size_t plane = static_cast<size_t>(srcs[k].numel() / (s[0] * s[1]));
      for (size_t i = 0; i < owner[k].size(); ++i) {
        ASSERT_NE(owner[k][i], -1) << nt << " shares, part " << k << " element " << i;
        ASSERT_EQ(owner[k][i], owner[k][i % plane]) << nt << " shares, part " << k << ": element "
                                                    << i % plane << " of plane " << i / plane;
      }
    }
  }
}

// for_each_share(t, nt) for t in [0, nt) covers every element exactly once (bands of every
// plane, or contiguous chunks).
TEST(BroadcastIterator, SharesCoverTheWalkOnce) {
  for (const Shape& shape :
       {Shape{1, 4, 10, 10, 16}, Shape{2, 3, 20, 30}, Shape{5000}, Shape{3, 7}}) {
    SCOPED_TRACE(shape_str(shape));
    Tensor out = Tensor::empty(DType::kFloat32, shape);
    const Tensor x = small_ints(shape, 26);
    const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(x)};
    float* base = out.data<float>();
    for (int64_t nt : {1, 2, 3}) {
      std::vector<int> times(static_cast<size_t>(out.numel()), 0);
      for (int64_t t = 0; t < nt; ++t) {
        it.for_each_share(t, nt, [&](char* const* p, const int64_t* s, int64_t n) {
          const int64_t first = reinterpret_cast<float*>(p[0]) - base;
          for (int64_t i = 0; i < n; ++i) ++times[static_cast<size_t>(first + i * s[0])];
        });
      }
      for (size_t i = 0; i < times.size(); ++i)
        ASSERT_EQ(times[i], 1) << nt << " threads, element " << i;
    }
  }
}

// for_each_rows_share(t, nt) for t in [0, nt) covers every element exactly once, and where
// a plane is whole runs with kMinPlaneShare elements per thread, thread t takes the same
// runs of every plane: NCHWc with a per-channel operand (rows of 16, planes of 1600 and of
// 240, the latter split as a whole), a plane of one run (rows of 20 over the channels) and
// runs that cross planes ([2, 3, 4] and [2, 3, 600] against [2, 1, 1]: one run of 12 or
// 1800 per image; the second's planes hold kMinPlaneShare elements per thread but are no
// whole runs, so its split is of all runs).
TEST(BroadcastIterator, RowSharesCoverTheWalkOnce) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{1, 4, 10, 10, 16}, {1, 4, 1, 1, 16}},
                                                      {{2, 3, 3, 5, 16}, {1, 3, 1, 1, 16}},
                                                      {{1, 30, 20}, {1, 1, 20}},
                                                      {{2, 3, 4}, {2, 1, 1}},
                                                      {{2, 3, 600}, {2, 1, 1}}};
  for (const auto& [so, sx] : cases) {
    SCOPED_TRACE(shape_str(so));
    Tensor out = Tensor::empty(DType::kFloat32, so);
    const Tensor x = small_ints(sx, 27);
    const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(x)};
    ASSERT_GE(it.rank(), 2);
    float* base = out.data<float>();
    const int64_t plane = out.numel() / (so[0] * so[1]);
    for (int64_t nt : {1, 2, 3}) {
      std::vector<int> owner(static_cast<size_t>(out.numel()), -1);
      for (int64_t t = 0; t < nt; ++t) {
        it.for_each_rows_share(
            t, nt, [&](char* const* p, const int64_t* s, int64_t n, const int64_t* rb, int64_t m) {
              for (int64_t i = 0; i < m; ++i) {
                const int64_t first = reinterpret_cast<float*>(p[0] + i * rb[0]) - base;
                for (int64_t j = 0; j < n; ++j) {
                  int& o = owner[static_cast<size_t>(first + j * s[0])];
                  ASSERT_EQ(o, -1) << "element " << first + j * s[0] << " twice";
                  o = static_cast<int>(t);
                }
              }
            });
      }
      const bool banded =
          nt > 1 && plane % it.inner_size() == 0 && plane / nt >= BroadcastIterator::kMinPlaneShare;
      for (size_t i = 0; i < owner.size(); ++i) {
        ASSERT_NE(owner[i], -1) << nt << " threads, element " << i;
        if (banded) {
          ASSERT_EQ(owner[i], owner[i % static_cast<size_t>(plane)])
              << nt << " threads, element " << i;
        }
      }
      if (so == Shape{1, 4, 10, 10, 16} && nt == 2) {
        EXPECT_TRUE(banded);
      }
    }
  }
}

TEST(BroadcastIterator, NonBroadcastableOperandIsShapeError) {
  Tensor out = Tensor::empty(DType::kFloat32, {2, 3});
  const Tensor bad = Tensor::zeros(DType::kFloat32, {2});
  expect_error<ShapeError>(
      [&] {
        BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(bad)};
      },
      {"[2]", "[2, 3]"});
  const Tensor too_big = Tensor::zeros(DType::kFloat32, {1, 2, 3});
  expect_error<ShapeError>(
      [&] {
        BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(too_big)};
      },
      {"[1, 2, 3]"});
}

TEST(BroadcastIterator, ParallelSplitTakesTheSameBandOfEveryPlane) {
  // [2, 3, 20, 30]: 6 planes of 600 elements; with 2 threads each takes about 300 of
  // every plane (>= kMinPlaneShare), thread t the same band of each. With 3 threads, 200
  // per plane is below kMinPlaneShare: contiguous chunks of the whole. Values are checked
  // either way.
  const Tensor a = small_ints({2, 3, 20, 30}, 21);
  for (const Shape& sb : {Shape{3, 1, 1}, Shape{30}, Shape{2, 3, 20, 30}}) {
    const Tensor b = small_ints(sb, 22);
    for (int threads : {2, 3}) check_pair(a, b, threads, /*grain=*/1);
  }
  check_pair(small_ints({1, 4, 10, 10, 16}, 23), small_ints({1, 4, 1, 1, 16}, 24), 2, 1);
  // NCHWc, a rank-3 output and NCHW: the owner of each element is the owner of the same
  // position in plane 0.
  for (const Shape& shape : {Shape{1, 4, 10, 10, 16}, Shape{1, 3, 700}, Shape{2, 3, 20, 30}}) {
    SCOPED_TRACE(shape_str(shape));
    Tensor out = Tensor::empty(DType::kFloat32, shape);
    const Tensor x = small_ints(shape, 25);
    const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(x)};
    const size_t plane = static_cast<size_t>(shape[2] * out.numel() / (shape[0] * shape[1] * shape[2]));
    std::vector<std::thread::id> owner(static_cast<size_t>(out.numel()));
    float* base = out.data<float>();
    it.parallel_for_each(
        2,
        [&](char* const* p, const int64_t*, int64_t n) {
          const int64_t first = reinterpret_cast<float*>(p[0]) - base;
          for (int64_t i = 0; i < n; ++i) {
            owner[static_cast<size_t>(first + i)] = std::this_thread::get_id();
          }
        },
        /*grain=*/1);
    for (size_t i = 0; i < owner.size(); ++i) {
      ASSERT_EQ(owner[i], owner[i % plane]) << "element " << i % plane << " of plane " << i / plane;
    }
  }
}

TEST(BroadcastIterator, ZeroSizeOutputCallsNothing) {
  Tensor out = Tensor::empty(DType::kFloat32, {4, 0, 3});
  const Tensor b = Tensor::zeros(DType::kFloat32, {3});
  const BroadcastIterator it{StridedOperand::of(out), StridedOperand::of(b)};
  EXPECT_EQ(it.numel(), 0);
  int calls = 0;
  it.parallel_for_each(4, [&](char* const*, const int64_t*, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace tern::test
