// tern.ConvChain (src/ops/conv_chain.cc) against its layers run one after the other as
// FusedConvs on whole tensors: UltraFace's first four layers (a first conv from NCHW at
// stride 2, a depthwise, a pointwise and a stride-2 depthwise conv; two with an affine map
// after the activation) and a chain with a
// dilated 3x3 conv, a 5x5 depthwise conv and a residual on its last layer; image heights
// and widths from 1 to 33, channels that are not multiples of the block, bands of 1 to 3
// rows and the default, 1 to 3 threads, a 1x1 conv at stride 2, an NCHW last output
// with and without a residual, run() and bind(), on every SIMD target (each case checks
// that the chain runs in bands there, or one layer after the other on the scalar
// target); one op run again and again with new inputs, weights and shapes, and on another
// SIMD target (run() reuses the call it prepared only for the same ones); the fallback (layers
// whose kernel cannot compute bands); attribute and input errors.
#include "ops/conv_chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "kernels/depthwise/depthwise_conv.h"
#include "kernels/reference/fused_conv.h"
#include "kernels/simd_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;

// One FusedConv layer: its attributes and its weights (packed) and bias.
struct Layer {
  std::string name;
  AttrMap attrs;
  Tensor w, b;
};

// A FusedConv layer from `c` to `m` channels: a k x k window with stride, dilation and
// symmetric padding `pad`, `group` groups, Relu, NCHWc output (NCHW when `nchw_out`),
// input NCHW when `nchw_in`; weights packed for block `block`.
Layer conv_layer(const std::string& name, int64_t c, int64_t m, int64_t k, int64_t stride,
                 int64_t dilation, int64_t pad, int64_t group, int64_t block, bool nchw_in,
                 bool nchw_out, uint32_t seed) {
  Layer l;
  l.name = name;
  const Tensor oihw = test::random_tensor<float>({m, c / group, k, k}, seed, -0.5, 0.5);
  l.w = kernels::ref::pack_conv_weights(oihw, static_cast<int>(block));
  l.b = test::random_tensor<float>({m}, seed + 1, -0.5, 0.5);
  l.attrs.ints("kernel_shape", {k, k})
      .ints("strides", {stride, stride})
      .ints("dilations", {dilation, dilation})
      .ints("pads", {pad, pad, pad, pad})
      .i("group", group)
      .s("x_layout", nchw_in ? "NCHW" : "NCHWc")
      .s("y_layout", nchw_out ? "NCHW" : "NCHWc")
      .s("weight_layout", "packed")
      .i("block", block)
      .i("out_channels", m)
      .s("activation", "Relu");
  return l;
}

std::unique_ptr<ops::Op> make_internal(const std::string& op_type, const AttrMap& attrs,
                                       const std::string& name) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(ops::kInternalDomain, op_type);
  EXPECT_NE(schema, nullptr);
  ops::Attrs reader(attrs.attrs, op_type + " '" + name + "'");
  return schema->create(reader, ops::OpContext{name, op_type, 13, 1});
}

