#include "kernels/reference/string_cast.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "base/check.h"
#include "base/dtype_dispatch.h"
#include "base/float16.h"

namespace tern::kernels::ref {

namespace {

// Shortest round-trip text of a float or double (std::to_chars without a format).
template <typename F>
std::string shortest(F v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <typename T>
std::string to_text(T v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return shortest(half_to_float(v.bits));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return shortest(bfloat16_to_float(v.bits));
  } else if constexpr (std::is_floating_point_v<T>) {
    return shortest(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    return fmt::format("{}", v);
  }
}

// strtod over the whole string (surrounding blanks allowed); nullopt-like failure via ok.
double parse_double(const std::string& s, int64_t i) {
  const char* begin = s.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
  TERN_CHECK(end != begin && end && *end == '\0', InvalidArgument,
             "string element {} (\"{}\") is not a number", i, s);
  return v;
}

template <typename T>
T from_text(const std::string& s, int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return parse_double(s, i) != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    T v{};
    const char* b = s.data();
    const char* e = s.data() + s.size();
    while (b < e && *b == ' ') ++b;
    if (b < e && *b == '+') ++b;
    const auto r = std::from_chars(b, e, v);
    if (r.ec == std::errc() && r.ptr == e) return v;
    const double d = parse_double(s, i);
    if (std::isnan(d)) return 0;
    if (d <= static_cast<double>(std::numeric_limits<T>::min())) {
      return std::numeric_limits<T>::min();
    }
    if (d >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(d);
  } else if constexpr (std::is_same_v<T, Float16>) {
    return Float16{float_to_half(static_cast<float>(parse_double(s, i)))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{float_to_bfloat16(static_cast<float>(parse_double(s, i)))};
  } else {
    return static_cast<T>(parse_double(s, i));
  }
}

}  // namespace

void cast_to_string(int64_t n, DType from, const void* x, int64_t sx, std::string* y) {
  if (from == DType::kString) {
    const auto* xs = static_cast<const std::string*>(x);
    for (int64_t i = 0; i < n; ++i) y[i] = xs[i * sx];
    return;
  }
  visit_dtype(from, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xs = static_cast<const T*>(x);
    for (int64_t i = 0; i < n; ++i) y[i] = to_text(xs[i * sx]);
  });
}

void cast_from_string(int64_t n, const std::string* x, int64_t sx, DType to, void* y,
                      int64_t first_index) {
  if (to == DType::kString) {
    cast_to_string(n, DType::kString, x, sx, static_cast<std::string*>(y));
    return;
  }
  visit_dtype(to, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* ys = static_cast<T*>(y);
    for (int64_t i = 0; i < n; ++i) ys[i] = from_text<T>(x[i * sx], first_index + i);
  });
}

}  // namespace tern::kernels::ref
