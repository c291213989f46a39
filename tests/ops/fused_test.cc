// The fused internal ops (src/ops/fused_conv.cc, fused_matmul.cc) against plain loops
// written here: every activation, residual before/after, NCHW/NCHWc in and out with
// c = 4, 8, 16 and channel counts that are not multiples of c, OIHW and packed weights,
// groups (incl. depthwise), strides, pads and dilations; the epilogue attributes; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "kernels/ref_test_util.h"
#include "kernels/reference/fused_conv.h"
#include "ops/epilogue.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using test::AttrMap;
using test::expect_error;
using test::from_nchwc;
using test::to_nchwc;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Creates internal op `op_type` (domain "tern") and runs it like test::run_op.
std::vector<Tensor> run_fused(const std::string& op_type, const AttrMap& attrs,
                              const std::vector<Tensor>& inputs, int threads = 1) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(ops::kInternalDomain, op_type);
  if (!schema) throw UnsupportedOpError("op " + op_type + " is not registered");
  ops::Attrs reader(attrs.attrs, op_type + " 'test_node'");
  auto op = schema->create(reader, ops::OpContext{"test_node", op_type, 13, 1});
  auto infer_in = ops::infer_inputs_from(inputs);
  std::vector<ops::TensorType> types = op->infer(infer_in);
  std::vector<Tensor> outputs = {Tensor::empty(types[0].dtype, types[0].shape)};
  // Poison the output: the op must write every element, padded lanes included.
  float* y = outputs[0].data<float>();
  for (int64_t i = 0; i < outputs[0].numel(); ++i) y[i] = kNan;
  op->run(inputs, outputs, ops::ExecContext{threads});
  return outputs;
}

// The kernel FusedConv `attrs` chooses for `inputs` (Op::algorithm, what select-algorithm
// records).
std::string conv_algorithm(const AttrMap& attrs, const std::vector<Tensor>& inputs) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(ops::kInternalDomain, "FusedConv");
  ops::Attrs reader(attrs.attrs, "FusedConv 'test_node'");
  auto op = schema->create(reader, ops::OpContext{"test_node", "FusedConv", 13, 1});
  std::vector<ops::TensorType> types;
  for (const Tensor& t : inputs) {
    types.push_back(t.defined() ? ops::TensorType{t.dtype(), t.shape()} : ops::TensorType{});
  }
  return op->algorithm(types);
}

// ---- plain references ----------------------------------------------------------------

struct Act {
  std::string name;  // "" = none
  float alpha = 0, beta = 0;
};

double activate(const Act& a, double v) {
  if (a.name == "Relu") return v > 0 ? v : 0;
  if (a.name == "Clip") return std::min<double>(std::max<double>(v, a.alpha), a.beta);
  if (a.name == "LeakyRelu") return v >= 0 ? v : a.alpha * v;
  if (a.name == "HardSigmoid") return std::max(0.0, std::min(1.0, a.alpha * v + a.beta));
  if (a.name == "HardSwish") return v * std::max(0.0, std::min(1.0, v / 6 + 0.5));
  if (a.name == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (a.name == "SiLU") return v / (1 + std::exp(-v));
  return v;
}

const std::vector<Act>& all_activations() {
  static const std::vector<Act> acts = {
      {"", 0, 0},
      {"Relu", 0, 0},
      {"Clip", 0.0f, 0.5f},
      {"LeakyRelu", 0.1f, 0},
      {"HardSigmoid", 0.3f, 0.4f},
      {"HardSwish", 0, 0},
      {"Sigmoid", 0, 0},
      {"SiLU", 0, 0},
  };
  return acts;
}

AttrMap& add_activation(AttrMap& m, const Act& a) {
  if (a.name.empty()) return m;
  m.s("activation", a.name);
  if (a.name == "Clip" || a.name == "LeakyRelu" || a.name == "HardSigmoid")
    m.f("activation_alpha", a.alpha);
  if (a.name == "Clip" || a.name == "HardSigmoid") m.f("activation_beta", a.beta);
  return m;
}

enum class Residual { kNone, kBefore, kAfter };

struct ConvCase {
  int64_t n, c, h, w, m, kh, kw, group;
  int64_t stride, dilation;
  std::vector<int64_t> pads;  // [top, left, bottom, right]
};

// Logical NCHW reference: y = epilogue(conv(x, w) + b, z), plus the per-element error
// bound (float accumulation of |x * w| terms, see sum_tolerance).
struct Expected {
  std::vector<double> y, tol;
  Shape shape;
};

Expected reference_conv(const ConvCase& k, const Tensor& x, const Tensor& w, const Tensor& b,
                        const Tensor& z, Residual r, const Act& act) {
  const int64_t oh = (k.h + k.pads[0] + k.pads[2] - k.dilation * (k.kh - 1) - 1) / k.stride + 1;
  const int64_t ow = (k.w + k.pads[1] + k.pads[3] - k.dilation * (k.kw - 1) - 1) / k.stride + 1;
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  Expected e;
  e.shape = {k.n, k.m, oh, ow};
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b.defined() ? b.data<float>()[m] : 0.0, abs_sum = std::fabs(acc);
          const int64_t g = m / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t u = 0; u < k.kh; ++u)
              for (int64_t v = 0; v < k.kw; ++v) {
                const int64_t ih = i * k.stride + u * k.dilation - k.pads[0];
                const int64_t iw = j * k.stride + v * k.dilation - k.pads[1];
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                const double p = double(xd[((n * k.c + g * cg + ic) * k.h + ih) * k.w + iw]) *
                                 wd[((m * cg + ic) * k.kh + u) * k.kw + v];
                acc += p;
                abs_sum += std::fabs(p);
              }
          const size_t at = static_cast<size_t>(((n * k.m + m) * oh + i) * ow + j);
          const double zv = r == Residual::kNone ? 0.0 : z.data<float>()[at];
          if (r == Residual::kBefore) acc += zv;
          double y = activate(act, acc);
          if (r == Residual::kAfter) y += zv;
          e.y.push_back(y);
          e.tol.push_back(test::sum_tolerance(abs_sum + std::fabs(zv), cg * k.kh * k.kw + 2) +
                          1e-6);
        }
  return e;
}

