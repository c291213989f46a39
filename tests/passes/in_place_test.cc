// in-place: which values are written into an input's buffer (BufferAssignment::kInPlace),
// which are not (the input is read later, returned, a graph input, a constant, a view, or
// of another shape or dtype), and that running every allowed op in place gives the same
// bits as running it out of place.
#include "toy_model_util.h"

namespace tern::test::in_place_test {
namespace {

using Kind = passes::BufferAssignment::Kind;

// Only in-place and plan-memory on: the structure under test is the model's own.
const std::vector<std::string> kMemoryOnly = all_passes_except({"in-place", "plan-memory"});

const Shape kShape = {1, 3, 5, 7};  // odd sizes: no vector-width multiple anywhere

std::vector<DimSpec> dims_of(const Shape& s) { return std::vector<DimSpec>(s.begin(), s.end()); }

// Expects value `out` to be written in place into value `in`.
void expect_in_place(const passes::Program& p, const std::string& out, const std::string& in) {
  const passes::BufferAssignment& b = p.buffers[value_id(p, out)];
  EXPECT_EQ(b.kind, Kind::kInPlace) << out << " is not in place";
  if (b.kind == Kind::kInPlace) {
    EXPECT_EQ(p.graph.values[b.reuses].name, in) << out;
  }
}

void expect_not_in_place(const passes::Program& p, const std::string& out) {
  EXPECT_NE(p.buffers[value_id(p, out)].kind, Kind::kInPlace) << out << " is in place";
}

passes::Program compile_memory_only(const ModelBuilder& m, const std::vector<NamedTensor>& feeds) {
  std::vector<ops::TensorType> types;
  for (const NamedTensor& f : feeds) types.push_back({f.tensor.dtype(), f.tensor.shape()});
  return compile(m, types, kMemoryOnly);
}

// Bit-equal outputs with in-place on and off (the rest as in kMemoryOnly), on one and two
// threads, and within rounding of the all-passes-off run with every pass on.
void expect_same_results(const ModelBuilder& m, const std::vector<NamedTensor>& feeds) {
  expect_pass_exact(m, feeds, kMemoryOnly, "in-place");
  expect_pass_exact(m, feeds, kMemoryOnly, "in-place", 2);
  expect_pass_exact(m, feeds, {}, "in-place");
  expect_pass_keeps_results(m, feeds, "in-place");
}

std::vector<float> weights(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i % 7) - 3.0f);
  return v;
}

TEST(InPlace, ActivationAfterConv) {
  ModelBuilder m(14);
  m.input("x", {1, 3, 6, 6});
  m.output("y");
  m.initializer("w1", {4, 3, 3, 3}, weights(4 * 3 * 3 * 3, 0.05f));
  m.initializer("w2", {2, 4, 1, 1}, weights(2 * 4, 0.1f));
  set_ints(m.node("Conv", {"x", "w1"}, {"c"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Sigmoid", {"r"}, {"s"}, "sigmoid");  // a chain: both end up in c's buffer
  m.node("Conv", {"s", "w2"}, {"y"}, "conv2");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 6, 6}, 1)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_in_place(p, "r", "c");
  expect_in_place(p, "s", "r");
  EXPECT_EQ(p.buffers[value_id(p, "c")].kind, Kind::kArena);
  EXPECT_EQ(p.memory.in_place_values, 2);
  EXPECT_EQ(p.memory.arena_values, 1);
  expect_same_results(m, feeds);
}

// A residual Add: c1 is read by conv2 and by the Add, c2 only by the Add: the sum goes
// into c2's buffer (the second input).
TEST(InPlace, BinaryAddIntoTheInputThatDies) {
  ModelBuilder m(14);
  m.input("x", {1, 4, 5, 5});
  m.output("y");
  m.initializer("w1", {4, 4, 3, 3}, weights(4 * 4 * 9, 0.03f));
  m.initializer("w2", {4, 4, 3, 3}, weights(4 * 4 * 9, -0.02f));
  set_ints(m.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  set_ints(m.node("Conv", {"c1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c1", "c2"}, {"sum"}, "add");
  m.node("Neg", {"sum"}, {"y"}, "neg");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 4, 5, 5}, 2)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_in_place(p, "sum", "c2");
  expect_same_results(m, feeds);
}

TEST(InPlace, NotWhenTheInputHasAnotherReader) {
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("y");
  m.output("z");
  m.node("Neg", {"x"}, {"a"}, "neg");
  m.node("Relu", {"a"}, {"r"}, "relu");  // a is read again below
  m.node("Exp", {"a"}, {"e"}, "exp");    // ...and here: the last reader, but not the only
  m.node("Add", {"r", "e"}, {"y"}, "add");
  m.node("Abs", {"r"}, {"z"}, "abs");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 3)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "r");
  expect_not_in_place(p, "e");
  EXPECT_EQ(p.memory.in_place_values, 0);
  expect_same_results(m, feeds);
}

