// plan-memory: an independent check of the arena plan of toy graphs and of every shared
// model, and of the executor's use of it (outputs never in the arena, results unchanged
// with the plan off, a second run not touching the first run's outputs).
//
// The checker below re-derives everything from the compiled Program (its execution order,
// graph and BufferAssignments) without using plan_memory.cc: which buffer each value's
// elements live in (following views and in-place chains), when each buffer is first
// written and last read, and then that buffers live at the same time never share bytes.
#include <filesystem>
#include <map>
#include <set>

#include "base/cpu.h"
#include "support/reference_cases.h"
#include "toy_model_util.h"

namespace tern::test::plan_memory_test {
namespace {

using Kind = passes::BufferAssignment::Kind;

const std::vector<std::string> kMemoryOnly =
    all_passes_except({"in-place", "concat-slices", "plan-memory"});
const std::vector<std::string> kPlanOnly = all_passes_except({"plan-memory"});

int64_t type_bytes(const ops::TensorType& t) {
  return shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
}

// What the checker found: buffers (values that own storage) and their live ranges.
struct MemoryCheck {
  std::vector<int> arena;         // values of kind kArena
  std::map<int, int> start, end;  // per arena value: first and last step using its bytes
  int64_t peak_live_bytes = 0;    // largest sum of bytes of arena buffers live at one step
  int64_t placed_bytes = 0;       // sum of the arena buffers' sizes
};

// Checks the memory plan of `p` and returns what it derived. Failures are reported with
// ADD_FAILURE naming the values.
MemoryCheck check_memory_plan(const passes::Program& p) {
  const ir::Graph& g = p.graph;
  const int nv = static_cast<int>(g.values.size());
  MemoryCheck out;
  const std::vector<int> order = g.topological_order();
  std::vector<int> step_of(g.nodes.size(), -1);
  for (size_t s = 0; s < order.size(); ++s) step_of[order[s]] = static_cast<int>(s);
  auto name = [&](int v) { return g.values[v].name; };
  EXPECT_EQ(p.buffers.size(), g.values.size());

  // homes[v]: the values owning the storage v's elements may live in. A graph input or
  // constant owns its own (the caller's or the model's); kArena and kDynamic values own
  // theirs; kInPlace lives in its source's; kView in any of its producer's inputs'.
  std::vector<std::set<int>> homes(nv);
  std::vector<bool> external(nv, false);  // graph inputs and constants
  for (int v = 0; v < nv; ++v) {
    if (g.values[v].producer < 0) {
      external[v] = true;
      homes[v] = {v};
      EXPECT_EQ(p.buffers[v].kind, Kind::kNone) << name(v) << " has no producer";
    }
  }
  for (int n : order) {
    const ir::Node& node = g.nodes[n];
    for (int v : node.outputs) {
      if (v < 0) continue;
      const passes::BufferAssignment& b = p.buffers[v];
      switch (b.kind) {
        case Kind::kNone:
          ADD_FAILURE() << name(v) << " (written by " << node.name << ") has no buffer";
          break;
        case Kind::kArena:
        case Kind::kDynamic:
          homes[v] = {v};
          break;
        case Kind::kInPlace: {
          const int src = b.reuses;
          if (src < 0 || src >= nv) {
            ADD_FAILURE() << name(v) << " reuses value " << src;
            break;
          }
          EXPECT_NE(std::find(node.inputs.begin(), node.inputs.end(), src), node.inputs.end())
              << name(v) << " reuses " << name(src) << ", which " << node.name << " does not read";
          EXPECT_TRUE(p.types[v] && p.types[src] && *p.types[v] == *p.types[src])
              << name(v) << " reuses " << name(src) << " of another type";
          EXPECT_FALSE(p.ops[n]->returns_view()) << name(v);
          homes[v] = homes[src];
          for (int h : homes[src])
            EXPECT_FALSE(external[h])
                << name(v) << " is written into " << name(h) << ", a graph input or constant";
          break;
        }
        case Kind::kSlice: {
          // A Concat input written into its slice of the Concat's output, which must be
          // an arena buffer that holds the slice, and the only reader of the input (or
          // of the one reshape that reads it: the Concat reads that view of the slice).
          const int src = b.reuses;
          if (src < 0 || src >= nv) {
            ADD_FAILURE() << name(v) << " is a slice of value " << src;
            break;
          }
          EXPECT_EQ(p.buffers[src].kind, Kind::kArena) << name(v) << " is a slice of " << name(src);
          std::vector<int> readers = p.consumers(v);
          EXPECT_EQ(readers.size(), 1u) << name(v) << ": a slice read by several nodes";
          if (readers.size() == 1 && p.ops[readers[0]]->reshapes_input()) {
            const int view = g.nodes[readers[0]].outputs[0];
            readers = p.consumers(view);
            EXPECT_EQ(readers.size(), 1u) << name(view) << ": a slice's view read by several nodes";
          }
          if (readers.size() == 1) {
            const ir::Node& concat = g.nodes[readers[0]];
            EXPECT_EQ(concat.op_type, "Concat") << name(v);
            EXPECT_EQ(concat.outputs[0], src) << name(v) << " is not a slice of its reader";
          }
          EXPECT_GE(b.offset, 0) << name(v);
          if (p.types[v] && p.types[src]) {
            EXPECT_LE(b.offset + type_bytes(*p.types[v]), type_bytes(*p.types[src]))
                << name(v) << " runs past the end of " << name(src);
          }
          EXPECT_FALSE(p.ops[n]->returns_view()) << name(v);
          homes[v] = {src};
          break;
        }
        case Kind::kView:
          EXPECT_TRUE(p.ops[n]->returns_view())
              << name(v) << " is a view, but " << node.op_type << " writes its outputs";
          for (int in : node.inputs)
            if (in >= 0) homes[v].insert(homes[in].begin(), homes[in].end());
          break;
      }
      if (b.kind == Kind::kArena) {
        EXPECT_TRUE(p.types[v].has_value()) << name(v) << ": arena value of unknown shape";
      }
      if (!p.types[v]) {
        EXPECT_TRUE(b.kind == Kind::kDynamic || b.kind == Kind::kView)
            << name(v) << ": shape known only at run time, but not allocated then";
      }
      if (p.ops[n]->returns_view()) {
        EXPECT_EQ(b.kind, Kind::kView) << name(v);
      }
    }
  }

  // Concat slices: a Concat with one input written into its output has all of them,
  // back to back in input order (offset = the bytes of the inputs before it), and its
  // dims before the axis are 1 (so each input is one contiguous run of the output).
  for (int n : order) {
    const ir::Node& node = g.nodes[n];
    if (node.op_type != "Concat" || node.outputs.empty() || node.outputs[0] < 0) continue;
    const int y = node.outputs[0];
    bool any = false;
    for (int x : node.inputs) any = any || (x >= 0 && p.buffers[x].kind == Kind::kSlice);
    if (!any) continue;
    if (!p.types[y]) {
      ADD_FAILURE() << name(y) << ": Concat output with slices has no static type";
      continue;
    }
    const Shape& ys = p.types[y]->shape;
    const int rank = static_cast<int>(ys.size());
    const int64_t a = node.attrs.at("axis").i;
    const int axis = static_cast<int>(a < 0 ? a + rank : a);
    for (int d = 0; d < axis; ++d) EXPECT_EQ(ys[d], 1) << name(y) << " dim " << d;
    int64_t expected = 0;
    for (int x : node.inputs) {
      if (x < 0) {
        ADD_FAILURE() << node.name << ": an omitted input next to slices";
        continue;
      }
      EXPECT_EQ(p.buffers[x].kind, Kind::kSlice) << name(x) << ": only some inputs are slices";
      EXPECT_EQ(p.buffers[x].reuses, y) << name(x);
      EXPECT_EQ(p.buffers[x].offset, expected) << name(x) << " is not where " << node.name
                                               << " puts it";
      if (p.types[x]) expected += type_bytes(*p.types[x]);
    }
    EXPECT_EQ(expected, type_bytes(*p.types[y])) << name(y);
  }

  // Graph outputs: never in the arena, nor a view of or in place into an arena buffer.
  for (int v : g.outputs) {
    EXPECT_NE(p.buffers[v].kind, Kind::kArena) << "graph output " << name(v) << " in the arena";
    EXPECT_NE(p.buffers[v].kind, Kind::kInPlace) << "graph output " << name(v) << " in place";
    for (int h : homes[v])
      EXPECT_NE(p.buffers[h].kind, Kind::kArena)
          << "graph output " << name(v) << " lives in arena buffer " << name(h);
  }

  // Live range of each arena buffer: from its producer's step to the last step reading
  // any value that lives in it.
  int64_t arena_count = 0, in_place_count = 0, slice_count = 0;
  for (int v = 0; v < nv; ++v) {
    if (p.buffers[v].kind == Kind::kInPlace) ++in_place_count;
    if (p.buffers[v].kind == Kind::kSlice) ++slice_count;
    if (p.buffers[v].kind != Kind::kArena) continue;
    ++arena_count;
    out.arena.push_back(v);
    out.start[v] = out.end[v] = step_of[g.values[v].producer];
  }
  for (int v = 0; v < nv; ++v) {
    for (int h : homes[v]) {
      if (p.buffers[h].kind != Kind::kArena) continue;
      if (g.values[v].producer >= 0) {
        // A Concat slice is written before the Concat's output "exists".
        out.start[h] = std::min(out.start[h], step_of[g.values[v].producer]);
        out.end[h] = std::max(out.end[h], step_of[g.values[v].producer]);
      }
      for (int reader : p.consumers(v)) out.end[h] = std::max(out.end[h], step_of[reader]);
    }
  }
  EXPECT_EQ(p.memory.arena_values, arena_count);
  EXPECT_EQ(p.memory.in_place_values, in_place_count);
  EXPECT_EQ(p.memory.slice_values, slice_count);

  // In place: when v takes over src's storage at step s, nothing else living there may
  // be read after s (it would see v's elements).
  for (int v = 0; v < nv; ++v) {
    if (p.buffers[v].kind != Kind::kInPlace) continue;
    const int s = step_of[g.values[v].producer];
    for (int w = 0; w < nv; ++w) {
      if (w == v || g.values[w].producer < 0 || step_of[g.values[w].producer] >= s) continue;
      bool shares = false;
      for (int h : homes[w]) shares = shares || homes[v].count(h) > 0;
      if (!shares) continue;
      for (int reader : p.consumers(w)) {
        const bool ok = step_of[reader] < s || (step_of[reader] == s && w == p.buffers[v].reuses);
        EXPECT_TRUE(ok) << name(v) << " overwrites " << name(w) << " at step " << s << ", but "
                        << g.nodes[reader].name << " reads it at step " << step_of[reader];
      }
      EXPECT_FALSE(p.is_graph_output(w)) << name(v) << " overwrites graph output " << name(w);
    }
  }

  // Placement: aligned, large enough, inside the arena, disjoint while both are live.
  for (int v : out.arena) {
    const passes::BufferAssignment& b = p.buffers[v];
    EXPECT_EQ(b.offset % 64, 0) << name(v) << " at offset " << b.offset;
    EXPECT_GE(b.offset, 0) << name(v);
    if (p.types[v]) {
      EXPECT_GE(b.bytes, type_bytes(*p.types[v])) << name(v);
    }
    EXPECT_LE(b.offset + b.bytes, p.memory.arena_bytes) << name(v);
    out.placed_bytes += b.bytes;
  }
  for (size_t i = 0; i < out.arena.size(); ++i) {
    for (size_t j = i + 1; j < out.arena.size(); ++j) {
      const int u = out.arena[i], v = out.arena[j];
      const bool live_together = out.start[u] <= out.end[v] && out.start[v] <= out.end[u];
      if (!live_together) continue;
      const auto& bu = p.buffers[u];
      const auto& bv = p.buffers[v];
      const bool disjoint = bu.offset + bu.bytes <= bv.offset || bv.offset + bv.bytes <= bu.offset;
      EXPECT_TRUE(disjoint) << name(u) << " [" << bu.offset << ", " << bu.offset + bu.bytes
                            << ") steps " << out.start[u] << ".." << out.end[u] << " overlaps "
                            << name(v) << " [" << bv.offset << ", " << bv.offset + bv.bytes
                            << ") steps " << out.start[v] << ".." << out.end[v];
    }
  }
  for (size_t s = 0; s < order.size(); ++s) {
    int64_t live = 0;
    for (int v : out.arena)
      if (out.start[v] <= static_cast<int>(s) && static_cast<int>(s) <= out.end[v])
        live += p.buffers[v].bytes;
    out.peak_live_bytes = std::max(out.peak_live_bytes, live);
  }
  EXPECT_LE(p.memory.arena_bytes, out.placed_bytes);
  EXPECT_GE(p.memory.arena_bytes, out.peak_live_bytes);
  return out;
}

// Compiles `m` with `disabled` and checks its memory plan.
MemoryCheck check_model(const ModelBuilder& m, const std::vector<NamedTensor>& feeds,
                        const std::vector<std::string>& disabled) {
  std::vector<ops::TensorType> types;
  for (const NamedTensor& f : feeds) types.push_back({f.tensor.dtype(), f.tensor.shape()});
  const passes::Program p = compile(m, types, disabled);
  SCOPED_TRACE(passes::dump_program(p));
  return check_memory_plan(p);
}

// The plan checks with every pass on and with only the memory passes on, plus results
// bit-equal with plan-memory off (and with both memory passes off).
void check_toy(const ModelBuilder& m, const std::vector<NamedTensor>& feeds) {
  {
    SCOPED_TRACE("all passes");
    check_model(m, feeds, {});
  }
  {
    SCOPED_TRACE("memory passes only");
    check_model(m, feeds, kMemoryOnly);
  }
  {
    SCOPED_TRACE("plan-memory only");
    check_model(m, feeds, kPlanOnly);
  }
  expect_pass_exact(m, feeds, {}, "plan-memory");
  expect_pass_exact(m, feeds, kMemoryOnly, "plan-memory");
  expect_pass_exact(m, feeds, {"in-place"}, "plan-memory");
  expect_pass_keeps_results(m, feeds, "plan-memory");
}

std::vector<float> weights(size_t n, float scale, int salt = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>((i + salt) % 11) - 5.0f);
  return v;
}

// Adds conv `name`: in -> out with `co` output channels (3x3, pad 1, or 1x1).
void conv(ModelBuilder& m, const std::string& name, const std::string& in, const std::string& out,
          int64_t ci, int64_t co, int64_t k = 3) {
  m.initializer(name + ".w", {co, ci, k, k}, weights(co * ci * k * k, 0.02f, co));
  m.initializer(name + ".b", {co}, weights(co, 0.01f));
  auto* n = m.node("Conv", {in, name + ".w", name + ".b"}, {out}, name);
  if (k == 3) set_ints(n, "pads", {1, 1, 1, 1});
}

TEST(PlanMemory, ChainReusesTwoBuffers) {
  ModelBuilder m(13);
  m.input("x", {1, 8, 16, 16});
  m.output("y");
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    const std::string next = i == 5 ? "y" : fmt::format("c{}", i);
    conv(m, fmt::format("conv{}", i), prev, next, 8, 8);
    prev = next;
  }
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 8, 16, 16}, 1)}};
  check_toy(m, feeds);
  // Five equal intermediates, each live for two steps: two buffers suffice, and greedy
  // by size finds that.
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 8, 16, 16}}}, kMemoryOnly);
  EXPECT_EQ(p.memory.arena_values, 5);
  EXPECT_EQ(p.memory.arena_bytes, 2 * 8 * 16 * 16 * 4);
  EXPECT_EQ(p.memory.intermediate_bytes, 6 * 8 * 16 * 16 * 4);  // y counted, not placed
  EXPECT_EQ(p.buffers[value_id(p, "y")].kind, Kind::kDynamic);
}

