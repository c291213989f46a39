// String tensors through a whole session: Cast to and from string, Identity passing them
// on, and a clear error when a string reaches an op that handles only numbers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx/model_builder.h"
#include "tern/session.h"

namespace tern::test {
namespace {

using ::onnx::TensorProto;
using ::testing::HasSubstr;

Tensor strings(const std::vector<std::string>& v) {
  Tensor t = Tensor::empty(DType::kString, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

Session session_of(const ModelBuilder& b) {
  const std::string bytes = b.bytes();
  return Session::from_memory(bytes.data(), bytes.size());
}

TEST(Strings, CastBothWaysAndIdentity) {
  ModelBuilder b(13);
  b.input("s", {4}, TensorProto::STRING);
  set_int(b.node("Cast", {"s"}, {"f"}, "to_float"), "to", TensorProto::FLOAT);
  set_int(b.node("Cast", {"f"}, {"back"}, "to_string"), "to", TensorProto::STRING);
  b.node("Identity", {"back"}, {"same"}, "id");
  b.output("f", {4});
  b.output("same", {4}, TensorProto::STRING);
  Session s = session_of(b);
  const auto out = s.run({{"s", strings({"0.039187793", " -2.5", "+INF", "1e-05"})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor.to_float_vector(),
            (std::vector<float>{0.039187793f, -2.5f, INFINITY, 1e-5f}));
  ASSERT_EQ(out[1].tensor.dtype(), DType::kString);
  const std::string* t = out[1].tensor.data<std::string>();
  EXPECT_EQ(t[0], "0.039187793");  // the shortest text that reads back to the same float
  EXPECT_EQ(t[1], "-2.5");
  EXPECT_EQ(t[2], "inf");
  EXPECT_EQ(t[3], "1e-05");
}

TEST(Strings, NotANumberNamesTheElement) {
  ModelBuilder b(13);
  b.input("s", {2}, TensorProto::STRING);
  set_int(b.node("Cast", {"s"}, {"i"}, "to_int"), "to", TensorProto::INT64);
  b.output("i", {2});
  Session s = session_of(b);
  EXPECT_EQ(s.run({{"s", strings({"42", "-7"})}})[0].tensor.to_int64_vector(),
            (std::vector<int64_t>{42, -7}));
  try {
    s.run({{"s", strings({"42", "forty"})}});
    ADD_FAILURE() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("Cast 'to_int'"));
    EXPECT_THAT(e.what(), HasSubstr("element 1 (\"forty\")"));
  }
}

TEST(Strings, BadElementInALargeInputOnTwoThreads) {
  // Big enough that a numeric cast would split it across threads: the string parse must
  // still report the error (not terminate inside the parallel region), with the flat index.
  const int64_t n = 200000;
  ModelBuilder b(13);
  b.input("s", {n}, TensorProto::STRING);
  set_int(b.node("Cast", {"s"}, {"f"}, "parse"), "to", TensorProto::FLOAT);
  b.output("f", {n});
  const std::string bytes = b.bytes();
  SessionOptions options;
  options.num_threads = 2;
  Session s = Session::from_memory(bytes.data(), bytes.size(), options);
  Tensor x = Tensor::empty(DType::kString, {n});
  for (int64_t i = 0; i < n; ++i) x.data<std::string>()[i] = "1.5";
  EXPECT_EQ(s.run({{"s", x}})[0].tensor.to_float_vector()[n - 1], 1.5f);
  x.data<std::string>()[150001] = "x";
  try {
    s.run({{"s", x}});
    ADD_FAILURE() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("Cast 'parse'"));
    EXPECT_THAT(e.what(), HasSubstr("element 150001 (\"x\")"));
  }
}

TEST(Strings, ShapeReadsOnlyTheShape) {
  ModelBuilder b(13);
  b.input("s", {"n"}, TensorProto::STRING);
  b.node("Shape", {"s"}, {"shape"}, "shape_of");
  b.output("shape", {1}, TensorProto::INT64);
  Session s = session_of(b);
  EXPECT_EQ(s.run({{"s", strings({"a", "b", "c"})}})[0].tensor.to_int64_vector(),
            (std::vector<int64_t>{3}));
}

TEST(Strings, OtherOpsRejectThem) {
  ModelBuilder b(13);
  b.input("s", {2, 2}, TensorProto::STRING);
  b.node("Transpose", {"s"}, {"t"}, "flip");
  b.output("t", {2, 2}, TensorProto::STRING);
  Session s = session_of(b);
  Tensor x = Tensor::empty(DType::kString, {2, 2});
  try {
    s.run({{"s", x}});
    ADD_FAILURE() << "expected an error";
  } catch (const UnsupportedOpError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Transpose 'flip'"));
    EXPECT_THAT(e.what(), HasSubstr("string tensors are supported only by Cast"));
  }
}

}  // namespace
}  // namespace tern::test
