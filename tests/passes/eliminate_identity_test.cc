// eliminate-identity: nodes that return their input unchanged are removed (their readers
// read the input), and nodes that change data, shape or dtype, or whose removal would
// change what the graph returns, are kept.
#include "toy_model_util.h"

namespace tern::test::eliminate_identity_test {
namespace {

const std::vector<std::string> kOnlyIdentity = all_passes_except({"eliminate-identity"});

// x -> Neg -> a -> [middle nodes, a -> b] -> Neg -> y, with x of `shape`. The Negs are
// real ops on both sides, so that what the pass does to the middle is all that changes.
struct Sandwich {
  ModelBuilder m;
  Shape shape;
  explicit Sandwich(const Shape& s, int64_t opset = 13) : m(opset), shape(s) {
    std::vector<DimSpec> dims(s.begin(), s.end());
    m.input("x", dims);
    m.output("y");
    m.node("Neg", {"x"}, {"a"}, "neg_in");
  }
  // Closes the model with b -> Neg -> y.
  ModelBuilder& done(const std::string& last = "b") {
    m.node("Neg", {last}, {"y"}, "neg_out");
    return m;
  }
  std::vector<NamedTensor> feeds() const { return {{"x", random_tensor(shape, 11)}}; }
};

// Compiles with only eliminate-identity on, expects `removed` nodes fewer than with it
// off and no node of `op` left (or one left when `kept`), and equal results.
void expect_identity(const ModelBuilder& m, const Shape& shape, const std::string& op, bool kept,
                     const std::vector<NamedTensor>& feeds,
                     const std::vector<NamedTensor>& extra_feeds = {}) {
  std::vector<ops::TensorType> types = {{DType::kFloat32, shape}};
  for (const NamedTensor& f : extra_feeds) types.push_back({f.tensor.dtype(), f.tensor.shape()});
  const passes::Program off = compile(m, types, passes::pass_names());
  const passes::Program on = compile(m, types, kOnlyIdentity);
  const int before = count_ops(off, op);
  ASSERT_GE(before, 1) << op;
  if (kept) {
    EXPECT_EQ(count_ops(on, op), before) << op << " was removed";
    EXPECT_EQ(on.graph.nodes.size(), off.graph.nodes.size());
  } else {
    EXPECT_EQ(count_ops(on, op), 0) << op << " was kept";
    EXPECT_EQ(on.graph.nodes.size(), off.graph.nodes.size() - static_cast<size_t>(before));
  }
  std::vector<NamedTensor> all = feeds;
  all.insert(all.end(), extra_feeds.begin(), extra_feeds.end());
  expect_pass_keeps_results(m, all, "eliminate-identity", 0.0);
  expect_pass_exact(m, all, {}, "eliminate-identity");
}

TEST(EliminateIdentity, IdentityIsRemoved) {
  Sandwich s({2, 3, 5});
  s.m.node("Identity", {"a"}, {"b"}, "id");
  const ModelBuilder& m = s.done();
  expect_identity(m, s.shape, "Identity", false, s.feeds());
  // The reader now reads the Identity's input.
  const passes::Program p = compile(m, {{DType::kFloat32, s.shape}}, kOnlyIdentity);
  const ir::Node& neg_out = p.graph.nodes[producer_of(p, "y")];
  EXPECT_EQ(neg_out.inputs[0], value_id(p, "a"));
}

TEST(EliminateIdentity, InferenceDropoutIsRemoved) {
  {
    SCOPED_TRACE("no mask, no training_mode");
    Sandwich s({1, 4, 3, 3});
    s.m.node("Dropout", {"a"}, {"b"}, "drop");
    expect_identity(s.done(), s.shape, "Dropout", false, s.feeds());
  }
  {
    SCOPED_TRACE("mask output not read");
    Sandwich s({1, 4, 3, 3});
    s.m.node("Dropout", {"a"}, {"b", "mask"}, "drop");
    expect_identity(s.done(), s.shape, "Dropout", false, s.feeds());
  }
  {
    SCOPED_TRACE("ratio given, training_mode constant false");
    Sandwich s({1, 4, 3, 3});
    s.m.initializer("ratio", {}, {0.3f});
    bool_initializer(s.m, "training", false);
    s.m.node("Dropout", {"a", "ratio", "training"}, {"b", "mask"}, "drop");
    expect_identity(s.done(), s.shape, "Dropout", false, s.feeds());
  }
  {
    SCOPED_TRACE("opset 7 Dropout");
    Sandwich s({3, 5}, 7);
    s.m.node("Dropout", {"a"}, {"b"}, "drop");
    expect_identity(s.done(), s.shape, "Dropout", false, s.feeds());
  }
}

TEST(EliminateIdentity, DropoutThatMayChangeDataIsKept) {
  {
    SCOPED_TRACE("mask read");
    Sandwich s({1, 4, 3, 3});
    s.m.output("mask_f");
    s.m.node("Dropout", {"a"}, {"b", "mask"}, "drop");
    set_int(s.m.node("Cast", {"mask"}, {"mask_f"}, "cast_mask"), "to", ::onnx::TensorProto::FLOAT);
    expect_identity(s.done(), s.shape, "Dropout", true, s.feeds());
  }
  {
    SCOPED_TRACE("mask is a graph output");
    Sandwich s({1, 4, 3, 3});
    s.m.output("mask");
    s.m.node("Dropout", {"a"}, {"b", "mask"}, "drop");
    expect_identity(s.done(), s.shape, "Dropout", true, s.feeds());
  }
  {
    SCOPED_TRACE("training_mode constant true");
    Sandwich s({1, 4, 3, 3});
    s.m.initializer("ratio", {}, {0.5f});
    bool_initializer(s.m, "training", true);
    s.m.node("Dropout", {"a", "ratio", "training"}, {"b"}, "drop");
    const ModelBuilder& m = s.done();
    expect_identity(m, s.shape, "Dropout", true, s.feeds());
    // It really drops: some outputs are 0, the others scaled by 2.
    const auto out = run_model(m, s.feeds());
    const std::vector<float> y = out[0].tensor.to_float_vector();
    EXPECT_GT(std::count(y.begin(), y.end(), 0.0f), 0);
  }
  {
    SCOPED_TRACE("training_mode read at run time");
    Sandwich s({1, 4, 3, 3});
    s.m.input("training", {}, ::onnx::TensorProto::BOOL);
    s.m.initializer("ratio", {}, {0.5f});
    s.m.node("Dropout", {"a", "ratio", "training"}, {"b"}, "drop");
    const ModelBuilder& m = s.done();
    expect_identity(m, s.shape, "Dropout", true, s.feeds(), {{"training", bool_scalar(true)}});
    expect_identity(m, s.shape, "Dropout", true, s.feeds(), {{"training", bool_scalar(false)}});
  }
}

TEST(EliminateIdentity, NoOpShapeOpsAreRemoved) {
  {
    SCOPED_TRACE("Reshape to the same shape");
    Sandwich s({1, 4, 3, 5});
    int64_initializer(s.m, "same", {4}, {1, 4, 3, -1});
    s.m.node("Reshape", {"a", "same"}, {"b"}, "reshape");
    expect_identity(s.done(), s.shape, "Reshape", false, s.feeds());
  }
  {
    SCOPED_TRACE("Flatten of a 2-D tensor at axis 1");
    Sandwich s({6, 7});
    set_int(s.m.node("Flatten", {"a"}, {"b"}, "flatten"), "axis", 1);
    expect_identity(s.done(), s.shape, "Flatten", false, s.feeds());
  }
  {
    SCOPED_TRACE("Squeeze of a tensor without size-1 dims");
    Sandwich s({2, 3, 4});
    s.m.node("Squeeze", {"a"}, {"b"}, "squeeze");
    expect_identity(s.done(), s.shape, "Squeeze", false, s.feeds());
  }
  {
    SCOPED_TRACE("Squeeze then Unsqueeze of the same axis: both change the shape");
    Sandwich s({2, 1, 4});
    int64_initializer(s.m, "axis1", {1}, {1});
    s.m.node("Squeeze", {"a", "axis1"}, {"sq"}, "squeeze");
    s.m.node("Unsqueeze", {"sq", "axis1"}, {"b"}, "unsqueeze");
    const ModelBuilder& m = s.done();
    expect_identity(m, s.shape, "Squeeze", true, s.feeds());
    expect_identity(m, s.shape, "Unsqueeze", true, s.feeds());
  }
  {
    SCOPED_TRACE("Reshape that changes the shape");
    Sandwich s({2, 6});
    int64_initializer(s.m, "other", {2}, {3, 4});
    s.m.node("Reshape", {"a", "other"}, {"b"}, "reshape");
    expect_identity(s.done(), s.shape, "Reshape", true, s.feeds());
  }
}

TEST(EliminateIdentity, TransposeKeepingTheDataOrderIsRemoved) {
  {
    SCOPED_TRACE("identity perm");
    Sandwich s({2, 3, 4});
    set_ints(s.m.node("Transpose", {"a"}, {"b"}, "transpose"), "perm", {0, 1, 2});
    expect_identity(s.done(), s.shape, "Transpose", false, s.feeds());
  }
  {
    SCOPED_TRACE("perm moving only size-1 dims");
    Sandwich s({1, 3, 1, 4});
    set_ints(s.m.node("Transpose", {"a"}, {"b"}, "transpose"), "perm", {2, 1, 0, 3});
    expect_identity(s.done(), s.shape, "Transpose", false, s.feeds());
  }
  {
    SCOPED_TRACE("default perm of a 1-D tensor");
    Sandwich s({7});
    s.m.node("Transpose", {"a"}, {"b"}, "transpose");
    expect_identity(s.done(), s.shape, "Transpose", false, s.feeds());
  }
}

TEST(EliminateIdentity, RealTransposeIsKept) {
  {
    SCOPED_TRACE("square: same shape, data moves");
    Sandwich s({3, 3});
    set_ints(s.m.node("Transpose", {"a"}, {"b"}, "transpose"), "perm", {1, 0});
    expect_identity(s.done(), s.shape, "Transpose", true, s.feeds());
  }
  {
    SCOPED_TRACE("default perm of a square matrix");
    Sandwich s({4, 4});
    s.m.node("Transpose", {"a"}, {"b"}, "transpose");
    expect_identity(s.done(), s.shape, "Transpose", true, s.feeds());
  }
  {
    SCOPED_TRACE("size-1 dims and two equal dims swapped");
    Sandwich s({1, 5, 1, 5});
    set_ints(s.m.node("Transpose", {"a"}, {"b"}, "transpose"), "perm", {2, 3, 0, 1});
    expect_identity(s.done(), s.shape, "Transpose", true, s.feeds());
  }
  {
    SCOPED_TRACE("shape changes");
    Sandwich s({2, 3, 4});
    set_ints(s.m.node("Transpose", {"a"}, {"b"}, "transpose"), "perm", {0, 2, 1});
    expect_identity(s.done(), s.shape, "Transpose", true, s.feeds());
  }
}

TEST(EliminateIdentity, CastToTheSameDTypeIsRemoved) {
  {
    SCOPED_TRACE("float -> float");
    Sandwich s({2, 5});
    set_int(s.m.node("Cast", {"a"}, {"b"}, "cast"), "to", ::onnx::TensorProto::FLOAT);
    expect_identity(s.done(), s.shape, "Cast", false, s.feeds());
  }
  {
    SCOPED_TRACE("float -> int32 -> float: real casts");
    Sandwich s({2, 5});
    set_int(s.m.node("Cast", {"a"}, {"i"}, "cast_i"), "to", ::onnx::TensorProto::INT32);
    set_int(s.m.node("Cast", {"i"}, {"b"}, "cast_f"), "to", ::onnx::TensorProto::FLOAT);
    const ModelBuilder& m = s.done();
    expect_identity(m, s.shape, "Cast", true, s.feeds());
    // Truncation happened: the output is not just -x.
    const auto feeds = s.feeds();
    const auto out = run_model(m, feeds);
    const std::vector<float> x = feeds[0].tensor.to_float_vector();
    const std::vector<float> y = out[0].tensor.to_float_vector();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::trunc(x[i])) << i;
  }
  {
    SCOPED_TRACE("float -> float16");
    Sandwich s({2, 5});
    set_int(s.m.node("Cast", {"a"}, {"h"}, "cast_h"), "to", ::onnx::TensorProto::FLOAT16);
    set_int(s.m.node("Cast", {"h"}, {"b"}, "cast_f"), "to", ::onnx::TensorProto::FLOAT);
    expect_identity(s.done(), s.shape, "Cast", true, s.feeds());
  }
}

// x -> Neg -> a -> Identity -> y (graph output): the Neg writes y itself.
TEST(EliminateIdentity, IdentityToGraphOutputRewiresTheProducer) {
  ModelBuilder m(13);
  m.input("x", {2, 3});
  m.output("y", {2, 3});
  m.node("Neg", {"x"}, {"a"}, "neg");
  m.node("Identity", {"a"}, {"y"}, "id");
  const passes::Program p = compile(m, {{DType::kFloat32, {2, 3}}}, kOnlyIdentity);
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_EQ(p.graph.nodes[0].op_type, "Neg");
  EXPECT_EQ(p.graph.nodes[0].outputs[0], value_id(p, "y"));
  EXPECT_EQ(producer_op(p, "y"), "Neg");
  EXPECT_EQ(p.graph.values[p.graph.outputs[0]].name, "y");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({2, 3}, 2)}};
  expect_pass_keeps_results(m, feeds, "eliminate-identity", 0.0);
  const auto out = run_model(m, feeds);
  EXPECT_EQ(out[0].name, "y");
}

