// Decoding TensorProtos (onnx::load_tensor_proto and .pb files): every supported dtype
// from raw_data and from the typed fields, and malformed tensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/float16.h"
#include "model_builder.h"
#include "onnx/loader.h"
#include "tern/status.h"

namespace tern {
namespace {

using ::onnx::TensorProto;
using ::testing::HasSubstr;

Tensor decode(const TensorProto& t, const onnx::LoadLimits& limits = {}) {
  const std::string bytes = t.SerializeAsString();
  return onnx::load_tensor_proto(bytes.data(), bytes.size(), limits);
}

template <typename T>
TensorProto raw_tensor(TensorProto::DataType type, const std::vector<int64_t>& dims,
                       const std::vector<T>& values, const std::string& name = "t") {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  std::string raw(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  t.set_raw_data(raw);
  return t;
}

template <typename E>
void expect_tensor_error(const TensorProto& t, const std::vector<std::string>& parts,
                         const onnx::LoadLimits& limits = {}) {
  try {
    decode(t, limits);
    ADD_FAILURE() << "expected an error containing '" << parts.front() << "'";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type; message: " << e.what();
  }
}

TEST(TensorProto, RawDataEveryDtype) {
  {
    const Tensor t = decode(raw_tensor<float>(TensorProto::FLOAT, {2, 2}, {1, -2, 3.5f, 0}));
    EXPECT_EQ(t.dtype(), DType::kFloat32);
    EXPECT_EQ(t.shape(), (Shape{2, 2}));
    EXPECT_EQ(t.to_float_vector(), (std::vector<float>{1, -2, 3.5f, 0}));
  }
  {
    const std::vector<uint16_t> h = {float_to_half(1.0f), float_to_half(-0.5f), 0x7BFF};
    const Tensor t = decode(raw_tensor<uint16_t>(TensorProto::FLOAT16, {3}, h));
    ASSERT_EQ(t.dtype(), DType::kFloat16);
    EXPECT_EQ(std::vector<uint16_t>(reinterpret_cast<const uint16_t*>(t.data<Float16>()), reinterpret_cast<const uint16_t*>(t.data<Float16>()) + 3), h);
  }
  {
    const Tensor t = decode(raw_tensor<int8_t>(TensorProto::INT8, {3}, {-128, 0, 127}));
    ASSERT_EQ(t.dtype(), DType::kInt8);
    EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{-128, 0, 127}));
  }
  {
    const Tensor t = decode(raw_tensor<uint8_t>(TensorProto::UINT8, {2}, {0, 255}));
    ASSERT_EQ(t.dtype(), DType::kUint8);
    EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{0, 255}));
  }
  {
    const Tensor t = decode(raw_tensor<int32_t>(TensorProto::INT32, {2}, {INT32_MIN, 5}));
    ASSERT_EQ(t.dtype(), DType::kInt32);
    EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{INT32_MIN, 5}));
  }
  {
    const Tensor t = decode(raw_tensor<int64_t>(TensorProto::INT64, {2}, {INT64_MIN, -1}));
    ASSERT_EQ(t.dtype(), DType::kInt64);
    EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{INT64_MIN, -1}));
  }
  {
    // Bool bytes other than 0/1 are normalized to 1.
    const Tensor t = decode(raw_tensor<uint8_t>(TensorProto::BOOL, {3}, {0, 1, 9}));
    ASSERT_EQ(t.dtype(), DType::kBool);
    const auto* raw = static_cast<const uint8_t*>(t.raw_data());
    EXPECT_EQ(std::vector<uint8_t>(raw, raw + 3), (std::vector<uint8_t>{0, 1, 1}));
  }
}

