// The ONNX importer on small, valid models built in C++: the ir::Graph it produces.
#include "onnx/loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "model_builder.h"
#include "tern/status.h"

namespace tern {
namespace {

using ::onnx::AttributeProto;
using ::onnx::TensorProto;
using test::ModelBuilder;
using ::testing::HasSubstr;

ir::Graph load(const ModelBuilder& b, const onnx::LoadLimits& limits = {}) {
  const std::string bytes = b.bytes();
  return onnx::load_model(bytes.data(), bytes.size(), limits);
}

const ir::Value& value(const ir::Graph& g, const std::string& name) {
  const int id = g.find_value(name);
  EXPECT_GE(id, 0) << name;
  return g.values.at(id);
}

std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// Input x [1, 3, H, W] -> Conv(3x3, pad 1, 4 channels) -> Relu -> y.
ModelBuilder conv_relu_model() {
  ModelBuilder b;
  b.input("x", {1, 3, "H", "W"});
  b.initializer("w", {4, 3, 3, 3}, iota(4 * 3 * 3 * 3));
  b.initializer("b", {4}, {0.5f, -1.0f, 2.0f, 0.0f});
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv1");
  test::set_ints(conv, "kernel_shape", {3, 3});
  test::set_ints(conv, "pads", {1, 1, 1, 1});
  test::set_ints(conv, "strides", {1, 1});
  b.node("Relu", {"c"}, {"y"});
  b.output("y", {1, 4, "H", "W"});
  return b;
}

TEST(OnnxLoader, ConvReluModel) {
  const ir::Graph g = load(conv_relu_model());
  EXPECT_EQ(g.ir_version, 7);
  EXPECT_EQ(g.opset, 13);
  EXPECT_EQ(g.producer, "tern-test");
  EXPECT_EQ(g.name, "test_graph");

  ASSERT_EQ(g.inputs.size(), 1u);
  const ir::Value& x = g.values[g.inputs[0]];
  EXPECT_EQ(x.name, "x");
  EXPECT_TRUE(x.has_type);
  EXPECT_EQ(x.dtype, DType::kFloat32);
  ASSERT_TRUE(x.has_shape);
  ASSERT_EQ(x.dims.size(), 4u);
  EXPECT_EQ(x.dims[0].value, 1);
  EXPECT_EQ(x.dims[1].value, 3);
  EXPECT_EQ(x.dims[2].value, -1);
  EXPECT_EQ(x.dims[2].param, "H");
  EXPECT_EQ(x.dims[3].param, "W");
  EXPECT_FALSE(x.is_constant());

  const ir::Value& w = value(g, "w");
  ASSERT_TRUE(w.is_constant());
  EXPECT_EQ(w.constant.shape(), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(w.constant.to_float_vector(), iota(108));
  EXPECT_EQ(value(g, "b").constant.to_float_vector(),
            (std::vector<float>{0.5f, -1.0f, 2.0f, 0.0f}));
  EXPECT_EQ(g.parameter_count(), 108 + 4);

  ASSERT_EQ(g.nodes.size(), 2u);
  const ir::Node& conv = g.nodes[0];
  EXPECT_EQ(conv.name, "conv1");
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(conv.domain, "");
  EXPECT_EQ(conv.inputs,
            (std::vector<int>{g.find_value("x"), g.find_value("w"), g.find_value("b")}));
  ASSERT_EQ(conv.attrs.count("pads"), 1u);
  EXPECT_EQ(conv.attrs.at("pads").type, ir::Attribute::Type::kInts);
  EXPECT_EQ(conv.attrs.at("pads").ints, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.attrs.at("kernel_shape").ints, (std::vector<int64_t>{3, 3}));

  const ir::Node& relu = g.nodes[1];
  EXPECT_EQ(relu.name, "Relu_1");  // unnamed: "<op_type>_<index>"
  ASSERT_EQ(relu.inputs.size(), 1u);
  EXPECT_EQ(relu.inputs[0], conv.outputs[0]);

  // The intermediate "c" is not declared anywhere: a Value without a type.
  const ir::Value& c = value(g, "c");
  EXPECT_FALSE(c.has_type);
  EXPECT_FALSE(c.has_shape);
  EXPECT_EQ(c.producer, 0);

  ASSERT_EQ(g.outputs.size(), 1u);
  const ir::Value& y = g.values[g.outputs[0]];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.producer, 1);
  EXPECT_TRUE(y.has_type);
  ASSERT_EQ(y.dims.size(), 4u);
  EXPECT_EQ(y.dims[1].value, 4);
  EXPECT_EQ(y.dims[3].param, "W");

  EXPECT_EQ(ir::dump_graph(g), "conv1: Conv(x, w, b) -> c\nRelu_1: Relu(c) -> y\n");
}

TEST(OnnxLoader, InitializersListedAsInputsAreConstants) {
  // Old exporters (IR < 4) list every weight among the graph inputs as well.
  ModelBuilder b(9, 4);
  b.input("a", {2, 3});
  b.input("bias", {3});
  b.initializer("bias", {3}, {1, 2, 3});
  b.node("Add", {"a", "bias"}, {"sum"});
  b.output("sum", {2, 3});
  const ir::Graph g = load(b);
  EXPECT_EQ(g.opset, 9);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].name, "a");
  const ir::Value& bias = value(g, "bias");
  ASSERT_TRUE(bias.is_constant());
  EXPECT_EQ(bias.constant.to_float_vector(), (std::vector<float>{1, 2, 3}));
  EXPECT_TRUE(bias.has_type);
  ASSERT_EQ(bias.dims.size(), 1u);
  EXPECT_EQ(bias.dims[0].value, 3);
}