// x -> Reshape -> a -> Identity -> y: the Reshape then returns a view of the caller's
// input as the graph output; the caller must still get a tensor of its own.
TEST(EliminateIdentity, RewiredViewOfTheInputIsReturnedAsACopy) {
  ModelBuilder m(13);
  m.input("x", {2, 3});
  m.output("y", {3, 2});
  int64_initializer(m, "shape", {2}, {3, 2});
  m.node("Reshape", {"x", "shape"}, {"a"}, "reshape");
  m.node("Identity", {"a"}, {"y"}, "id");
  const passes::Program p = compile(m, {{DType::kFloat32, {2, 3}}}, kOnlyIdentity);
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_EQ(producer_op(p, "y"), "Reshape");
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::string bytes = m.bytes();
  Session session = Session::from_memory(bytes.data(), bytes.size());
  auto out = session.run({{"x", x}});
  EXPECT_EQ(out[0].tensor.shape(), (Shape{3, 2}));
  EXPECT_NE(out[0].tensor.storage().get(), x.storage().get());
  out[0].tensor.data<float>()[0] = -1;
  EXPECT_EQ(x.to_float_vector()[0], 1.0f);
  expect_pass_keeps_results(m, {{"x", x}}, "eliminate-identity", 0.0);
}

// Identity to a graph output whose input cannot be rewired: a graph input, a value read
// elsewhere too, another graph output, or a constant.
TEST(EliminateIdentity, IdentityToGraphOutputIsKeptWhenItsInputCannotMove) {
  auto check = [](const ModelBuilder& m, const Shape& shape) {
    const passes::Program p = compile(m, {{DType::kFloat32, shape}}, kOnlyIdentity);
    EXPECT_EQ(count_ops(p, "Identity"), 1);
    const std::vector<NamedTensor> feeds = {{"x", random_tensor(shape, 4)}};
    expect_pass_keeps_results(m, feeds, "eliminate-identity", 0.0);
    return run_model(m, feeds);
  };
  {
    SCOPED_TRACE("input is a graph input");
    ModelBuilder m(13);
    m.input("x", {4});
    m.output("y", {4});
    m.node("Identity", {"x"}, {"y"}, "id");
    const Tensor x = Tensor::from_vector({1, 2, 3, 4}, {4});
    const std::string bytes = m.bytes();
    Session session = Session::from_memory(bytes.data(), bytes.size());
    const auto out = session.run({{"x", x}});
    EXPECT_EQ(out[0].tensor.to_float_vector(), x.to_float_vector());
    EXPECT_NE(out[0].tensor.storage().get(), x.storage().get());  // a copy, not the caller's tensor
    check(m, {4});
  }
  {
    SCOPED_TRACE("input read elsewhere too");
    ModelBuilder m(13);
    m.input("x", {4});
    m.output("y", {4});
    m.output("z", {4});
    m.node("Neg", {"x"}, {"a"}, "neg");
    m.node("Identity", {"a"}, {"y"}, "id");
    m.node("Exp", {"a"}, {"z"}, "exp");
    check(m, {4});
  }
  {
    SCOPED_TRACE("input is another graph output");
    ModelBuilder m(13);
    m.input("x", {4});
    m.output("a", {4});
    m.output("y", {4});
    m.node("Neg", {"x"}, {"a"}, "neg");
    m.node("Identity", {"a"}, {"y"}, "id");
    const auto out = check(m, {4});
    EXPECT_NE(out[0].tensor.storage().get(), out[1].tensor.storage().get());
  }
}