// NCHWc -> NCHW with `channels` channels; expects the padded lanes to be 0 (the kernels'
// contract: a consumer may read them).
Tensor unblock_checked(const Tensor& t, int64_t channels) {
  std::vector<float> padding;  // image, channel, position order (from_nchwc)
  Tensor r = from_nchwc(t, channels, &padding);
  const int64_t pad_channels = t.dim(1) * t.dim(-1) - channels;
  const int64_t plane = t.numel() / (t.dim(0) * t.dim(1) * t.dim(-1));
  int bad = 0;
  for (size_t i = 0; i < padding.size(); ++i) {
    if (padding[i] != 0.0f && bad++ < 3) {
      const int64_t ch = channels + static_cast<int64_t>(i) / plane % pad_channels;
      ADD_FAILURE() << "padded lane of channel " << ch << " holds " << padding[i];
    }
  }
  return r;
}

// NCHW [N, C, H, W] <-> NHWC [N, H, W, C] (Transpose(0, 2, 3, 1) and its inverse).
Tensor nchw_nhwc(const Tensor& t, bool to_nhwc) {
  const Shape& s = t.shape();
  const int64_t n = s[0], c = to_nhwc ? s[1] : s[3], plane = to_nhwc ? s[2] * s[3] : s[1] * s[2];
  Tensor r = Tensor::empty(DType::kFloat32, to_nhwc ? Shape{n, s[2], s[3], c}
                                                    : Shape{n, c, s[1], s[2]});
  const float* src = t.data<float>();
  float* dst = r.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < plane; ++i) {
        const int64_t nchw = (b * c + ch) * plane + i, nhwc = (b * plane + i) * c + ch;
        dst[to_nhwc ? nhwc : nchw] = src[to_nhwc ? nchw : nhwc];
      }
  return r;
}

// ---- FusedConv -------------------------------------------------------------------------

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      // n c  h  w  m  kh kw g  s  d  pads
      {2, 3, 7, 6, 5, 3, 3, 1, 1, 1, {1, 1, 1, 1}},     // first layer: 3 channels, odd sizes
      {1, 10, 9, 8, 10, 3, 3, 10, 2, 1, {1, 1, 1, 1}},  // depthwise, stride 2
      {1, 6, 8, 9, 9, 3, 2, 3, 2, 2, {2, 0, 1, 1}},     // groups, dilation, asymmetric pads
      {2, 17, 5, 5, 19, 1, 1, 1, 1, 1, {0, 0, 0, 0}},   // pointwise, C and M not multiples of c
      {1, 16, 6, 7, 32, 3, 3, 2, 1, 1, {0, 1, 2, 0}},   // channel counts multiples of c
      {1, 5, 4, 4, 7, 5, 5, 1, 1, 1, {2, 2, 2, 2}},     // kernel wider than the image interior
  };
  return cases;
}