TEST(PlanMemory, Diamond) {
  ModelBuilder m(13);
  m.input("x", {1, 4, 9, 11});
  m.output("y");
  conv(m, "stem", "x", "a", 4, 6);
  conv(m, "left", "a", "l", 6, 6);
  conv(m, "right", "a", "r0", 6, 6, 1);
  m.node("Sigmoid", {"r0"}, {"r"}, "sig");
  m.node("Mul", {"l", "r"}, {"j"}, "join");
  conv(m, "head", "j", "y", 6, 2);
  check_toy(m, {{"x", random_tensor({1, 4, 9, 11}, 2)}});
}

TEST(PlanMemory, ResidualBlocks) {
  ModelBuilder m(13);
  m.input("x", {1, 8, 12, 12});
  m.output("y");
  std::string prev = "x";
  for (int b = 0; b < 3; ++b) {
    const std::string p = fmt::format("b{}", b);
    conv(m, p + ".conv1", prev, p + ".c1", 8, 8);
    m.node("Relu", {p + ".c1"}, {p + ".r1"}, p + ".relu1");
    conv(m, p + ".conv2", p + ".r1", p + ".c2", 8, 8);
    m.node("Add", {p + ".c2", prev}, {p + ".sum"}, p + ".add");
    m.node("Relu", {p + ".sum"}, {p + ".out"}, p + ".relu2");
    prev = p + ".out";
  }
  m.node("GlobalAveragePool", {prev}, {"y"}, "pool");
  check_toy(m, {{"x", random_tensor({1, 8, 12, 12}, 3)}});
}

