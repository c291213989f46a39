// Resize (ONNX Resize-10/11/13) and Upsample (ONNX Upsample-7/9), modes nearest and
// linear, float32. Kernels: kernels/reference/resize.h.
#include "kernels/reference/resize.h"

#include <cmath>

#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::ResizeCoordMode;
using kernels::ref::ResizeNearestMode;

/// Resize / Upsample of X (rank >= 1) to Y.
///
/// Output size per dim: sizes[d] when the sizes input is given (Resize-11+; the scale
/// used for coordinates is then sizes[d] / in[d]), else floor(in[d] * scales[d]).
/// Inputs: Resize-10 (X, scales); Resize-11/13 (X, roi, scales, sizes), exactly one of
/// scales and sizes non-empty; Upsample-7 (X) with a `scales` attribute; Upsample-9 (X,
/// scales). Coordinates: Resize-11+ follows coordinate_transformation_mode and
/// nearest_mode; Resize-10 and Upsample use asymmetric coordinates and ONNX Runtime's
/// nearest rounding (floor when upsampling, ceil when downsampling).
///
/// nearest resizes any dims. linear is bilinear over the last two dims (linear over the
/// last dim of a 1-D input); resizing other dims with linear, mode cubic,
/// tf_crop_and_resize and the opset-18 attributes (antialias, axes,
/// keep_aspect_ratio_policy) are UnsupportedOpError. Bad attribute values are
/// ModelError; scales or sizes of the wrong length ShapeError; non-positive ones
/// InvalidArgument; a scale that is not finite (inf, NaN) or gives an output dim beyond
/// int64 (1e30), and output shapes whose element count overflows int64, ShapeError.
class ResizeOp : public Op {
 public:
  ResizeOp(const Attrs& a, const OpContext& ctx, bool upsample) : Op(ctx), upsample_(upsample) {
    const std::string mode = a.get_enum("mode", "nearest", {"nearest", "linear", "cubic"});
    TERN_CHECK(mode != "cubic", UnsupportedOpError,
               "{}: mode 'cubic' is not supported (supported: nearest, linear)", where());
    linear_ = mode == "linear";
    if (!upsample_ && ctx.opset >= 11) {
      const std::string coord =
          a.get_enum("coordinate_transformation_mode", "half_pixel",
                     {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                      "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"});
      TERN_CHECK(coord != "tf_crop_and_resize" && coord != "half_pixel_symmetric",
                 UnsupportedOpError,
                 "{}: coordinate_transformation_mode '{}' is not supported (supported: "
                 "half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                 "tf_half_pixel_for_nn)",
                 where(), coord);
      coord_ = coord == "half_pixel"           ? ResizeCoordMode::kHalfPixel
               : coord == "pytorch_half_pixel" ? ResizeCoordMode::kPytorchHalfPixel
               : coord == "align_corners"      ? ResizeCoordMode::kAlignCorners
               : coord == "asymmetric"         ? ResizeCoordMode::kAsymmetric
                                               : ResizeCoordMode::kTfHalfPixelForNn;
      const std::string nearest =
          a.get_enum("nearest_mode", "round_prefer_floor",
                     {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
      nearest_ = nearest == "round_prefer_floor"  ? ResizeNearestMode::kRoundPreferFloor
                 : nearest == "round_prefer_ceil" ? ResizeNearestMode::kRoundPreferCeil
                 : nearest == "floor"             ? ResizeNearestMode::kFloor
                                                  : ResizeNearestMode::kCeil;
      TERN_CHECK(a.get_int("antialias", 0) == 0 && !a.has("axes") &&
                     a.get_string("keep_aspect_ratio_policy", "stretch") == "stretch",
                 UnsupportedOpError,
                 "{}: the Resize-18 attributes antialias, axes and keep_aspect_ratio_policy "
                 "are not supported",
                 where());
    }
    if (upsample_ && ctx.opset < 9) {
      scales_attr_ = a.get_floats("scales", {});
      TERN_CHECK(!scales_attr_.empty(), ModelError,
                 "{}: required attribute 'scales' (FLOATS) is missing", where());
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    check_dtype(inputs[0].dtype, {DType::kFloat32}, where(), 0, "X");
    return {TensorType{DType::kFloat32, plan(inputs).out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Plan pl = plan(infer_inputs_from(inputs));
    if (shape_numel(pl.out) == 0) return;
    const Tensor x = inputs[0].contiguous();
    const Shape& in = x.shape();
    const int rank = x.rank();
    const float* xd = x.data<float>();
    float* yd = outputs[0].data<float>();

    if (!linear_) {
      // Per dim: the input index each output index reads.
      std::vector<std::vector<int64_t>> index(rank);
      std::vector<const int64_t*> index_ptr(rank);
      for (int d = 0; d < rank; ++d) {
        index[d].resize(pl.out[d]);
        for (int64_t o = 0; o < pl.out[d]; ++o) {
          const float xo =
              kernels::ref::resize_source_coord(coord_, o, pl.scales[d], in[d], pl.out[d]);
          index[d][o] = kernels::ref::resize_nearest_index(nearest_, xo, pl.scales[d], in[d]);
        }
        index_ptr[d] = index[d].data();
      }
      kernels::ref::ResizeNearestParams p;
      p.rank = rank;
      p.in_shape = in.data();
      p.out_shape = pl.out.data();
      p.src_index = index_ptr.data();
      const int64_t rows = shape_numel(pl.out) / pl.out.back();
#pragma omp parallel for num_threads(ctx.num_threads) schedule(static)
      for (int64_t r = 0; r < rows; ++r) kernels::ref::f32_resize_nearest(p, xd, yd, r, r + 1);
      return;
    }

    // Bilinear over the last two dims (a 1-D input is one row of height 1).
    auto taps = [&](int d) {
      std::vector<kernels::ref::LinearTap> t(pl.out[d]);
      for (int64_t o = 0; o < pl.out[d]; ++o) {
        const float xo =
            kernels::ref::resize_source_coord(coord_, o, pl.scales[d], in[d], pl.out[d]);
        t[o] = kernels::ref::resize_linear_tap(xo, in[d]);
      }
      return t;
    };
    const std::vector<kernels::ref::LinearTap> taps_w = taps(rank - 1);
    const std::vector<kernels::ref::LinearTap> taps_h =
        rank >= 2 ? taps(rank - 2) : std::vector<kernels::ref::LinearTap>(1);
    kernels::ref::ResizeBilinearParams p;
    p.in_w = in[rank - 1];
    p.out_w = pl.out[rank - 1];
    p.in_h = rank >= 2 ? in[rank - 2] : 1;
    p.out_h = rank >= 2 ? pl.out[rank - 2] : 1;
    p.planes = x.numel() / (p.in_h * p.in_w);
    p.taps_h = taps_h.data();
    p.taps_w = taps_w.data();
    const int64_t rows = p.planes * p.out_h;
#pragma omp parallel for num_threads(ctx.num_threads) schedule(static)
    for (int64_t r = 0; r < rows; ++r) kernels::ref::f32_resize_bilinear(p, xd, yd, r, r + 1);
  }

 private:
  struct Plan {
    Shape out;
    std::vector<float> scales;  // per dim, used by the coordinate transform
  };

  Plan plan(std::span<const InferInput> inputs) const {
    const Shape& x = inputs[0].shape;
    const int64_t rank = static_cast<int64_t>(x.size());
    TERN_CHECK(rank >= 1, ShapeError, "{}: expected input X of rank >= 1, but got a scalar",
               where());
    Plan pl;
    std::vector<int64_t> sizes;
    if (upsample_ && ctx_.opset < 9) {
      pl.scales = scales_attr_;
    } else {
      const size_t scales_index = (!upsample_ && ctx_.opset >= 11) ? 2 : 1;
      const size_t sizes_index = 3;
      auto given = [&](size_t i) {
        return i < inputs.size() && inputs[i].present && shape_numel(inputs[i].shape) > 0;
      };
      const bool has_scales = given(scales_index);
      const bool has_sizes = !upsample_ && ctx_.opset >= 11 && given(sizes_index);
      TERN_CHECK(has_scales != has_sizes, ModelError,
                 "{}: expected exactly one of the inputs scales and sizes to be non-empty, "
                 "but got {}",
                 where(), has_scales ? "both" : "neither");
      if (has_scales) {
        const Tensor& t = require_value(inputs, static_cast<int>(scales_index));
        check_dtype(t.dtype(), {DType::kFloat32}, where(), static_cast<int>(scales_index),
                    "scales");
        pl.scales = t.to_float_vector();
      } else {
        const Tensor& t = require_value(inputs, static_cast<int>(sizes_index));
        check_dtype(t.dtype(), {DType::kInt64}, where(), static_cast<int>(sizes_index), "sizes");
        sizes = t.to_int64_vector();
      }
    }
    const size_t n = sizes.empty() ? pl.scales.size() : sizes.size();
    TERN_CHECK(static_cast<int64_t>(n) == rank, ShapeError,
               "{}: expected {} with {} values (one per dim of X {}), but got {}", where(),
               sizes.empty() ? "scales" : "sizes", rank, shape_str(x), n);

    pl.out.resize(rank);
    if (sizes.empty()) {
      for (int64_t d = 0; d < rank; ++d) {
        TERN_CHECK(std::isfinite(pl.scales[d]), ShapeError,
                   "{}: expected finite scales, but got {}", where(), pl.scales);
        TERN_CHECK(pl.scales[d] > 0.0f, InvalidArgument, "{}: expected scales > 0, but got {}",
                   where(), pl.scales);
        // floor(in * scale) as the spec says; the float product is exact in double. Only
        // a value below 2^63 converts to int64 (a larger one is undefined behaviour).
        const double out =
            std::floor(static_cast<double>(x[d]) * static_cast<double>(pl.scales[d]));
        TERN_CHECK(out < 0x1p63, ShapeError,
                   "{}: scale {} makes output dim {} (input {}) {:g}, which overflows int64",
                   where(), pl.scales[d], d, x[d], out);
        pl.out[d] = static_cast<int64_t>(out);
      }
    } else {
      pl.scales.resize(rank);
      for (int64_t d = 0; d < rank; ++d) {
        TERN_CHECK(sizes[d] >= 0 && (x[d] > 0 || sizes[d] == 0), InvalidArgument,
                   "{}: expected sizes >= 0 (and 0 for an empty input dim), but got {} for "
                   "input {}",
                   where(), sizes, shape_str(x));
        pl.out[d] = sizes[d];
        pl.scales[d] = x[d] > 0 ? static_cast<float>(sizes[d]) / static_cast<float>(x[d]) : 1.0f;
      }
    }
    checked_numel(pl.out, where());
    if (linear_) {
      for (int64_t d = 0; d + 2 < rank; ++d) {
        TERN_CHECK(pl.out[d] == x[d], UnsupportedOpError,
                   "{}: linear mode resizes only the last two dims, but dim {} changes from "
                   "{} to {} (input {})",
                   where(), d, x[d], pl.out[d], shape_str(x));
      }
    }
    return pl;
  }

  bool upsample_;
  bool linear_ = false;
  ResizeCoordMode coord_ = ResizeCoordMode::kAsymmetric;
  ResizeNearestMode nearest_ = ResizeNearestMode::kSimple;
  std::vector<float> scales_attr_;
};

class ResizeNodeOp final : public ResizeOp {
 public:
  ResizeNodeOp(const Attrs& a, const OpContext& ctx) : ResizeOp(a, ctx, false) {}
};

class UpsampleOp final : public ResizeOp {
 public:
  UpsampleOp(const Attrs& a, const OpContext& ctx) : ResizeOp(a, ctx, true) {}
};

}  // namespace

void register_resize(OpRegistry& r) {
  r.add(make_schema<ResizeNodeOp>("Resize", 1, 4));
  r.add(make_schema<UpsampleOp>("Upsample", 1, 2));
}

}  // namespace tern::ops