TEST(FusedConvOp, MatchesPlainLoopsForEveryLayoutBlockActivationAndResidual) {
  int config = 0;
  for (const ConvCase& k : conv_cases()) {
    const Tensor x = test::random_tensor<float>({k.n, k.c, k.h, k.w}, 11 + config, -1, 1);
    const Tensor w =
        test::random_tensor<float>({k.m, k.c / k.group, k.kh, k.kw}, 12 + config, -1, 1);
    const Tensor b = test::random_tensor<float>({k.m}, 13 + config, -1, 1);
    for (int64_t c : {4, 8, 16}) {
      // 0..7: x, y and weights each plain or blocked; 8..11: y NHWC (a fused Transpose);
      // 12..15: OHWI weights, y NHWC or NCHWc.
      for (int layouts = 0; layouts < 16; ++layouts) {
        const bool ohwi = layouts >= 12;
        const bool nhwc = layouts >= 8 && !(ohwi && (layouts & 2));
        const bool x_blocked = layouts & 1, y_blocked = !nhwc && (layouts & 2);
        const bool packed = !ohwi && (nhwc ? (layouts & 2) : (layouts & 4));
        ++config;
        const Act& act = all_activations()[config % all_activations().size()];
        const Residual r = static_cast<Residual>(config % 3);
        const bool with_bias = config % 5 != 0;
        SCOPED_TRACE(::testing::Message()
                     << "case c=" << k.c << " m=" << k.m << " g=" << k.group << " block " << c
                     << " x " << x_blocked << " y "
                     << (nhwc        ? "NHWC"
                         : y_blocked ? "NCHWc"
                                     : "NCHW")
                     << " packed " << packed << " OHWI " << ohwi << " act '" << act.name
                     << "' residual " << int(r) << " bias " << with_bias);
        const Tensor bias = with_bias ? b : Tensor();
        const Expected e = reference_conv(k, x, w, bias, Tensor(), Residual::kNone, Act{});
        const Tensor z_plain = test::random_tensor<float>(e.shape, 14 + config, -1, 1);
        const Expected want = reference_conv(k, x, w, bias, z_plain, r, act);

        AttrMap attrs;
        attrs.ints("strides", {k.stride, k.stride})
            .ints("dilations", {k.dilation, k.dilation})
            .ints("pads", k.pads)
            .i("group", k.group)
            .s("x_layout", x_blocked ? "NCHWc" : "NCHW")
            .s("y_layout", nhwc        ? "NHWC"
                           : y_blocked ? "NCHWc"
                                       : "NCHW")
            .s("weight_layout", ohwi     ? "OHWI"
                                : packed ? "packed"
                                         : "OIHW")
            .i("block", c)
            .i("out_channels", k.m);
        add_activation(attrs, act);
        if (r == Residual::kBefore) attrs.i("residual_before_activation", 1);
        std::vector<Tensor> in = {x_blocked ? to_nchwc(x, c, kNan) : x,
                                  ohwi     ? kernels::ref::ohwi_conv_weights(w)
                                  : packed ? kernels::ref::pack_conv_weights(w, c)
                                           : w,
                                  bias};
        if (r != Residual::kNone) {
          in.push_back(y_blocked ? to_nchwc(z_plain, c, kNan)
                       : nhwc    ? nchw_nhwc(z_plain, true)
                                 : z_plain);
        }
        const Tensor y = run_fused("FusedConv", attrs, in, 1 + config % 2)[0];
        const Tensor plain = y_blocked ? unblock_checked(y, k.m) : nhwc ? nchw_nhwc(y, false) : y;
        ASSERT_EQ(plain.shape(), e.shape);
        test::expect_close(plain.to_float_vector(), want.y, want.tol, "FusedConv");
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// Threads split the fast kernels' work items (output blocks x rows); each output is
// summed by one thread in the same order, so any thread count gives the same bits, for the
// fast kernel and for the reference (chosen by the "algorithm" attribute); an unknown
// algorithm name is a ModelError.
TEST(FusedConvOp, ThreadsAndAlgorithmAttribute) {
  const int64_t c = simd_float_lanes();
  const Tensor x = test::random_tensor<float>({2, 64, 13, 11}, 41, -1, 1);
  const Tensor w = test::random_tensor<float>({40, 64, 3, 3}, 42, -1, 1);
  const Tensor b = test::random_tensor<float>({40}, 43, -1, 1);
  for (const char* algo : {"direct", "reference"}) {
    SCOPED_TRACE(algo);
    AttrMap attrs;
    attrs.ints("pads", {1, 1, 1, 1})
        .s("x_layout", "NCHWc")
        .s("y_layout", "NCHWc")
        .s("weight_layout", "packed")
        .i("block", c)
        .i("out_channels", 40)
        .s("activation", "Relu")
        .s("algorithm", algo);
    const std::vector<Tensor> in = {to_nchwc(x, c, kNan), kernels::ref::pack_conv_weights(w, c), b};
    const std::vector<float> one = run_fused("FusedConv", attrs, in, 1)[0].to_float_vector();
    for (int threads : {2, 3}) {
      EXPECT_EQ(run_fused("FusedConv", attrs, in, threads)[0].to_float_vector(), one) << threads;
    }
  }
  AttrMap bad;
  bad.s("algorithm", "winograd-9000").i("block", c);
  EXPECT_THROW(run_fused("FusedConv", bad, {to_nchwc(x, c, 0), w}), ModelError);
}

// A 1x1 conv from NCHW to NCHW on OIHW weights runs the GEMM kernel (pixels along the
// vectors): 1-D, 2-D and 3-D images whose pixel counts leave tails past a vector and a
// panel of columns, a bias, the residual and activations, against the reference
// algorithm; every thread count gives the same bits (each output is one thread's sum).
TEST(FusedConvOp, PlainPointwiseRunsAsGemm) {
  const std::vector<Shape> shapes = {{2, 24, 300}, {1, 24, 37, 19}, {1, 5, 3, 4, 9}};
  int seed = 60;
  for (const Shape& xs : shapes) {
    const Tensor x = test::random_tensor<float>(xs, ++seed, -1, 1);
    Shape ws = {4, xs[1]};
    ws.resize(xs.size(), 1);
    const Tensor w = test::random_tensor<float>(ws, ++seed, -1, 1),
                 b = test::random_tensor<float>({4}, ++seed, -1, 1);
    Shape ys = xs;
    ys[1] = 4;
    const Tensor z = test::random_tensor<float>(ys, ++seed, -1, 1);
    for (const char* act : {"Sigmoid", "Relu", "HardSwish"}) {
      SCOPED_TRACE(::testing::Message() << "x " << shape_str(xs) << " " << act);
      AttrMap attrs;
      attrs.s("activation", act).i("residual_before_activation", 1);
      AttrMap ref = attrs;
      ref.s("algorithm", "reference");
      const std::vector<Tensor> in = {x, w, b, z};
      ASSERT_EQ(conv_algorithm(attrs, in), "gemm");
      ASSERT_EQ(conv_algorithm(ref, in), "reference");
      const std::vector<float> want = run_fused("FusedConv", ref, in)[0].to_float_vector();
      const std::vector<float> one = run_fused("FusedConv", attrs, in, 1)[0].to_float_vector();
      // 24 products of values in [-1, 1): a few ulp of 24, far below 1e-4.
      ASSERT_EQ(one.size(), want.size());
      for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], want[i], 1e-4f) << i;
      for (int threads : {2, 3}) {
        EXPECT_EQ(run_fused("FusedConv", attrs, in, threads)[0].to_float_vector(), one) << threads;
      }
    }
  }
}

// A 2-D stride-1 conv from NCHW to NCHW runs as an implicit GEMM (kernels/gemm
// f32_conv_gemm): against the reference kernel, and 2 and 3 threads (bands of rows split
// between threads, rows of 19 and 70 pixels ending in a partial vector) give the same
// bits as 1. The last shape has 60 output channels (two chunks of output channels on
// AVX-512) and 3 x 3 taps with dilation 2 and asymmetric padding.
TEST(FusedConvOp, PlainStrideOneConvRunsAsImplicitGemm) {
  struct Case {
    Shape x;
    int64_t m, k;
    std::vector<int64_t> pads;
    int64_t dilation;
  };
  const Case cases[] = {{{1, 24, 37, 19}, 6, 3, {1, 1, 1, 1}, 1},
                        {{2, 9, 11, 70}, 60, 3, {2, 1, 1, 2}, 2}};
  int seed = 80;
  for (const Case& c : cases) {
    const Tensor x = test::random_tensor<float>(c.x, ++seed, -1, 1);
    const Tensor w = test::random_tensor<float>({c.m, c.x[1], c.k, c.k}, ++seed, -1, 1),
                 b = test::random_tensor<float>({c.m}, ++seed, -1, 1);
    AttrMap attrs;
    attrs.ints("pads", c.pads).ints("dilations", {c.dilation, c.dilation});
    const Tensor conv = test::run_op("Conv", attrs, {x, w, b})[0];
    const Tensor z = test::random_tensor<float>(conv.shape(), ++seed, -1, 1);
    attrs.s("activation", "Relu");
    AttrMap ref = attrs;
    ref.s("algorithm", "reference");
    const std::vector<Tensor> in = {x, w, b, z};
    ASSERT_EQ(conv_algorithm(attrs, in), "gemm");
    const std::vector<float> want = run_fused("FusedConv", ref, in)[0].to_float_vector();
    const std::vector<float> one = run_fused("FusedConv", attrs, in, 1)[0].to_float_vector();
    // Sums of C * 9 + 2 terms below 1 in magnitude: their roundings (c * 9 + 2)^2 ulp.
    const float terms = static_cast<float>(c.x[1] * 9 + 2);
    test::expect_near_all(one, want, terms * terms * 0x1p-24f);
    for (int threads : {2, 3}) {
      EXPECT_EQ(run_fused("FusedConv", attrs, in, threads)[0].to_float_vector(), one) << threads;
    }
  }
}

// A conv from NCHWc on OIHW 1x1 weights or OHWI weights (what pack-weights makes for a
// detection head to few channels) runs the dot kernel, input channels along the vectors,
// into NHWC, NCHWc or NCHW: 1x1, and 3x3 with padding 1 at strides 1 and 2. The reference's
// results within the roundings of its sums, the same bits at 1, 2 and 3 threads. The
// scalar baseline has no dot kernel and runs the reference.
TEST(FusedConvOp, NchwcConvOnOihwOrOhwiWeightsRunsTheDotKernel) {
  const int64_t c = simd_float_lanes();
  const bool fast = cpu_info().forced_target != "SCALAR" && c >= 4;
  const Tensor x = test::random_tensor<float>({2, 70, 5, 7}, 61, -1, 1);
  const Tensor b = test::random_tensor<float>({6}, 63, -1, 1);
  for (const int64_t k : {1, 3}) {
    const Tensor w = test::random_tensor<float>({6, 70, k, k}, 62 + k, -1, 1);
    for (const int64_t stride : {1, 2}) {
      if (k == 1 && stride == 2) continue;
      for (const std::string y_layout : {"NHWC", "NCHWc", "NCHW"}) {
        SCOPED_TRACE(::testing::Message()
                     << k << "x" << k << " stride " << stride << " " << y_layout);
        AttrMap attrs;
        attrs.s("x_layout", "NCHWc").s("y_layout", y_layout).i("block", c).s("activation", "Relu");
        attrs.ints("strides", {stride, stride}).ints("pads", std::vector<int64_t>(4, k / 2));
        if (k > 1) attrs.s("weight_layout", "OHWI");
        AttrMap ref = attrs;
        ref.s("algorithm", "reference");
        const std::vector<Tensor> in = {to_nchwc(x, c, kNan),
                                        k > 1 ? kernels::ref::ohwi_conv_weights(w) : w, b};
        if (fast) {
          EXPECT_EQ(conv_algorithm(attrs, in), "dot");
        }
        const std::vector<float> want = run_fused("FusedConv", ref, in)[0].to_float_vector();
        const std::vector<float> one = run_fused("FusedConv", attrs, in, 1)[0].to_float_vector();
        // Sums of 70 k^2 + 2 terms below 1 in magnitude: their roundings (70 k^2 + 2)^2 ulp.
        const float terms = static_cast<float>(70 * k * k + 2);
        test::expect_near_all(one, want, terms * terms * 0x1p-24f);
        // The plain loops (Conv on NCHW, OIHW) agree too: OHWI holds the same weights.
        AttrMap conv_attrs;
        conv_attrs.ints("strides", {stride, stride}).ints("pads", std::vector<int64_t>(4, k / 2));
        const Tensor conv = test::run_op("Conv", conv_attrs, {x, w, b})[0];
        const Tensor relu = test::run_op("Relu", AttrMap(), {conv})[0];
        const Tensor y = run_fused("FusedConv", attrs, in, 1)[0];
        const Tensor got = y_layout == "NHWC"    ? nchw_nhwc(y, false)
                           : y_layout == "NCHWc" ? unblock_checked(y, 6)
                                                 : y;
        test::expect_near_all(got.to_float_vector(), relu.to_float_vector(),
                              terms * terms * 0x1p-24f);
        for (int threads : {2, 3}) {
          EXPECT_EQ(run_fused("FusedConv", attrs, in, threads)[0].to_float_vector(), one)
              << threads;
        }
      }
    }
  }
}

TEST(FusedConvOp, OneAndThreeDimensionalPlainConvolutions) {
  // 1-D: x [1, 2, 5], w [3, 2, 3], pads 1, Relu; against Conv + Relu. FusedConv runs it
  // as an implicit GEMM (another summation order than Conv's): within the roundings of
  // 6 products and the bias, each below 1 in magnitude.
  const Tensor x = test::random_tensor<float>({1, 2, 5}, 1, -1, 1),
               w = test::random_tensor<float>({3, 2, 3}, 2, -1, 1),
               b = test::random_tensor<float>({3}, 3, -1, 1);
  AttrMap attrs;
  attrs.ints("pads", {1, 1});
  const Tensor conv = test::run_op("Conv", attrs, {x, w, b})[0];
  const Tensor relu = test::run_op("Relu", AttrMap(), {conv})[0];
  attrs.s("activation", "Relu");
  EXPECT_EQ(conv_algorithm(attrs, {x, w, b}), "gemm");
  test::expect_near_all(run_fused("FusedConv", attrs, {x, w, b})[0].to_float_vector(),
                        relu.to_float_vector(), 7 * 7 * 0x1p-24f);
  // 3-D with a residual after the activation: conv + z.
  const Tensor x3 = test::random_tensor<float>({1, 2, 3, 4, 3}, 4, -1, 1),
               w3 = test::random_tensor<float>({2, 2, 2, 2, 2}, 5, -1, 1);
  const Tensor c3 = test::run_op("Conv", AttrMap(), {x3, w3})[0];
  const Tensor z3 = test::random_tensor<float>(c3.shape(), 6, -1, 1);
  const Tensor sum = test::run_op("Add", AttrMap(), {c3, z3})[0];
  EXPECT_EQ(run_fused("FusedConv", AttrMap(), {x3, w3, Tensor(), z3})[0].to_float_vector(),
            sum.to_float_vector());
}

TEST(FusedConvOp, PlainLayoutsGiveTheConvOpResultsBitForBit) {
  // A grouped or strided NCHW conv (not the GEMM's) runs f32_conv_nchw + the epilogue:
  // no reordering of the sums.
  const Tensor x = test::random_tensor<float>({2, 8, 9, 9}, 7, -1, 1),
               w = test::random_tensor<float>({12, 4, 3, 3}, 8, -1, 1),
               b = test::random_tensor<float>({12}, 9, -1, 1);
  AttrMap attrs;
  attrs.ints("pads", {1, 1, 1, 1}).ints("strides", {2, 2}).i("group", 2);
  const Tensor conv = test::run_op("Conv", attrs, {x, w, b})[0];
  EXPECT_EQ(run_fused("FusedConv", attrs, {x, w, b})[0].to_float_vector(), conv.to_float_vector());
}

TEST(FusedConvOp, PackConvWeightsLayout) {
  // M = 3, C = 1, 1x2 kernel, block 2: [[w0, w1], [w2, w3]] -> blocks of 2 channels.
  const Tensor w = test::f32({1, 2, 3, 4, 5, 6}, {3, 1, 1, 2});
  const Tensor p = kernels::ref::pack_conv_weights(w, 2);
  EXPECT_EQ(p.shape(), (Shape{2, 1, 1, 2, 2}));
  // [block 0: tap 0 (ch0, ch1), tap 1 (ch0, ch1)], [block 1: tap 0 (ch2, 0), tap 1 (ch2, 0)]
  EXPECT_EQ(p.to_float_vector(), (std::vector<float>{1, 3, 2, 4, 5, 0, 6, 0}));
  EXPECT_THROW(kernels::ref::pack_conv_weights(w, 0), InvalidArgument);
  EXPECT_THROW(kernels::ref::pack_conv_weights(test::f32({1, 2}, {2}), 4), InvalidArgument);
}

TEST(FusedConvOp, OhwiConvWeightsLayout) {
  // M = 2, C = 3, 1x2 kernel: OIHW w[m][c][0][t] -> OHWI [m][0][t][c].
  const Tensor w = test::f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 1, 2});
  const Tensor o = kernels::ref::ohwi_conv_weights(w);
  EXPECT_EQ(o.shape(), (Shape{2, 1, 2, 3}));
  EXPECT_EQ(o.to_float_vector(), (std::vector<float>{1, 3, 5, 2, 4, 6, 7, 9, 11, 8, 10, 12}));
  EXPECT_THROW(kernels::ref::ohwi_conv_weights(test::f32({1, 2}, {2})), InvalidArgument);
}

