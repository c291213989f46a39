// tern.ScaleShift (src/ops/scale_shift.cc): y = x * scale[c] + shift[c] in the plain
// layout (rank 2 to 5) and in NCHWc (c = 4, 8, 16, channel counts not a multiple of c),
// against a plain double-precision loop; padded lanes; in place; attribute and shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::from_nchwc;
using test::to_nchwc;

std::unique_ptr<ops::Op> make_scale_shift(const AttrMap& attrs) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(ops::kInternalDomain, "ScaleShift");
  if (!schema) throw UnsupportedOpError("tern.ScaleShift is not registered");
  ops::Attrs reader(attrs.attrs, "ScaleShift 'test_node'");
  return schema->create(reader, ops::OpContext{"test_node", "ScaleShift", 13, 1});
}

// Runs ScaleShift (with `threads` threads) the way the runtime does.
Tensor run_scale_shift(const AttrMap& attrs, const std::vector<Tensor>& inputs, int threads = 1) {
  auto op = make_scale_shift(attrs);
  const std::vector<ops::TensorType> types = op->infer(ops::infer_inputs_from(inputs));
  std::vector<Tensor> out = {Tensor::empty(types[0].dtype, types[0].shape)};
  op->run(inputs, out, ops::ExecContext{threads});
  return out[0];
}

// The oracle: y = x * scale[c] + shift[c] in double, x plain [N, C, ...].
std::vector<double> reference(const Tensor& x, const Tensor& scale, const Tensor& shift) {
  const std::vector<float> xv = x.to_float_vector();
  const std::vector<float> s = scale.to_float_vector();
  const std::vector<float> t = shift.to_float_vector();
  const int64_t channels = x.dim(1);
  const int64_t inner = x.numel() / (x.dim(0) * channels);
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
    y[i] = static_cast<double>(xv[i]) * s[c] + t[c];
  }
  return y;
}

// |got - want| within two float32 rounding steps of the terms (x * s, then + t).
void expect_matches_reference(const std::vector<float>& got, const std::vector<double>& want,
                              const std::vector<double>& magnitude) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = 2.0 * std::ldexp(magnitude[i], -23) + 1e-30;
    ASSERT_NEAR(got[i], want[i], tol) << "element " << i;
  }
}

std::vector<double> magnitudes(const Tensor& x, const Tensor& scale, const Tensor& shift) {
  const Tensor ax = Tensor::from_vector(
      [&] {
        std::vector<float> v = x.to_float_vector();
        for (float& e : v) e = std::fabs(e);
        return v;
      }(),
      x.shape());
  std::vector<float> as = scale.to_float_vector(), at = shift.to_float_vector();
  for (float& e : as) e = std::fabs(e);
  for (float& e : at) e = std::fabs(e);
  const Shape cs = {static_cast<int64_t>(as.size())};
  return reference(ax, Tensor::from_vector(as, cs), Tensor::from_vector(at, cs));
}

TEST(ScaleShiftOp, IsInternalOnly) {
  EXPECT_EQ(ops::OpRegistry::global().find("ScaleShift"), nullptr);
  EXPECT_NE(ops::OpRegistry::global().find(ops::kInternalDomain, "ScaleShift"), nullptr);
}

TEST(ScaleShiftOp, HandWorkedExample) {
  // x [1, 2, 3]: channel 0 * 2 + 1, channel 1 * -0.5 + 3.
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 6, 8}, {1, 2, 3});
  const Tensor y = run_scale_shift(AttrMap(), {x, Tensor::from_vector({2.0f, -0.5f}, {2}),
                                               Tensor::from_vector({1.0f, 3.0f}, {2})});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{3, 5, 7, 1, 0, -1}));
}

TEST(ScaleShiftOp, PlainMatchesReferenceEveryRank) {
  uint32_t seed = 1;
  for (const Shape& shape : {Shape{3, 5}, Shape{2, 7, 9}, Shape{2, 3, 5, 4}, Shape{1, 13, 3, 2, 5},
                             Shape{1, 1, 1, 1}, Shape{2, 17, 1, 1}}) {
    SCOPED_TRACE(shape_str(shape));
    const Tensor x = test::random_tensor<float>(shape, seed++);
    const Tensor s = test::random_tensor<float>({shape[1]}, seed++, -2, 2);
    const Tensor t = test::random_tensor<float>({shape[1]}, seed++, -2, 2);
    for (int threads : {1, 2}) {
      const Tensor y = run_scale_shift(AttrMap(), {x, s, t}, threads);
      EXPECT_EQ(y.shape(), shape);
      expect_matches_reference(y.to_float_vector(), reference(x, s, t), magnitudes(x, s, t));
    }
    // channels given in the plain layout must agree with X.
    const Tensor y = run_scale_shift(AttrMap().i("channels", shape[1]), {x, s, t});
    expect_matches_reference(y.to_float_vector(), reference(x, s, t), magnitudes(x, s, t));
  }
}

