// visit_dtype: calls a generic lambda with the C++ element type of a DType, so a kernel
// written once as a template covers every dtype (the switch lives here, once).
#pragma once

#include <type_traits>

#include "base/check.h"
#include "tern/tensor.h"

namespace tern {

/// Calls `fn(std::type_identity<T>{})` with T the element type of `t`: float, double,
/// Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
/// uint64_t or bool. Returns what `fn` returns. Strings are not numbers: kString throws
/// UnsupportedOpError (string tensors go through their own code, see DType::kString).
template <typename Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat32: return fn(std::type_identity<float>{});
    case DType::kFloat16: return fn(std::type_identity<Float16>{});
    case DType::kInt8: return fn(std::type_identity<int8_t>{});
    case DType::kUint8: return fn(std::type_identity<uint8_t>{});
    case DType::kInt32: return fn(std::type_identity<int32_t>{});
    case DType::kInt64: return fn(std::type_identity<int64_t>{});
    case DType::kBool: return fn(std::type_identity<bool>{});
    case DType::kFloat64: return fn(std::type_identity<double>{});
    case DType::kInt16: return fn(std::type_identity<int16_t>{});
    case DType::kUint16: return fn(std::type_identity<uint16_t>{});
    case DType::kUint32: return fn(std::type_identity<uint32_t>{});
    case DType::kUint64: return fn(std::type_identity<uint64_t>{});
    case DType::kBFloat16: return fn(std::type_identity<BFloat16>{});
    case DType::kString: break;
  }
  if (t == DType::kString) {
    TERN_THROW(UnsupportedOpError, "string tensors are only supported by Cast, CastLike and "
                                   "Identity");
  }
  return fn(std::type_identity<float>{});  // unreachable: every enumerator is handled
}

/// True when T is one of the integer element types (not bool).
template <typename T>
inline constexpr bool is_integer_element_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace tern
