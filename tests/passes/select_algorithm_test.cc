// select-algorithm: every FusedConv gets the kernel the heuristic picks for its layouts
// on this machine's SIMD target (NCHW input: direct-first; 1x1 stride 1 unpadded:
// pointwise; one filter per channel: depthwise; 3x3 stride 1 with 16 or more channels:
// winograd, its weights transformed; other k x k: direct) and "reference" where no fast
// kernel applies (a block that is not the target's vector width, groups that split a
// block); a preset choice the op can run is kept; results are unchanged, also when a
// winograd plan meets a SIMD target of another width (its reference twin runs).

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/cpu.h"
#include "pass_test_util.h"
#include "support/test_env.h"

namespace tern::test::select_algorithm_test {
namespace {

// x [1, 3, 13, 11] -> 3x3/2 conv (8) -> depthwise 3x3 -> 1x1 (6) -> 3x3 pad 1 (16)
// -> 3x3 pad 1 (16, winograd) -> grouped 3x3 (8 groups of 2 channels) -> y.
ModelBuilder mixed_model() {
  ModelBuilder m;
  m.input("x", {1, 3, 13, 11});
  m.output("y");
  m.initializer("w1", {8, 3, 3, 3}, weights(216, 1));
  m.initializer("w2", {8, 1, 3, 3}, weights(72, 2));
  m.initializer("w3", {6, 8, 1, 1}, weights(48, 3));
  m.initializer("w4", {16, 6, 3, 3}, weights(864, 4));
  m.initializer("w6", {16, 16, 3, 3}, weights(2304, 6));
  m.initializer("w5", {16, 2, 3, 3}, weights(288, 5));
  auto* c1 = m.node("Conv", {"x", "w1"}, {"a"}, "first");
  set_ints(c1, "strides", {2, 2});
  set_ints(c1, "pads", {1, 1, 1, 1});
  auto* c2 = m.node("Conv", {"a", "w2"}, {"b"}, "dw");
  set_ints(c2, "pads", {1, 1, 1, 1});
  set_int(c2, "group", 8);
  m.node("Conv", {"b", "w3"}, {"c"}, "pw");
  auto* c4 = m.node("Conv", {"c", "w4"}, {"d"}, "kxk");
  set_ints(c4, "pads", {1, 1, 1, 1});
  auto* c6 = m.node("Conv", {"d", "w6"}, {"e"}, "wino");
  set_ints(c6, "pads", {1, 1, 1, 1});
  auto* c5 = m.node("Conv", {"e", "w5"}, {"y"}, "grouped");
  set_int(c5, "group", 8);
  return m;
}

std::map<std::string, std::string> algorithms(const passes::Program& p) {
  std::map<std::string, std::string> out;
  for (const ir::Node& node : p.graph.nodes) {
    auto it = node.attrs.find("algorithm");
    if (node.op_type == "FusedConv") out[node.name] = it == node.attrs.end() ? "" : it->second.s;
  }
  return out;
}

TEST(SelectAlgorithm, EachConvGetsItsKernel) {
  const int c = simd_float_lanes();
  const passes::Program p = compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, c);
  const auto algo = algorithms(p);
  ASSERT_EQ(algo.size(), 6u);
  const bool fast = cpu_info().best_target != "SCALAR";
  EXPECT_EQ(algo.at("first"), fast ? "direct-first" : "reference");
  EXPECT_EQ(algo.at("dw"), fast ? "depthwise" : "reference");
  EXPECT_EQ(algo.at("pw"), fast ? "pointwise" : "reference");
  EXPECT_EQ(algo.at("kxk"), fast ? "direct" : "reference");  // 6 input channels
  EXPECT_EQ(algo.at("wino"), fast ? "winograd" : "reference");
  // 2 output channels per group never fill a block of 4 or more.
  EXPECT_EQ(algo.at("grouped"), "reference");
  // The winograd node reads its transformed weights [36, ceil(16/c), 16, c].
  for (const ir::Node& node : p.graph.nodes) {
    if (node.name != "wino" || !fast) continue;
    EXPECT_EQ(node.attrs.at("weight_layout").s, "winograd");
    EXPECT_EQ(*p.types[node.inputs[1]],
              (ops::TensorType{DType::kFloat32, {36, (16 + c - 1) / c, 16, c}}));
  }
}

// A plan with winograd weights, run after a SIMD target of another vector width is
// forced: the op runs the reference twin, with the same results.
TEST(SelectAlgorithm, WinogradPlanOnAnotherTargetRunsItsReferenceTwin) {
  const std::vector<std::string> targets = dispatchable_simd_targets();
  if (simd_float_lanes() == 4 || targets.size() < 2) GTEST_SKIP() << "one vector width only";
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 13, 11}, 9)}};
  const std::vector<NamedTensor> plain = run_model(mixed_model(), feeds, all_passes_except({}));
  const std::string bytes = mixed_model().bytes();
  SessionOptions options;
  options.verify_passes = true;
  Session session = Session::from_memory(bytes.data(), bytes.size(), options);
  const std::vector<NamedTensor> fast = session.run(feeds);  // plans with block = lanes
  force_simd_target("SSE4");
  const std::vector<NamedTensor> fallback = session.run(feeds);
  force_simd_target("");
  expect_outputs_near(fast, plain, 1e-4f);
  expect_outputs_near(fallback, plain, 1e-4f);
}