// Runs `op` on `inputs` into a NaN-filled output (every element must be written), through
// run(), or through bind() as a plan does when `bound`.
Tensor run(const ops::Op& op, const std::vector<Tensor>& inputs, int threads, bool bound = false) {
  const std::vector<ops::TensorType> types = op.infer(ops::infer_inputs_from(inputs));
  std::vector<Tensor> out = {Tensor::empty(types[0].dtype, types[0].shape)};
  float* y = out[0].data<float>();
  for (int64_t i = 0; i < out[0].numel(); ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
  const ops::ExecContext ctx{threads};
  if (bound) {
    const ops::BoundRun call = op.bind(inputs, out, ctx);
    EXPECT_TRUE(call) << "ConvChain binds contiguous inputs";
    if (call) call(ctx);
  } else {
    op.run(inputs, out, ctx);
  }
  return out[0];
}

// Whether the chain runs in bands here: on every SIMD target whose vectors are the
// layers' block (the band kernels cover them), not on the scalar one.
bool band_kernels_cover(int64_t block) {
  kernels::ref::FusedConvParams p;
  p.conv.in_channels = p.conv.out_channels = p.conv.groups = block;
  p.conv.in = p.conv.out = {1, 4, 4};
  p.conv.kernel = {1, 3, 3};
  p.conv.stride = p.conv.dilation = {1, 1, 1};
  p.conv.pad_begin = {0, 1, 1};
  p.x_block = p.y_block = p.w_block = block;
  return kernels::depthwise_conv_supported(p);
}

// The ConvChain attributes of `layers`: each layer's under "<i>.", names, band_rows
// (0: the attribute is left out).
AttrMap chain_attrs(const std::vector<Layer>& layers, int64_t band_rows) {
  AttrMap a;
  a.i("layers", static_cast<int64_t>(layers.size()));
  std::vector<std::string> names;
  for (size_t i = 0; i < layers.size(); ++i) {
    for (const auto& [key, value] : layers[i].attrs.attrs) {
      a.attrs[std::to_string(i) + "." + key] = value;
    }
    names.push_back(layers[i].name);
  }
  auto& n = a.attrs["names"];
  n.type = ir::Attribute::Type::kStrings;
  n.strings = names;
  if (band_rows > 0) a.i("band_rows", band_rows);
  return a;
}

// The chain's inputs: x, each layer's W and B, then z when defined.
std::vector<Tensor> chain_inputs(const Tensor& x, const std::vector<Layer>& layers,
                                 const Tensor& z) {
  std::vector<Tensor> in = {x};
  for (const Layer& l : layers) {
    in.push_back(l.w);
    in.push_back(l.b);
  }
  if (z.defined()) in.push_back(z);
  return in;
}

// The layers run one after the other (z the last one's residual).
Tensor run_layers(const Tensor& x, const std::vector<Layer>& layers, const Tensor& z) {
  Tensor t = x;
  for (size_t i = 0; i < layers.size(); ++i) {
    const AttrMap& attrs = layers[i].attrs;
    std::vector<Tensor> in = {t, layers[i].w, layers[i].b};
    if (i + 1 == layers.size() && z.defined()) in.push_back(z);
    t = run(*make_internal("FusedConv", attrs, layers[i].name), in, 1);
  }
  return t;
}

// Expects the chain's output to match its layers run one after the other: the same
// kernels sum the same terms, but a band's tiles may split a row differently (a
// narrower tail tile sums its channels in two chains), so values agree to float
// rounding, relative to max(1, |value|).
void expect_close(const Tensor& got, const Tensor& expected) {
  ASSERT_EQ(got.shape(), expected.shape());
  const float* g = got.data<float>();
  const float* e = expected.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double tol = 1e-5 * std::max(1.0, std::abs(static_cast<double>(e[i])));
    if (!(std::abs(static_cast<double>(g[i]) - e[i]) <= tol)) {
      ADD_FAILURE() << "element " << i << ": chain " << g[i] << ", layers " << e[i];
      ++bad;
    }
  }
}

// expect_close for the chain of `layers` against the layers one after the other.
// `banded`: whether the chain must run in bands (else one layer after the other).
void expect_chain_matches(const Tensor& x, const std::vector<Layer>& layers, const Tensor& z,
                          int64_t band_rows, int threads, bool banded, bool bound = false) {
  const Tensor expected = run_layers(x, layers, z);
  const auto op = make_internal("ConvChain", chain_attrs(layers, band_rows), "chain");
  const std::vector<Tensor> inputs = chain_inputs(x, layers, z);
  EXPECT_EQ(ops::conv_chain_runs_in_bands(*op, inputs), banded);
  const Tensor got = run(*op, inputs, threads, bound);
  expect_close(got, expected);
}

