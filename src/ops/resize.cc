// Resize (ONNX Resize-10/11/13) and Upsample (ONNX Upsample-7/9), modes nearest, linear
// and cubic (Resize-11+), float32. Kernels: kernels/resize/resize.h (nearest) and
// kernels/reference/resize.h (index tables, linear, cubic).
#include "kernels/resize/resize.h"

#include <algorithm>
#include <cmath>

#include "ops/op_args.h"
#include "ops/parallel.h"
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
/// Every mode resizes any dims: nearest gathers; linear and cubic (cubic_coeff_a,
/// exclude_outside) run one separable pass per dim, reading edge values beyond the input.
/// align_corners and pytorch_half_pixel use in * scale (sizes[d] with sizes; not the
/// floored output size) as the output length, as the ONNX reference does; every mode but
/// tf_crop_and_resize maps coordinates with kernels::ref::resize_source_coord (double).
/// tf_crop_and_resize maps outputs into roi (starts..., ends...) and writes
/// extrapolation_value where the coordinate falls outside the input; with scales its
/// output size is floor(in * (end - start) * scale).
/// half_pixel_symmetric and the opset-18 attributes (antialias, axes,
/// keep_aspect_ratio_policy) are UnsupportedOpError. Bad attribute values are
/// ModelError; scales or sizes of the wrong length ShapeError; non-positive ones and roi
/// values that are not finite InvalidArgument; a scale that is not finite (inf, NaN) or
/// gives an output dim beyond int64 (1e30), and output shapes whose element count
/// overflows int64, ShapeError.
class ResizeOp : public Op {
 public:
  ResizeOp(const Attrs& a, const OpContext& ctx, bool upsample) : Op(ctx), upsample_(upsample) {
    const std::string mode = a.get_enum("mode", "nearest", {"nearest", "linear", "cubic"});
    linear_ = mode == "linear";
    cubic_ = mode == "cubic";
    cubic_a_ = a.get_float("cubic_coeff_a", -0.75f);
    exclude_outside_ = a.get_int("exclude_outside", 0) != 0;
    extrapolation_ = a.get_float("extrapolation_value", 0.0f);
    if (!upsample_ && ctx.opset >= 11) {
      const std::string coord =
          a.get_enum("coordinate_transformation_mode", "half_pixel",
                     {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                      "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"});
      TERN_CHECK(coord != "half_pixel_symmetric", UnsupportedOpError,
                 "{}: coordinate_transformation_mode '{}' is not supported (supported: "
                 "half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                 "tf_half_pixel_for_nn, tf_crop_and_resize)",
                 where(), coord);
      tf_crop_ = coord == "tf_crop_and_resize";
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
    } else {
      TERN_CHECK(!cubic_, ModelError, "{}: mode 'cubic' needs Resize-11 or later (opset {})",
                 where(), ctx.opset);
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

    if (!linear_ && !cubic_ && !tf_crop_) {
      // Per dim: the input index each output index reads.
      std::vector<std::vector<int64_t>> index(rank);
      std::vector<const int64_t*> index_ptr(rank);
      for (int d = 0; d < rank; ++d) {
        index[d].resize(pl.out[d]);
        for (int64_t o = 0; o < pl.out[d]; ++o) {
          const double xo = source_coord(pl, in, d, o);
          index[d][o] = kernels::ref::resize_nearest_index(nearest_, xo, pl.scales[d], in[d]);
        }
        index_ptr[d] = index[d].data();
      }
      kernels::ref::ResizeNearestParams p;
      p.rank = rank;
      p.in_shape = in.data();
      p.out_shape = pl.out.data();
      p.src_index = index_ptr.data();
      // A trailing dim that is not resized (NCHWc's lanes) is copied in runs.
      bool identity = rank >= 2 && pl.out[rank - 1] == in[rank - 1];
      for (int64_t o = 0; identity && o < pl.out[rank - 1]; ++o) identity = index[rank - 1][o] == o;
      if (identity) {
        p.rank = rank - 1;
        p.inner = in[rank - 1];
      }
      const int64_t rows = shape_numel(pl.out) / (pl.out[p.rank - 1] * p.inner);
      // Rows of [N, C(/c), H] (of [N, C] when W is not resized either): each thread takes
      // the same band of the last row dim in every plane, for an image about the rows the
      // convolutions around it give that thread (ops/parallel.h).
      const int64_t height = p.rank >= 3 ? pl.out[p.rank - 2] : rows;
      const int64_t planes = rows / std::max<int64_t>(height, 1);
      parallel_ranges(height, ctx.num_threads, [&](int64_t begin, int64_t end) {
        for (int64_t plane = 0; plane < planes; ++plane) {
          kernels::f32_resize_nearest(p, xd, yd, plane * height + begin, plane * height + end);
        }
      });
      return;
    }

    // linear, cubic and tf_crop_and_resize: one separable pass per dim.
    Tensor cur = x;
    std::vector<std::vector<bool>> outside(rank);
    for (int d = 0; d < rank; ++d) {
      std::vector<kernels::ref::ResizeTaps> t(pl.out[d]);
      outside[d].assign(pl.out[d], false);
      for (int64_t o = 0; o < pl.out[d]; ++o) t[o] = taps(pl, in, d, o, outside[d]);
      Shape next_shape = cur.shape();
      next_shape[d] = pl.out[d];
      Tensor next = Tensor::empty(DType::kFloat32, next_shape);
      int64_t outer = 1, inner = 1;
      for (int k = 0; k < d; ++k) outer *= next_shape[k];
      for (int k = d + 1; k < rank; ++k) inner *= next_shape[k];
      kernels::ref::f32_resize_axis(cur.data<float>(), next.data<float>(), outer, in[d], pl.out[d],
                                    inner, t.data());
      cur = next;
    }
    std::copy_n(cur.data<float>(), cur.numel(), yd);
    if (tf_crop_) {
      // An output whose coordinate falls outside the input along any dim is
      // extrapolation_value.
      const int64_t total = shape_numel(pl.out);
      for (int64_t e = 0; e < total; ++e) {
        int64_t rem = e;
        bool out = false;
        for (int d = rank - 1; d >= 0; --d) {
          out = out || outside[d][rem % pl.out[d]];
          rem /= pl.out[d];
        }
        if (out) yd[e] = extrapolation_;
      }
    }
  }