// PlanInfo reports winograd's extra memory: the one winograd layer's transformed weights
// (4x the packed 3x3 weights, which the plan then drops) and its per-thread workspace.
TEST(SelectAlgorithm, PlanInfoReportsWinogradsExtraMemory) {
  if (cpu_info().best_target == "SCALAR") GTEST_SKIP() << "no fast kernels";
  const std::string bytes = mixed_model().bytes();
  const auto plan_info = [&](const std::vector<std::string>& disabled) {
    SessionOptions options;
    options.disabled_passes = disabled;
    Session session = Session::from_memory(bytes.data(), bytes.size(), options);
    return session.plan_info({{"x", {1, 3, 13, 11}}});
  };
  const PlanInfo on = plan_info({});
  // "wino" (16 -> 16 channels, whole blocks of 4, 8 or 16): weights [36, 16/c, 16, c] and,
  // per work item, V [36][16/c][24][c] and M [24][16/c][36][c], all floats.
  EXPECT_EQ(on.winograd_layers, 1);
  EXPECT_EQ(on.winograd_weight_bytes, 36 * 16 * 16 * 4);
  EXPECT_EQ(on.winograd_workspace_bytes, 36 * 24 * (16 + 16) * 4);
  for (const LayerInfo& l : on.layers) {
    EXPECT_EQ(l.workspace_bytes, l.algorithm == "winograd" ? on.winograd_workspace_bytes : 0)
        << l.name;
  }
  // Without the pass nothing is transformed and the packed 3x3 weights (a quarter of the
  // transformed bytes) stay: the winograd plan holds three quarters of them more.
  const PlanInfo off = plan_info({"select-algorithm"});
  EXPECT_EQ(off.winograd_layers, 0);
  EXPECT_EQ(off.winograd_weight_bytes, 0);
  EXPECT_EQ(off.winograd_workspace_bytes, 0);
  EXPECT_EQ(on.packed_weight_bytes - off.packed_weight_bytes, on.winograd_weight_bytes / 4 * 3);
}

TEST(SelectAlgorithm, ABlockThatIsNotTheVectorWidthRunsTheReference) {
  const int c = simd_float_lanes();
  for (int block : {4, 8, 16}) {
    if (block == c) continue;
    SCOPED_TRACE(::testing::Message() << "block " << block);
    const passes::Program p =
        compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, block);
    for (const auto& [name, algo] : algorithms(p)) EXPECT_EQ(algo, "reference") << name;
  }
}

TEST(SelectAlgorithm, OffLeavesNoAttributeAndTheOpChoosesTheSame) {
  const int c = simd_float_lanes();
  const passes::Program p =
      compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {"select-algorithm"}, c);
  for (const auto& [name, algo] : algorithms(p)) EXPECT_EQ(algo, "") << name;
  // The op's own choice (Op::algorithm) is what the pass would have recorded.
  const passes::Program q = compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, c);
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    const ir::Node& node = p.graph.nodes[n];
    if (node.op_type != "FusedConv") continue;
    std::vector<ops::TensorType> types;
    for (int in : node.inputs) types.push_back(in >= 0 ? *p.types[in] : ops::TensorType{});
    EXPECT_EQ(p.ops[n]->algorithm(types), algorithms(q).at(node.name)) << node.name;
  }
}

