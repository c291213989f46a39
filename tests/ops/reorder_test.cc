// tern.Reorder (NCHW <-> NCHWc), and the existing ops the assign-layout pass runs on
// NCHWc tensors with rewritten attributes or constants (3-D pooling with a size-1 lane
// window, 5-D Resize with a trailing scale 1, Concat on the block axis), each checked
// against the NCHW op followed by an independent blocking loop, for c = 4, 8 and 16.
#include "op_test_util.h"
#include "ops/registry.h"

namespace tern::test {
namespace {

constexpr int64_t kBlocks[] = {4, 8, 16};

// The oracle: NCHW [N, C, H, W] -> NCHWc [N, ceil(C/c), H, W, c], padded lanes `pad`.
Tensor block_nchw(const Tensor& x, int64_t c, float pad = 0.0f) {
  const Shape& s = x.shape();
  const int64_t cb = (s[1] + c - 1) / c;
  std::vector<float> out(static_cast<size_t>(s[0] * cb * s[2] * s[3] * c), pad);
  const std::vector<float> in = x.to_float_vector();
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t ch = 0; ch < s[1]; ++ch)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          out[(((n * cb + ch / c) * s[2] + h) * s[3] + w) * c + ch % c] =
              in[((n * s[1] + ch) * s[2] + h) * s[3] + w];
  return Tensor::from_vector(out, {s[0], cb, s[2], s[3], c});
}

std::unique_ptr<ops::Op> make_internal(const std::string& op_type, const AttrMap& attrs) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(ops::kInternalDomain, op_type);
  if (!schema) throw UnsupportedOpError("op tern." + op_type + " is not registered");
  ops::Attrs reader(attrs.attrs, op_type + " 'test_node'");
  return schema->create(reader, ops::OpContext{"test_node", op_type, 13, 1});
}

Tensor run_reorder(const AttrMap& attrs, const Tensor& x, int threads = 1) {
  auto op = make_internal("Reorder", attrs);
  const std::vector<Tensor> in = {x};
  const auto types = op->infer(ops::infer_inputs_from(in));
  std::vector<Tensor> out = {Tensor::empty(types[0].dtype, types[0].shape)};
  op->run(in, out, ops::ExecContext{threads});
  return out[0];
}

TEST(Reorder, IsInternalOnly) {
  EXPECT_EQ(ops::OpRegistry::global().find("Reorder"), nullptr);
  EXPECT_NE(ops::OpRegistry::global().find(ops::kInternalDomain, "Reorder"), nullptr);
}

TEST(Reorder, ToNchwcPlacesChannelsAndZeroesPaddedLanes) {
  for (int64_t c : kBlocks) {
    for (int64_t channels : {1, 3, 4, 7, 8, 13, 16, 17, 33}) {
      SCOPED_TRACE(fmt::format("c={} C={}", c, channels));
      const Tensor x = random_tensor<float>({2, channels, 3, 5}, 11 + channels);
      const Tensor y = run_reorder(AttrMap().s("to", "NCHWc").i("block", c), x, 2);
      ASSERT_EQ(y.shape(), (Shape{2, (channels + c - 1) / c, 3, 5, c}));
      // The oracle's padded lanes are 0: the reorder must write exactly 0 there.
      EXPECT_EQ(y.to_float_vector(), block_nchw(x, c).to_float_vector());
      const Tensor back = run_reorder(AttrMap().s("to", "NCHW").i("channels", channels), y, 2);
      EXPECT_EQ(back.to_float_vector(), x.to_float_vector());
    }
  }
}

TEST(Reorder, ToNchwNeverReadsPaddedLanes) {
  const Tensor x = random_tensor<float>({1, 5, 2, 3}, 3);
  const Tensor blocked = block_nchw(x, 4, NAN);  // lanes 5..7 hold NaN
  const Tensor back = run_reorder(AttrMap().s("to", "NCHW").i("channels", 5), blocked);
  EXPECT_EQ(back.to_float_vector(), x.to_float_vector());
}

TEST(Reorder, ToNchwOverRunsAndThreadSplits) {
  // 13 x 11 = 143 pixels: two whole runs of kernels::ref::kReorderRun (64) and a tail of
  // 15, split among 1 to 3 threads at multiples of 16 pixels; 2 images; padded lanes NaN.
  for (int64_t c : kBlocks) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(fmt::format("c={} threads={}", c, threads));
      const Tensor x = random_tensor<float>({2, 21, 13, 11}, 17 + threads);
      const Tensor back =
          run_reorder(AttrMap().s("to", "NCHW").i("channels", 21), block_nchw(x, c, NAN), threads);
      EXPECT_EQ(back.to_float_vector(), x.to_float_vector());
    }
  }
}