TEST(OnnxLoader, SymbolicAndAnonymousDims) {
  ModelBuilder b;
  auto* x = b.input("x", {"batch", 3, 8, 8});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // no value, no param
  b.input("untyped", {});
  b.graph().mutable_input(1)->clear_type();
  b.node("Relu", {"x"}, {"y"});
  b.node("Relu", {"untyped"}, {"z"});
  b.output("y", {"batch", 3, 8, 8, "?"});
  b.output("z");
  const ir::Graph g = load(b);
  const ir::Value& v = value(g, "x");
  ASSERT_EQ(v.dims.size(), 5u);
  EXPECT_EQ(v.dims[0].value, -1);
  EXPECT_EQ(v.dims[0].param, "batch");
  EXPECT_EQ(v.dims[4].value, -1);
  EXPECT_EQ(v.dims[4].param, "");
  const ir::Value& u = value(g, "untyped");
  EXPECT_FALSE(u.has_type);
  EXPECT_FALSE(u.has_shape);
  EXPECT_EQ(g.inputs.size(), 2u);
  EXPECT_FALSE(value(g, "z").has_type);
}

TEST(OnnxLoader, ValueInfoTypesIntermediates) {
  ModelBuilder b = conv_relu_model();
  auto* vi = b.graph().add_value_info();
  vi->set_name("c");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  const ir::Graph g = load(b);
  const ir::Value& c = value(g, "c");
  EXPECT_TRUE(c.has_type);
  EXPECT_TRUE(c.has_shape);
  EXPECT_EQ(c.dims.size(), 2u);
}

TEST(OnnxLoader, NodeNamesAreMadeUnique) {
  ModelBuilder b;
  b.input("x", {4});
  b.node("Relu", {"x"}, {"a"}, "act");
  b.node("Relu", {"a"}, {"b"}, "act");
  b.node("Relu", {"b"}, {"c"}, "act_1");  // collides with the renamed second node
  b.node("Relu", {"c"}, {"d"});
  b.node("Relu", {"d"}, {"e"}, "Relu_3");  // collides with the generated name of node 3
  b.output("e", {4});
  const ir::Graph g = load(b);
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"act", "act_1", "act_1_1", "Relu_3", "Relu_3_1"}));
}