TEST(PlanMemory, ConcatOfSeveralBranches) {
  ModelBuilder m(13);
  m.input("x", {1, 4, 10, 10});
  m.output("y");
  conv(m, "stem", "x", "s", 4, 8);
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    const std::string b = fmt::format("br{}", i);
    conv(m, b, "s", b + ".c", 8, 2 + i, i % 2 ? 1 : 3);
    m.node("Relu", {b + ".c"}, {b + ".r"}, b + ".relu");
    branches.push_back(b + ".r");
  }
  set_int(m.node("Concat", branches, {"cat"}, "concat"), "axis", 1);
  conv(m, "head", "cat", "y", 2 + 3 + 4 + 5, 3, 1);
  check_toy(m, {{"x", random_tensor({1, 4, 10, 10}, 4)}});
}

TEST(PlanMemory, ViewsKeepTheirSourceAlive) {
  // c -> Reshape (a view of c) -> ... -> read at the end: c's bytes must stay reserved
  // until then although c itself has no later reader.
  ModelBuilder m(13);
  m.input("x", {1, 4, 6, 6});
  m.output("y");
  conv(m, "c1", "x", "c", 4, 4);
  int64_initializer(m, "flat", {2}, {1, 144});
  m.node("Reshape", {"c", "flat"}, {"v"}, "reshape");
  m.node("Flatten", {"v"}, {"v2"}, "flatten");  // a view of a view
  conv(m, "c2", "c", "d", 4, 4);                // c also read here
  conv(m, "c3", "d", "e", 4, 4);
  conv(m, "c4", "e", "f", 4, 4);
  m.node("Reshape", {"f", "flat"}, {"fv"}, "reshape_f");
  m.node("Add", {"fv", "v2"}, {"sum"}, "add");
  m.node("Neg", {"sum"}, {"y"}, "neg");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 4, 6, 6}, 5)}};
  check_toy(m, feeds);
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 4, 6, 6}}}, kMemoryOnly);
  EXPECT_EQ(p.buffers[value_id(p, "v")].kind, Kind::kView);
  EXPECT_EQ(p.buffers[value_id(p, "v2")].kind, Kind::kView);
  const MemoryCheck mc = check_memory_plan(p);
  EXPECT_EQ(mc.end.at(value_id(p, "c")), static_cast<int>(p.graph.nodes.size()) - 2);
}