TEST(Reorder, Errors) {
  expect_error<ModelError>([] { make_internal("Reorder", AttrMap()); }, {"'to'"});
  expect_error<ModelError>([] { make_internal("Reorder", AttrMap().s("to", "NHWC")); },
                           {"Reorder 'test_node'", "NHWC"});
  expect_error<ModelError>(
      [] { make_internal("Reorder", AttrMap().s("to", "NCHWc").i("block", 0)); }, {"'block'"});
  expect_error<ModelError>([] { make_internal("Reorder", AttrMap().s("to", "NCHW")); },
                           {"'channels'"});
  expect_error<ShapeError>(
      [] {
        run_reorder(AttrMap().s("to", "NCHWc").i("block", 8),
                    Tensor::zeros(DType::kFloat32, {1, 3, 4}));
      },
      {"Reorder 'test_node'", "4-D"});
  expect_error<ShapeError>(
      [] {
        run_reorder(AttrMap().s("to", "NCHW").i("channels", 9),
                    Tensor::zeros(DType::kFloat32, {1, 1, 2, 2, 8}));
      },
      {"9 channels"});
  expect_error<ShapeError>(
      [] {
        run_reorder(AttrMap().s("to", "NCHW").i("channels", 8),
                    Tensor::zeros(DType::kFloat32, {1, 2, 2, 2, 8}));
      },
      {"8 channels"});
  expect_error<UnsupportedOpError>(
      [] {
        run_reorder(AttrMap().s("to", "NCHWc").i("block", 8),
                    Tensor::zeros(DType::kInt32, {1, 3, 2, 2}));
      },
      {"Reorder 'test_node'"});
}

// 2-D pooling of NCHW, then blocked == 3-D pooling (lane window 1) of the blocked input.
void check_pool(const std::string& op, int64_t c, int64_t channels, const std::vector<int64_t>& k,
                const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                const std::vector<int64_t>& dilations, int64_t ceil_mode, int64_t include_pad) {
  SCOPED_TRACE(fmt::format("{} c={} C={} k={} s={} pads={} d={} ceil={}", op, c, channels, k,
                           strides, pads, dilations, ceil_mode));
  const Tensor x = random_tensor<float>({2, channels, 9, 7}, 5);
  AttrMap plain, blocked;
  plain.ints("kernel_shape", k)
      .ints("strides", strides)
      .ints("pads", pads)
      .i("ceil_mode", ceil_mode);
  blocked.ints("kernel_shape", {k[0], k[1], 1})
      .ints("strides", {strides[0], strides[1], 1})
      .ints("pads", {pads[0], pads[1], 0, pads[2], pads[3], 0})
      .i("ceil_mode", ceil_mode);
  if (op == "MaxPool") {
    plain.ints("dilations", dilations);
    blocked.ints("dilations", {dilations[0], dilations[1], 1});
  } else {
    plain.i("count_include_pad", include_pad);
    blocked.i("count_include_pad", include_pad);
  }
  const Tensor want = block_nchw(run1(op, {x}, plain), c);
  const Tensor got = run1(op, {block_nchw(x, c)}, blocked);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.to_float_vector(), want.to_float_vector());  // same taps, same order
}

TEST(NchwcRewrittenOps, PoolWithALaneWindowOfOneIsThe2DPool) {
  for (int64_t c : kBlocks) {
    for (int64_t channels : {3, 16, 21}) {
      for (const char* op : {"MaxPool", "AveragePool"}) {
        check_pool(op, c, channels, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 0);
        check_pool(op, c, channels, {2, 3}, {1, 2}, {0, 1, 1, 0}, {1, 1}, 1, 1);
        check_pool(op, c, channels, {3, 2}, {2, 1}, {1, 0, 0, 1}, {1, 1}, 1, 0);
      }
      check_pool("MaxPool", c, channels, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 0, 0);
    }
  }
}