 private:
  struct Plan {
    Shape out;
    std::vector<float> scales;    // per dim, used by the coordinate transform
    std::vector<double> lengths;  // per dim: in * scale (sizes[d] when sizes were given)
    std::vector<double> roi;      // tf_crop_and_resize: starts, then ends (2 * rank)
  };

  // x_original of output index o along dim d (every mode; one transform, in double).
  double source_coord(const Plan& pl, const Shape& in, int d, int64_t o) const {
    const double n = static_cast<double>(in[d]);
    if (tf_crop_) {
      const double x = static_cast<double>(o);
      const double s0 = pl.roi[d], s1 = pl.roi[in.size() + d];
      const double c = pl.out[d] == 1
                           ? (s1 - s0) * (n - 1) / 2
                           : x * (s1 - s0) * (n - 1) / static_cast<double>(pl.out[d] - 1);
      return c + s0 * (n - 1);
    }
    return kernels::ref::resize_source_coord(coord_, o, pl.scales[d], pl.lengths[d], in[d]);
  }

  // The taps of output index o along dim d; marks outside[o] for a tf_crop_and_resize
  // coordinate beyond the input.
  kernels::ref::ResizeTaps taps(const Plan& pl, const Shape& in, int d, int64_t o,
                                std::vector<bool>& outside) const {
    kernels::ref::ResizeTaps t;
    const int64_t n = in[d];
    const double xo = source_coord(pl, in, d, o);
    // Written so that a NaN coordinate counts as outside.
    if (tf_crop_ && !(xo >= 0 && xo <= static_cast<double>(n - 1))) {
      outside[o] = true;
      t.n = 1;
      return t;  // index 0, weight 0: replaced by extrapolation_value
    }
    auto clamp = [n](int64_t i) { return std::clamp<int64_t>(i, 0, n - 1); };
    if (!linear_ && !cubic_) {
      t.n = 1;
      t.index[0] = kernels::ref::resize_nearest_index(nearest_, xo, pl.scales[d], n);
      t.weight[0] = 1.0f;
      return t;
    }
    // Only a finite coordinate within int64 converts to an index (anything else would be
    // undefined behaviour); the transforms give one for any valid plan.
    TERN_CHECK(std::abs(xo) < 0x1p62, InvalidArgument,
               "{}: source coordinate {} of output index {} along dim {} is not finite or "
               "beyond int64",
               where(), xo, o, d);
    const double f = std::floor(xo);
    const double frac = xo - f;
    const int64_t i0 = static_cast<int64_t>(f);
    if (linear_) {
      t.n = 2;
      t.index[0] = clamp(i0);
      t.index[1] = clamp(i0 + 1);
      t.weight[0] = static_cast<float>(1.0 - frac);
      t.weight[1] = static_cast<float>(frac);
      return t;
    }
    double w[4];
    kernels::ref::resize_cubic_weights(frac, cubic_a_, w);
    double sum = 0.0;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = i0 - 1 + k;
      if (exclude_outside_ && (i < 0 || i >= n)) w[k] = 0.0;
      sum += w[k];
    }
    t.n = 4;
    for (int k = 0; k < 4; ++k) {
      t.index[k] = clamp(i0 - 1 + k);
      t.weight[k] = static_cast<float>(exclude_outside_ && sum != 0.0 ? w[k] / sum : w[k]);
    }
    return t;
  }

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
    if (tf_crop_) {
      TERN_CHECK(has_input(inputs, 1), ModelError,
                 "{}: coordinate_transformation_mode tf_crop_and_resize needs the roi input",
                 where());
      const Tensor& t = require_value(inputs, 1);
      check_dtype(t.dtype(), {DType::kFloat32, DType::kFloat64}, where(), 1, "roi");
      for (float v : t.to_float_vector()) pl.roi.push_back(v);
      TERN_CHECK(static_cast<int64_t>(pl.roi.size()) == 2 * rank, ShapeError,
                 "{}: expected roi with {} values (starts and ends of each dim of X {}), but got "
                 "{}",
                 where(), 2 * rank, shape_str(x), pl.roi.size());
      for (double v : pl.roi) {
        TERN_CHECK(std::isfinite(v), InvalidArgument, "{}: expected finite roi values, but got {}",
                   where(), pl.roi);
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
            std::floor(static_cast<double>(x[d]) * static_cast<double>(pl.scales[d]) *
                       (tf_crop_ ? pl.roi[rank + d] - pl.roi[d] : 1.0));
        TERN_CHECK(out < 0x1p63, ShapeError,
                   "{}: scale {} makes output dim {} (input {}) {:g}, which overflows int64",
                   where(), pl.scales[d], d, x[d], out);
        pl.out[d] = static_cast<int64_t>(out);
        pl.lengths.push_back(static_cast<double>(x[d]) * static_cast<double>(pl.scales[d]));
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
        pl.lengths.push_back(static_cast<double>(sizes[d]));
      }
    }
    checked_numel(pl.out, where());
    return pl;
  }

  bool upsample_;
  bool linear_ = false;
  bool cubic_ = false;
  bool tf_crop_ = false;
  bool exclude_outside_ = false;
  float cubic_a_ = -0.75f;
  float extrapolation_ = 0.0f;
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