TEST(FusedConvOp, InferReturnsThePhysicalShapeAndMacsCountLogicalChannels) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(ops::kInternalDomain, "FusedConv");
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(ops::OpRegistry::global().find("FusedConv"), nullptr);  // not a model op
  AttrMap attrs;
  attrs.s("x_layout", "NCHWc").s("y_layout", "NCHWc").s("weight_layout", "packed").i("block", 8);
  attrs.i("out_channels", 10).ints("pads", {1, 1, 1, 1});
  ops::Attrs reader(attrs.attrs, "FusedConv 'n'");
  auto op = schema->create(reader, ops::OpContext{"n", "FusedConv", 13, 1});
  std::vector<ops::InferInput> in(2);
  in[0] = {true, DType::kFloat32, {1, 1, 6, 5, 8}, nullptr};  // C = 3
  in[1] = {true, DType::kFloat32, {2, 3, 3, 3, 8}, nullptr};  // M = 10
  const std::vector<ops::TensorType> y = op->infer(in);
  EXPECT_EQ(y[0].shape, (Shape{1, 2, 6, 5, 8}));
  const std::vector<ops::TensorType> ins = {{DType::kFloat32, in[0].shape},
                                            {DType::kFloat32, in[1].shape}};
  EXPECT_EQ(op->macs(ins, y), 1 * 10 * 6 * 5 * 3 * 9);
  // NHWC: [N, H, W, M], the conv followed by Transpose(0, 2, 3, 1).
  attrs.s("y_layout", "NHWC");
  ops::Attrs nhwc_reader(attrs.attrs, "FusedConv 'n'");
  auto nhwc = schema->create(nhwc_reader, ops::OpContext{"n", "FusedConv", 13, 1});
  EXPECT_EQ(nhwc->infer(in)[0].shape, (Shape{1, 6, 5, 10}));
}

