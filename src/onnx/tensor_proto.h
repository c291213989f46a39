// Checking and decoding ONNX TensorProtos (initializers, Constant values, .pb files).
// Internal to src/onnx: includes the protoc-generated classes.
#pragma once

#include <cstdint>
#include <string>

#include "onnx/loader.h"
#include "onnx/onnx.pb.h"
#include "tern/tensor.h"

namespace tern::onnx {

/// Maps an ONNX TensorProto.DataType (also TypeProto.Tensor.elem_type) to a tern DType.
/// `where` names the tensor or value for messages ("initializer 'w'"). Throws ModelError
/// for UNDEFINED or a number ONNX does not define, UnsupportedOpError for a valid ONNX
/// type tern does not implement (double, int16, string, ...).
DType to_dtype(int32_t onnx_type, const std::string& where);

/// ONNX's name for a data type number ("FLOAT", "DOUBLE", ...; "UNKNOWN(99)" otherwise).
std::string onnx_type_name(int32_t onnx_type);

/// What a TensorProto declares, checked but not yet decoded.
struct TensorInfo {
  DType dtype = DType::kFloat32;
  Shape shape;
  int64_t bytes = 0;  ///< numel * element size
};

/// Checks a TensorProto without allocating anything: dtype, dims (negative, overflow,
/// bytes over limits.max_tensor_bytes), the data fields (external data or segments are
/// unsupported; raw_data must hold exactly the declared bytes, or the typed field for the
/// dtype exactly numel values; no other data field set). Throws ModelError /
/// UnsupportedOpError starting with `where`.
TensorInfo check_tensor(const ::onnx::TensorProto& t, const LoadLimits& limits,
                        const std::string& where);

/// Checks `t` as check_tensor() does and decodes it into a new contiguous tensor. Typed
/// int32_data values must fit their dtype (int8, uint8, bool 0/1, float16 bits); raw bool
/// bytes are normalized to 0/1. Source: onnx.proto, message TensorProto.
Tensor decode_tensor(const ::onnx::TensorProto& t, const LoadLimits& limits,
                     const std::string& where);

}  // namespace tern::onnx