TEST(OnnxLoader, AttributesOfEveryType) {
  ModelBuilder b;
  b.input("x", {4});
  auto* n = b.node("Relu", {"x"}, {"y"}, "r");
  test::set_float(n, "f", 0.25f);
  test::set_int(n, "i", -7);
  test::set_string(n, "s", "hello");
  test::set_floats(n, "fs", {1.5f, -2.5f});
  test::set_ints(n, "is", {1, 2, 3});
  test::set_strings(n, "ss", {"a", "bc"});
  test::set_ints(n, "empty_ints", {});
  test::set_tensor(n, "t", {2, 2}, {1, 2, 3, 4});
  auto* ts = test::add_attr(n, "ts", AttributeProto::TENSORS);
  test::ModelBuilder::fill_float_tensor(ts->add_tensors(), "", {1}, {1});
  b.output("y", {4});
  const ir::Graph g = load(b);
  const auto& a = g.nodes[0].attrs;
  using T = ir::Attribute::Type;
  EXPECT_EQ(a.at("f").type, T::kFloat);
  EXPECT_EQ(a.at("f").f, 0.25f);
  EXPECT_EQ(a.at("i").type, T::kInt);
  EXPECT_EQ(a.at("i").i, -7);
  EXPECT_EQ(a.at("s").type, T::kString);
  EXPECT_EQ(a.at("s").s, "hello");
  EXPECT_EQ(a.at("fs").type, T::kFloats);
  EXPECT_EQ(a.at("fs").floats, (std::vector<float>{1.5f, -2.5f}));
  EXPECT_EQ(a.at("is").type, T::kInts);
  EXPECT_EQ(a.at("is").ints, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(a.at("ss").type, T::kStrings);
  EXPECT_EQ(a.at("ss").strings, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(a.at("empty_ints").type, T::kInts);
  EXPECT_TRUE(a.at("empty_ints").ints.empty());
  EXPECT_EQ(a.at("t").type, T::kTensor);
  EXPECT_EQ(a.at("t").t.shape(), (Shape{2, 2}));
  EXPECT_EQ(a.at("t").t.to_float_vector(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(a.at("ts").type, T::kOther);
}

TEST(OnnxLoader, ScalarAttributeAtItsDefaultValue) {
  // A proto3-style writer may omit a scalar equal to its default: type INT without `i`.
  ModelBuilder b;
  b.input("x", {4});
  auto* n = b.node("Relu", {"x"}, {"y"});
  test::add_attr(n, "zero", AttributeProto::INT);
  b.output("y", {4});
  const ir::Graph g = load(b);
  EXPECT_EQ(g.nodes[0].attrs.at("zero").type, ir::Attribute::Type::kInt);
  EXPECT_EQ(g.nodes[0].attrs.at("zero").i, 0);
}

TEST(OnnxLoader, ConstantNodeTensor) {
  ModelBuilder b;
  b.input("x", {3});
  auto* k = b.node("Constant", {}, {"k"}, "k");
  test::set_tensor(k, "value", {3}, {10, 20, 30});
  b.node("Add", {"x", "k"}, {"y"});
  b.output("y", {3});
  const ir::Graph g = load(b);
  const ir::Node& c = g.nodes[0];
  EXPECT_TRUE(c.inputs.empty());
  EXPECT_EQ(c.attrs.at("value").t.to_float_vector(), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(g.nodes[1].inputs[1], c.outputs[0]);
}

TEST(OnnxLoader, OmittedOptionalInputsAndOutputs) {
  ModelBuilder b;
  b.input("x", {4});
  b.initializer("hi", {}, {6});
  b.node("Clip", {"x", "", "hi"}, {"y"});  // min omitted, max given
  b.node("Clip", {"y", "", ""}, {"z"});    // trailing empties are dropped
  b.initializer("w", {2, 4, 1, 1}, iota(8));
  b.input("img", {1, 4, 2, 2});
  b.node("Conv", {"img", "w", ""}, {"conv_out"});  // bias omitted
  b.output("z", {4});
  b.output("conv_out");
  const ir::Graph g = load(b);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<int>{g.find_value("x"), -1, g.find_value("hi")}));
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<int>{g.find_value("y")}));
  EXPECT_EQ(g.nodes[2].inputs.size(), 2u);
  EXPECT_EQ(value(g, "hi").constant.rank(), 0);
}

TEST(OnnxLoader, NodesInAnyFileOrder) {
  // ONNX asks for topological order, but the IR only needs a DAG.
  ModelBuilder b;
  b.input("x", {4});
  b.node("Relu", {"a"}, {"y"}, "second");
  b.node("Neg", {"x"}, {"a"}, "first");
  b.output("y", {4});
  const ir::Graph g = load(b);
  EXPECT_EQ(g.topological_order(), (std::vector<int>{1, 0}));
}

TEST(OnnxLoader, OutputMayBeAnInputOrInitializer) {
  ModelBuilder b;
  b.input("x", {4});
  b.initializer("k", {1}, {1});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {4});
  b.output("x", {4});
  b.output("k", {1});
  const ir::Graph g = load(b);
  EXPECT_EQ(g.outputs, (std::vector<int>{g.find_value("y"), g.find_value("x"), g.find_value("k")}));
}

TEST(OnnxLoader, AiOnnxDomainIsTheDefaultDomain) {
  ModelBuilder b;
  b.model.mutable_opset_import(0)->set_domain("ai.onnx");
  auto* ml = b.model.add_opset_import();  // other imports are fine when no node uses them
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  b.input("x", {4});
  b.node("Relu", {"x"}, {"y"})->set_domain("ai.onnx");
  b.output("y", {4});
  const ir::Graph g = load(b);
  EXPECT_EQ(g.opset, 13);
  EXPECT_EQ(g.nodes[0].domain, "");
}

TEST(OnnxLoader, OpsetRangeIsAccepted) {
  for (int opset : {7, 11, 17}) {
    ModelBuilder b(opset);
    b.input("x", {4});
    b.node("Relu", {"x"}, {"y"});
    b.output("y", {4});
    EXPECT_EQ(load(b).opset, opset);
  }
}

TEST(OnnxLoader, LoadsFromAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tern_loader_" + std::to_string(::getpid()) + ".onnx");
  const std::string bytes = conv_relu_model().bytes();
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const ir::Graph g = onnx::load_model_file(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "y");
}

}  // namespace
}  // namespace tern
