// The conformance runner's own checks: the comparison, the case classification (passed,
// failed, unsupported, bad test data) on cases built in a scratch folder, and the report.
#include "conformance/runner.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <limits>

#include "onnx/onnx.pb.h"
#include "support/test_env.h"

namespace tern::conformance {
namespace {

namespace fs = std::filesystem;

Tensor f32(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector(v, s); }

TEST(ConformanceCompare, FloatsWithinTolerance) {
  const Tolerance tol;  // rtol 1e-3, atol 1e-5
  EXPECT_EQ(compare_tensors(f32({1000.f, 0.f}, {2}), f32({1000.9f, 9e-6f}, {2}), tol), "");
  const std::string why = compare_tensors(f32({1000.f, 0.f}, {2}), f32({1001.2f, 0.f}, {2}), tol);
  EXPECT_NE(why.find("1 of 2 elements differ"), std::string::npos) << why;
  EXPECT_NE(why.find("flat index 0"), std::string::npos) << why;
  EXPECT_NE(compare_tensors(f32({0.f}, {1}), f32({2e-5f}, {1}), tol), "");
}

TEST(ConformanceCompare, BFloat16ToleranceIsOneUnitInTheLastPlace) {
  EXPECT_EQ(tolerance_for(DType::kFloat32).rtol, 1e-3);
  EXPECT_EQ(tolerance_for(DType::kFloat16).rtol, 1e-3);
  EXPECT_EQ(tolerance_for(DType::kBFloat16).rtol, 1.0 / 128);
  EXPECT_EQ(tolerance_for(DType::kBFloat16).atol, 1e-5);
  // 0.478515625 and 0.48046875 are neighbouring bfloat16 values (truncated vs rounded
  // 0.4794...): they match under the bfloat16 tolerance, not under the float32 one.
  auto bf16 = [](float v) {
    Tensor t = Tensor::empty(DType::kBFloat16, {1});
    t.data<BFloat16>()[0].bits = static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16);
    return t;
  };
  EXPECT_EQ(compare_tensors(bf16(0.48046875f), bf16(0.478515625f),
                            tolerance_for(DType::kBFloat16)),
            "");
  EXPECT_NE(compare_tensors(bf16(0.48046875f), bf16(0.4765625f), tolerance_for(DType::kBFloat16)),
            "");
  EXPECT_NE(compare_tensors(bf16(0.48046875f), bf16(0.478515625f), Tolerance{}), "");
}

TEST(ConformanceCompare, NanAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tolerance tol;
  EXPECT_EQ(compare_tensors(f32({nan, inf, -inf}, {3}), f32({nan, inf, -inf}, {3}), tol), "");
  EXPECT_NE(compare_tensors(f32({1.f}, {1}), f32({nan}, {1}), tol), "");
  EXPECT_NE(compare_tensors(f32({nan}, {1}), f32({1.f}, {1}), tol), "");
  EXPECT_NE(compare_tensors(f32({inf}, {1}), f32({-inf}, {1}), tol), "");
  EXPECT_NE(compare_tensors(f32({3e38f}, {1}), f32({inf}, {1}), tol), "");
}

TEST(ConformanceCompare, IntegersExactlyAndDtypeShape) {
  const Tolerance tol;
  const Tensor a = Tensor::from_vector_i64({1, 2, int64_t{1} << 60}, {3});
  const Tensor b = Tensor::from_vector_i64({1, 2, (int64_t{1} << 60) + 1}, {3});
  EXPECT_EQ(compare_tensors(a, a, tol), "");
  EXPECT_NE(compare_tensors(a, b, tol), "");  // off by one at 2^60: not "close enough"
  EXPECT_NE(compare_tensors(f32({1, 2, 3}, {3}), f32({1, 2, 3}, {1, 3}), tol).find("shape"),
            std::string::npos);
  EXPECT_NE(compare_tensors(f32({1}, {1}), Tensor::from_vector_i64({1}, {1}), tol).find("dtype"),
            std::string::npos);
}

TEST(ConformanceCompare, StridedActual) {
  const Tensor base = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor t = base.transpose(0, 1);  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(compare_tensors(t, f32({1, 4, 2, 5, 3, 6}, {3, 2}), Tolerance{}), "");
  EXPECT_NE(compare_tensors(t, f32({1, 2, 3, 4, 5, 6}, {3, 2}), Tolerance{}), "");
}

// ---- whole cases, built in a scratch folder -------------------------------------------

void write_proto(const fs::path& path, const google::protobuf::MessageLite& m) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

::onnx::TensorProto float_tensor(const std::vector<float>& v, const Shape& shape) {
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t;
}

void add_value(::onnx::ValueInfoProto* v, const std::string& name, const Shape& shape) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A one-node case `op_type`(x) -> y with x of `declared` shape, one data set with input
// `x` of `given` shape and expected output `y`.
fs::path make_case(const fs::path& root, const std::string& name, const std::string& op_type,
                   const Shape& declared, const std::vector<float>& x, const Shape& given,
                   const std::vector<float>& y) {
  const fs::path dir = root / name;
  fs::create_directories(dir / "test_data_set_0");
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name(name);
  auto* n = g->add_node();
  n->set_op_type(op_type);
  n->set_name("node0");
  n->add_input("x");
  n->add_output("y");
  add_value(g->add_input(), "x", declared);
  add_value(g->add_output(), "y", declared);
  write_proto(dir / "model.onnx", m);
  write_proto(dir / "test_data_set_0" / "input_0.pb", float_tensor(x, given));
  write_proto(dir / "test_data_set_0" / "output_0.pb", float_tensor(y, given));
  return dir;
}

TEST(ConformanceCase, Classification) {
  test::ScratchDir scratch("conformance");
  const fs::path root = scratch.path();
  const CaseResult pass =
      run_case(make_case(root, "test_relu_ok", "Relu", {3}, {-1, 0, 2}, {3}, {0, 0, 2}), "node");
  EXPECT_EQ(pass.status, Status::kPassed) << pass.message;
  EXPECT_EQ(pass.op, "Relu");

  const CaseResult fail =
      run_case(make_case(root, "test_relu_wrong", "Relu", {3}, {-1, 0, 2}, {3}, {0, 0, 3}), "node");
  EXPECT_EQ(fail.status, Status::kFailed);
  EXPECT_NE(fail.message.find("output 0 'y'"), std::string::npos) << fail.message;

  const CaseResult unsupported =
      run_case(make_case(root, "test_made_up", "NoSuchOp", {3}, {1, 2, 3}, {3}, {1, 2, 3}), "node");
  EXPECT_EQ(unsupported.status, Status::kUnsupported);
  EXPECT_NE(unsupported.message.find("NoSuchOp"), std::string::npos) << unsupported.message;

  const CaseResult bad =
      run_case(make_case(root, "test_relu_bad_data", "Relu", {3}, {1}, {1}, {1}), "node");
  EXPECT_EQ(bad.status, Status::kBadData);
  EXPECT_NE(bad.message.find("declares input 'x' as [3]"), std::string::npos) << bad.message;

  // The report counts each status once, per folder and per op.
  const std::string md = markdown_report({pass, fail, unsupported, bad}, root.string());
  EXPECT_NE(md.find("| node | 4 | 1 | 1 | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Relu | 3 | 1 | 1 | 0 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("node/test_relu_wrong"), std::string::npos);
}

TEST(ConformanceCase, ExpandedLabelComesFromTheSibling) {
  test::ScratchDir scratch("conformance");
  make_case(scratch.path(), "test_neg", "Neg", {1}, {1}, {1}, {-1});
  const fs::path expanded =
      make_case(scratch.path(), "test_neg_expanded", "Relu", {1}, {1}, {1}, {1});
  EXPECT_EQ(case_op_label(expanded), "Neg (expanded)");
  EXPECT_EQ(case_op_label(scratch.path() / "test_neg"), "Neg");
}

TEST(ConformanceCase, ACaseWithoutDataFails) {
  test::ScratchDir scratch("conformance");
  const fs::path dir = make_case(scratch.path(), "test_relu_no_data", "Relu", {1}, {1}, {1}, {1});
  fs::remove_all(dir / "test_data_set_0");
  const CaseResult r = run_case(dir, "node");
  EXPECT_EQ(r.status, Status::kFailed);
  EXPECT_NE(r.message.find("nothing to compare"), std::string::npos) << r.message;
  fs::create_directories(dir / "test_data_set_0");
  const CaseResult empty = run_case(dir, "node");
  EXPECT_EQ(empty.status, Status::kFailed);
  EXPECT_NE(empty.message.find("no output_*.pb"), std::string::npos) << empty.message;
}

TEST(ConformanceCase, MissingDataFolderIsAnError) {
  EXPECT_THROW(list_cases("/nonexistent/tern", "node"), IOError);
}

}  // namespace
}  // namespace tern::conformance
