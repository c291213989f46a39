// concat-slices: which Concat inputs are written straight into their slice of the output
// (BufferAssignment::kSlice, at the right byte offsets), which are not (a batch or other
// leading dim above 1, an input read elsewhere or twice, a graph input or output, a view,
// a nested Concat, an output that escapes), and that the results keep their bits.
#include "toy_model_util.h"

namespace tern::test::concat_slices_test {
namespace {

using Kind = passes::BufferAssignment::Kind;

// The memory passes only, on the model's own layout (plain NCHW).
const std::vector<std::string> kMemoryOnly =
    all_passes_except({"in-place", "concat-slices", "plan-memory"});

passes::Program compile_memory_only(const ModelBuilder& m, const Shape& x) {
  return compile(m, {ops::TensorType{DType::kFloat32, x}}, kMemoryOnly);
}

void expect_slice(const passes::Program& p, const std::string& v, const std::string& of,
                  int64_t offset) {
  const passes::BufferAssignment& b = p.buffers[value_id(p, v)];
  EXPECT_EQ(b.kind, Kind::kSlice) << v << " is not a slice";
  if (b.kind != Kind::kSlice) return;
  EXPECT_EQ(p.graph.values[b.reuses].name, of) << v;
  EXPECT_EQ(b.offset, offset) << v;
}

void expect_not_slice(const passes::Program& p, const std::string& v) {
  EXPECT_NE(p.buffers[value_id(p, v)].kind, Kind::kSlice) << v << " is a slice";
}

// Bit-equal outputs with concat-slices on and off, alone and with every pass, on one and
// two threads; and within rounding of the all-passes-off run.
void expect_same_results(const ModelBuilder& m, const Shape& x) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor(x, 5)}};
  expect_pass_exact(m, feeds, kMemoryOnly, "concat-slices");
  expect_pass_exact(m, feeds, kMemoryOnly, "concat-slices", 2);
  expect_pass_exact(m, feeds, {}, "concat-slices");
  expect_pass_exact(m, feeds, {}, "concat-slices", 2);
  expect_pass_keeps_results(m, feeds, "concat-slices");
}

// A SqueezeNet fire module: squeeze 1x1, then expand 1x1 and 3x3 concatenated along the
// channels, then a conv reading the Concat. `batch` images.
ModelBuilder fire_module(int64_t batch, bool concat_is_output = false) {
  ModelBuilder m(13);
  m.input("x", {batch, 3, 7, 9});
  m.output(concat_is_output ? "cat" : "y");
  m.initializer("ws", {4, 3, 1, 1}, weights(4 * 3, 1));
  m.initializer("we1", {5, 4, 1, 1}, weights(5 * 4, 2));
  m.initializer("we3", {6, 4, 3, 3}, weights(6 * 4 * 9, 3));
  m.initializer("wy", {2, 11, 1, 1}, weights(2 * 11, 4));
  m.node("Conv", {"x", "ws"}, {"s"}, "squeeze");
  m.node("Conv", {"s", "we1"}, {"e1"}, "expand1x1");
  set_ints(m.node("Conv", {"s", "we3"}, {"e3"}, "expand3x3"), "pads", {1, 1, 1, 1});
  set_int(m.node("Concat", {"e1", "e3"}, {"cat"}, "concat"), "axis", 1);
  if (!concat_is_output) m.node("Conv", {"cat", "wy"}, {"y"}, "head");
  return m;
}

TEST(ConcatSlices, FireModuleInputsAreSlicesOfTheConcat) {
  const ModelBuilder m = fire_module(1);
  const passes::Program p = compile_memory_only(m, {1, 3, 7, 9});
  expect_slice(p, "e1", "cat", 0);
  expect_slice(p, "e3", "cat", 5 * 7 * 9 * 4);  // after e1's 5 channels of 7x9 floats
  EXPECT_EQ(p.buffers[value_id(p, "cat")].kind, Kind::kArena);
  EXPECT_EQ(p.memory.slice_values, 2);
  expect_same_results(m, {1, 3, 7, 9});
}

TEST(ConcatSlices, NotWhenALeadingDimIsAboveOne) {
  const ModelBuilder m = fire_module(2);  // batch 2: e1 is two runs of cat, not one
  const passes::Program p = compile_memory_only(m, {2, 3, 7, 9});
  expect_not_slice(p, "e1");
  expect_not_slice(p, "e3");
  EXPECT_EQ(p.memory.slice_values, 0);
  expect_same_results(m, {2, 3, 7, 9});
}

TEST(ConcatSlices, NotWhenTheConcatIsAGraphOutput) {
  const ModelBuilder m = fire_module(1, true);
  const passes::Program p = compile_memory_only(m, {1, 3, 7, 9});
  expect_not_slice(p, "e1");
  expect_not_slice(p, "e3");
  expect_same_results(m, {1, 3, 7, 9});
}

// Along a later axis whose leading dims are all 1 (H of [1, 1, H, W]).
TEST(ConcatSlices, AlongALaterAxisWithUnitLeadingDims) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 6});
  m.output("y");
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"x"}, {"b"}, "sigmoid");
  set_int(m.node("Concat", {"a", "b"}, {"cat"}, "concat"), "axis", -2);
  m.node("Tanh", {"cat"}, {"y"}, "tanh");
  const passes::Program p = compile_memory_only(m, {1, 1, 4, 6});
  expect_slice(p, "a", "cat", 0);
  expect_slice(p, "b", "cat", 4 * 6 * 4);
  expect_same_results(m, {1, 1, 4, 6});
}