TEST(InPlace, NotIntoAGraphInputOrAConstant) {
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("y");
  m.initializer("k", {1, 3, 5, 7}, weights(105, 0.1f));
  m.node("Relu", {"x"}, {"r"}, "relu");       // x: the caller's tensor
  m.node("Sigmoid", {"k"}, {"sk"}, "sig_k");  // k: a weight (folding is off)
  m.node("Abs", {"r"}, {"r2"}, "abs");        // r is read twice: not reusable either
  m.node("Mul", {"k", "r"}, {"kr"}, "mul");   // k full-shape, r read by abs too
  m.node("Add", {"kr", "sk"}, {"s"}, "add");  // both die: in place into kr
  m.node("Add", {"s", "r2"}, {"y"}, "add_out");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 4)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "r");
  expect_not_in_place(p, "sk");
  expect_not_in_place(p, "kr");
  expect_in_place(p, "s", "kr");
  expect_same_results(m, feeds);
  // The caller's input and the weight are unchanged by the run.
  const Tensor x = feeds[0].tensor.clone();
  (void)run_model(m, feeds);
  EXPECT_EQ(feeds[0].tensor.to_float_vector(), x.to_float_vector());
}

TEST(InPlace, NotIntoOrFromAGraphOutput) {
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("a");
  m.output("y");
  m.node("Neg", {"x"}, {"a"}, "neg");    // returned to the caller
  m.node("Relu", {"a"}, {"r"}, "relu");  // its only reader: still not into a
  m.node("Exp", {"r"}, {"y"}, "exp");    // writes a graph output: never in place
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 5)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "r");
  expect_not_in_place(p, "y");
  expect_same_results(m, feeds);
  const auto out = run_model(m, feeds);
  const std::vector<float> x = feeds[0].tensor.to_float_vector();
  const std::vector<float> a = out[0].tensor.to_float_vector();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(a[i], -x[i]) << i;
}

TEST(InPlace, NotIntoAView) {
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("y");
  m.node("Neg", {"x"}, {"a"}, "neg");
  int64_initializer(m, "flat", {2}, {3, 35});
  m.node("Reshape", {"a", "flat"}, {"v"}, "reshape");  // shares a's storage
  m.node("Relu", {"v"}, {"r"}, "relu");
  m.node("Identity", {"r"}, {"i"}, "identity");  // eliminate-identity is off here
  m.node("Sigmoid", {"i"}, {"s"}, "sigmoid");
  m.node("Neg", {"s"}, {"y"}, "neg_out");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 6)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "r");
  expect_not_in_place(p, "s");
  EXPECT_EQ(p.buffers[value_id(p, "v")].kind, Kind::kView);
  EXPECT_EQ(p.buffers[value_id(p, "i")].kind, Kind::kView);
  expect_same_results(m, feeds);
}

// The output of a broadcasting op has the shape of the larger input: the smaller one can
// never hold it, and the larger one only when nothing else reads it.
TEST(InPlace, BroadcastingUsesOnlyTheFullShapeInput) {
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.input("z", {1, 3, 1, 1});
  m.output("y");
  m.output("w");
  m.node("Neg", {"z"}, {"small"}, "neg_small");  // dies at the Add, but is [1, 3, 1, 1]
  m.node("Neg", {"x"}, {"big"}, "neg_big");      // read again by abs
  m.node("Add", {"small", "big"}, {"sum"}, "add");
  m.node("Abs", {"big"}, {"w"}, "abs");
  m.node("Neg", {"sum"}, {"y"}, "neg_out");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 7)},
                                          {"z", random_tensor({1, 3, 1, 1}, 8)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "sum");
  expect_same_results(m, feeds);
}

TEST(InPlace, NotIntoAnInputOfAnotherDType) {
  // Pow(float base, int64 exponent of the output's shape): the exponent cannot hold floats.
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("y");
  m.node("Neg", {"x"}, {"nx"}, "neg");  // read by pow and by add: not reusable
  set_int(m.node("Cast", {"nx"}, {"e"}, "cast"), "to", ::onnx::TensorProto::INT64);
  m.node("Pow", {"nx", "e"}, {"p"}, "pow");
  m.node("Add", {"p", "nx"}, {"y"}, "add");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 9, -3.0f, 3.0f)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "p");
  expect_same_results(m, feeds);
}

// One small model per op in in_place.cc's list: x -> Mul(x, 1.5) -> t -> OP -> u ->
// Mul(u, 0.5) -> y, so u can be written into t (the Muls cannot run in place: one reads
// the graph input, the other writes the graph output).
struct OpCase {
  std::string op;
  std::function<void(::onnx::NodeProto*)> attrs;
  bool positive = false;  // the op needs x > 0 (Log, Sqrt, Reciprocal, Pow)
};

