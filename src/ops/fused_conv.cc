// FusedConv (internal, domain "tern"): Conv + epilogue (bias, residual Add, activation,
// affine map),
// reading and writing NCHW or NCHWc, with ONNX or packed weights. Created by the passes
// fuse-epilogue, assign-layout and pack-weights, never by a model file.
// Kernels: kernels/direct (first layer, pointwise, general k x k), kernels/depthwise,
// kernels/winograd (3x3 stride 1, with weights the select-algorithm pass transformed),
// kernels/gemm (1x1, and 2-D stride 1, from NCHW to NCHW), kernels/dot (1x1 from NCHWc on
// OIHW weights: few output channels), and kernels/reference (fused_conv.h, winograd.h) for
// everything they do not cover.
#include "ops/fused_conv.h"

#include <algorithm>
#include <optional>

#include "kernels/depthwise/depthwise_conv.h"
#include "kernels/direct/direct_conv.h"
#include "kernels/dot/dot_conv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/reference/winograd.h"
#include "kernels/winograd/winograd_conv.h"
#include "ops/conv.h"
#include "ops/epilogue.h"
#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

// The direct kernel shortens its segments so that an image keeps enough spatial units
// for parallel_grid's spatial split at 2 threads.
static_assert(kernels::kDirectMinSpatialUnits == 2 * kMinSpatialUnitsPerThread);
// So does the implicit GEMM's number of row bands.
static_assert(kernels::kConvGemmBandsPerImage == 2 * kMinSpatialUnitsPerThread);