TEST(FusedConvOp, Errors) {
  const Tensor x = test::random_tensor<float>({1, 3, 5, 5}, 1, -1, 1),
               w = test::random_tensor<float>({4, 3, 3, 3}, 2, -1, 1);
  const auto run = [&](const AttrMap& a, const std::vector<Tensor>& in) {
    return [=] { run_fused("FusedConv", a, in); };
  };
  expect_error<ModelError>(run(AttrMap().s("y_layout", "NCHWc"), {x, w}),
                           {"FusedConv 'test_node'", "'block' is required"});
  expect_error<ModelError>(run(AttrMap().s("x_layout", "NHWC").i("block", 4), {x, w}),
                           {"x_layout", "NHWC"});
  expect_error<ModelError>(run(AttrMap().s("weight_layout", "packed").i("block", 4), {x, w}),
                           {"out_channels"});
  expect_error<ModelError>(run(AttrMap().s("activation", "Gelu"), {x, w}), {"Gelu"});
  expect_error<ModelError>(run(AttrMap().i("residual_before_activation", 2), {x, w}),
                           {"residual_before_activation"});
  expect_error<ShapeError>(run(AttrMap().s("x_layout", "NCHWc").i("block", 4), {x, w}),
                           {"FusedConv 'test_node'", "2-D"});
  expect_error<ShapeError>(
      run(AttrMap().s("weight_layout", "OHWI"), {test::random_tensor<float>({1, 3, 5}, 6, -1, 1),
                                                 test::random_tensor<float>({4, 3, 3}, 7, -1, 1)}),
      {"OHWI weights need a 2-D convolution"});
  expect_error<ShapeError>(run(AttrMap().s("weight_layout", "OHWI"),
                               {x, test::random_tensor<float>({4, 3, 3, 2}, 8, -1, 1)}),
                           {"expected input with 2 channels, but got 3"});
  expect_error<ShapeError>(
      run(AttrMap().s("y_layout", "NHWC"), {test::random_tensor<float>({1, 3, 5}, 6, -1, 1),
                                            test::random_tensor<float>({4, 3, 3}, 7, -1, 1)}),
      {"NHWC output needs a 2-D convolution"});
  expect_error<ModelError>(
      run(AttrMap().s("y_layout", "NHWC").s("weight_layout", "winograd").i("block", 4).i(
              "out_channels", 4),
          {x, w}),
      {"NHWC", "winograd"});
  expect_error<ShapeError>(
      run(AttrMap().s("x_layout", "NCHWc").i("block", 4), {to_nchwc(x, 8, 0), w}),
      {"expected NCHWc input [N, 1, H, W, 4]"});
  expect_error<ShapeError>(
      run(AttrMap().s("weight_layout", "packed").i("block", 4).i("out_channels", 9),
          {x, kernels::ref::pack_conv_weights(w, 4)}),
      {"expected packed weights [3, C/group, kH, kW, 4]"});
  expect_error<ShapeError>(
      run(AttrMap(), {x, w, Tensor(), test::random_tensor<float>({1, 4, 3, 4}, 3, -1, 1)}),
      {"residual Z", "[1, 4, 3, 3]"});
  expect_error<ShapeError>(run(AttrMap(), {x, w, test::random_tensor<float>({3}, 4, -1, 1)}),
                           {"bias B of shape [4]"});
  expect_error<ShapeError>(run(AttrMap(), {x, test::random_tensor<float>({4, 2, 3, 3}, 5, -1, 1)}),
                           {"expected input with 2 channels, but got 3"});
}