TEST(ScaleShiftOp, NchwcMatchesReferenceAndZeroesPaddedLanes) {
  uint32_t seed = 100;
  for (int64_t block : {4, 8, 16}) {
    for (int64_t channels : {1, 3, 4, 5, 8, 13, 16, 17, 33}) {
      for (const Shape& spatial : {Shape{1, 1}, Shape{3, 5}, Shape{4, 4}}) {
        SCOPED_TRACE(
            fmt::format("block {} channels {} spatial {}", block, channels, shape_str(spatial)));
        const Shape shape = {2, channels, spatial[0], spatial[1]};
        const Tensor x = test::random_tensor<float>(shape, seed++);
        const Tensor s = test::random_tensor<float>({channels}, seed++, -2, 2);
        const Tensor t = test::random_tensor<float>({channels}, seed++, -2, 2);
        // NaN in the padded lanes of X: the kernel must not read them into Y.
        const Tensor xb = to_nchwc(x, block, std::numeric_limits<float>::quiet_NaN());
        const AttrMap attrs = AttrMap().i("block", block).i("channels", channels);
        for (int threads : {1, 2}) {
          const Tensor y = run_scale_shift(attrs, {xb, s, t}, threads);
          ASSERT_EQ(y.shape(), xb.shape());
          std::vector<float> padding;
          const std::vector<float> plain = from_nchwc(y, channels, &padding).to_float_vector();
          expect_matches_reference(plain, reference(x, s, t), magnitudes(x, s, t));
          const int64_t padded_channels = (block - channels % block) % block;
          EXPECT_EQ(padding.size(),
                    static_cast<size_t>(2 * padded_channels * spatial[0] * spatial[1]));
          for (float v : padding) ASSERT_EQ(v, 0.0f);
        }
      }
    }
  }
}

TEST(ScaleShiftOp, NchwcOtherRanks) {
  // [N, ceil(C/c), c] (no spatial dims) and [N, ceil(C/c), D, H, W, c].
  for (const Shape& shape : {Shape{3, 6}, Shape{1, 5, 2, 3, 2}}) {
    SCOPED_TRACE(shape_str(shape));
    const Tensor x = test::random_tensor<float>(shape, 7);
    const Tensor s = test::random_tensor<float>({shape[1]}, 8);
    const Tensor t = test::random_tensor<float>({shape[1]}, 9);
    const Tensor y = run_scale_shift(AttrMap().i("block", 4).i("channels", shape[1]),
                                     {to_nchwc(x, 4, 5.0f), s, t});
    std::vector<float> padding;
    expect_matches_reference(from_nchwc(y, shape[1], &padding).to_float_vector(),
                             reference(x, s, t), magnitudes(x, s, t));
    for (float v : padding) ASSERT_EQ(v, 0.0f);
  }
}

TEST(ScaleShiftOp, InPlace) {
  for (int64_t block : {0, 8}) {
    SCOPED_TRACE(block);
    const Tensor x = test::random_tensor<float>({2, 11, 3, 3}, 21);
    const Tensor s = test::random_tensor<float>({11}, 22);
    const Tensor t = test::random_tensor<float>({11}, 23);
    Tensor io = block ? to_nchwc(x, block, 1.0f) : x.clone();
    auto op = make_scale_shift(block ? AttrMap().i("block", block).i("channels", 11) : AttrMap());
    std::vector<Tensor> out = {io};
    op->run(std::vector<Tensor>{io, s, t}, out, ops::ExecContext{2});
    std::vector<float> padding;
    const std::vector<float> got =
        block ? from_nchwc(io, 11, &padding).to_float_vector() : io.to_float_vector();
    expect_matches_reference(got, reference(x, s, t), magnitudes(x, s, t));
    for (float v : padding) ASSERT_EQ(v, 0.0f);
  }
}

TEST(ScaleShiftOp, Errors) {
  const Tensor s = Tensor::from_vector({1, 2, 3}, {3});
  expect_error<ModelError>([] { make_scale_shift(AttrMap().i("block", -1)); },
                           {"ScaleShift 'test_node'", "'block' must be >= 0"});
  expect_error<ModelError>([] { make_scale_shift(AttrMap().i("block", 8)); },
                           {"ScaleShift 'test_node'", "'channels'", "required with block 8"});
  expect_error<ShapeError>(
      [&] {
        run_scale_shift(AttrMap(), {Tensor::from_vector({1, 2, 3}, {3}), s, s});
      },
      {"ScaleShift 'test_node'", "rank >= 2"});
  expect_error<ShapeError>(
      [&] {
        run_scale_shift(AttrMap(), {Tensor::zeros(DType::kFloat32, {1, 4, 2}), s, s});
      },
      {"ScaleShift 'test_node'", "expected scale of shape [4]", "got [3]"});
  expect_error<ShapeError>(
      [&] {
        run_scale_shift(AttrMap().i("channels", 3),
                        {Tensor::zeros(DType::kFloat32, {1, 4, 2}), s, s});
      },
      {"expected input X with 3 channels", "[1, 4, 2]"});
  // NCHWc: 3 channels in blocks of 4 need [N, 1, ..., 4].
  expect_error<ShapeError>(
      [&] {
        run_scale_shift(AttrMap().i("block", 4).i("channels", 3),
                        {Tensor::zeros(DType::kFloat32, {1, 2, 5, 4}), s, s});
      },
      {"expected an NCHWc input [N, 1, ..., 4]", "[1, 2, 5, 4]"});
  expect_error<ShapeError>(
      [&] {
        run_scale_shift(AttrMap().i("block", 4).i("channels", 3),
                        {Tensor::zeros(DType::kFloat32, {1, 1, 5, 8}), s, s});
      },
      {"expected an NCHWc input"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_scale_shift(AttrMap(), {Tensor::from_vector_i64({1, 2, 3}, {1, 3}), s, s});
      },
      {"ScaleShift 'test_node'"});
}

}  // namespace
}  // namespace tern