TEST(PlanMemory, ValueUsedMuchLater) {
  ModelBuilder m(13);
  m.input("x", {1, 4, 8, 8});
  m.output("y");
  conv(m, "first", "x", "early", 4, 4);
  std::string prev = "early";
  for (int i = 0; i < 5; ++i) {
    const std::string next = fmt::format("mid{}", i);
    conv(m, fmt::format("mid_conv{}", i), prev, next, 4, 4);
    prev = next;
  }
  m.node("Add", {prev, "early"}, {"sum"}, "late_add");
  m.node("Neg", {"sum"}, {"y"}, "neg");
  check_toy(m, {{"x", random_tensor({1, 4, 8, 8}, 6)}});
  const passes::Program p = compile(m, {{DType::kFloat32, {1, 4, 8, 8}}}, kMemoryOnly);
  const MemoryCheck mc = check_memory_plan(p);
  EXPECT_EQ(mc.end.at(value_id(p, "early")), static_cast<int>(p.graph.nodes.size()) - 2);
  EXPECT_EQ(p.memory.arena_bytes, 3 * 4 * 8 * 8 * 4);  // early + two alternating mids
}

TEST(PlanMemory, DataDependentShapesAreDynamic) {
  ModelBuilder m(13);
  m.input("x", {3, 5});
  m.output("idx");
  m.output("y");
  m.node("Neg", {"x"}, {"a"}, "neg");
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.node("NonZero", {"r"}, {"nz"}, "nonzero");        // [2, count]: count known at run time
  m.node("Transpose", {"nz"}, {"nzt"}, "transpose");  // shape unknown too
  set_int(m.node("Cast", {"nzt"}, {"nzf"}, "cast"), "to", ::onnx::TensorProto::FLOAT);
  m.node("ReduceSum", {"nzf"}, {"s"}, "sum");  // keepdims: [1, 1], but its input is unknown
  m.node("Add", {"a", "s"}, {"y"}, "add");
  m.node("Identity", {"nzt"}, {"idx"}, "out");
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({3, 5}, 7)}};
  check_toy(m, feeds);
  const passes::Program p = compile(m, {{DType::kFloat32, {3, 5}}}, kMemoryOnly);
  for (const char* v : {"nz", "nzt", "nzf"}) {
    EXPECT_FALSE(p.types[value_id(p, v)].has_value()) << v;
    EXPECT_EQ(p.buffers[value_id(p, v)].kind, Kind::kDynamic) << v;
  }
  // A different input gives a different count: nothing was sized at plan time.
  const std::string bytes = m.bytes();
  Session session = Session::from_memory(bytes.data(), bytes.size());
  for (int nonzero : {0, 4, 15}) {
    std::vector<float> x(15, 0.0f);
    for (int i = 0; i < nonzero; ++i) x[i] = -1.0f - static_cast<float>(i);
    const auto out = session.run({{"x", Tensor::from_vector(x, {3, 5})}});
    EXPECT_EQ(out[0].tensor.shape(), (Shape{nonzero, 2}));
  }
}

