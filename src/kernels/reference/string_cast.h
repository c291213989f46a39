// Cast to and from strings (ONNX Cast-13, "casting from string / to string").
#pragma once

#include <cstdint>
#include <string>

#include "tern/tensor.h"

namespace tern::kernels::ref {

/// Writes n elements of dtype `from` (read at x[i * x_stride]) as text to y[0..n):
/// floats in the shortest form that reads back to the same value ("0.039187793", "1e-05",
/// "nan", "inf", "-inf"; float16/bfloat16 through float), integers in decimal, bool as
/// "1" / "0". `from` == kString copies.
void cast_to_string(int64_t n, DType from, const void* x, int64_t x_stride, std::string* y);

/// Parses n strings (x[i * x_stride]) into dtype `to`, written contiguously at y. Float
/// targets use strtod rules (leading/trailing blanks, "NaN", "INF", "+INF", "-inf", hex);
/// integer targets parse a decimal integer, else a float truncated toward zero and
/// saturated; bool is true for any non-zero number. Throws InvalidArgument naming the
/// element (first_index + i) when a string is not a number.
void cast_from_string(int64_t n, const std::string* x, int64_t x_stride, DType to, void* y,
                      int64_t first_index = 0);

}  // namespace tern::kernels::ref