// All passes on (the fast kernels) against all passes off (plain Conv, the reference
// kernel) and against this pass off (the op's own choice).
// Tolerance 1e-4: winograd's transforms (coefficients up to 25, then up to 8 on the way
// back) round intermediate sums several times larger than the outputs of this 6-conv
// chain (kernels/winograd_conv_test.cc derives the bound per element).
TEST(SelectAlgorithm, KeepsResults) {
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 13, 11}, 9)}};
  expect_pass_keeps_results(mixed_model(), feeds, "select-algorithm", 1e-4);
}

// mixed_model compiled with --tune and the tune cache at `cache`.
passes::Program compile_tuned(const std::string& cache) {
  return compile(mixed_model(), {{DType::kFloat32, {1, 3, 13, 11}}}, {}, simd_float_lanes(), cache);
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump(2);
}

// --tune: the two 3x3 stride-1 convs ("kxk" 6 -> 16 and "wino" 16 -> 16) are measured as
// direct and winograd and get the faster (not as dot: pack-weights' dot_tunable leaves
// convs winograd covers to this pass); the choice is cached and a later compile
// follows the cache (edited here to force each answer); a corrupt cache is measured
// again with a warning and replaced; results stay those of the reference.
TEST(SelectAlgorithm, TuneMeasuresCandidatesAndFollowsTheCache) {
  if (cpu_info().best_target == "SCALAR") GTEST_SKIP() << "no fast kernels";
  const test::ScratchDir dir("tune");
  const std::string cache = dir.file("tune.json");

  passes::Program p = compile_tuned(cache);
  EXPECT_EQ(p.tuning.measured, 2);
  EXPECT_EQ(p.tuning.cached, 0);
  EXPECT_EQ(p.tuning.warning, "");
  nlohmann::json file = read_json(cache);
  ASSERT_FALSE(file.is_discarded());
  ASSERT_EQ(file["entries"].size(), 2u);
  const auto algo = algorithms(p);
  for (auto& [key, entry] : file["entries"].items()) {
    SCOPED_TRACE(key);
    EXPECT_TRUE(entry["ms"].contains("direct") && entry["ms"].contains("winograd"));
    const std::string choice = entry["algorithm"];
    EXPECT_TRUE(choice == "direct" || choice == "winograd");
    // The key holds the packed weights' shape [ceil(16/c), C, 3, 3, c]: C tells the node.
    const std::string node = key.find(", 6, 3, 3, ") != std::string::npos ? "kxk" : "wino";
    EXPECT_EQ(algo.at(node), choice);
    // The faster one was chosen.
    EXPECT_LE(entry["ms"][choice].get<double>(),
              entry["ms"][choice == "direct" ? "winograd" : "direct"].get<double>());
  }

  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 13, 11}, 9)}};
  const std::vector<NamedTensor> plain = run_model(mixed_model(), feeds, all_passes_except({}));
  for (const char* forced : {"direct", "winograd"}) {
    SCOPED_TRACE(forced);
    for (auto& [key, entry] : file["entries"].items()) entry["algorithm"] = forced;
    write_json(cache, file);
    passes::Program q = compile_tuned(cache);
    EXPECT_EQ(q.tuning.measured, 0);
    EXPECT_EQ(q.tuning.cached, 2);
    EXPECT_EQ(algorithms(q).at("kxk"), forced);
    EXPECT_EQ(algorithms(q).at("wino"), forced);
    // The same through a Session with this cache: the outputs match the reference.
    Session session = tuned_session(mixed_model(), cache);
    expect_outputs_near(session.run(feeds), plain, 1e-4);
    const PlanInfo info = session.plan_info({{"x", {1, 3, 13, 11}}});
    EXPECT_EQ(info.tuned_cached, 2);
    EXPECT_EQ(info.tune_cache, cache);
  }

  std::ofstream(cache) << "{ not json";
  passes::Program r = compile_tuned(cache);
  EXPECT_EQ(r.tuning.measured, 2);
  EXPECT_NE(r.tuning.warning.find("is corrupt"), std::string::npos) << r.tuning.warning;
  EXPECT_FALSE(read_json(cache).is_discarded());  // replaced

  // A cache another tern wrote (version 1 keyed NHWC-timed heads like NCHW ones): its
  // entries are not used; measured again with a warning that says so, and replaced.
  file = read_json(cache);
  ASSERT_FALSE(file.is_discarded());
  const int version = file["version"];
  file["version"] = version - 1;
  write_json(cache, file);
  passes::Program s = compile_tuned(cache);
  EXPECT_EQ(s.tuning.measured, 2);
  EXPECT_EQ(s.tuning.cached, 0);
  EXPECT_NE(s.tuning.warning.find("written by another tern"), std::string::npos)
      << s.tuning.warning;
  EXPECT_EQ(read_json(cache)["version"], version);
}

