// fold-constants: the shape arithmetic of PyTorch exports disappears, only nodes reading
// run-time data stay, and folded graph outputs are still returned (as copies).
#include "toy_model_util.h"

namespace tern::test::fold_constants_test {
namespace {

const std::vector<std::string> kOnlyFold = all_passes_except({"fold-constants"});
const std::vector<std::string> kNoFold = {"fold-constants"};

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 23) + offset;
  return v;
}

// x [1, 3, H, W] -> Conv -> c [1, 4, H, W], then what torch.onnx.export emits for
//   c.reshape(c.size(0), -1)            (Shape -> Gather -> Unsqueeze -> Concat -> Cast)
//   F.interpolate(c, size=(2H, 2W))     (Shape -> Slice -> Concat -> Resize sizes)
ModelBuilder pytorch_shape_model(int64_t h, int64_t w) {
  ModelBuilder m(13);
  m.input("x", {1, 3, h, w});
  m.output("flat", {1, 4 * h * w});
  m.output("up", {1, 4, 2 * h, 2 * w});
  m.initializer("w", {4, 3, 3, 3}, ramp(4 * 3 * 3 * 3, 0.02f, -0.2f));
  m.initializer("b", {4}, {0.1f, -0.2f, 0.3f, -0.4f});
  set_ints(m.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  // Reshape to [N, -1].
  m.node("Shape", {"c"}, {"c_shape"}, "shape0");
  int64_constant(m, "zero", {}, {0});
  m.node("Gather", {"c_shape", "zero"}, {"n"}, "gather0");
  int64_constant(m, "axes0", {1}, {0});
  m.node("Unsqueeze", {"n", "axes0"}, {"n1"}, "unsqueeze0");
  int64_constant(m, "minus_one", {1}, {-1});
  set_int(m.node("Concat", {"n1", "minus_one"}, {"target"}, "concat0"), "axis", 0);
  set_int(m.node("Cast", {"target"}, {"target64"}, "cast0"), "to", ::onnx::TensorProto::INT64);
  m.node("Reshape", {"c", "target64"}, {"flat"}, "reshape0");
  // Resize to sizes [N, C, 2H, 2W].
  m.node("Shape", {"c"}, {"c_shape2"}, "shape1");
  int64_initializer(m, "starts", {1}, {0});
  int64_initializer(m, "ends", {1}, {2});
  m.node("Slice", {"c_shape2", "starts", "ends"}, {"nc"}, "slice0");
  int64_initializer(m, "hw", {2}, {2 * h, 2 * w});
  set_int(m.node("Concat", {"nc", "hw"}, {"sizes"}, "concat1"), "axis", 0);
  auto* resize = m.node("Resize", {"c", "", "", "sizes"}, {"up"}, "resize0");
  set_string(resize, "mode", "nearest");
  return m;
}

TEST(FoldConstants, PyTorchShapeArithmeticIsGone) {
  for (auto [h, w] : {std::pair<int64_t, int64_t>{8, 8}, {5, 7}}) {
    SCOPED_TRACE(fmt::format("{}x{}", h, w));
    const ModelBuilder m = pytorch_shape_model(h, w);
    const std::vector<ops::TensorType> types = {{DType::kFloat32, {1, 3, h, w}}};

    const passes::Program before = compile(m, types, passes::pass_names());
    EXPECT_EQ(count_ops(before, "Shape"), 2);
    EXPECT_EQ(count_ops(before, "Constant"), 3);
    EXPECT_EQ(before.graph.nodes.size(), 14u);

    const passes::Program p = compile(m, types, kOnlyFold);
    for (const char* op : {"Shape", "Gather", "Unsqueeze", "Concat", "Cast", "Slice", "Constant"})
      EXPECT_EQ(count_ops(p, op), 0) << op;
    // Only the real ops remain: they read the Conv's run-time output.
    EXPECT_EQ(count_ops(p, "Conv"), 1);
    EXPECT_EQ(count_ops(p, "Reshape"), 1);
    EXPECT_EQ(count_ops(p, "Resize"), 1);
    EXPECT_EQ(p.graph.nodes.size(), 3u);
    // Their shape inputs are now constants holding the computed values.
    const ir::Node& reshape = p.graph.nodes[producer_of(p, "flat")];
    ASSERT_EQ(reshape.inputs.size(), 2u);
    const ir::Value& target = p.graph.values[reshape.inputs[1]];
    ASSERT_TRUE(target.is_constant());
    EXPECT_EQ(target.constant.to_int64_vector(), (std::vector<int64_t>{1, -1}));
    const ir::Node& resize = p.graph.nodes[producer_of(p, "up")];
    const ir::Value& sizes = p.graph.values[resize.inputs[3]];
    ASSERT_TRUE(sizes.is_constant());
    EXPECT_EQ(sizes.constant.to_int64_vector(), (std::vector<int64_t>{1, 4, 2 * h, 2 * w}));

    const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, h, w}, 7)}};
    expect_pass_keeps_results(m, feeds, "fold-constants", 1e-6);  // other passes reorder sums
    expect_pass_exact(m, feeds, {}, "fold-constants");
  }
}