TEST(TensorProto, TypedFieldsEveryDtype) {
  TensorProto f;
  f.set_data_type(TensorProto::FLOAT);
  f.add_dims(2);
  f.add_float_data(1.25f);
  f.add_float_data(-3);
  EXPECT_EQ(decode(f).to_float_vector(), (std::vector<float>{1.25f, -3}));

  auto int32_tensor = [](TensorProto::DataType type, const std::vector<int32_t>& v) {
    TensorProto t;
    t.set_data_type(type);
    t.add_dims(static_cast<int64_t>(v.size()));
    for (int32_t x : v) t.add_int32_data(x);
    return t;
  };
  // float16 bits live in int32_data (onnx.proto).
  const Tensor h = decode(int32_tensor(TensorProto::FLOAT16, {0x3C00, 0xC000}));
  ASSERT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(half_to_float(reinterpret_cast<const uint16_t*>(h.data<Float16>())[0]), 1.0f);
  EXPECT_EQ(half_to_float(reinterpret_cast<const uint16_t*>(h.data<Float16>())[1]), -2.0f);
  EXPECT_EQ(decode(int32_tensor(TensorProto::INT8, {-128, 127})).to_int64_vector(),
            (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(decode(int32_tensor(TensorProto::UINT8, {0, 255})).to_int64_vector(),
            (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(decode(int32_tensor(TensorProto::INT32, {INT32_MIN, INT32_MAX})).to_int64_vector(),
            (std::vector<int64_t>{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(decode(int32_tensor(TensorProto::INT16, {-32768, 32767})).to_int64_vector(),
            (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(decode(int32_tensor(TensorProto::UINT16, {0, 65535})).to_int64_vector(),
            (std::vector<int64_t>{0, 65535}));
  expect_tensor_error<ModelError>(int32_tensor(TensorProto::INT16, {40000}),
                                  {"int32_data[0] = 40000", "-32768 to 32767"});
  // bfloat16 bits live in int32_data too.
  EXPECT_EQ(decode(int32_tensor(TensorProto::BFLOAT16, {0x3F80, 0xC040})).to_float_vector(),
            (std::vector<float>{1.f, -3.f}));
  TensorProto dbl;
  dbl.set_data_type(TensorProto::DOUBLE);
  dbl.add_dims(2);
  dbl.add_double_data(0.1);
  dbl.add_double_data(-1e300);
  const Tensor d = decode(dbl);
  ASSERT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_EQ(d.data<double>()[0], 0.1);
  EXPECT_EQ(d.data<double>()[1], -1e300);
  // uint32 and uint64 live in uint64_data.
  TensorProto u64;
  u64.set_data_type(TensorProto::UINT64);
  u64.add_dims(1);
  u64.add_uint64_data(UINT64_MAX);
  EXPECT_EQ(decode(u64).data<uint64_t>()[0], UINT64_MAX);
  TensorProto u32;
  u32.set_data_type(TensorProto::UINT32);
  u32.add_dims(2);
  u32.add_uint64_data(UINT32_MAX);
  u32.add_uint64_data(uint64_t{1} << 32);
  expect_tensor_error<ModelError>(u32, {"uint64_data[1] = 4294967296", "uint32"});
  TensorProto str;
  str.set_data_type(TensorProto::STRING);
  str.add_dims(2);
  str.add_string_data("");
  str.add_string_data(std::string(100, 'z'));
  const Tensor st = decode(str);
  ASSERT_EQ(st.dtype(), DType::kString);
  EXPECT_EQ(st.data<std::string>()[0], "");
  EXPECT_EQ(st.data<std::string>()[1], std::string(100, 'z'));
  onnx::LoadLimits small;
  small.max_tensor_bytes = 2 * static_cast<int64_t>(sizeof(std::string)) + 99;
  expect_tensor_error<ModelError>(str, {"over the limit"}, small);  // the characters count
  const Tensor b = decode(int32_tensor(TensorProto::BOOL, {1, 0, 1}));
  ASSERT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.to_int64_vector(), (std::vector<int64_t>{1, 0, 1}));

  TensorProto i64;
  i64.set_data_type(TensorProto::INT64);
  i64.add_dims(1);
  i64.add_dims(2);
  i64.add_int64_data(int64_t{1} << 40);
  i64.add_int64_data(-5);
  const Tensor t = decode(i64);
  EXPECT_EQ(t.shape(), (Shape{1, 2}));
  EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{int64_t{1} << 40, -5}));
}

TEST(TensorProto, ScalarAndEmptyTensors) {
  TensorProto s;
  s.set_data_type(TensorProto::INT64);
  s.add_int64_data(42);
  const Tensor scalar = decode(s);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.to_int64_vector(), (std::vector<int64_t>{42}));

  TensorProto e;
  e.set_data_type(TensorProto::FLOAT);
  e.add_dims(0);
  e.add_dims(5);
  const Tensor empty = decode(e);
  EXPECT_EQ(empty.shape(), (Shape{0, 5}));
  EXPECT_EQ(empty.numel(), 0);
}

TEST(TensorProto, TypedValuesOutOfRange) {
  TensorProto t;
  t.set_name("q");
  t.set_data_type(TensorProto::INT8);
  t.add_dims(2);
  t.add_int32_data(1);
  t.add_int32_data(300);
  expect_tensor_error<ModelError>(t, {"tensor 'q'", "int32_data[1] = 300", "-128 to 127"});
  t.set_data_type(TensorProto::BOOL);
  expect_tensor_error<ModelError>(t, {"int32_data[1] = 300", "0 to 1"});
  t.set_data_type(TensorProto::FLOAT16);
  t.set_int32_data(1, -1);
  expect_tensor_error<ModelError>(t, {"int32_data[1] = -1", "0 to 65535"});
}

TEST(TensorProto, SizeMismatches) {
  expect_tensor_error<ModelError>(
      raw_tensor<float>(TensorProto::FLOAT, {4}, {1, 2}, "short"),
      {"tensor 'short'", "raw_data has 8 bytes", "dims [4] of float32 need 16 bytes"});
  expect_tensor_error<ModelError>(raw_tensor<float>(TensorProto::FLOAT, {1}, {1, 2}, "long"),
                                  {"raw_data has 8 bytes", "need 4 bytes"});
  TensorProto t;
  t.set_name("few");
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(3);
  t.add_float_data(1);
  expect_tensor_error<ModelError>(t,
                                  {"tensor 'few'", "float_data has 1 values", "dims [3] need 3"});
  t.clear_float_data();
  expect_tensor_error<ModelError>(t, {"float_data has 0 values", "no raw_data"});
}

TEST(TensorProto, WrongOrConflictingDataFields) {
  TensorProto t = raw_tensor<float>(TensorProto::FLOAT, {1}, {1}, "both");
  t.add_float_data(1);
  expect_tensor_error<ModelError>(t, {"tensor 'both'", "both raw_data and float_data"});
  TensorProto w;
  w.set_name("wrong");
  w.set_data_type(TensorProto::INT64);
  w.add_dims(1);
  w.add_float_data(1);
  expect_tensor_error<ModelError>(w, {"tensor 'wrong'", "int64", "int64_data", "float_data"});
}

TEST(TensorProto, BadDims) {
  TensorProto neg = raw_tensor<float>(TensorProto::FLOAT, {2, -3}, {}, "neg");
  expect_tensor_error<ModelError>(neg, {"tensor 'neg'", "negative dim -3"});
  TensorProto big =
      raw_tensor<float>(TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40}, {}, "huge");
  expect_tensor_error<ModelError>(big, {"tensor 'huge'", "overflow"});
  TensorProto over = raw_tensor<float>(TensorProto::FLOAT, {1 << 20, 1 << 20}, {}, "over");
  expect_tensor_error<ModelError>(
      over, {"tensor 'over'", "4398046511104 bytes", "over the limit of 2147483648 bytes"});
  onnx::LoadLimits small;
  small.max_tensor_bytes = 15;
  expect_tensor_error<ModelError>(raw_tensor<float>(TensorProto::FLOAT, {4}, {1, 2, 3, 4}),
                                  {"need 16 bytes", "limit of 15"}, small);
  small.max_tensor_bytes = 16;
  EXPECT_EQ(decode(raw_tensor<float>(TensorProto::FLOAT, {4}, {1, 2, 3, 4}), small).numel(), 4);
  // The model-wide limit also bounds a lone tensor.
  onnx::LoadLimits model_small;
  model_small.max_model_bytes = 8;
  expect_tensor_error<ModelError>(raw_tensor<float>(TensorProto::FLOAT, {4}, {1, 2, 3, 4}),
                                  {"limit of 8"}, model_small);
}

TEST(TensorProto, UnsupportedAndUnknownDtypes) {
  TensorProto d;
  d.set_name("dbl");
  d.set_data_type(TensorProto::COMPLEX128);
  d.add_dims(1);
  d.add_double_data(1.0);
  d.add_double_data(0.0);
  expect_tensor_error<UnsupportedOpError>(d, {"tensor 'dbl'", "dtype complex128 is not supported"});
  TensorProto s;
  s.set_data_type(TensorProto::STRING);
  s.add_dims(2);
  s.add_string_data("x");
  expect_tensor_error<ModelError>(s, {"string_data has 1 values", "need 2"});
  s.set_raw_data("ab");
  expect_tensor_error<ModelError>(s, {"string tensor keeps its values in string_data"});
  TensorProto u;
  u.set_data_type(0);
  expect_tensor_error<ModelError>(u, {"UNDEFINED"});
  u.set_data_type(77);
  expect_tensor_error<ModelError>(u, {"unknown ONNX data type 77"});
}

TEST(TensorProto, ExternalDataAndSegmentsAreUnsupported) {
  TensorProto t;
  t.set_name("ext");
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(4);
  t.set_data_location(TensorProto::EXTERNAL);
  auto* kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  expect_tensor_error<UnsupportedOpError>(t, {"tensor 'ext'", "external data is not supported"});
  TensorProto s = raw_tensor<float>(TensorProto::FLOAT, {1}, {1});
  s.mutable_segment()->set_begin(0);
  expect_tensor_error<UnsupportedOpError>(s, {"segmented tensors are not supported"});
}

TEST(TensorProto, GarbageAndFiles) {
  const std::string junk = "\xff\xff\xff\xff\xff";
  EXPECT_THROW(onnx::load_tensor_proto(junk.data(), junk.size()), ModelError);
  try {
    onnx::load_tensor_proto(junk.data(), 0);
    ADD_FAILURE();
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty"));
  }

  const auto dir =
      std::filesystem::temp_directory_path() / ("tern_pb_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "input_0.pb").string();
  const std::string bytes =
      raw_tensor<float>(TensorProto::FLOAT, {1, 2}, {7, 8}, "x").SerializeAsString();
  std::ofstream(good, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_EQ(onnx::load_tensor_proto_file(good).to_float_vector(), (std::vector<float>{7, 8}));

  const std::string cut = (dir / "cut.pb").string();
  std::ofstream(cut, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 1));
  try {
    onnx::load_tensor_proto_file(cut);
    ADD_FAILURE();
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr(cut));
    EXPECT_THAT(e.what(), HasSubstr("protobuf parse failed"));
  }
  const std::string empty = (dir / "empty.pb").string();
  std::ofstream{empty};
  EXPECT_THROW(onnx::load_tensor_proto_file(empty), IOError);
  EXPECT_THROW(onnx::load_tensor_proto_file((dir / "missing.pb").string()), IOError);
  if (std::filesystem::exists("/dev/zero")) {
    try {
      onnx::load_tensor_proto_file("/dev/zero");
      ADD_FAILURE() << "expected IOError for /dev/zero";
    } catch (const IOError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'/dev/zero': cannot read TensorProto (.pb) file: not a "
                                      "regular file (a character device)"));
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tern