// ---- epilogue attributes ---------------------------------------------------------------

TEST(Epilogue, AttributesRoundTrip) {
  for (const Act& a : all_activations()) {
    for (bool before : {false, true}) {
      kernels::ref::Epilogue e;
      AttrMap m;
      add_activation(m, a);
      if (before) m.i("residual_before_activation", 1);
      e = ops::parse_epilogue(ops::Attrs(m.attrs, "X 'n'"));
      EXPECT_EQ(ops::activation_name(e.activation), a.name);
      EXPECT_EQ(e.residual_before_activation, before);
      std::map<std::string, ir::Attribute> written;
      written["pads"] = m.attrs.count("pads") ? m.attrs["pads"] : ir::Attribute{};
      ops::write_epilogue(e, written);
      const kernels::ref::Epilogue back = ops::parse_epilogue(ops::Attrs(written, "X 'n'"));
      EXPECT_EQ(back.activation, e.activation);
      EXPECT_EQ(back.alpha, e.alpha);
      EXPECT_EQ(back.beta, e.beta);
      EXPECT_EQ(back.residual_before_activation, before);
      EXPECT_EQ(written.count("pads"), 1u);  // other attributes are kept
    }
  }
  // Defaults follow the ONNX ops: LeakyRelu 0.01, HardSigmoid 0.2 / 0.5, Clip unbounded.
  AttrMap m;
  m.s("activation", "HardSigmoid");
  kernels::ref::Epilogue e = ops::parse_epilogue(ops::Attrs(m.attrs, "X 'n'"));
  EXPECT_FLOAT_EQ(e.alpha, 0.2f);
  EXPECT_FLOAT_EQ(e.beta, 0.5f);
  m.s("activation", "LeakyRelu");
  EXPECT_FLOAT_EQ(ops::parse_epilogue(ops::Attrs(m.attrs, "X 'n'")).alpha, 0.01f);
  m.s("activation", "Clip");
  e = ops::parse_epilogue(ops::Attrs(m.attrs, "X 'n'"));
  EXPECT_EQ(kernels::ref::activate(e, 1e30f), 1e30f);
  EXPECT_EQ(kernels::ref::activate(e, -1e30f), -1e30f);
}