// Chains of identities in the middle and at the end of a graph all go.
TEST(EliminateIdentity, ChainsAreRemoved) {
  {
    SCOPED_TRACE("middle");
    Sandwich s({1, 3, 4, 4});
    s.m.node("Identity", {"a"}, {"i1"}, "id1");
    s.m.node("Dropout", {"i1"}, {"i2"}, "drop");
    int64_initializer(s.m, "same", {4}, {1, 3, 4, 4});
    s.m.node("Reshape", {"i2", "same"}, {"i3"}, "reshape");
    set_int(s.m.node("Cast", {"i3"}, {"i4"}, "cast"), "to", ::onnx::TensorProto::FLOAT);
    s.m.node("Identity", {"i4"}, {"b"}, "id2");
    const ModelBuilder& m = s.done();
    const passes::Program p = compile(m, {{DType::kFloat32, s.shape}}, kOnlyIdentity);
    ASSERT_EQ(p.graph.nodes.size(), 2u);
    EXPECT_EQ(count_ops(p, "Neg"), 2);
    EXPECT_EQ(p.graph.nodes[producer_of(p, "y")].inputs[0], value_id(p, "a"));
    expect_pass_keeps_results(m, s.feeds(), "eliminate-identity", 0.0);
  }
  {
    SCOPED_TRACE("ending at a graph output");
    ModelBuilder m(13);
    m.input("x", {5});
    m.output("y", {5});
    m.node("Neg", {"x"}, {"a"}, "neg");
    m.node("Identity", {"a"}, {"b"}, "id1");
    m.node("Identity", {"b"}, {"c"}, "id2");
    m.node("Dropout", {"c"}, {"y"}, "drop");
    const passes::Program p = compile(m, {{DType::kFloat32, {5}}}, kOnlyIdentity);
    ASSERT_EQ(p.graph.nodes.size(), 1u);
    EXPECT_EQ(producer_op(p, "y"), "Neg");
    expect_pass_keeps_results(m, {{"x", random_tensor({5}, 9)}}, "eliminate-identity", 0.0);
  }
  {
    SCOPED_TRACE("fan-out after an identity");
    ModelBuilder m(13);
    m.input("x", {5});
    m.output("y", {5});
    m.output("z", {5});
    m.node("Neg", {"x"}, {"a"}, "neg");
    m.node("Identity", {"a"}, {"b"}, "id1");
    m.node("Exp", {"b"}, {"y"}, "exp");
    m.node("Identity", {"b"}, {"z"}, "id2");  // kept: its input is read elsewhere...
    const passes::Program p = compile(m, {{DType::kFloat32, {5}}}, kOnlyIdentity);
    EXPECT_EQ(count_ops(p, "Identity"), 1);  // ...but id1 went
    EXPECT_EQ(p.graph.nodes.size(), 3u);
    expect_pass_keeps_results(m, {{"x", random_tensor({5}, 9)}}, "eliminate-identity", 0.0);
  }
}

}  // namespace
}  // namespace tern::test::eliminate_identity_test