namespace {

// The kernels FusedConv can run, by the name the "algorithm" attribute uses.
enum class ConvAlgorithm {
  kReference,
  kDirectFirst,
  kPointwise,
  kDepthwise,
  kDirect,
  kWinograd,
  kGemm,
  kDot
};

constexpr const char* kAlgorithmNames[] = {"reference", "direct-first", "pointwise", "depthwise",
                                           "direct",    "winograd",     "gemm",      "dot"};
constexpr int kAlgorithms = 8;

const char* algorithm_name(ConvAlgorithm a) { return kAlgorithmNames[static_cast<int>(a)]; }

// kernels::ref::pointwise_window (any spatial rank; direct_conv_supported limits the
// pointwise kernel to 2-D).
using kernels::ref::pointwise_window;

// A conv from NCHW to NCHW on OIHW weights with one group that kernels/gemm computes with
// the pixels along its vectors, so every lane is used whatever M is: a pointwise_window
// conv (any spatial rank) is per image Y [M, S] = W [M, C] X [C, S] over its S pixels
// (ppocr's ConvTranspose 24 -> 1 lowered to a 1x1 conv to 4 channels took 0.60 ms in
// the reference kernel); a 2-D stride-1 conv is an implicit GEMM (conv_gemm_supported:
// ppocr's 96 -> 24 3x3 convs between NCHW tensors).
bool gemm_conv(const kernels::ref::FusedConvParams& p) {
  const bool plain = p.x_block == 1 && p.y_block == 1 && !p.y_nhwc && p.w_block == 1 && !p.w_ohwi;
  return plain && p.conv.groups == 1 &&
         (pointwise_window(p.conv) || kernels::conv_gemm_supported(p));
}

// The per-image product of a pointwise_window gemm_conv: A = W [M, C], B = X [C, S],
// Y [M, S].
kernels::ref::GemmParams gemm_conv_params(const kernels::ref::FusedConvParams& p) {
  kernels::ref::GemmParams g;
  g.m = p.conv.out_channels;
  g.n = p.conv.out.size();
  g.k = p.conv.in_channels;
  g.lda = g.k;
  g.ldb = g.n;
  g.ldy = g.n;
  return g;
}

// The heuristic for OIHW or packed weights: the most specific fast kernel that covers `p`
// on the SIMD target dispatch picks now; the reference kernel when none does (plain
// layouts and 3-D but a gemm_conv, grouped convs whose groups split a channel block, a
// target whose vectors are not p's block). Winograd needs transformed weights, so it is never
// chosen here (see FusedConvOp::algorithm).
ConvAlgorithm choose_algorithm(const kernels::ref::FusedConvParams& p) {
  if (gemm_conv(p)) return ConvAlgorithm::kGemm;
  if (kernels::dot_conv_supported(p)) return ConvAlgorithm::kDot;
  if (kernels::depthwise_conv_supported(p)) return ConvAlgorithm::kDepthwise;
  if (kernels::direct_conv_supported(p)) {
    if (p.x_block == 1) return ConvAlgorithm::kDirectFirst;
    return pointwise_window(p.conv) ? ConvAlgorithm::kPointwise : ConvAlgorithm::kDirect;
  }
  return ConvAlgorithm::kReference;
}

// Whether kernel `a` can compute `p` now (an "algorithm" attribute chosen under another
// SIMD target, or by hand, may name one that cannot).
bool algorithm_covers(ConvAlgorithm a, const kernels::ref::FusedConvParams& p) {
  switch (a) {
    case ConvAlgorithm::kReference:
      return true;
    case ConvAlgorithm::kDepthwise:
      return kernels::depthwise_conv_supported(p);
    case ConvAlgorithm::kWinograd:
      return false;  // needs winograd weights, which resolve_algorithm handles first
    case ConvAlgorithm::kGemm:
      return gemm_conv(p);
    case ConvAlgorithm::kDot:
      return kernels::dot_conv_supported(p);
    default:
      return kernels::direct_conv_supported(p);
  }
}

/// FusedConv: Y = epilogue(conv(X, W) + B, Z).
/// Inputs: X, W, B (optional, [M]), Z (optional residual, Y's physical shape and layout).
/// Attributes: every Conv attribute (auto_pad, dilations, group, kernel_shape, pads,
/// strides), the epilogue (ops/epilogue.h), and
///   x_layout, y_layout  "NCHW" (default) or "NCHWc": [N, ceil(C/c), H, W, c], channel ch
///                       at [n, ch / c, h, w, ch % c]; the padded lanes of X are ignored,
///                       those of Y written as 0. y_layout may also be "NHWC"
///                       ([N, H, W, M]: the conv followed by Transpose(0, 2, 3, 1), which
///                       the fuse-transpose pass folds in; 2-D, not with winograd weights);
///   weight_layout       "OIHW" (default, ONNX [M, C/group, kH, kW]), "packed"
///                       ([ceil(M/c), C/group, kH, kW, c], kernels::ref::pack_conv_weights),
///                       "OHWI" ([M, kH, kW, C/group], kernels::ref::ohwi_conv_weights: the
///                       dot kernel's, input channels innermost) or "winograd" ([36,
///                       ceil(M/c), C, c], kernels::ref::winograd_transform_weights; 3x3,
///                       stride 1, one group only);
///   block               c, required when a layout is NCHWc or the weights are packed;
///   out_channels        M, required with packed weights (the padding hides it);
///   algorithm           the kernel: "reference", "direct-first", "pointwise",
///                       "depthwise", "direct", "winograd", "gemm" or "dot" (set by the
///                       select-algorithm pass); when absent, or when that kernel cannot
///                       compute these shapes on the SIMD target in use, the op chooses
///                       (choose_algorithm). Winograd weights always run winograd: the
///                       SIMD kernel, or its reference twin on a target whose vectors
///                       are not the weights' block.
/// Plain layouts accept 1-D to 3-D convolutions like Conv; NCHWc and packed or OHWI
/// weights need a 2-D one. Errors: ModelError for bad attributes, ShapeError for shapes that do not
/// fit (naming the physical and logical shapes), UnsupportedOpError for non-float32 inputs.
class FusedConvOp final : public Op {
 public:
  FusedConvOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx),
        window_(parse_window_attrs(a, false)),
        group_(a.get_int("group", 1)),
        epilogue_(parse_epilogue(a)),
        x_blocked_(a.get_enum("x_layout", "NCHW", {"NCHW", "NCHWc"}) == "NCHWc"),
        y_blocked_(a.get_enum("y_layout", "NCHW", {"NCHW", "NCHWc", "NHWC"}) == "NCHWc"),
        y_nhwc_(a.get_enum("y_layout", "NCHW", {"NCHW", "NCHWc", "NHWC"}) == "NHWC"),
        w_layout_(a.get_enum("weight_layout", "OIHW", {"OIHW", "packed", "OHWI", "winograd"})),
        w_packed_(w_layout_ == "packed" || w_layout_ == "winograd"),
        w_ohwi_(w_layout_ == "OHWI"),
        w_winograd_(w_layout_ == "winograd"),
        out_channels_(a.get_int("out_channels", -1)) {
    const std::string algo = a.get_enum("algorithm", "",
                                        {"", "reference", "direct-first", "pointwise", "depthwise",
                                         "direct", "winograd", "gemm", "dot"});
    for (int i = 0; i < kAlgorithms; ++i) {
      if (algo == kAlgorithmNames[i]) algorithm_ = static_cast<ConvAlgorithm>(i);
    }
    TERN_CHECK(group_ >= 1, ModelError, "{}: attribute 'group' must be >= 1, but got {}", where(),
               group_);
    if (x_blocked_ || y_blocked_ || w_packed_) {
      TERN_CHECK(a.has("block"), ModelError,
                 "{}: attribute 'block' is required with an NCHWc layout or packed weights",
                 where());
      block_ = a.require_int("block");
      TERN_CHECK(block_ >= 1 && block_ <= 1024, ModelError,
                 "{}: attribute 'block' must be in 1..1024, but got {}", where(), block_);
    }
    TERN_CHECK(!y_nhwc_ || !w_winograd_, ModelError,
               "{}: y_layout NHWC cannot be combined with winograd weights", where());
    TERN_CHECK(!w_packed_ || out_channels_ >= 1, ModelError,
               "{}: attribute 'out_channels' (>= 1) is required with packed weights", where());
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtypes(inputs, {DType::kFloat32}, where(), {"X", "W", "B", "Z"});
    const kernels::ref::FusedConvParams p = geometry(inputs[0].shape, inputs[1].shape);
    check_conv_bias(inputs, p.conv.out_channels, where());
    const Shape y = output_shape(inputs[0].shape, p);
    if (has_input(inputs, kResidualInput)) {
      TERN_CHECK(inputs[kResidualInput].shape == y, ShapeError,
                 "{}: expected residual Z of the output's shape {}, but got {}", where(),
                 shape_str(y), shape_str(inputs[kResidualInput].shape));
    }
    return {TensorType{DType::kFloat32, y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const Tensor w = inputs[1].contiguous();
    const Tensor b = has_input(inputs, kBiasInput) ? inputs[kBiasInput].contiguous() : Tensor();
    const Tensor z =
        has_input(inputs, kResidualInput) ? inputs[kResidualInput].contiguous() : Tensor();
    launch(prepare(x, w, b, z, outputs[0], ctx), ctx);
  }

  // Every input is contiguous in a plan (arena views and constants), so the call is
  // prepared once: a bound step runs only the kernel (the per-step work of run() cost
  // about 2 us a layer, mostly cache misses on the tensors' shapes after a kernel).
  BoundRun bind(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                const ExecContext& ctx) const override {
    for (const Tensor& t : inputs) {
      if (t.defined() && !t.is_contiguous()) return {};
    }
    const Tensor none;
    const Call call =
        prepare(inputs[0], inputs[1], has_input(inputs, kBiasInput) ? inputs[kBiasInput] : none,
                has_input(inputs, kResidualInput) ? inputs[kResidualInput] : none, outputs[0], ctx);
    return [call](const ExecContext& ctx) { launch(call, ctx); };
  }

  // The plan's choice: what resolve_algorithm runs, except that packed 3x3 weights for
  // which winograd is preferred (kernels::winograd_conv_preferred) answer "winograd":
  // the select-algorithm pass then transforms the weights, which makes it so.
  std::string algorithm(std::span<const TensorType> inputs) const override {
    if (inputs.size() < 2) return {};
    const kernels::ref::FusedConvParams p = geometry(inputs[0].shape, inputs[1].shape);
    if (w_packed_ && !w_winograd_ && kernels::winograd_conv_preferred(p)) return "winograd";
    return algorithm_name(resolve_algorithm(p));
  }

  // The winograd kernel's per-thread workspace, when it is what runs (winograd weights on
  // a target of another vector width run the reference twin, which keeps none).
  int64_t workspace_bytes(std::span<const TensorType> inputs) const override {
    if (inputs.size() < 2 || !w_winograd_) return 0;
    const kernels::ref::FusedConvParams p = geometry(inputs[0].shape, inputs[1].shape);
    if (resolve_algorithm(p) != ConvAlgorithm::kWinograd) return 0;
    return kernels::winograd_conv_workspace_bytes(p);
  }

  // Packed weights of a conv both the direct and the winograd kernel cover.
  std::vector<std::string> algorithm_candidates(
      std::span<const TensorType> inputs) const override {
    if (inputs.size() < 2 || !w_packed_ || w_winograd_) return {};
    const kernels::ref::FusedConvParams p = geometry(inputs[0].shape, inputs[1].shape);
    if (!kernels::winograd_conv_supported(p) || !kernels::direct_conv_supported(p)) return {};
    return {"direct", "winograd"};
  }

  // The parameters and the kernel for physical shapes x and w (fused_conv_layer).
  FusedConvLayer layer(const Shape& x, const Shape& w) const {
    FusedConvLayer l;
    l.params = geometry(x, w);
    l.algorithm = algorithm_name(resolve_algorithm(l.params));
    return l;
  }

  // N * M * prod(out spatial) * (C / group) * prod(kernel), saturated (as Conv).
  int64_t macs(std::span<const TensorType> inputs, std::span<const TensorType>) const override {
    const kernels::ref::FusedConvParams p = geometry(inputs[0].shape, inputs[1].shape);
    const kernels::ref::ConvParams& c = p.conv;
    const int64_t per_output = saturating_mul(c.in_channels / c.groups, c.kernel.size());
    const int64_t outputs =
        saturating_mul(saturating_mul(inputs[0].shape[0], c.out_channels), c.out.size());
    return saturating_mul(outputs, per_output);
  }

 private:
  // What run() derives from the shapes, and the buffers it reads and writes.
  struct Call {
    kernels::ref::FusedConvParams p;
    ConvAlgorithm algo = ConvAlgorithm::kReference;
    bool winograd_weights = false;  // w holds winograd-transformed weights
    int64_t batch = 0, channels = 0, x_image = 0, y_image = 0;
    const float* x = nullptr;
    const float* w = nullptr;
    const float* bias = nullptr;
    const float* z = nullptr;
    float* y = nullptr;
    kernels::WorkGrid grid;   // the SIMD kernel's work items
    kernels::ref::GemmParams gemm;  // gemm, pointwise_window: the product of one image
    bool implicit_gemm = false;     // gemm, any other window: f32_conv_gemm
    int64_t group_tiles = 0;  // winograd: output tiles per group
  };

  // x, w, b, z: contiguous (b and z may be undefined); y: the output.
  Call prepare(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z, Tensor& y,
               const ExecContext& ctx) const {
    Call c;
    c.p = geometry(x.shape(), w.shape());
    c.p.epilogue.residual = z.defined();
    c.batch = x.dim(0);
    c.channels = kernels::ref::fused_conv_padded_channels(c.p);
    c.x_image = c.batch == 0 ? 0 : x.numel() / c.batch;
    c.y_image = c.channels * c.p.conv.out.size();
    c.x = x.data<float>();
    c.w = w.data<float>();
    c.bias = b.defined() ? b.data<float>() : nullptr;
    c.z = z.defined() ? z.data<float>() : nullptr;
    c.y = y.data<float>();
    c.algo = resolve_algorithm(c.p);
    c.winograd_weights = w_winograd_;
    if (c.algo == ConvAlgorithm::kDepthwise) {
      c.grid = kernels::depthwise_conv_work(c.p);
    } else if (c.algo == ConvAlgorithm::kWinograd) {
      c.group_tiles = kernels::winograd_group_tiles(c.p, ctx.num_threads);
      c.grid = kernels::winograd_conv_work(c.p, c.group_tiles);
    } else if (c.algo == ConvAlgorithm::kGemm && pointwise_window(c.p.conv)) {
      c.gemm = gemm_conv_params(c.p);
      c.grid = kernels::gemm_work(c.gemm);
    } else if (c.algo == ConvAlgorithm::kGemm) {
      c.implicit_gemm = true;
      c.grid = kernels::conv_gemm_work(c.p);
    } else if (c.algo == ConvAlgorithm::kDot) {
      c.grid = kernels::dot_conv_work(c.p);
    } else if (c.algo != ConvAlgorithm::kReference) {
      c.grid = kernels::direct_conv_work(c.p);
    }
    return c;
  }

  static void launch(const Call& c, const ExecContext& ctx) {
    const kernels::ref::FusedConvParams& p = c.p;
    const ConvAlgorithm algo = c.algo;
    const int64_t batch = c.batch, channels = c.channels;
    const int64_t x_image = c.x_image, y_image = c.y_image;
    const float* xd = c.x;
    const float* wd = c.w;
    const float* bd = c.bias;
    const float* zd = c.z;
    float* yd = c.y;
    if (c.winograd_weights && algo != ConvAlgorithm::kWinograd) {
      // The SIMD kernel does not run on this target: its reference twin, by output block.
      const int64_t units = (channels + p.w_block - 1) / p.w_block;
      const int64_t work = batch * units;
      parallel_for(work, ctx.num_threads, [&](int64_t i) {
        const int64_t n = i / units;
        const int64_t oc = i % units * p.w_block;
        kernels::ref::f32_winograd_conv(p, xd + n * x_image, wd, bd,
                                        zd ? zd + n * y_image : nullptr, yd + n * y_image, oc,
                                        std::min(channels, oc + p.w_block));
      });
      return;
    }
    if (algo == ConvAlgorithm::kReference) {
      // Work items: (image, output channel), or (image, channel block) for an NCHWc
      // output, whose block the kernel computes with the lanes innermost.
      const int64_t unit = p.y_block;
      const int64_t units = channels / unit;
      const int64_t work = batch * units;
      parallel_for(work, ctx.num_threads, [&](int64_t i) {
        const int64_t n = i / units;
        const int64_t oc = i % units * unit;
        kernels::ref::f32_fused_conv(p, xd + n * x_image, wd, bd, zd ? zd + n * y_image : nullptr,
                                     yd + n * y_image, oc, oc + unit);
      });
      return;
    }
    if (algo == ConvAlgorithm::kGemm) {
      // Items: (chunk of output channels, panel of pixels or band of rows), split by
      // region of the image.
      parallel_grid(batch, c.grid, ctx.num_threads, [&](int64_t n, int64_t first, int64_t last) {
        const float* zn = zd ? zd + n * y_image : nullptr;
        if (c.implicit_gemm) {
          kernels::f32_conv_gemm(p, xd + n * x_image, wd, bd, zn, yd + n * y_image, first, last);
          return;
        }
        const kernels::GemmOutput out{&p.epilogue, bd, zn};
        kernels::f32_gemm(c.gemm, wd, xd + n * x_image, yd + n * y_image, out, first, last);
      });
      return;
    }
    const bool depthwise = algo == ConvAlgorithm::kDepthwise;
    const bool winograd = algo == ConvAlgorithm::kWinograd;
    const bool dot = algo == ConvAlgorithm::kDot;
    // A region of the image per thread, all output chunks over it (parallel_grid); within
    // a chunk, consecutive items reuse the same weights from cache.
    parallel_grid(batch, c.grid, ctx.num_threads, [&](int64_t n, int64_t first, int64_t last) {
      const float* xn = xd + n * x_image;
      const float* zn = zd ? zd + n * y_image : nullptr;
      float* yn = yd + n * y_image;
      if (depthwise) {
        kernels::f32_depthwise_conv(p, xn, wd, bd, zn, yn, first, last);
      } else if (winograd) {
        kernels::f32_winograd_conv(p, xn, wd, bd, zn, yn, c.group_tiles, first, last);
      } else if (dot) {
        kernels::f32_dot_conv(p, xn, wd, bd, zn, yn, first, last);
      } else {
        kernels::f32_direct_conv(p, xn, wd, bd, zn, yn, first, last);
      }
    });
  }

  // The logical (NCHW, OIHW) shapes behind the physical ones, checked, and the kernel
  // parameters.
  kernels::ref::FusedConvParams geometry(const Shape& x, const Shape& w) const {
    const bool blocked = x_blocked_ || y_blocked_ || w_packed_;
    if (y_nhwc_) {
      TERN_CHECK(x.size() == (x_blocked_ ? 5u : 4u), ShapeError,
                 "{}: an NHWC output needs a 2-D convolution: expected X of rank {}, but got {}",
                 where(), x_blocked_ ? 5 : 4, shape_str(x));
    }
    if (blocked || w_ohwi_) {
      const size_t w_rank = w_winograd_ ? 4u : w_packed_ ? 5u : 4u;
      TERN_CHECK(x.size() == (x_blocked_ ? 5u : 4u) && w.size() == w_rank, ShapeError,
                 "{}: an NCHWc layout or packed or OHWI weights need a 2-D convolution: "
                 "expected X of rank {} and W of rank {}, but got {} and {}",
                 where(), x_blocked_ ? 5 : 4, w_rank, shape_str(x), shape_str(w));
    }
    Shape wl = w;
    if (w_winograd_) {
      TERN_CHECK(w[0] == kernels::ref::kWinogradPoints && w[1] == ceil_blocks(out_channels_) &&
                     w[3] == block_,
                 ShapeError,
                 "{}: expected winograd weights [36, {}, C, {}] for {} output channels and "
                 "block {}, but got {}",
                 where(), ceil_blocks(out_channels_), block_, out_channels_, block_, shape_str(w));
      wl = {out_channels_, w[2], 3, 3};
    } else if (w_packed_) {
      TERN_CHECK(w[0] == ceil_blocks(out_channels_) && w[4] == block_, ShapeError,
                 "{}: expected packed weights [{}, C/group, kH, kW, {}] for {} output channels "
                 "and block {}, but got {}",
                 where(), ceil_blocks(out_channels_), block_, out_channels_, block_, shape_str(w));
      wl = {out_channels_, w[1], w[2], w[3]};
    } else if (w_ohwi_) {
      wl = {w[0], w[3], w[1], w[2]};
    }
    if (!w_packed_ && out_channels_ >= 0) {
      TERN_CHECK(!w.empty() && w[0] == out_channels_, ShapeError,
                 "{}: attribute out_channels is {}, but weight shape {} has {}", where(),
                 out_channels_, shape_str(w), w.empty() ? 0 : w[0]);
    }
    Shape xl = x;
    if (x_blocked_) {
      TERN_CHECK(wl.size() >= 2, ShapeError, "{}: expected W of rank 4, but got {}", where(),
                 shape_str(w));
      const int64_t c = checked_mul(wl[1], group_, where(), "the input channel count W[1] * group");
      TERN_CHECK(x[1] == ceil_blocks(c) && x[4] == block_, ShapeError,
                 "{}: expected NCHWc input [N, {}, H, W, {}] ({} channels in blocks of {}), but "
                 "got {}",
                 where(), ceil_blocks(c), block_, c, block_, shape_str(x));
      xl = {x[0], c, x[2], x[3]};
    }
    kernels::ref::FusedConvParams p;
    p.conv = conv_params(window_, group_, xl, wl, where());
    p.x_block = x_blocked_ ? block_ : 1;
    p.y_block = y_blocked_ ? block_ : 1;
    p.y_nhwc = y_nhwc_;
    p.w_block = w_packed_ ? block_ : 1;
    p.w_ohwi = w_ohwi_;
    p.epilogue = epilogue_;
    TERN_CHECK(!w_winograd_ || kernels::ref::winograd_applicable(p), ModelError,
               "{}: winograd weights need a 2-D 3x3 convolution with stride 1 and one group",
               where());
    return p;
  }

  // Y's physical shape for the physical X shape `x`.
  Shape output_shape(const Shape& x, const kernels::ref::FusedConvParams& p) const {
    const kernels::ref::ConvParams& c = p.conv;
    if (y_blocked_) return {x[0], ceil_blocks(c.out_channels), c.out.h, c.out.w, block_};
    if (y_nhwc_) return {x[0], c.out.h, c.out.w, c.out_channels};
    const int spatial = x_blocked_ ? 2 : static_cast<int>(x.size()) - 2;
    return window_output_shape(x[0], c.out_channels, c.out, spatial);
  }

  // Winograd weights: winograd when the SIMD kernel covers `p` now, else the reference
  // (its twin runs). Otherwise the attribute's kernel if it covers `p` now, else the
  // heuristic's.
  ConvAlgorithm resolve_algorithm(const kernels::ref::FusedConvParams& p) const {
    if (w_winograd_) {
      return kernels::winograd_conv_supported(p) ? ConvAlgorithm::kWinograd
                                                 : ConvAlgorithm::kReference;
    }
    if (algorithm_ && algorithm_covers(*algorithm_, p)) return *algorithm_;
    return choose_algorithm(p);
  }

  int64_t ceil_blocks(int64_t channels) const { return (channels + block_ - 1) / block_; }

  WindowAttrs window_;
  int64_t group_;
  kernels::ref::Epilogue epilogue_;
  bool x_blocked_;
  bool y_blocked_;
  bool y_nhwc_;
  std::string w_layout_;
  bool w_packed_;    // packed or winograd: blocked by output channel, out_channels given
  bool w_ohwi_;      // OHWI: [M, kH, kW, C/group]
  bool w_winograd_;
  int64_t out_channels_;
  int64_t block_ = 1;
  std::optional<ConvAlgorithm> algorithm_;
};

}  // namespace

std::unique_ptr<Op> make_fused_conv(const Attrs& a, const OpContext& ctx) {
  return std::make_unique<FusedConvOp>(a, ctx);
}

FusedConvLayer fused_conv_layer(const Op& op, const Shape& x, const Shape& w) {
  const auto* conv = dynamic_cast<const FusedConvOp*>(&op);
  TERN_CHECK(conv != nullptr, InvalidArgument, "{} is no FusedConv", op.where());
  return conv->layer(x, w);
}

void register_fused_conv(OpRegistry& r) {
  OpSchema s = make_schema<FusedConvOp>("FusedConv", 2, 4);
  s.domain = kInternalDomain;
  r.add(std::move(s));
}

}  // namespace tern::ops