TEST(Epilogue, ActivationsMatchTheOnnxOps) {
  // Each fused activation equals its ONNX op (run through the op registry) bit for bit,
  // but Sigmoid and SiLU: the Sigmoid op runs Highway's Exp (kernels/unary), within a few
  // ULP of the reference's std::exp.
  const auto near = [](float got, float want) {
    return std::abs(got - want) <= 4 * std::numeric_limits<float>::epsilon() * std::abs(want);
  };
  const Tensor x = test::f32({-7, -3, -1.5f, -0.25f, 0, 0.25f, 1, 2.5f, 3, 8}, {10});
  const struct {
    Act act;
    const char* op;
    AttrMap attrs;
  } cases[] = {
      {{"Relu"}, "Relu", AttrMap()},
      {{"LeakyRelu", 0.2f}, "LeakyRelu", AttrMap().f("alpha", 0.2f)},
      {{"HardSigmoid", 0.3f, 0.4f}, "HardSigmoid", AttrMap().f("alpha", 0.3f).f("beta", 0.4f)},
      {{"HardSwish"}, "HardSwish", AttrMap()},
      {{"Sigmoid"}, "Sigmoid", AttrMap()},
  };
  for (const auto& c : cases) {
    AttrMap m;
    add_activation(m, c.act);
    const kernels::ref::Epilogue e = ops::parse_epilogue(ops::Attrs(m.attrs, "X 'n'"));
    const std::vector<float> want = test::run_op(c.op, c.attrs, {x}, 14)[0].to_float_vector();
    const std::vector<float> xs = x.to_float_vector();
    for (size_t i = 0; i < xs.size(); ++i) {
      const float got = kernels::ref::activate(e, xs[i]);
      if (c.act.name == std::string("Sigmoid")) {
        EXPECT_PRED2(near, got, want[i]) << c.op << " at " << xs[i];
      } else {
        EXPECT_EQ(got, want[i]) << c.op << " at " << xs[i];
      }
    }
  }
  // SiLU = Mul(x, Sigmoid(x)); Clip = Clip-13 with min and max inputs.
  const Tensor sig = test::run_op("Sigmoid", AttrMap(), {x})[0];
  const std::vector<float> silu = test::run_op("Mul", AttrMap(), {x, sig})[0].to_float_vector();
  const std::vector<float> clip =
      test::run_op("Clip", AttrMap(), {x, test::f32({-1}, {}), test::f32({2}, {})})[0]
          .to_float_vector();
  kernels::ref::Epilogue e;
  for (size_t i = 0; i < silu.size(); ++i) {
    e.activation = Activation::kSilu;
    EXPECT_PRED2(near, kernels::ref::activate(e, x.to_float_vector()[i]), silu[i]);
    e.activation = Activation::kClip;
    e.alpha = -1;
    e.beta = 2;
    EXPECT_EQ(kernels::ref::activate(e, x.to_float_vector()[i]), clip[i]);
  }
}