// Intermediates that are also graph outputs, outputs that are views of intermediates,
// and outputs at the end of in-place chains: none is in the arena, and a second run
// neither changes nor invalidates what the first returned.
ModelBuilder outputs_model() {
  ModelBuilder m(13);
  m.input("x", {1, 4, 7, 7});
  m.output("c1_out");
  m.output("flat");
  m.output("y");
  m.output("act");
  m.output("c1_flat");
  conv(m, "conv1", "x", "c1_out", 4, 4);  // returned and read on
  conv(m, "conv2", "c1_out", "c2", 4, 4);
  m.node("Relu", {"c2"}, {"r2"}, "relu2");  // in place into c2...
  int64_initializer(m, "shape", {2}, {4, 49});
  m.node("Reshape", {"r2", "shape"}, {"flat"}, "reshape");            // ...and returned as a view
  m.node("Reshape", {"c1_out", "shape"}, {"c1_flat"}, "reshape_c1");  // a view of an output
  conv(m, "conv3", "c1_out", "c3", 4, 4);
  m.node("Sigmoid", {"c3"}, {"s3"}, "sig3");
  m.node("Mul", {"s3", "c3"}, {"act"}, "swish");  // returned; c3 read twice
  conv(m, "conv4", "act", "c4", 4, 4);
  m.node("Tanh", {"c4"}, {"t4"}, "tanh4");
  m.node("Identity", {"t4"}, {"y"}, "identity");  // returned through an Identity
  return m;
}