// UltraFace's first four layers on an h x w image: 3 -> c1 (3x3 stride 2), depthwise
// c1, pointwise c1 -> c2, depthwise c2 at stride 2 (NCHW output when `nchw_out`). The
// first and the pointwise layer end with an affine map after their Relu, as ppocr's
// layers do after their HardSwish.
std::vector<Layer> ultraface_layers(int64_t c1, int64_t c2, int64_t block, bool nchw_out) {
  std::vector<Layer> layers = {
      conv_layer("first", 3, c1, 3, 2, 1, 1, 1, block, true, false, 1),
      conv_layer("dw1", c1, c1, 3, 1, 1, 1, c1, block, false, false, 3),
      conv_layer("pw", c1, c2, 1, 1, 1, 0, 1, block, false, false, 5),
      conv_layer("dw2", c2, c2, 3, 2, 1, 1, c2, block, false, nchw_out, 7)};
  layers[0].attrs.f("affine_scale", -0.75f).f("affine_shift", 0.25f);
  layers[2].attrs.f("affine_scale", 1.5f).f("affine_shift", -0.125f);
  return layers;
}

TEST(ConvChain, FirstLayersMatchTheLayersOneAfterTheOther) {
  test::for_each_simd_target([&](const std::string&, int64_t c) {
    const bool banded = band_kernels_cover(c);
    const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1},  {2, 3},   {5, 7},
                                                            {13, 9}, {33, 17}, {24, 40}};
    uint32_t seed = 11;
    for (const auto& [h, w] : sizes) {
      for (const auto& [c1, c2] :
           std::vector<std::pair<int64_t, int64_t>>{{c, 2 * c}, {c + 3, c - 1}}) {
        for (bool nchw_out : {false, true}) {
          const Tensor x = test::random_tensor<float>({1, 3, h, w}, seed++);
          const std::vector<Layer> layers = ultraface_layers(c1, c2, c, nchw_out);
          for (int64_t band : {0, 1, 2, 3}) {
            for (int threads : {1, 2, 3}) {
              SCOPED_TRACE(testing::Message()
                           << h << "x" << w << " c1 " << c1 << " c2 " << c2 << " nchw_out "
                           << nchw_out << " band " << band << " threads " << threads);
              expect_chain_matches(x, layers, Tensor(), band, threads, banded, band == 2);
            }
          }
        }
      }
    }
  });
}

TEST(ConvChain, DilatedAnd5x5LayersWithAResidualMatch) {
  test::for_each_simd_target([&](const std::string&, int64_t c) {
    const bool banded = band_kernels_cover(c);
    uint32_t seed = 40;
    for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{1, 4}, {6, 5}, {19, 23}}) {
      const int64_t cin = c + 1, m = c + 2;
      const std::vector<Layer> layers = {
          conv_layer("dilated", cin, m, 3, 1, 2, 2, 1, c, false, false, seed),
          conv_layer("dw5", m, m, 5, 1, 1, 2, m, c, false, false, seed + 2),
          conv_layer("project", m, cin, 1, 1, 1, 0, 1, c, false, false, seed + 4)};
      const int64_t blocks = (cin + c - 1) / c;
      const Tensor x = test::random_tensor<float>({2, blocks, h, w, c}, seed + 6);
      const Tensor z = test::random_tensor<float>({2, blocks, h, w, c}, seed + 7);
      for (int64_t band : {0, 1, 3}) {
        for (int threads : {1, 2}) {
          SCOPED_TRACE(testing::Message()
                       << h << "x" << w << " band " << band << " threads " << threads);
          expect_chain_matches(x, layers, z, band, threads, banded);
        }
      }
      seed += 10;
    }
  });
}

