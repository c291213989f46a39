#include "base/onnx_dtype.h"

namespace tern {

namespace {

// Indexed by ONNX code; nullopt where tern has no dtype.
constexpr std::optional<DType> kByCode[] = {
    std::nullopt,      // 0 UNDEFINED
    DType::kFloat32,   // 1 FLOAT
    DType::kUint8,     // 2 UINT8
    DType::kInt8,      // 3 INT8
    DType::kUint16,    // 4 UINT16
    DType::kInt16,     // 5 INT16
    DType::kInt32,     // 6 INT32
    DType::kInt64,     // 7 INT64
    DType::kString,    // 8 STRING
    DType::kBool,      // 9 BOOL
    DType::kFloat16,   // 10 FLOAT16
    DType::kFloat64,   // 11 DOUBLE
    DType::kUint32,    // 12 UINT32
    DType::kUint64,    // 13 UINT64
    std::nullopt,      // 14 COMPLEX64
    std::nullopt,      // 15 COMPLEX128
    DType::kBFloat16,  // 16 BFLOAT16
};

}  // namespace

std::optional<DType> dtype_from_onnx(int64_t code) {
  if (code < 0 || code >= static_cast<int64_t>(std::size(kByCode))) return std::nullopt;
  return kByCode[code];
}

int onnx_dtype_code(DType t) {
  for (int code = 0; code < static_cast<int>(std::size(kByCode)); ++code) {
    if (kByCode[code] == t) return code;
  }
  return 0;
}

}  // namespace tern
