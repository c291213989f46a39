// ConvTranspose (ONNX ConvTranspose-11): 1-D, 2-D and 3-D transposed convolution, NCHW,
// float32, with groups, strides, dilations, pads, output_padding, output_shape and
// auto_pad. Kernel: kernels/reference/conv_transpose.h.
#include "kernels/reference/conv_transpose.h"

#include "ops/op_args.h"
#include "ops/registry.h"
#include "ops/window.h"

namespace tern::ops {

namespace {

/// ConvTranspose: the gradient of Conv with respect to its input.
///   X: [N, C, D1, ..., Dn], W: [C, M/group, k1, ..., kn], B: [M] (optional),
///   Y: [N, M, O1, ..., On] with, per dim (span = dilation*(k-1)+1):
///     output_shape given: Oi = output_shape[i], pads derived from
///       total = stride*(in-1) + output_padding + span - Oi (SAME_UPPER puts total/2 at
///       the beginning, otherwise total - total/2 goes there);
///     SAME_UPPER / SAME_LOWER: Oi = in * stride, pads derived as above;
///     VALID: Oi = stride*(in-1) + output_padding + span;
///     NOTSET: Oi = stride*(in-1) + output_padding + span - pad_begin - pad_end.
/// Errors as Conv (ShapeError, also for shape arithmetic that overflows int64;
/// ModelError; UnsupportedOpError).
class ConvTransposeOp final
    : public ConvLikeOp<kernels::ref::ConvTransposeParams, kernels::ref::f32_conv_transpose_nchw> {
 public:
  ConvTransposeOp(const Attrs& a, const OpContext& ctx)
      : ConvLikeOp(a, ctx),
        output_padding_(a.get_ints("output_padding", {})),
        output_shape_(a.get_ints("output_shape", {})) {
    for (int64_t v : output_padding_) {
      TERN_CHECK(v >= 0, ModelError,
                 "{}: attribute 'output_padding' must have values >= 0, but got {}", where(),
                 output_padding_);
    }
    for (int64_t v : output_shape_) {
      TERN_CHECK(v >= 1, ModelError,
                 "{}: attribute 'output_shape' must have values >= 1, but got {}", where(),
                 output_shape_);
    }
  }

  // Every input element meets every tap of M/group output channels, saturated.
  int64_t macs(std::span<const TensorType> inputs, std::span<const TensorType>) const override {
    return conv_macs(saturating_product(inputs[0].shape), inputs[1].shape);
  }

 private:
  kernels::ref::ConvTransposeParams geometry(const Shape& x, const Shape& w) const override {
    std::vector<int64_t> kernel = check_conv_operands(window_, x, w, where());
    const int64_t rank = static_cast<int64_t>(x.size());
    const int spatial = static_cast<int>(rank) - 2;
    TERN_CHECK(x[1] == w[0], ShapeError,
               "{}: expected input with {} channels, but got {} (weight shape {})", where(), w[0],
               x[1], shape_str(w));
    TERN_CHECK(x[1] % group_ == 0, ShapeError,
               "{}: expected a number of input channels divisible by group {}, but got {}", where(),
               group_, x[1]);
    TERN_CHECK(output_padding_.empty() || static_cast<int>(output_padding_.size()) == spatial,
               ShapeError,
               "{}: attribute output_padding {} must have {} values (one per "
               "spatial dim of the input)",
               where(), output_padding_, spatial);
    // output_shape may list the spatial dims only, or N and C too (keep the tail).
    TERN_CHECK(output_shape_.empty() || static_cast<int>(output_shape_.size()) == spatial ||
                   static_cast<int64_t>(output_shape_.size()) == rank,
               ShapeError,
               "{}: attribute output_shape {} must have {} values (one per "
               "spatial dim of the input)",
               where(), output_shape_, spatial);

    std::vector<int64_t> in(x.begin() + 2, x.end()), out(spatial), pad_begin(spatial);
    for (int i = 0; i < spatial; ++i) {
      const int64_t s = window_.stride(i);
      const int64_t d = window_.dilation(i);
      // Attributes are capped (kMaxWindowAttr), the input extent is not: check the sums.
      const int64_t span = d * (kernel[i] - 1) + 1;
      const int64_t opad = output_padding_.empty() ? 0 : output_padding_[i];
      // Output without pads: stride * (in - 1) + output_padding + span.
      const int64_t natural =
          checked_add(checked_add(checked_mul(s, in[i] - 1, where(), "stride * (input extent - 1)"),
                                  opad, where(), "the output extent of spatial dim {}", i),
                      span, where(), "the output extent of spatial dim {}", i);
      int64_t target = -1;  // output length that fixes the pads, if any
      if (!output_shape_.empty()) {
        target = output_shape_[output_shape_.size() - spatial + i];
      } else if (window_.auto_pad == AutoPad::kSameUpper ||
                 window_.auto_pad == AutoPad::kSameLower) {
        target = checked_mul(in[i], s, where(), "the SAME output extent (input * stride)");
      }
      if (target >= 0) {
        // Floor division, as the spec's formulas mean: a negative total (output_shape
        // beyond the natural size) then grows the output at the end.
        const int64_t total =
            checked_add(natural, -target, where(), "the total pad of spatial dim {}", i);
        const int64_t half = kernels::ref::floor_div(total, 2);
        out[i] = target;
        pad_begin[i] = window_.auto_pad == AutoPad::kSameUpper ? half : total - half;
      } else if (window_.auto_pad == AutoPad::kValid) {
        out[i] = natural;
        pad_begin[i] = 0;
      } else {
        // natural >= 1 - stride and pads <= kMaxWindowAttr (both capped): no overflow.
        pad_begin[i] = window_.pad_begin(i);
        out[i] = natural - pad_begin[i] - window_.pad_end(i, spatial);
      }
      TERN_CHECK(out[i] >= 1, ShapeError,
                 "{}: the output would be empty along spatial dim {} (input extent {}, "
                 "pads {} + {})",
                 where(), i, in[i], window_.pad_begin(i), window_.pad_end(i, spatial));
    }
    return make_params(x[1],
                       checked_mul(w[1], group_, where(), "the output channel count W[1] * group"),
                       in, out, kernel, pad_begin);
  }

  std::vector<int64_t> output_padding_;
  std::vector<int64_t> output_shape_;
};

}  // namespace

void register_conv_transpose(OpRegistry& r) {
  r.add(make_schema<ConvTransposeOp>("ConvTranspose", 2, 3));
}

}  // namespace tern::ops