// Weights packed for twice the target's block: no SIMD kernel computes them, and the
// chain runs its layers one after the other through FusedConv's reference kernel. So
// does a chain with a 1x1 conv padded by 1, whose first and last output rows read no
// input row.
TEST(ConvChain, LayersTheBandKernelsCannotComputeRunOneAfterTheOther) {
  const int64_t c = simd_float_lanes();
  const Tensor x = test::random_tensor<float>({1, 3, 9, 11}, 3);
  expect_chain_matches(x, ultraface_layers(5, 7, 2 * c, false), Tensor(), 2, 2, false);
  const std::vector<Layer> padded = {conv_layer("first", 3, c, 3, 2, 1, 1, 1, c, true, false, 5),
                                     conv_layer("padded", c, c, 1, 1, 1, 1, 1, c, false, false, 7)};
  expect_chain_matches(x, padded, Tensor(), 1, 1, false);
}

// A 1x1 conv at stride 2 (its window skips input rows: each band's rows start afresh
// in the buffer), a stride-2 depthwise conv in the middle, and an NCHW last output with
// a residual.
TEST(ConvChain, StridedOneByOneAndAnNchwResidualOutputMatch) {
  test::for_each_simd_target([&](const std::string&, int64_t c) {
    const bool banded = band_kernels_cover(c);
    uint32_t seed = 70;
    for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {17, 9}, {30, 21}}) {
      const std::vector<Layer> layers = {
          conv_layer("conv", c + 1, c, 3, 1, 1, 1, 1, c, false, false, seed),
          conv_layer("down", c, c + 2, 1, 2, 1, 0, 1, c, false, false, seed + 2),
          conv_layer("dw", c + 2, c + 2, 3, 2, 1, 1, c + 2, c, false, false, seed + 4),
          conv_layer("out", c + 2, 5, 1, 1, 1, 0, 1, c, false, true, seed + 6)};
      const Tensor x = test::random_tensor<float>({1, 2, h, w, c}, seed + 8);
      const Shape y = run_layers(x, layers, Tensor()).shape();
      const Tensor z = test::random_tensor<float>(y, seed + 9);
      for (int64_t band : {0, 1, 2}) {
        for (int threads : {1, 2}) {
          SCOPED_TRACE(testing::Message()
                       << h << "x" << w << " band " << band << " threads " << threads);
          expect_chain_matches(x, layers, z, band, threads, banded, threads == 2);
        }
      }
      seed += 10;
    }
  });
}

// One op run() again and again, as a plan runs the unbound step that reads its graph
// input: new data at new addresses for X, Z and the weights, other shapes, then the first
// ones again. Each run must match its layers (run() reuses the call it prepared for the
// same shapes and weights with the new X, Z and Y).
TEST(ConvChain, RunsAgainWithNewInputsAndShapes) {
  test::for_each_simd_target([&](const std::string&, int64_t c) {
    const bool banded = band_kernels_cover(c);
    const std::vector<Layer> first = ultraface_layers(c, 2 * c, c, false);
    std::vector<Layer> other = ultraface_layers(c, 2 * c, c, false);
    for (size_t i = 0; i < other.size(); ++i) {
      other[i].w = test::random_tensor<float>(other[i].w.shape(), 90 + 2 * i, -0.5, 0.5);
      other[i].b = test::random_tensor<float>(other[i].b.shape(), 91 + 2 * i, -0.5, 0.5);
    }
    const auto op = make_internal("ConvChain", chain_attrs(first, 0), "chain");
    struct Case {
      Shape x;
      const std::vector<Layer>* layers;
      bool residual;
    };
    const std::vector<Case> cases = {
        {{1, 3, 24, 40}, &first, false}, {{1, 3, 24, 40}, &first, false},
        {{1, 3, 24, 40}, &first, true},  {{1, 3, 24, 40}, &first, true},
        {{1, 3, 17, 9}, &first, false},  {{1, 3, 24, 40}, &other, false},
        {{2, 3, 24, 40}, &first, false}, {{1, 3, 24, 40}, &first, false}};
    uint32_t seed = 100;
    std::vector<Tensor> kept;  // every run's X, Z and Y stay alive: each run's at new addresses
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case& cs = cases[k];
      SCOPED_TRACE(testing::Message() << "run " << k);
      const Tensor x = test::random_tensor<float>(cs.x, seed++);
      Tensor z;
      if (cs.residual)
        z = test::random_tensor<float>(run_layers(x, *cs.layers, Tensor()).shape(), seed++);
      kept.push_back(x);
      kept.push_back(z);
      const std::vector<Tensor> inputs = chain_inputs(x, *cs.layers, z);
      EXPECT_EQ(ops::conv_chain_runs_in_bands(*op, inputs), banded);
      kept.push_back(run(*op, inputs, 1 + static_cast<int>(k % 2)));
      expect_close(kept.back(), run_layers(x, *cs.layers, z));
    }
  });
}