TEST(PlanMemory, GraphOutputsAreNeverInTheArena) {
  const ModelBuilder m = outputs_model();
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 4, 7, 7}, 8)}};
  check_toy(m, feeds);
  for (const auto& disabled : {std::vector<std::string>{}, kMemoryOnly, kPlanOnly}) {
    const passes::Program p = compile(m, {{DType::kFloat32, {1, 4, 7, 7}}}, disabled);
    for (int v : p.graph.outputs)
      EXPECT_NE(p.buffers[v].kind, Kind::kArena) << p.graph.values[v].name;
  }
}

TEST(PlanMemory, SecondRunLeavesTheFirstRunsOutputsAlone) {
  const ModelBuilder m = outputs_model();
  const std::string bytes = m.bytes();
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    SessionOptions options;
    options.num_threads = threads;
    Session session = Session::from_memory(bytes.data(), bytes.size(), options);
    const Tensor x1 = random_tensor({1, 4, 7, 7}, 9);
    const Tensor x2 = random_tensor({1, 4, 7, 7}, 10);
    const auto first = session.run({{"x", x1}});
    std::vector<std::vector<float>> kept;
    for (const NamedTensor& t : first) kept.push_back(t.tensor.to_float_vector());
    // Every output has storage of its own: writing into one changes no other.
    for (size_t i = 0; i < first.size(); ++i) {
      for (size_t j = i + 1; j < first.size(); ++j) {
        EXPECT_NE(first[i].tensor.storage().get(), first[j].tensor.storage().get())
            << first[i].name << " and " << first[j].name;
      }
    }
    const auto second = session.run({{"x", x2}});
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(first[i].tensor.to_float_vector(), kept[i]) << first[i].name << " changed";
      EXPECT_NE(first[i].tensor.storage().get(), second[i].tensor.storage().get()) << first[i].name;
      EXPECT_NE(first[i].tensor.to_float_vector(), second[i].tensor.to_float_vector())
          << first[i].name;  // different inputs: the second run really computed
    }
    // The second run gives what a fresh session gives: no state carried over.
    Session fresh = Session::from_memory(bytes.data(), bytes.size(), options);
    const auto expected = fresh.run({{"x", x2}});
    expect_outputs_near(second, expected, 0.0);
    // And the first run again gives the first results.
    expect_outputs_near(session.run({{"x", x1}}), first, 0.0);
  }
}