// ---- FusedGemm and FusedMatMul ---------------------------------------------------------

TEST(FusedGemmOp, GemmThenEveryActivationAndResidual) {
  const Tensor a = test::random_tensor<float>({5, 7}, 1, -1, 1),
               bt = test::random_tensor<float>({6, 7}, 2, -1, 1),
               c = test::random_tensor<float>({6}, 3, -1, 1);
  const Tensor z = test::random_tensor<float>({5, 6}, 4, -1, 1);
  AttrMap gemm_attrs;
  gemm_attrs.i("transB", 1).f("alpha", 0.5f).f("beta", 2.0f);
  const std::vector<float> g = test::run_op("Gemm", gemm_attrs, {a, bt, c})[0].to_float_vector();
  const std::vector<float> zs = z.to_float_vector();
  int k = 0;
  for (const Act& act : all_activations()) {
    for (Residual r : {Residual::kNone, Residual::kBefore, Residual::kAfter}) {
      SCOPED_TRACE(act.name + " residual " + std::to_string(int(r)));
      AttrMap attrs = gemm_attrs;
      add_activation(attrs, act);
      if (r == Residual::kBefore) attrs.i("residual_before_activation", 1);
      std::vector<Tensor> in = {a, bt, c};
      if (r != Residual::kNone) in.push_back(z);
      const std::vector<float> y =
          run_fused("FusedGemm", attrs, in, 1 + k++ % 2)[0].to_float_vector();
      std::vector<float> want(g.size());
      for (size_t i = 0; i < g.size(); ++i) {
        double v = g[i] + (r == Residual::kBefore ? zs[i] : 0.0f);
        v = activate(act, v);
        want[i] = static_cast<float>(v + (r == Residual::kAfter ? zs[i] : 0.0f));
      }
      test::expect_near_all(y, want, 1e-6f, 1e-6f);
    }
  }
  expect_error<ShapeError>(
      [&] {
        run_fused("FusedGemm", gemm_attrs, {a, bt, c, test::random_tensor<float>({6}, 5, -1, 1)});
      },
      {"FusedGemm 'test_node'", "residual Z"});
  expect_error<ShapeError>(
      [&] {
        run_fused("FusedGemm", AttrMap(), {a, bt});
      },
      {"FusedGemm 'test_node'", "expected B with K = 7"});
}

TEST(FusedMatMulOp, BatchedMatMulWithBiasActivationAndResidual) {
  const Tensor a = test::random_tensor<float>({2, 3, 4, 5}, 1, -1, 1),
               b = test::random_tensor<float>({5, 7}, 2, -1, 1),
               bias = test::random_tensor<float>({7}, 3, -1, 1);
  const Tensor z = test::random_tensor<float>({2, 3, 4, 7}, 4, -1, 1);
  const std::vector<float> mm = test::run_op("MatMul", AttrMap(), {a, b})[0].to_float_vector();
  const std::vector<float> bs = bias.to_float_vector(), zs = z.to_float_vector();
  for (const Act& act : all_activations()) {
    for (Residual r : {Residual::kNone, Residual::kBefore, Residual::kAfter}) {
      for (bool with_bias : {false, true}) {
        SCOPED_TRACE(act.name + " residual " + std::to_string(int(r)) + " bias " +
                     std::to_string(with_bias));
        AttrMap attrs;
        add_activation(attrs, act);
        if (r == Residual::kBefore) attrs.i("residual_before_activation", 1);
        std::vector<Tensor> in = {a, b, with_bias ? bias : Tensor()};
        if (r != Residual::kNone) in.push_back(z);
        const Tensor y = run_fused("FusedMatMul", attrs, in)[0];
        ASSERT_EQ(y.shape(), (Shape{2, 3, 4, 7}));
        std::vector<float> want(mm.size());
        for (size_t i = 0; i < mm.size(); ++i) {
          double v = double(mm[i]) + (with_bias ? bs[i % 7] : 0.0f);
          if (r == Residual::kBefore) v += zs[i];
          v = activate(act, v);
          want[i] = static_cast<float>(v + (r == Residual::kAfter ? zs[i] : 0.0f));
        }
        test::expect_near_all(y.to_float_vector(), want, 1e-6f, 1e-6f);
      }
    }
  }
  expect_error<ShapeError>(
      [&] {
        run_fused("FusedMatMul", AttrMap(), {a, b, test::random_tensor<float>({5}, 5, -1, 1)});
      },
      {"FusedMatMul 'test_node'", "bias of shape [7]"});
}

}  // namespace
}  // namespace tern