TEST(NchwcRewrittenOps, WholePlaneWindowIsTheGlobalPool) {
  for (int64_t c : kBlocks) {
    const Tensor x = random_tensor<float>({2, 13, 6, 5}, 9);
    const Tensor xb = block_nchw(x, c);
    const AttrMap k = AttrMap().ints("kernel_shape", {6, 5, 1});
    const Tensor avg = run1("AveragePool", {xb}, k);
    const Tensor max = run1("MaxPool", {xb}, k);
    expect_near_all(avg.to_float_vector(),
                    block_nchw(run1("GlobalAveragePool", {x}), c).to_float_vector(), 1e-6f);
    EXPECT_EQ(max.to_float_vector(), block_nchw(run1("GlobalMaxPool", {x}), c).to_float_vector());
  }
}

TEST(NchwcRewrittenOps, ResizeWithATrailingScaleOneIsThePerLaneResize) {
  struct Case {
    const char* mode;
    const char* coord;
    const char* nearest;
  };
  const Case cases[] = {{"nearest", "asymmetric", "floor"},
                        {"nearest", "half_pixel", "round_prefer_floor"},
                        {"nearest", "align_corners", "round_prefer_ceil"},
                        {"nearest", "pytorch_half_pixel", "ceil"},
                        {"linear", "half_pixel", "floor"},
                        {"linear", "align_corners", "floor"},
                        {"linear", "asymmetric", "floor"},
                        {"linear", "pytorch_half_pixel", "floor"}};
  for (int64_t c : kBlocks) {
    for (const Case& k : cases) {
      SCOPED_TRACE(fmt::format("c={} {} {} {}", c, k.mode, k.coord, k.nearest));
      const Tensor x = random_tensor<float>({1, 11, 5, 4}, 21);
      const AttrMap a = AttrMap()
                            .s("mode", k.mode)
                            .s("coordinate_transformation_mode", k.coord)
                            .s("nearest_mode", k.nearest);
      const Tensor none;
      const Tensor empty = f32({}, {0});
      // scales
      const Tensor want = block_nchw(run1("Resize", {x, none, f32({1, 1, 2, 1.5f}, {4})}, a), c);
      const Tensor got = run1("Resize", {block_nchw(x, c), none, f32({1, 1, 2, 1.5f, 1}, {5})}, a);
      ASSERT_EQ(got.shape(), want.shape());
      EXPECT_EQ(got.to_float_vector(), want.to_float_vector());
      // sizes
      const Tensor want_s = block_nchw(run1("Resize", {x, none, empty, i64v({1, 11, 7, 9})}, a), c);
      const Tensor got_s =
          run1("Resize", {block_nchw(x, c), none, empty, i64v({1, (11 + c - 1) / c, 7, 9, c})}, a);
      ASSERT_EQ(got_s.shape(), want_s.shape());
      EXPECT_EQ(got_s.to_float_vector(), want_s.to_float_vector());
    }
  }
}

TEST(NchwcRewrittenOps, ConcatOfWholeBlocksOnAxisOne) {
  for (int64_t c : kBlocks) {
    const Tensor a = random_tensor<float>({2, c, 3, 4}, 1);
    const Tensor b = random_tensor<float>({2, 2 * c, 3, 4}, 2);
    const Tensor want = block_nchw(run1("Concat", {a, b}, AttrMap().i("axis", 1)), c);
    const Tensor got = run1("Concat", {block_nchw(a, c), block_nchw(b, c)}, AttrMap().i("axis", 1));
    EXPECT_EQ(got.to_float_vector(), want.to_float_vector());
  }
}

TEST(NchwcRewrittenOps, ElementwiseOpsRunPerLane) {
  for (int64_t c : kBlocks) {
    const Tensor a = random_tensor<float>({1, 5, 3, 3}, 1);
    const Tensor b = random_tensor<float>({1, 5, 3, 3}, 2);
    for (const char* op : {"Add", "Mul", "Sub", "Max", "Min"}) {
      const Tensor want = block_nchw(run1(op, {a, b}), c);
      const Tensor got = run1(op, {block_nchw(a, c), block_nchw(b, c)});
      // Zero padded lanes stay zero: the ops the pass converts with padded lanes keep them.
      EXPECT_EQ(got.to_float_vector(), want.to_float_vector()) << op;
    }
    const Tensor want = block_nchw(run1("Relu", {a}), c);
    EXPECT_EQ(run1("Relu", {block_nchw(a, c)}).to_float_vector(), want.to_float_vector());
  }
}

}  // namespace
}  // namespace tern::test
