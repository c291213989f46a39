// Malformed and hostile models: each must fail with the right error type and a message
// naming the problem, never crash, hang or allocate what the file merely declares.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "model_builder.h"
#include "onnx/loader.h"
#include "support/test_env.h"
#include "tern/status.h"

namespace tern {
namespace {

namespace fs = std::filesystem;
using ::onnx::AttributeProto;
using ::onnx::TensorProto;
using test::expect_load_error;
using test::ModelBuilder;
using ::testing::HasSubstr;

// x [4] -> Relu -> y: the smallest valid model, to break in one place per test.
ModelBuilder relu_model(int64_t opset = 13, int64_t ir_version = 7) {
  ModelBuilder b(opset, ir_version);
  b.input("x", {4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y", {4});
  return b;
}

template <typename E>
void expect_file_error(const std::string& path, const std::vector<std::string>& parts) {
  try {
    onnx::load_model_file(path);
    ADD_FAILURE() << "expected an error for " << path;
  } catch (const E& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type; message: " << e.what();
  }
}

std::string scratch_path(const std::string& name) {
  return (fs::temp_directory_path() / ("tern_hostile_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// ---- files and bytes ------------------------------------------------------------------

TEST(OnnxHostile, MissingEmptyAndDirectoryPaths) {
  expect_file_error<IOError>(scratch_path("missing.onnx"), {"no such ONNX model file"});
  const std::string empty = scratch_path("empty.onnx");
  std::ofstream{empty};
  expect_file_error<IOError>(empty, {"empty"});
  fs::remove(empty);
  expect_file_error<IOError>(fs::temp_directory_path().string(), {"not a regular file"});
  // An endless device is refused before anything is read (base/file_io.h).
  if (fs::exists("/dev/zero")) {
    expect_file_error<IOError>("/dev/zero", {"not a regular file", "character device"});
  }
}

TEST(OnnxHostile, EmptyBufferAndRandomBytes) {
  expect_load_error<ModelError>(std::string(), {"empty"});
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes(64 + seed * 397, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
    SCOPED_TRACE(seed);
    expect_load_error<ModelError>(bytes, {""});
  }
  expect_load_error<ModelError>(std::string("\x0a\xff\xff\xff\xff\x0f", 6),
                                {"not a valid ONNX model (protobuf parse failed)"});
}

TEST(OnnxHostile, ErrorsFromAFileNameTheFile) {
  const std::string path = scratch_path("garbage.onnx");
  std::ofstream(path, std::ios::binary) << "this is not a protobuf \xff\xff\xff\xff";
  expect_file_error<ModelError>(path, {"protobuf parse failed"});
  const std::string bytes = relu_model(18).bytes();
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  expect_file_error<UnsupportedOpError>(path, {"opset 18"});
  fs::remove(path);
}

TEST(OnnxHostile, TruncatedRealModels) {
  const fs::path dir = test::models_dir();
  if (!fs::exists(dir)) GTEST_SKIP() << "no models folder at " << dir;
  int tested = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(full.size(), 1000u);
    const size_t n = full.size();
    const std::vector<size_t> cuts = {1, 2, 3, 10, 1000, n / 4, n / 2, n * 3 / 4, n - 1};
    for (size_t cut : cuts) {
      SCOPED_TRACE(entry.path().filename().string() + " cut at " + std::to_string(cut));
      // Cutting inside a field always breaks the parse; a cut right after the first field
      // (ir_version) parses to a model without an opset: both are ModelErrors.
      expect_load_error<ModelError>(full.substr(0, cut), {""});
    }
    expect_load_error<ModelError>(full.substr(0, full.size() - 1), {"protobuf parse failed"});
    ++tested;
  }
  if (tested == 0) GTEST_SKIP() << "no .onnx files in " << dir;
}

// ---- versions -------------------------------------------------------------------------

TEST(OnnxHostile, IrVersionAndOpsets) {
  expect_load_error<ModelError>(relu_model(13, 2), {"IR version 2 is not supported", "3 or later"});
  expect_load_error<ModelError>(relu_model(13, 0), {"IR version 0"});
  expect_load_error<ModelError>(relu_model(0), {"default-domain opset 0", "opsets 1 to 17"});
  expect_load_error<UnsupportedOpError>(relu_model(99), {"opset 99", "opsets 1 to 17"});
  expect_load_error<UnsupportedOpError>(relu_model(18), {"opset 18"});

  ModelBuilder none = relu_model();
  none.model.clear_opset_import();
  expect_load_error<ModelError>(none, {"no entry for the default ONNX domain"});

  ModelBuilder twice = relu_model();
  auto* op = twice.model.add_opset_import();
  op->set_domain("ai.onnx");
  op->set_version(11);
  expect_load_error<ModelError>(twice, {"default domain twice", "13 and 11"});

  ModelBuilder no_graph = relu_model();
  no_graph.model.clear_graph();
  expect_load_error<ModelError>(no_graph, {"no graph"});
}

// ---- ops and nodes --------------------------------------------------------------------

TEST(OnnxHostile, UnsupportedOps) {
  for (const char* op : {"Foo", "LSTM", "If"}) {
    ModelBuilder b = relu_model();
    b.node(op, {"y"}, {"z"}, "strange");
    b.output("z");
    SCOPED_TRACE(op);
    expect_load_error<UnsupportedOpError>(
        b, {"node 'strange' uses op '" + std::string(op) + "' (opset 13)",
            "which tern does not support", "supported ops: ", "Conv", "Relu"});
  }
}

TEST(OnnxHostile, UnsupportedDomain) {
  ModelBuilder b = relu_model();
  auto* n = b.node("FusedConv", {"y"}, {"z"}, "fused");
  n->set_domain("com.microsoft");
  b.output("z");
  expect_load_error<UnsupportedOpError>(
      b, {"node 'fused'", "'FusedConv'", "domain 'com.microsoft'", "default ONNX domain only"});
}

TEST(OnnxHostile, GraphAttributesAreUnsupported) {
  // A registered op carrying a subgraph is still control flow tern cannot run.
  ModelBuilder b = relu_model();
  auto* a = test::add_attr(b.graph().mutable_node(0), "body", AttributeProto::GRAPH);
  a->mutable_g()->set_name("sub");
  expect_load_error<UnsupportedOpError>(
      b, {"node 'relu' (Relu)", "attribute 'body'", "control flow is not supported"});
}

TEST(OnnxHostile, InputAndOutputCounts) {
  ModelBuilder two_in = relu_model();
  two_in.graph().mutable_node(0)->add_input("x");
  expect_load_error<ModelError>(two_in,
                                {"node 'relu' (Relu) has 2 inputs", "Relu takes exactly 1"});

  ModelBuilder conv;
  conv.input("x", {1, 1, 4, 4});
  conv.node("Conv", {"x"}, {"y"}, "c");
  conv.output("y");
  expect_load_error<ModelError>(conv, {"node 'c' (Conv) has 1 inputs", "Conv takes 2 to 3"});

  ModelBuilder no_out = relu_model();
  no_out.graph().mutable_node(0)->set_output(0, "");
  expect_load_error<ModelError>(no_out, {"node 'relu' (Relu) has 0 outputs"});

  ModelBuilder required;
  required.input("x", {1, 1, 4, 4});
  required.initializer("w", {1, 1, 1, 1}, {1});
  required.node("Conv", {"", "w"}, {"y"}, "c");
  required.output("y");
  expect_load_error<ModelError>(required, {"node 'c' (Conv)", "input 0 is required"});

  ModelBuilder no_type = relu_model();
  no_type.graph().mutable_node(0)->clear_op_type();
  expect_load_error<ModelError>(no_type, {"node 'relu' has no op_type"});
}

// ---- graph structure ------------------------------------------------------------------

TEST(OnnxHostile, Cycle) {
  ModelBuilder b;
  b.input("x", {4});
  b.node("Add", {"x", "b"}, {"a"}, "add");
  b.node("Relu", {"a"}, {"b"}, "relu");
  b.output("b", {4});
  expect_load_error<ModelError>(b, {"cycle", "must be a DAG"});

  ModelBuilder self = relu_model();
  self.graph().mutable_node(0)->set_input(0, "y");
  expect_load_error<ModelError>(self, {"cycle through node 'relu'"});
}

TEST(OnnxHostile, UndefinedInput) {
  ModelBuilder b = relu_model();
  b.node("Add", {"y", "nope"}, {"z"}, "add");
  b.output("z");
  expect_load_error<ModelError>(b, {"node 'add' (Add)", "input 'nope'",
                                    "not a graph input, an initializer or the output of any node"});
}

TEST(OnnxHostile, DuplicateNames) {
  ModelBuilder two_writers = relu_model();
  two_writers.node("Neg", {"x"}, {"y"}, "neg");
  expect_load_error<ModelError>(two_writers, {"'y'", "written by two nodes", "'relu'", "'neg'"});

  ModelBuilder writes_input = relu_model();
  writes_input.node("Neg", {"y"}, {"x"}, "neg");
  expect_load_error<ModelError>(writes_input, {"graph input 'x'", "written by node 'neg'"});

  ModelBuilder writes_weight = relu_model();
  writes_weight.initializer("k", {4}, {1, 2, 3, 4});
  writes_weight.node("Neg", {"y"}, {"k"}, "neg");
  expect_load_error<ModelError>(writes_weight, {"node 'neg'", "'k'", "also an initializer"});

  ModelBuilder two_inits = relu_model();
  two_inits.initializer("k", {1}, {1});
  two_inits.initializer("k", {1}, {2});
  expect_load_error<ModelError>(two_inits, {"initializer 'k' is defined more than once"});

  ModelBuilder two_inputs = relu_model();
  two_inputs.input("x", {4});
  expect_load_error<ModelError>(two_inputs, {"graph input 'x' is listed twice"});

  ModelBuilder two_outputs = relu_model();
  two_outputs.output("y", {4});
  expect_load_error<ModelError>(two_outputs, {"graph output 'y' is listed twice"});
}

TEST(OnnxHostile, BadGraphOutputs) {
  ModelBuilder missing = relu_model();
  missing.output("ghost", {4});
  expect_load_error<ModelError>(missing, {"graph output 'ghost' is not produced by any node"});

  ModelBuilder none = relu_model();
  none.graph().clear_output();
  expect_load_error<ModelError>(none, {"declares no outputs"});

  ModelBuilder seq = relu_model();
  seq.graph().mutable_output(0)->mutable_type()->mutable_sequence_type();
  expect_load_error<UnsupportedOpError>(seq, {"graph output 'y' is not a tensor"});
}

TEST(OnnxHostile, BadGraphInputs) {
  ModelBuilder seq = relu_model();
  seq.graph().mutable_input(0)->mutable_type()->mutable_map_type();
  expect_load_error<UnsupportedOpError>(seq, {"graph input 'x' is not a tensor"});

  ModelBuilder dbl = relu_model();
  dbl.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      TensorProto::COMPLEX64);
  expect_load_error<UnsupportedOpError>(dbl, {"graph input 'x'", "dtype complex64"});

  ModelBuilder neg = relu_model();
  neg.graph()
      .mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-4);
  expect_load_error<ModelError>(neg, {"graph input 'x'", "negative dim -4"});

  ModelBuilder unnamed = relu_model();
  unnamed.input("", {1});
  expect_load_error<ModelError>(unnamed, {"graph input has an empty name"});

  ModelBuilder mismatch;
  mismatch.input("x", {4});
  mismatch.input("k", {4}, TensorProto::INT64);
  mismatch.initializer("k", {4}, {1, 2, 3, 4});
  mismatch.node("Add", {"x", "k"}, {"y"});
  mismatch.output("y", {4});
  expect_load_error<ModelError>(
      mismatch, {"graph input 'k' is declared int64 but its initializer is float32"});
}

// ---- attributes -----------------------------------------------------------------------

TEST(OnnxHostile, AttributeTypeDisagreesWithItsFields) {
  ModelBuilder b = relu_model();
  auto* a = test::add_attr(b.graph().mutable_node(0), "alpha", AttributeProto::INT);
  a->add_floats(0.5f);
  expect_load_error<ModelError>(
      b, {"node 'relu' (Relu): attribute 'alpha'", "declared INT", "sets the field 'floats'"});

  ModelBuilder untyped = relu_model();
  auto* u = untyped.graph().mutable_node(0)->add_attribute();
  u->set_name("alpha");
  u->set_f(0.5f);
  expect_load_error<ModelError>(untyped, {"attribute 'alpha' has no type"});

  ModelBuilder no_tensor = relu_model();
  test::add_attr(no_tensor.graph().mutable_node(0), "value", AttributeProto::TENSOR);
  expect_load_error<ModelError>(no_tensor, {"attribute 'value' is declared TENSOR but holds no"});

  ModelBuilder dup = relu_model();
  test::set_int(dup.graph().mutable_node(0), "k", 1);
  test::set_int(dup.graph().mutable_node(0), "k", 2);
  expect_load_error<ModelError>(dup, {"attribute 'k' appears twice"});

  ModelBuilder nameless = relu_model();
  test::set_int(nameless.graph().mutable_node(0), "", 1);
  expect_load_error<ModelError>(nameless, {"has an attribute without a name"});

  ModelBuilder ref = relu_model();
  test::add_attr(ref.graph().mutable_node(0), "alpha", AttributeProto::FLOAT)
      ->set_ref_attr_name("outer_alpha");
  expect_load_error<ModelError>(ref, {"function attribute 'outer_alpha'"});
}

TEST(OnnxHostile, AttributeTypeTheOpDoesNotExpect) {
  // Well-formed protobuf, but Conv's strides must be INTS (checked by the op's factory).
  ModelBuilder b;
  b.input("x", {1, 1, 4, 4});
  b.initializer("w", {1, 1, 1, 1}, {1});
  auto* n = b.node("Conv", {"x", "w"}, {"y"}, "c");
  test::set_floats(n, "strides", {1.0f, 1.0f});
  b.output("y");
  expect_load_error<ModelError>(b, {"Conv 'c'", "strides"});
}

// ---- tensor sizes ---------------------------------------------------------------------

TEST(OnnxHostile, OverflowingDims) {
  ModelBuilder b = relu_model();
  auto* t = b.initializer("big", {}, {});
  t->add_dims(int64_t{1} << 40);
  t->add_dims(int64_t{1} << 40);
  expect_load_error<ModelError>(b, {"initializer 'big'", "overflow"});
}

TEST(OnnxHostile, DimsWithinRangeButOverTheLimit) {
  ModelBuilder b = relu_model();
  auto* t = b.initializer("large", {}, {});
  t->add_dims(1 << 20);
  t->add_dims(1 << 12);  // 4 Gi floats = 16 GiB, declared with no data behind it
  expect_load_error<ModelError>(
      b, {"initializer 'large'", "17179869184 bytes", "over the limit of 2147483648 bytes"});

  // A Constant node's tensor is checked the same way.
  ModelBuilder c = relu_model();
  auto* k = c.node("Constant", {}, {"k"}, "konst");
  auto* kt = test::set_tensor(k, "value", {}, {});
  kt->add_dims(int64_t{1} << 31);
  expect_load_error<ModelError>(c,
                                {"node 'konst' (Constant): attribute 'value'", "over the limit"});
}

TEST(OnnxHostile, ConfigurableLimits) {
  ModelBuilder b = relu_model();
  b.initializer("w1", {100}, std::vector<float>(100, 1.0f));  // 400 bytes
  b.initializer("w2", {100}, std::vector<float>(100, 2.0f));  // 400 bytes
  onnx::LoadLimits limits;
  limits.max_tensor_bytes = 399;
  expect_load_error<ModelError>(b, {"initializer 'w1'", "limit of 399 bytes", "max_tensor_bytes"},
                                limits);
  limits.max_tensor_bytes = 400;
  limits.max_model_bytes = 799;
  expect_load_error<ModelError>(
      b, {"initializer 'w2'", "reach 800 bytes", "limit of 799", "max_model_bytes"}, limits);
  limits.max_model_bytes = 800;
  const std::string bytes = b.bytes();
  EXPECT_EQ(onnx::load_model(bytes.data(), bytes.size(), limits).parameter_count(), 200);
}

TEST(OnnxHostile, NegativeDims) {
  ModelBuilder b = relu_model();
  b.initializer("neg", {2, -1}, {});
  expect_load_error<ModelError>(b, {"initializer 'neg'", "negative dim -1"});
}

TEST(OnnxHostile, RawDataShorterThanDeclared) {
  ModelBuilder b = relu_model();
  b.initializer("w", {2, 3}, {1, 2, 3, 4});
  expect_load_error<ModelError>(
      b, {"initializer 'w'", "raw_data has 16 bytes", "dims [2, 3] of float32 need 24 bytes"});
}

TEST(OnnxHostile, UnsupportedTensorStorage) {
  ModelBuilder ext = relu_model();
  auto* t = ext.initializer("w", {4}, {});
  t->clear_raw_data();
  t->set_data_location(TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  expect_load_error<UnsupportedOpError>(ext, {"initializer 'w'", "external data is not supported"});

  ModelBuilder dbl = relu_model();
  auto* d = dbl.graph().add_initializer();
  d->set_name("d");
  d->set_data_type(TensorProto::COMPLEX128);
  d->add_double_data(1.0);
  d->add_double_data(0.0);
  expect_load_error<UnsupportedOpError>(dbl,
                                        {"initializer 'd'", "dtype complex128 is not supported"});

  ModelBuilder sparse = relu_model();
  sparse.graph().add_sparse_initializer()->mutable_values()->set_name("sp");
  expect_load_error<UnsupportedOpError>(sparse, {"sparse initializer 'sp'"});

  ModelBuilder unnamed = relu_model();
  unnamed.initializer("", {1}, {1});
  expect_load_error<ModelError>(unnamed, {"initializer has an empty name"});
}

TEST(OnnxHostile, DeeplyNestedSubgraphs) {
  // Protobuf's recursion limit turns this into a parse error instead of a stack overflow.
  ModelBuilder b = relu_model();
  ::onnx::GraphProto* g = nullptr;
  auto* a = test::add_attr(b.graph().mutable_node(0), "body", AttributeProto::GRAPH);
  g = a->mutable_g();
  for (int depth = 0; depth < 2000; ++depth) {
    auto* n = g->add_node();
    n->set_op_type("If");
    auto* sub = n->add_attribute();
    sub->set_name("then_branch");
    sub->set_type(AttributeProto::GRAPH);
    g = sub->mutable_g();
  }
  expect_load_error<ModelError>(b, {"protobuf parse failed"});
}

}  // namespace
}  // namespace tern