ModelBuilder unary_case(const OpCase& c) {
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("y");
  m.initializer("k", {}, {1.5f});
  m.initializer("half", {}, {0.5f});
  m.node("Mul", {"x", "k"}, {"t"}, "scale_in");
  auto* node = m.node(c.op, {"t"}, {"u"}, "op");
  if (c.attrs) c.attrs(node);
  m.node("Mul", {"u", "half"}, {"y"}, "scale_out");
  return m;
}

TEST(InPlace, EveryUnaryOpGivesTheSameResults) {
  const std::vector<OpCase> cases = {
      {"Relu", nullptr},
      {"LeakyRelu", [](auto* n) { set_float(n, "alpha", 0.2f); }},
      {"Sigmoid", nullptr},
      {"HardSigmoid", [](auto* n) { set_float(n, "alpha", 0.3f); }},
      {"HardSwish", nullptr},
      {"Tanh", nullptr},
      {"Exp", nullptr},
      {"Log", nullptr, true},
      {"Sqrt", nullptr, true},
      {"Neg", nullptr},
      {"Abs", nullptr},
      {"Sign", nullptr},
      {"Erf", nullptr},
      {"Elu", [](auto* n) { set_float(n, "alpha", 0.7f); }},
      {"Selu", nullptr},
      {"Celu", [](auto* n) { set_float(n, "alpha", 1.3f); }},
      {"Softplus", nullptr},
      {"Softsign", nullptr},
      {"ThresholdedRelu", [](auto* n) { set_float(n, "alpha", 0.4f); }},
      {"Reciprocal", nullptr, true},
      {"Floor", nullptr},
      {"Ceil", nullptr},
      {"Round", nullptr},
      {"Clip", nullptr},  // no bounds
  };
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.op);
    const ModelBuilder m = unary_case(c);
    const std::vector<NamedTensor> feeds = {{"x", c.positive ? random_tensor(kShape, 10, 0.1f, 3.0f)
                                                             : random_tensor(kShape, 10, -3, 3)}};
    const passes::Program p = compile_memory_only(m, feeds);
    expect_in_place(p, "u", "t");
    expect_same_results(m, feeds);
  }
}

TEST(InPlace, ClipWithBoundInputs) {
  {
    SCOPED_TRACE("constant min and max");
    ModelBuilder m = unary_case({"Clip", nullptr});
    m.initializer("lo", {}, {-0.5f});
    m.initializer("hi", {}, {0.75f});
    auto* node = m.graph().mutable_node(1);
    node->add_input("lo");
    node->add_input("hi");
    const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 11)}};
    const passes::Program p = compile_memory_only(m, feeds);
    expect_in_place(p, "u", "t");
    expect_same_results(m, feeds);
  }
  {
    SCOPED_TRACE("max only, read at run time");
    ModelBuilder m = unary_case({"Clip", nullptr});
    m.input("hi", {});
    auto* node = m.graph().mutable_node(1);
    node->add_input("");
    node->add_input("hi");
    const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 12)},
                                            {"hi", Tensor::scalar_f32(0.25f)}};
    const passes::Program p = compile_memory_only(m, feeds);
    expect_in_place(p, "u", "t");
    expect_same_results(m, feeds);
  }
  {
    SCOPED_TRACE("scalar data and bounds computed at run time");
    // Every input of Clip is a scalar intermediate that dies there: the output takes over
    // the first one's buffer, the data's.
    ModelBuilder m(14);
    m.input("x", {});
    m.input("l", {});
    m.output("y");
    m.node("Neg", {"x"}, {"t"}, "neg_x");
    m.node("Neg", {"l"}, {"lo"}, "neg_l");
    m.node("Abs", {"l"}, {"hi"}, "abs_l");
    m.node("Clip", {"t", "lo", "hi"}, {"u"}, "clip");
    m.node("Neg", {"u"}, {"y"}, "neg_out");
    for (float x : {-2.0f, 0.1f, 2.0f}) {
      const std::vector<NamedTensor> feeds = {{"x", Tensor::scalar_f32(x)},
                                              {"l", Tensor::scalar_f32(0.5f)}};
      const passes::Program p = compile_memory_only(m, feeds);
      expect_in_place(p, "u", "t");
      expect_same_results(m, feeds);
      EXPECT_EQ(run_model(m, feeds)[0].tensor.to_float_vector()[0],
                -std::min(0.5f, std::max(-0.5f, -x)));
    }
  }
}