// One session, several input sizes (one plan and arena each): switching between them
// gives what a fresh session gives, and earlier outputs stay as they were.
TEST(PlanMemory, PlansForSeveralShapesDoNotInterfere) {
  ModelBuilder m(13);
  m.input("x", {1, 3, "H", "W"});
  m.output("y");
  conv(m, "c1", "x", "a", 3, 6);
  m.node("Relu", {"a"}, {"r"}, "relu");
  conv(m, "c2", "r", "b", 6, 6);
  m.node("Add", {"b", "r"}, {"s"}, "add");
  conv(m, "c3", "s", "y", 6, 2, 1);
  const std::string bytes = m.bytes();
  Session session = Session::from_memory(bytes.data(), bytes.size());
  const std::vector<Shape> shapes = {{1, 3, 8, 8}, {1, 3, 13, 9}, {1, 3, 8, 8}, {1, 3, 5, 17}};
  std::vector<std::pair<std::vector<NamedTensor>, std::vector<float>>> returned;
  for (size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE(shape_str(shapes[i]));
    const std::vector<NamedTensor> feeds = {{"x", random_tensor(shapes[i], 20 + i)}};
    auto out = session.run(feeds);
    Session fresh = Session::from_memory(bytes.data(), bytes.size());
    expect_outputs_near(out, fresh.run(feeds), 0.0);
    std::vector<float> values = out[0].tensor.to_float_vector();
    returned.emplace_back(std::move(out), std::move(values));
  }
  for (const auto& [out, values] : returned) EXPECT_EQ(out[0].tensor.to_float_vector(), values);
}

TEST(PlanMemory, DisabledGivesTheSameResults) {
  const ModelBuilder m = outputs_model();
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 4, 7, 7}, 11)}};
  expect_pass_exact(m, feeds, {}, "plan-memory");
  const passes::Program off = compile(m, {{DType::kFloat32, {1, 4, 7, 7}}}, {"plan-memory"});
  EXPECT_EQ(off.memory.arena_bytes, 0);
  for (int v = 0; v < static_cast<int>(off.graph.values.size()); ++v)
    EXPECT_NE(off.buffers[v].kind, Kind::kArena) << off.graph.values[v].name;
}