// One op run on the best SIMD target, then on another one forced (its blocks differ, and
// the scalar target computes the layers one after the other), then on the best again:
// the call prepared for one target must not run on another.
TEST(ConvChain, RunsAgainOnAnotherSimdTarget) {
  const std::vector<std::string> targets = dispatchable_simd_targets();
  if (targets.size() < 2) GTEST_SKIP() << "one SIMD target only";
  const std::vector<Layer> layers = ultraface_layers(16, 32, simd_float_lanes(), false);
  const auto op = make_internal("ConvChain", chain_attrs(layers, 0), "chain");
  const Tensor x = test::random_tensor<float>({1, 3, 24, 40}, 120);
  const std::vector<Tensor> inputs = chain_inputs(x, layers, Tensor());
  const Tensor best = run(*op, inputs, 1);
  expect_close(best, run_layers(x, layers, Tensor()));
  force_simd_target(targets.back());
  const Tensor forced = run(*op, inputs, 1);
  const Tensor forced_layers = run_layers(x, layers, Tensor());
  force_simd_target("");
  expect_close(forced, forced_layers);
  expect_close(run(*op, inputs, 1), best);
}

TEST(ConvChain, Errors) {
  const int64_t c = simd_float_lanes();
  const std::vector<Layer> layers = ultraface_layers(c, c, c, false);
  AttrMap one = chain_attrs({layers[0]}, 0);
  test::expect_error<ModelError>([&] { make_internal("ConvChain", one, "chain"); },
                                 {"ConvChain 'chain'", "'layers' must be in 2..16, but got 1"});
  AttrMap names = chain_attrs(layers, 0);
  names.attrs["names"].strings.pop_back();
  test::expect_error<ModelError>([&] { make_internal("ConvChain", names, "chain"); },
                                 {"'names' must name the 4 layers, but it has 3"});
  AttrMap band = chain_attrs(layers, 0);
  band.i("band_rows", 0);
  test::expect_error<ModelError>([&] { make_internal("ConvChain", band, "chain"); },
                                 {"'band_rows' must be >= 1, but got 0"});
  AttrMap bad_layer = chain_attrs(layers, 0);
  bad_layer.i("2.group", 0);
  test::expect_error<ModelError>([&] { make_internal("ConvChain", bad_layer, "chain"); },
                                 {"FusedConv 'pw'", "'group' must be >= 1"});
  const auto op = make_internal("ConvChain", chain_attrs(layers, 0), "chain");
  const Tensor x = test::random_tensor<float>({1, 3, 8, 8}, 1);
  std::vector<Tensor> in = chain_inputs(x, layers, Tensor());
  in.pop_back();
  test::expect_error<ShapeError>([&] { op->infer(ops::infer_inputs_from(in)); },
                                 {"ConvChain 'chain'", "expected 9 or 10 inputs", "got 8"});
  // A layer's shape error names that layer: dw1 expects c channels, the first layer
  // gets 4 input channels instead of 3.
  const Tensor x4 = test::random_tensor<float>({1, 4, 8, 8}, 1);
  test::expect_error<ShapeError>(
      [&] { op->infer(ops::infer_inputs_from(chain_inputs(x4, layers, Tensor()))); },
      {"FusedConv 'first'"});
}

}  // namespace
}  // namespace tern