// Binary ops: with a broadcast constant; with a smaller run-time input first (the
// output goes into the second input: the order of operands must survive); and x op x.
TEST(InPlace, EveryBinaryOpGivesTheSameResults) {
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) {
    SCOPED_TRACE(op);
    const bool positive = op == "Pow" || op == "Div";
    auto x_feed = [&](uint32_t seed) {
      return positive ? random_tensor(kShape, seed, 0.2f, 2.0f)
                      : random_tensor(kShape, seed, -2.0f, 2.0f);
    };
    {
      SCOPED_TRACE("t op broadcast constant");
      ModelBuilder m = unary_case({op, nullptr});
      m.initializer("c", {3, 1, 1}, {0.5f, 1.5f, -0.25f});
      m.graph().mutable_node(1)->add_input("c");
      const std::vector<NamedTensor> feeds = {{"x", x_feed(13)}};
      const passes::Program p = compile_memory_only(m, feeds);
      expect_in_place(p, "u", "t");
      expect_same_results(m, feeds);
    }
    if (op != "PRelu") {  // PRelu's output has X's shape: X must be the full one
      SCOPED_TRACE("small run-time input op t");
      ModelBuilder m(14);
      m.input("x", dims_of(kShape));
      m.input("z", {1, 3, 1, 1});
      m.output("y");
      m.node("Abs", {"z"}, {"small"}, "abs_z");
      m.node("Abs", {"x"}, {"t"}, "abs_x");
      m.node(op, {"small", "t"}, {"u"}, "op");
      m.node("Neg", {"u"}, {"y"}, "neg_out");
      const std::vector<NamedTensor> feeds = {{"x", x_feed(14)},
                                              {"z", random_tensor({1, 3, 1, 1}, 15, 0.5f, 1.5f)}};
      const passes::Program p = compile_memory_only(m, feeds);
      expect_in_place(p, "u", "t");
      expect_same_results(m, feeds);
    }
    {
      SCOPED_TRACE("t op t");
      ModelBuilder m = unary_case({op, nullptr});
      m.graph().mutable_node(1)->add_input("t");
      const std::vector<NamedTensor> feeds = {{"x", x_feed(16)}};
      const passes::Program p = compile_memory_only(m, feeds);
      expect_in_place(p, "u", "t");
      expect_same_results(m, feeds);
    }
    {
      SCOPED_TRACE("two full-shape inputs that die: into the first");
      ModelBuilder m(14);
      m.input("x", dims_of(kShape));
      m.output("y");
      m.node("Abs", {"x"}, {"t1"}, "abs_x");
      m.node("Neg", {"x"}, {"t2"}, "neg_x");
      m.node(op, {"t1", "t2"}, {"u"}, "op");
      m.node("Neg", {"u"}, {"y"}, "neg_out");
      const std::vector<NamedTensor> feeds = {{"x", x_feed(17)}};
      const passes::Program p = compile_memory_only(m, feeds);
      expect_in_place(p, "u", "t1");
      expect_same_results(m, feeds);
    }
  }
}

TEST(InPlace, PReluWithARunTimeSlope) {
  // The slope is a full-shape intermediate that dies; X is read again: into the slope.
  ModelBuilder m(14);
  m.input("x", dims_of(kShape));
  m.output("y");
  m.output("z");
  m.node("Neg", {"x"}, {"t"}, "neg_x");
  m.node("Sigmoid", {"x"}, {"slope"}, "sigmoid_x");
  m.node("PRelu", {"t", "slope"}, {"u"}, "prelu");
  m.node("Abs", {"t"}, {"z"}, "abs_t");
  m.node("Neg", {"u"}, {"y"}, "neg_out");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(kShape, 18, -2, 2)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_in_place(p, "u", "slope");
  expect_same_results(m, feeds);
}

// Larger tensors split across threads, and in-place chains down a whole network.
TEST(InPlace, LongChainOnTwoThreads) {
  ModelBuilder m(14);
  const Shape shape = {1, 16, 33, 35};
  m.input("x", dims_of(shape));
  m.output("y");
  m.initializer("k", {16, 1, 1}, weights(16, 0.3f));
  m.node("Mul", {"x", "k"}, {"v0"}, "mul");
  const char* ops[] = {"Relu", "Sigmoid", "Tanh", "Neg", "Exp", "Softsign", "Abs"};
  std::string prev = "v0";
  for (int i = 0; i < 7; ++i) {
    const std::string next = fmt::format("v{}", i + 1);
    m.node(ops[i], {prev}, {next}, next);
    prev = next;
  }
  m.node("Add", {prev, "v0"}, {"sum"}, "add");  // v0 read by both: only the chain reuses it
  m.node("Neg", {"sum"}, {"y"}, "neg_out");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(shape, 19)}};
  const passes::Program p = compile_memory_only(m, feeds);
  expect_not_in_place(p, "v1");  // v0 is read twice
  for (int i = 2; i <= 7; ++i) expect_in_place(p, fmt::format("v{}", i), fmt::format("v{}", i - 1));
  expect_in_place(p, "sum", "v7");
  expect_same_results(m, feeds);
}

}  // namespace
}  // namespace tern::test::in_place_test
