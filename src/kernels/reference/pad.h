// Reference padding, float32 and (bitwise) any dtype. ONNX Pad-2/11/13.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// ONNX Pad modes.
enum class PadMode {
  kConstant,  ///< fill with a value
  kReflect,   ///< mirror without repeating the edge: [a b c] -> b | a b c | b
  kEdge,      ///< repeat the edge: [a b c] -> a | a b c | c
};

/// Pads (or crops, for negative pads) a contiguous rank-`rank` tensor. Along dim d the
/// output has in_shape[d] + pad_begin[d] + pad_end[d] elements (>= 0). Negative pads
/// first crop the input; reflect and edge then mirror or repeat the cropped input, which
/// must keep at least one element along every dim that is padded (the op checks).
struct PadParams {
  int rank = 0;
  const int64_t* in_shape = nullptr;
  const int64_t* pad_begin = nullptr;
  const int64_t* pad_end = nullptr;
  PadMode mode = PadMode::kConstant;
  float value = 0.0f;  ///< fill value of kConstant
};

/// The input index that output index `o` reads along one dim of input length `in`, or
/// -1 when it is a constant fill. Reflect repeats with period 2*(n-1) (numpy's
/// "reflect" for pads longer than the input), n being the length after cropping.
int64_t pad_source_index(int64_t o, int64_t in, int64_t pad_begin, int64_t pad_end, PadMode mode);

/// Writes output rows [row_begin, row_end) of y (a row is a line along the last dim;
/// rows = product of the output dims but the last, 1 for rank 1).
void f32_pad(const PadParams& p, const float* x, float* y, int64_t row_begin, int64_t row_end);

/// f32_pad for any dtype: elements of elem_size bytes (1, 2, 4 or 8) copied bit for bit;
/// `value` points at one element (the constant fill; p.value is ignored).
void pad_any(const PadParams& p, int elem_size, const void* x, void* y, const void* value,
             int64_t row_begin, int64_t row_end);

}  // namespace tern::kernels::ref