// Nodes that read a graph input's data, or data known only at run time (NonZero's
// output, whose shape depends on the values), are never folded; the shape arithmetic
// on a static input shape is.
TEST(FoldConstants, RunTimeValuesAreNotFolded) {
  ModelBuilder m(13);
  m.input("x", {2, 3});
  m.output("y");
  m.output("count");
  m.output("z");
  m.initializer("k", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.initializer("k2", {2, 3}, {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
  m.node("Add", {"k", "k2"}, {"kk"}, "add_consts");   // constants only: folded
  m.node("Mul", {"x", "kk"}, {"y"}, "mul_runtime");   // one run-time input: stays
  m.node("NonZero", {"x"}, {"nz"}, "nonzero");        // data-dependent shape: stays
  m.node("Shape", {"nz"}, {"nz_shape"}, "shape_nz");  // shape known only at run time: stays
  int64_initializer(m, "one", {1}, {1});
  int64_initializer(m, "two", {1}, {2});
  m.node("Slice", {"nz_shape", "one", "two"}, {"count"}, "slice_nz");
  m.node("Shape", {"x"}, {"x_shape"}, "shape_x");  // static shape: folded
  m.node("Cast", {"x_shape"}, {"x_shape_f"}, "cast_x");
  set_int(m.graph().mutable_node(m.graph().node_size() - 1), "to", ::onnx::TensorProto::FLOAT);
  m.node("Relu", {"x"}, {"rx"}, "relu_x");
  m.node("ReduceSum", {"rx"}, {"sum"}, "sum_x");
  m.node("Add", {"sum", "x_shape_f"}, {"z"}, "add_mixed");

  const passes::Program p = compile(m, {{DType::kFloat32, {2, 3}}}, kOnlyFold);
  for (const char* node :
       {"mul_runtime", "nonzero", "shape_nz", "slice_nz", "relu_x", "sum_x", "add_mixed"}) {
    EXPECT_TRUE(std::any_of(p.graph.nodes.begin(), p.graph.nodes.end(),
                            [&](const ir::Node& n) { return n.name == node; }))
        << node << " was folded";
  }
  EXPECT_EQ(p.graph.nodes.size(), 7u);
  EXPECT_TRUE(p.graph.values[value_id(p, "kk")].is_constant());
  EXPECT_TRUE(p.graph.values[value_id(p, "x_shape_f")].is_constant());
  EXPECT_FALSE(p.graph.values[value_id(p, "nz")].is_constant());
  EXPECT_FALSE(p.types[value_id(p, "nz")].has_value());

  Tensor x = Tensor::from_vector({0, 1, -2, 0, 3, 0}, {2, 3});
  const std::vector<NamedTensor> feeds = {{"x", x}};
  const auto out = run_model(m, feeds);
  EXPECT_EQ(out[1].tensor.to_int64_vector(), std::vector<int64_t>{3});
  expect_pass_keeps_results(m, feeds, "fold-constants", 1e-6);  // other passes reorder sums
  // Other data, other count: nothing was frozen at plan time.
  const auto out2 = run_model(m, {{"x", Tensor::from_vector({1, 1, 1, 1, 0, 1}, {2, 3})}});
  EXPECT_EQ(out2[1].tensor.to_int64_vector(), std::vector<int64_t>{5});
}

// Constant nodes (also ones feeding each other) become values of the graph.
TEST(FoldConstants, ConstantNodesAreFolded) {
  ModelBuilder m(13);
  m.input("x", {2, 2});
  m.output("y", {2, 2});
  auto* c = m.node("Constant", {}, {"c"}, "const_c");
  set_tensor(c, "value", {2, 2}, {1, 2, 3, 4});
  auto* d = m.node("Constant", {}, {"d"}, "const_d");
  set_float(d, "value_float", 0.5f);
  m.node("Mul", {"c", "d"}, {"cd"}, "mul_consts");
  m.node("Add", {"x", "cd"}, {"y"}, "add");

  const passes::Program off = compile(m, {{DType::kFloat32, {2, 2}}}, passes::pass_names());
  EXPECT_EQ(count_ops(off, "Constant"), 2);
  const passes::Program p = compile(m, {{DType::kFloat32, {2, 2}}}, kOnlyFold);
  EXPECT_EQ(count_ops(p, "Constant"), 0);
  EXPECT_EQ(count_ops(p, "Mul"), 0);
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  const ir::Value& cd = p.graph.values[value_id(p, "cd")];
  ASSERT_TRUE(cd.is_constant());
  EXPECT_EQ(cd.constant.to_float_vector(), (std::vector<float>{0.5f, 1, 1.5f, 2}));

  const std::vector<NamedTensor> feeds = {{"x", random_tensor({2, 2}, 3)}};
  expect_pass_keeps_results(m, feeds, "fold-constants", 1e-6);  // other passes reorder sums
  const auto out = run_model(m, feeds);
  const std::vector<float> x = feeds[0].tensor.to_float_vector();
  const std::vector<float> y = out[0].tensor.to_float_vector();
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[i], x[i] + 0.5f * static_cast<float>(i + 1));
}

// Graph outputs computed only from constants and shapes are folded and still returned,
// as tensors of their own: writing into one changes neither the model nor the next run.
TEST(FoldConstants, FoldedGraphOutputsAreReturnedAsCopies) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3});
  m.output("sum", {2});
  m.output("shape", {3}, ::onnx::TensorProto::INT64);
  m.output("view", {2, 1});
  m.output("init", {2});
  m.output("y", {1, 2, 3});
  m.initializer("a", {2}, {1, 2});
  m.initializer("b", {2}, {10, 20});
  m.node("Add", {"a", "b"}, {"sum"}, "add_ab");
  m.node("Shape", {"x"}, {"shape"}, "shape_x");
  int64_initializer(m, "col", {2}, {2, 1});
  m.node("Reshape", {"b", "col"}, {"view"}, "reshape_b");  // a view of an initializer
  m.node("Identity", {"a"}, {"init"}, "identity_a");       // the initializer itself
  m.node("Neg", {"x"}, {"y"}, "neg_x");

  const passes::Program p = compile(m, {{DType::kFloat32, {1, 2, 3}}}, kOnlyFold);
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_EQ(p.graph.nodes[0].op_type, "Neg");
  for (const char* name : {"sum", "shape", "view", "init"}) {
    EXPECT_TRUE(p.graph.values[value_id(p, name)].is_constant()) << name;
    EXPECT_TRUE(p.is_graph_output(value_id(p, name))) << name;
  }

  const std::string bytes = m.bytes();
  Session session = Session::from_memory(bytes.data(), bytes.size());
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 2, 3}, 5)}};
  auto check = [&](const std::vector<NamedTensor>& out) {
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[0].tensor.to_float_vector(), (std::vector<float>{11, 22}));
    EXPECT_EQ(out[1].tensor.to_int64_vector(), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(out[2].tensor.shape(), (Shape{2, 1}));
    EXPECT_EQ(out[2].tensor.to_float_vector(), (std::vector<float>{10, 20}));
    EXPECT_EQ(out[3].tensor.to_float_vector(), (std::vector<float>{1, 2}));
  };
  auto first = session.run(feeds);
  check(first);
  // Returned tensors do not share storage with each other (or the plan's constants).
  for (size_t i = 0; i < first.size(); ++i) {
    for (size_t j = i + 1; j < first.size(); ++j)
      EXPECT_NE(first[i].tensor.storage().get(), first[j].tensor.storage().get()) << i << " " << j;
  }
  // Scribble over every returned tensor: the next run must not see it.
  for (NamedTensor& t : first)
    std::memset(t.tensor.raw_data(), 0x5a, static_cast<size_t>(t.tensor.nbytes()));
  const auto second = session.run(feeds);
  check(second);
  expect_pass_keeps_results(m, feeds, "fold-constants", 1e-6);  // other passes reorder sums
}

// A model whose graph output is a graph input (or an initializer) directly.
TEST(FoldConstants, PassThroughOutputsAreCopies) {
  ModelBuilder m(13);
  m.input("x", {3});
  m.output("x");
  m.output("k");
  m.initializer("k", {2}, {4, 5});
  const std::string bytes = m.bytes();
  Session session = Session::from_memory(bytes.data(), bytes.size());
  Tensor x = Tensor::from_vector({1, 2, 3}, {3});
  auto out = session.run({{"x", x}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor.to_float_vector(), (std::vector<float>{1, 2, 3}));
  EXPECT_NE(out[0].tensor.storage().get(), x.storage().get());
  EXPECT_EQ(out[1].tensor.to_float_vector(), (std::vector<float>{4, 5}));
  out[1].tensor.data<float>()[0] = -1;
  EXPECT_EQ(session.run({{"x", x}})[1].tensor.to_float_vector(), (std::vector<float>{4, 5}));
}

}  // namespace
}  // namespace tern::test::fold_constants_test