// Every shared model, at the input shape of its first reference case: the plan checks
// with the default pipeline (for this machine's block and for the other NCHWc blocks),
// and bit-equal results with plan-memory off.
TEST(PlanMemory, SharedModels) {
  const std::vector<ReferenceCase> cases = load_reference_cases();
  if (cases.empty()) GTEST_SKIP() << "no models at " << models_dir();
  std::map<std::string, const ReferenceCase*> first;
  for (const ReferenceCase& c : cases) {
    auto it = first.find(c.model);
    if (it == first.end() || c.input_pixels < it->second->input_pixels) first[c.model] = &c;
  }
  int checked = 0;
  for (const auto& [model, c] : first) {
    SCOPED_TRACE(model);
    if (c->input_pixels > max_test_pixels()) continue;
    const ir::Graph graph = onnx::load_model_file(c->model_path.string());
    std::vector<ops::TensorType> types;
    for (const CaseTensor& in : c->inputs) types.push_back({DType::kFloat32, in.shape});
    for (int block : {simd_float_lanes(), 4, 8, 16}) {
      SCOPED_TRACE(block);
      passes::Program p =
          passes::make_program(graph, types, ops::ExecContext{1}, int64_t{1} << 31, block);
      passes::PipelineOptions options;
      options.verify = true;
      passes::run_pipeline(p, options);
      const MemoryCheck mc = check_memory_plan(p);
      EXPECT_GT(mc.arena.size(), 0u);
      EXPECT_LT(p.memory.arena_bytes, p.memory.intermediate_bytes);
    }
    // Running them with plan-memory on and off is the models suite's job
    // (ReferenceModelTest ..._without_plan_memory).
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace tern::test::plan_memory_test

namespace tern::test::plan_memory_test {
namespace {

// A tensor an op keeps between runs (a Constant node's value, run per inference when
// fold-constants is off) is returned as a copy: the caller may write into what it gets.
TEST(PlanMemory, OutputsOwnedByAnOpAreCopies) {
  ModelBuilder m(13);
  m.input("x", {2});
  m.output("c");
  m.output("y");
  set_tensor(m.node("Constant", {}, {"c"}, "const"), "value", {2}, {1.0f, 2.0f});
  m.node("Add", {"x", "c"}, {"y"}, "add");
  const std::string bytes = m.bytes();
  for (const std::vector<std::string>& off :
       {std::vector<std::string>{"fold-constants"}, std::vector<std::string>{}}) {
    SessionOptions options;
    options.disabled_passes = off;
    Session session = Session::from_memory(bytes.data(), bytes.size(), options);
    const std::vector<NamedTensor> feeds = {{"x", Tensor::from_vector({10.0f, 20.0f}, {2})}};
    auto first = session.run(feeds);
    first[0].tensor.data<float>()[0] = 1000.0f;  // the caller owns it
    const auto second = session.run(feeds);
    EXPECT_EQ(second[0].tensor.to_float_vector(), (std::vector<float>{1.0f, 2.0f}));
    EXPECT_EQ(second[1].tensor.to_float_vector(), (std::vector<float>{11.0f, 22.0f}));
  }
}

// An intermediate over max_tensor_bytes fails at plan time with the error naming the node
// and the limit, before the arena reserves anything, with the passes on and off.
TEST(PlanMemory, TensorLimitIsCheckedBeforeTheArena) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 4});
  m.output("y");
  m.initializer("roi", {0}, {});
  m.initializer("scales", {4}, {1.0f, 1.0f, 32768.0f, 32768.0f});  // 64 GiB of float
  m.node("Resize", {"x", "roi", "scales"}, {"r"}, "resize");
  m.node("Neg", {"r"}, {"n"}, "neg");
  set_int(m.node("ReduceMax", {"n"}, {"y"}, "max"), "keepdims", 0);
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 1, 4, 4}, 10)}};
  for (bool passes_on : {false, true}) {
    SCOPED_TRACE(passes_on);
    try {
      run_model(m, feeds, passes_on ? std::vector<std::string>{} : passes::pass_names());
      FAIL() << "expected ShapeError";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("Resize 'resize'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("max_tensor_bytes"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tern::test::plan_memory_test