// --tune on a 3x3 stride-1 head (32 -> 40 channels, more than the dot kernel takes) read by
// Transpose(0, 2, 3, 1): direct is timed writing NHWC, as fuse-transpose will make it
// write, and the choice is cached under that context ("|y_layout=NHWC"); with
// fuse-transpose off it is timed and cached without it. Each forced answer keeps the
// results.
TEST(SelectAlgorithm, TuneTimesAHeadInTheLayoutItWillWrite) {
  if (cpu_info().best_target == "SCALAR") GTEST_SKIP() << "no fast kernels";
  ModelBuilder m;
  m.input("x", {1, 3, 8, 9});
  m.output("y");
  m.initializer("w1", {32, 3, 3, 3}, weights(32 * 27, 1));
  m.initializer("w2", {40, 32, 3, 3}, weights(40 * 32 * 9, 2));
  set_ints(m.node("Conv", {"x", "w1"}, {"a"}, "first"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"a"}, {"ar"}, "relu");
  set_ints(m.node("Conv", {"ar", "w2"}, {"h"}, "head"), "pads", {1, 1, 1, 1});
  set_ints(m.node("Transpose", {"h"}, {"y"}, "nhwc"), "perm", {0, 2, 3, 1});
  const std::vector<NamedTensor> feeds = {{"x", random_tensor({1, 3, 8, 9}, 4)}};
  const std::vector<NamedTensor> plain = run_model(m, feeds, all_passes_except({}));
  for (const bool fuse : {true, false}) {
    SCOPED_TRACE(fuse ? "fuse-transpose on" : "fuse-transpose off");
    const test::ScratchDir dir("tune_head");
    const std::string cache = dir.file("tune.json");
    const std::vector<std::string> off = off_unless(fuse, "fuse-transpose");
    const passes::Program p =
        compile(m, {{DType::kFloat32, {1, 3, 8, 9}}}, off, simd_float_lanes(), cache);
    EXPECT_EQ(p.tuning.measured, 1);
    nlohmann::json file = read_json(cache);
    ASSERT_FALSE(file.is_discarded());
    ASSERT_EQ(file["entries"].size(), 1u);
    for (auto& [key, entry] : file["entries"].items()) {
      EXPECT_EQ(key.ends_with("|y_layout=NHWC"), fuse) << key;
      EXPECT_TRUE(entry["ms"].contains("direct") && entry["ms"].contains("winograd"));
    }
    for (const char* forced : {"direct", "winograd"}) {
      SCOPED_TRACE(forced);
      for (auto& [key, entry] : file["entries"].items()) entry["algorithm"] = forced;
      write_json(cache, file);
      const passes::Program q =
          compile(m, {{DType::kFloat32, {1, 3, 8, 9}}}, off, simd_float_lanes(), cache);
      EXPECT_EQ(q.tuning.cached, 1);
      EXPECT_EQ(algorithms(q).at("head"), forced);
      // Direct writes the Transpose's NHWC output itself; winograd keeps the Transpose.
      const bool fused = fuse && std::string(forced) == "direct";
      EXPECT_EQ(count_ops(q, "Transpose"), fused ? 0 : 1);
      expect_outputs_near(tuned_session(m, cache, off).run(feeds), plain, 1e-4);
    }
  }
}

}  // namespace
}  // namespace tern::test::select_algorithm_test
