#include "ops/window.h"

#include "base/check.h"
#include "ops/op_args.h"

namespace tern::ops {

namespace {

void check_min(const Attrs& a, const std::vector<int64_t>& v, const char* name, int64_t min) {
  for (int64_t x : v) {
    TERN_CHECK(x >= min, ModelError, "{}: attribute '{}' must have values >= {}, but got {}",
               a.where(), name, min, v);
    TERN_CHECK(x <= kMaxWindowAttr, ModelError,
               "{}: attribute '{}' must have values <= {}, but got {}", a.where(), name,
               kMaxWindowAttr, v);
  }
}

}  // namespace

int WindowAttrs::spatial_rank() const {
  if (!kernel_shape.empty()) return static_cast<int>(kernel_shape.size());
  if (!strides.empty()) return static_cast<int>(strides.size());
  if (!dilations.empty()) return static_cast<int>(dilations.size());
  return static_cast<int>(pads.size() / 2);
}

WindowAttrs parse_window_attrs(const Attrs& a, bool kernel_required) {
  WindowAttrs w;
  if (kernel_required) {
    w.kernel_shape = a.require_ints("kernel_shape");
  } else {
    w.kernel_shape = a.get_ints("kernel_shape", {});
  }
  w.strides = a.get_ints("strides", {});
  w.dilations = a.get_ints("dilations", {});
  w.pads = a.get_ints("pads", {});
  const std::string ap =
      a.get_enum("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
  w.auto_pad = ap == "SAME_UPPER"   ? AutoPad::kSameUpper
               : ap == "SAME_LOWER" ? AutoPad::kSameLower
               : ap == "VALID"      ? AutoPad::kValid
                                    : AutoPad::kNotSet;

  check_min(a, w.kernel_shape, "kernel_shape", 1);
  check_min(a, w.strides, "strides", 1);
  check_min(a, w.dilations, "dilations", 1);
  check_min(a, w.pads, "pads", 0);
  TERN_CHECK(w.pads.size() % 2 == 0, ModelError,
             "{}: attribute 'pads' must have 2 values per spatial dim, but has {}", a.where(),
             w.pads.size());
  TERN_CHECK(!(kernel_required && w.kernel_shape.empty()), ModelError,
             "{}: attribute 'kernel_shape' must not be empty", a.where());

  const size_t n = static_cast<size_t>(w.spatial_rank());
  auto check_len = [&](const std::vector<int64_t>& v, size_t expected, const char* name) {
    TERN_CHECK(v.empty() || v.size() == expected, ModelError,
               "{}: attribute '{}' must have {} values (one per spatial dim{}), but has {}",
               a.where(), name, expected, expected == 2 * n ? ", begin and end" : "", v.size());
  };
  check_len(w.strides, n, "strides");
  check_len(w.dilations, n, "dilations");
  check_len(w.pads, 2 * n, "pads");
  return w;
}

void check_window_rank(const WindowAttrs& w, int spatial, const std::string& where,
                       int64_t input_rank) {
  const int n = w.spatial_rank();
  TERN_CHECK(n == 0 || n == spatial, ShapeError,
             "{}: expected a {} input (N x C x {} spatial dims, as the attributes say), but "
             "got rank {}",
             where, rank_name(n + 2), n, input_rank);
}

WindowExtent resolve_window(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                            AutoPad auto_pad, bool ceil_mode, const std::string& where) {
  TERN_CHECK(k >= 1 && s >= 1 && d >= 1 && pb >= 0 && pe >= 0, ShapeError,
             "{}: expected kernel, stride and dilation >= 1 and pads >= 0, but got kernel {}, "
             "stride {}, dilation {}, pads {} + {}",
             where, k, s, d, pb, pe);
  // Extent of one dilated window: d * (k - 1) + 1.
  const int64_t span = checked_add(checked_mul(d, k - 1, where,
                                               "the dilated kernel extent (dilation {} * "
                                               "(kernel {} - 1) + 1)",
                                               d, k),
                                   1, where, "the dilated kernel extent");
  WindowExtent e;
  switch (auto_pad) {
    case AutoPad::kNotSet: {
      e.pad_begin = pb;
      e.pad_end = pe;
      const int64_t padded = checked_add(checked_add(in, pb, where, "the padded input extent"), pe,
                                         where, "the padded input extent");
      const int64_t room = padded - span;
      TERN_CHECK(room >= 0, ShapeError,
                 "{}: expected a padded input extent of at least {} (the dilated kernel), "
                 "but got {} (input {} + pads {} + {})",
                 where, span, padded, in, pb, pe);
      e.out = (ceil_mode ? kernels::ref::ceil_div(room, s) : room / s) + 1;
      // With ceil_mode, a last window that would start in the end padding is dropped.
      if (ceil_mode && checked_mul(e.out - 1, s, where, "the last window start") >= in + pb) {
        --e.out;
      }
      break;
    }
    case AutoPad::kSameUpper:
    case AutoPad::kSameLower: {
      e.out = kernels::ref::ceil_div(in, s);
      // (out - 1) * s < in, so only adding the span can overflow.
      const int64_t reach =
          checked_add((e.out - 1) * s, span, where, "the extent the windows cover");
      const int64_t total = std::max<int64_t>(0, reach - in);
      const int64_t half = total / 2;
      e.pad_begin = auto_pad == AutoPad::kSameUpper ? half : total - half;
      e.pad_end = total - e.pad_begin;
      break;
    }
    case AutoPad::kValid: {
      const int64_t room = in - span;
      TERN_CHECK(room >= 0, ShapeError,
                 "{}: expected an input extent of at least {} (the dilated kernel, "
                 "auto_pad VALID), but got {}",
                 where, span, in);
      // ONNX: ceil((in - span + 1) / s) with ceil_mode, which equals the floor form.
      e.out = room / s + 1;
      break;
    }
  }
  TERN_CHECK(e.out >= 1, ShapeError, "{}: the output would be empty (input extent {})", where, in);
  return e;
}

kernels::ref::Dims3 to_dims3(const std::vector<int64_t>& v, int64_t fill) {
  kernels::ref::Dims3 r{fill, fill, fill};
  const size_t n = v.size();
  if (n >= 1) r.w = v[n - 1];
  if (n >= 2) r.h = v[n - 2];
  if (n >= 3) r.d = v[n - 3];
  return r;
}

std::string rank_name(int64_t rank) { return fmt::format("{}-D", rank); }

std::vector<int64_t> check_conv_operands(const WindowAttrs& window, const Shape& x, const Shape& w,
                                         const std::string& where) {
  const int64_t rank = static_cast<int64_t>(x.size());
  TERN_CHECK(rank >= 3 && rank <= 5, ShapeError,
             "{}: expected input X of rank 3 to 5 (N x C x 1 to 3 spatial dims), but got "
             "shape {}",
             where, shape_str(x));
  check_window_rank(window, static_cast<int>(rank) - 2, where, rank);
  TERN_CHECK(static_cast<int64_t>(w.size()) == rank, ShapeError,
             "{}: expected weight W of rank {} (like X), but got shape {}", where, rank,
             shape_str(w));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  TERN_CHECK(window.kernel_shape.empty() || window.kernel_shape == kernel, ShapeError,
             "{}: attribute kernel_shape {} does not match weight shape {}", where,
             window.kernel_shape, shape_str(w));
  return kernel;
}

void check_conv_bias(std::span<const InferInput> inputs, int64_t out_channels,
                     const std::string& where) {
  if (!has_input(inputs, 2)) return;
  TERN_CHECK(inputs[2].shape == Shape{out_channels}, ShapeError,
             "{}: expected bias B of shape [{}] (one per output channel), but got {}", where,
             out_channels, shape_str(inputs[2].shape));
}

Shape window_output_shape(int64_t batch, int64_t out_channels, const kernels::ref::Dims3& out,
                          int spatial) {
  Shape y = {batch, out_channels};
  const int64_t extents[3] = {out.d, out.h, out.w};
  for (int i = 3 - spatial; i < 3; ++i) y.push_back(extents[i]);
  return y;
}

int64_t conv_macs(int64_t numel, const Shape& w) {
  return w.empty() ? 0 : saturating_mul(numel, saturating_product(std::span(w).subspan(1)));
}

}  // namespace tern::ops
