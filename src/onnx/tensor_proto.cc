#include "onnx/tensor_proto.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <limits>

#include "base/check.h"
#include "base/onnx_dtype.h"

namespace tern::onnx {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian: tern targets little-endian CPUs only");

namespace {

using ::onnx::TensorProto;

// The typed repeated field that holds a dtype's values when raw_data is not used
// (onnx.proto: float16, int8, uint8, int32 and bool go to int32_data).
// (onnx.proto: float16, bfloat16, the integers up to 32 bits and bool go to int32_data;
// uint32 and uint64 to uint64_data; double to double_data; strings to string_data, which
// is their only place: a string tensor has no raw_data).
enum class Field { kFloat, kInt32, kInt64, kDouble, kUint64, kString };

Field field_for(DType d) {
  switch (d) {
    case DType::kFloat32:
      return Field::kFloat;
    case DType::kInt64:
      return Field::kInt64;
    case DType::kFloat64:
      return Field::kDouble;
    case DType::kUint32:
    case DType::kUint64:
      return Field::kUint64;
    case DType::kString:
      return Field::kString;
    default:
      return Field::kInt32;
  }
}

const char* field_name(Field f) {
  switch (f) {
    case Field::kFloat:
      return "float_data";
    case Field::kInt32:
      return "int32_data";
    case Field::kInt64:
      return "int64_data";
    case Field::kDouble:
      return "double_data";
    case Field::kUint64:
      return "uint64_data";
    case Field::kString:
      return "string_data";
  }
  return "?";
}

int64_t field_count(const TensorProto& t, Field f) {
  switch (f) {
    case Field::kFloat:
      return t.float_data_size();
    case Field::kInt32:
      return t.int32_data_size();
    case Field::kInt64:
      return t.int64_data_size();
    case Field::kDouble:
      return t.double_data_size();
    case Field::kUint64:
      return t.uint64_data_size();
    case Field::kString:
      return t.string_data_size();
  }
  return 0;
}

// Copies int32_data into `dst`, checking that each value fits `T` in [lo, hi].
template <typename T>
void narrow_int32(const TensorProto& t, T* dst, int64_t lo, int64_t hi, const std::string& where) {
  for (int i = 0; i < t.int32_data_size(); ++i) {
    const int64_t v = t.int32_data(i);
    TERN_CHECK(v >= lo && v <= hi, ModelError,
               "{}: int32_data[{}] = {} does not fit the tensor's dtype (expected {} to {})", where,
               i, v, lo, hi);
    dst[i] = static_cast<T>(v);
  }
}

}  // namespace

std::string onnx_type_name(int32_t onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  }
  return fmt::format("UNKNOWN({})", onnx_type);
}

DType to_dtype(int32_t onnx_type, const std::string& where) {
  if (const std::optional<DType> d = dtype_from_onnx(onnx_type)) return *d;
  TERN_CHECK(onnx_type != TensorProto::UNDEFINED, ModelError,
             "{}: data type is UNDEFINED (0); expected a tensor element type", where);
  TERN_CHECK(TensorProto::DataType_IsValid(onnx_type), ModelError, "{}: unknown ONNX data type {}",
             where, onnx_type);
  std::string name = onnx_type_name(onnx_type);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  TERN_THROW(UnsupportedOpError,
             "{}: dtype {} is not supported (tern supports the float, integer, bool and "
             "string types; not complex)",
             where, name);
}

