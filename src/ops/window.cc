#include "ops/window.h"

#include "base/check.h"

namespace tern::ops {

namespace {

void check_min(const Attrs& a, const std::vector<int64_t>& v, const char* name, int64_t min) {
  for (int64_t x : v) {
    TERN_CHECK(x >= min, ModelError, "{}: attribute '{}' must have values >= {}, but got {}",
               a.where(), name, min, v);
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
  const int64_t span = d * (k - 1) + 1;  // extent of one dilated window
  WindowExtent e;
  switch (auto_pad) {
    case AutoPad::kNotSet: {
      e.pad_begin = pb;
      e.pad_end = pe;
      const int64_t room = in + pb + pe - span;
      TERN_CHECK(room >= 0, ShapeError,
                 "{}: expected a padded input extent of at least {} (the dilated kernel), "
                 "but got {} (input {} + pads {} + {})",
                 where, span, in + pb + pe, in, pb, pe);
      e.out = (ceil_mode ? kernels::ref::ceil_div(room, s) : room / s) + 1;
      // With ceil_mode, a last window that would start in the end padding is dropped.
      if (ceil_mode && (e.out - 1) * s >= in + pb) --e.out;
      break;
    }
    case AutoPad::kSameUpper:
    case AutoPad::kSameLower: {
      e.out = kernels::ref::ceil_div(in, s);
      const int64_t total = std::max<int64_t>(0, (e.out - 1) * s + span - in);
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

}  // namespace tern::ops