// Inputs that must keep their own buffers: one read by another node too, one given
// twice, a graph input, a view (Reshape), and a nested Concat (whose own inputs may still
// be its slices).
TEST(ConcatSlices, InputsThatKeepTheirBuffers) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 4});
  m.output("y");
  m.output("z");
  int64_initializer(m, "shp", {4}, {1, 2, 3, 4});
  m.node("Relu", {"x"}, {"shared"}, "relu");          // also read by "neg"
  m.node("Neg", {"shared"}, {"z"}, "neg");
  m.node("Sigmoid", {"x"}, {"twice"}, "sigmoid");     // given to the Concat twice
  m.node("Reshape", {"x", "shp"}, {"view"}, "reshape");  // a view of x
  m.node("Tanh", {"x"}, {"t1"}, "tanh");
  m.node("Exp", {"x"}, {"t2"}, "exp");
  set_int(m.node("Concat", {"t1", "t2"}, {"inner"}, "inner_concat"), "axis", 1);
  set_int(m.node("Concat", {"shared", "twice", "twice", "view", "x", "inner"}, {"cat"},
                 "concat"),
          "axis", 1);
  m.node("Abs", {"cat"}, {"y"}, "abs");
  const passes::Program p = compile_memory_only(m, {1, 2, 3, 4});
  for (const char* v : {"shared", "twice", "view", "inner"}) expect_not_slice(p, v);
  // The outer Concat is not sliceable at all (its inputs must all qualify); the inner one is.
  expect_slice(p, "t1", "inner", 0);
  expect_slice(p, "t2", "inner", 2 * 3 * 4 * 4);
  expect_same_results(m, {1, 2, 3, 4});
}

// A detection head's outputs: each reshaped, then concatenated. The reshape's source goes
// in the slice, and the reshape views it there; not when "a" (the source) or "ra" (its
// view) is read elsewhere too, or "ra" is a graph output.
enum class Shared { kNone, kSource, kView, kViewIsOutput };

ModelBuilder reshaped_heads(Shared shared) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 4});
  m.output("y");
  if (shared == Shared::kSource || shared == Shared::kView) m.output("z");
  if (shared == Shared::kViewIsOutput) m.output("ra");
  int64_initializer(m, "shp", {3}, {1, -1, 2});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Reshape", {"a", "shp"}, {"ra"}, "reshape_a");
  m.node("Sigmoid", {"x"}, {"b"}, "sigmoid");
  m.node("Reshape", {"b", "shp"}, {"rb"}, "reshape_b");
  m.node("Reshape", {"x", "shp"}, {"rx"}, "reshape_x");
  m.node("Exp", {"rx"}, {"e"}, "exp");  // written in the Concat's rank
  set_int(m.node("Concat", {"ra", "rb", "e"}, {"cat"}, "concat"), "axis", 1);
  set_int(m.node("Softmax", {"cat"}, {"y"}, "softmax"), "axis", -1);
  if (shared == Shared::kSource) m.node("Neg", {"a"}, {"z"}, "neg");
  if (shared == Shared::kView) m.node("Neg", {"ra"}, {"z"}, "neg");
  return m;
}

TEST(ConcatSlices, ReshapedInputsAreWrittenIntoTheirSlices) {
  const ModelBuilder m = reshaped_heads(Shared::kNone);
  const passes::Program p = compile_memory_only(m, {1, 2, 3, 4});
  expect_slice(p, "a", "cat", 0);
  expect_slice(p, "b", "cat", 24 * 4);
  expect_slice(p, "e", "cat", 48 * 4);
  for (const char* v : {"ra", "rb"}) expect_not_slice(p, v);
  EXPECT_EQ(p.memory.slice_values, 3);
  expect_same_results(m, {1, 2, 3, 4});
}

TEST(ConcatSlices, NotThroughAReshapeReadElsewhere) {
  for (const Shared shared : {Shared::kSource, Shared::kView, Shared::kViewIsOutput}) {
    SCOPED_TRACE(static_cast<int>(shared));
    const ModelBuilder m = reshaped_heads(shared);
    const passes::Program p = compile_memory_only(m, {1, 2, 3, 4});
    for (const char* v : {"a", "b", "e"}) expect_not_slice(p, v);
    EXPECT_EQ(p.memory.slice_values, 0);
    expect_same_results(m, {1, 2, 3, 4});
  }
}

// A view of the Concat that reaches a graph output makes the Concat's buffer the caller's:
// plan-memory gives the slices buffers of their own again.
TEST(ConcatSlices, RevertedWhenTheConcatEscapesThroughAView) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 4});
  m.output("y");
  int64_initializer(m, "shp", {2}, {1, 48});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"x"}, {"b"}, "sigmoid");
  set_int(m.node("Concat", {"a", "b"}, {"cat"}, "concat"), "axis", 1);
  m.node("Reshape", {"cat", "shp"}, {"y"}, "reshape");
  const passes::Program p = compile_memory_only(m, {1, 2, 3, 4});
  expect_not_slice(p, "a");
  expect_not_slice(p, "b");
  EXPECT_EQ(p.memory.slice_values, 0);
  expect_same_results(m, {1, 2, 3, 4});
}

}  // namespace
}  // namespace tern::test::concat_slices_test
