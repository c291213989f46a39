// ONNX TensorProto.DataType codes <-> tern DTypes (onnx.proto: 1 FLOAT ... 16 BFLOAT16).
// In base (not onnx/) because ops such as Cast carry a type code in an attribute.
#pragma once

#include <cstdint>
#include <optional>

#include "tern/tensor.h"

namespace tern {

/// The DType of an ONNX data type code, or nullopt for a code tern has no dtype for
/// (0 UNDEFINED, 14/15 COMPLEX, unknown codes).
std::optional<DType> dtype_from_onnx(int64_t code);

/// The ONNX data type code of `t` (1 FLOAT, 10 FLOAT16, 16 BFLOAT16, ...).
int onnx_dtype_code(DType t);

}  // namespace tern