TensorInfo check_tensor(const TensorProto& t, const LoadLimits& limits, const std::string& where) {
  TERN_CHECK(t.data_location() != TensorProto::EXTERNAL && t.external_data_size() == 0,
             UnsupportedOpError,
             "{}: external data is not supported (tern needs the weights inside the .onnx "
             "file)",
             where);
  TERN_CHECK(!t.has_segment(), UnsupportedOpError, "{}: segmented tensors are not supported",
             where);
  TensorInfo info;
  info.dtype = to_dtype(t.data_type(), where);
  info.shape.assign(t.dims().begin(), t.dims().end());

  const int64_t esize = static_cast<int64_t>(dtype_size(info.dtype));
  int64_t numel = 1;
  for (int64_t d : info.shape) {
    TERN_CHECK(d >= 0, ModelError, "{}: negative dim {} in dims {}", where, d,
               shape_str(info.shape));
    TERN_CHECK(d == 0 || numel <= std::numeric_limits<int64_t>::max() / esize / d, ModelError,
               "{}: dims {} overflow: the byte size does not fit in 64 bits", where,
               shape_str(info.shape));
    numel *= d;
  }
  info.bytes = numel * esize;
  if (info.dtype == DType::kString) {
    TERN_CHECK(!t.has_raw_data(), ModelError,
               "{}: a string tensor keeps its values in string_data, not raw_data", where);
    for (const std::string& v : t.string_data()) info.bytes += static_cast<int64_t>(v.size());
  }
  TERN_CHECK(info.bytes <= limits.max_tensor_bytes, ModelError,
             "{}: dims {} of {} need {} bytes, over the limit of {} bytes per tensor "
             "(LoadLimits::max_tensor_bytes)",
             where, shape_str(info.shape), dtype_name(info.dtype), info.bytes,
             limits.max_tensor_bytes);

  const Field want = field_for(info.dtype);
  const bool has_raw = t.has_raw_data();
  const std::pair<const char*, int64_t> typed[] = {
      {"float_data", t.float_data_size()},   {"int32_data", t.int32_data_size()},
      {"int64_data", t.int64_data_size()},   {"double_data", t.double_data_size()},
      {"uint64_data", t.uint64_data_size()}, {"string_data", t.string_data_size()},
  };
  for (const auto& [name, count] : typed) {
    if (count == 0) continue;
    TERN_CHECK(!has_raw, ModelError, "{}: has both raw_data and {} (expected one of them)", where,
               name);
    TERN_CHECK(std::strcmp(name, field_name(want)) == 0, ModelError,
               "{}: a {} tensor keeps its values in raw_data or {}, but this one sets {}", where,
               dtype_name(info.dtype), field_name(want), name);
  }
  if (has_raw) {
    const int64_t have = static_cast<int64_t>(t.raw_data().size());
    TERN_CHECK(have == info.bytes, ModelError,
               "{}: raw_data has {} bytes, but dims {} of {} need {} bytes", where, have,
               shape_str(info.shape), dtype_name(info.dtype), info.bytes);
  } else {
    const int64_t have = field_count(t, want);
    TERN_CHECK(have == numel, ModelError,
               "{}: {} has {} values, but dims {} need {} (and there is no raw_data)", where,
               field_name(want), have, shape_str(info.shape), numel);
  }
  return info;
}

Tensor decode_tensor(const TensorProto& t, const LoadLimits& limits, const std::string& where) {
  const TensorInfo info = check_tensor(t, limits, where);
  Tensor out = Tensor::empty(info.dtype, info.shape);
  if (t.has_raw_data()) {
    if (info.bytes) std::memcpy(out.raw_data(), t.raw_data().data(), info.bytes);
    if (info.dtype == DType::kBool) {
      auto* p = out.data<bool>();
      auto* bytes = reinterpret_cast<uint8_t*>(p);
      for (int64_t i = 0; i < info.bytes; ++i) bytes[i] = bytes[i] != 0;
    }
    return out;
  }
  switch (info.dtype) {
    case DType::kFloat32:
      std::copy(t.float_data().begin(), t.float_data().end(), out.data<float>());
      break;
    case DType::kInt64:
      std::copy(t.int64_data().begin(), t.int64_data().end(), out.data<int64_t>());
      break;
    case DType::kInt32:
      std::copy(t.int32_data().begin(), t.int32_data().end(), out.data<int32_t>());
      break;
    case DType::kInt8:
      narrow_int32(t, out.data<int8_t>(), -128, 127, where);
      break;
    case DType::kUint8:
      narrow_int32(t, out.data<uint8_t>(), 0, 255, where);
      break;
    case DType::kFloat16:
      narrow_int32(t, static_cast<uint16_t*>(out.raw_data()), 0, 65535, where);
      break;
    case DType::kBFloat16:
      narrow_int32(t, static_cast<uint16_t*>(out.raw_data()), 0, 65535, where);
      break;
    case DType::kBool:
      narrow_int32(t, reinterpret_cast<uint8_t*>(out.data<bool>()), 0, 1, where);
      break;
    case DType::kInt16:
      narrow_int32(t, out.data<int16_t>(), -32768, 32767, where);
      break;
    case DType::kUint16:
      narrow_int32(t, out.data<uint16_t>(), 0, 65535, where);
      break;
    case DType::kFloat64:
      std::copy(t.double_data().begin(), t.double_data().end(), out.data<double>());
      break;
    case DType::kUint64:
      std::copy(t.uint64_data().begin(), t.uint64_data().end(), out.data<uint64_t>());
      break;
    case DType::kString:
      std::copy(t.string_data().begin(), t.string_data().end(), out.data<std::string>());
      break;
    case DType::kUint32:
      for (int i = 0; i < t.uint64_data_size(); ++i) {
        const uint64_t v = t.uint64_data(i);
        TERN_CHECK(v <= 0xFFFFFFFFu, ModelError,
                   "{}: uint64_data[{}] = {} does not fit the tensor's dtype uint32", where, i, v);
        out.data<uint32_t>()[i] = static_cast<uint32_t>(v);
      }
      break;
  }
  return out;
}

}  // namespace tern::onnx
