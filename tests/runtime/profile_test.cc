// Session::profile(), layer_stats() and the Chrome trace (tern/profile.h), on the
// RetinaFace model kept in the repo.
#include "tern/profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "passes/pipeline.h"
#include "runtime/plan.h"
#include "support/test_env.h"
#include "tern/session.h"
#include "tern/status.h"

namespace tern {
namespace {

constexpr int kRuns = 3;

class ProfileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    session_ = new Session((test::source_dir() / "models/retinaface_mnet025.onnx").string(),
                           {.num_threads = 1});
    Tensor x = Tensor::empty(DType::kFloat32, {1, 3, 64, 64});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float(i % 17) / 17.0f;
    feeds_ = new std::vector<NamedTensor>{{"input", x}};
    session_->run(*feeds_);
    profile_ = new Profile(session_->profile(*feeds_, kRuns));
  }
  static void TearDownTestSuite() {
    delete profile_;
    delete feeds_;
    delete session_;
  }
  static Session* session_;
  static std::vector<NamedTensor>* feeds_;
  static Profile* profile_;
};
Session* ProfileTest::session_ = nullptr;
std::vector<NamedTensor>* ProfileTest::feeds_ = nullptr;
Profile* ProfileTest::profile_ = nullptr;

TEST_F(ProfileTest, EveryPlanStepAppearsInOrder) {
  const std::vector<LayerInfo> layers = session_->describe({{"input", {1, 3, 64, 64}}});
  ASSERT_EQ(profile_->layers.size(), layers.size());
  ASSERT_GT(layers.size(), 50u);
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerInfo& got = profile_->layers[i].layer;
    EXPECT_EQ(got.name, layers[i].name) << i;
    EXPECT_EQ(got.op_type, layers[i].op_type) << i;
    EXPECT_EQ(got.macs, layers[i].macs) << i;
    EXPECT_EQ(profile_->layers[i].runs.size(), size_t{kRuns}) << i;
  }
  EXPECT_EQ(profile_->runs.size(), size_t{kRuns});
  EXPECT_EQ(profile_->num_threads, 1);
}

// Exact facts only (the machine may be busy: another process can take the CPU between
// any two steps): the steps of a run lie inside it, one after another, so their sum is
// at most the run; the best run is mostly steps; a median of 3 is at most half their sum.
TEST_F(ProfileTest, StepsNestInTheirRunAndSumToAtMostIt) {
  double best_fraction = 0, all_runs = 0;
  for (int r = 0; r < kRuns; ++r) {
    const TimedSpan& run = profile_->runs[r];
    double sum = 0, previous_end = run.start_ms;
    for (const LayerProfile& l : profile_->layers) {
      const TimedSpan& s = l.runs[r];
      EXPECT_GE(s.ms, 0);
      EXPECT_GE(s.start_ms, previous_end);  // steps run one after another
      previous_end = s.start_ms + s.ms;
      sum += s.ms;
    }
    EXPECT_LE(previous_end, run.start_ms + run.ms + 1e-6);
    EXPECT_LE(sum, run.ms + 1e-6);
    best_fraction = std::max(best_fraction, sum / run.ms);
    all_runs += run.ms;
  }
  EXPECT_GT(best_fraction, 0.5);  // the steps are most of a run, not bookkeeping
  double medians = 0;
  for (const LayerProfile& l : profile_->layers) {
    medians += l.median_ms;
    std::vector<double> ms;
    for (const TimedSpan& s : l.runs) ms.push_back(s.ms);
    std::sort(ms.begin(), ms.end());
    EXPECT_EQ(l.median_ms, ms[kRuns / 2]);
  }
  EXPECT_LE(medians, all_runs / 2 + 1e-6);
  EXPECT_GT(medians, 0);
}

TEST_F(ProfileTest, GflopAndBytesComeFromTheLayer) {
  int64_t conv_macs = 0;
  for (const LayerProfile& l : profile_->layers) {
    const LayerStats s = layer_stats(l.layer.macs, l.layer.bytes, l.median_ms, nullptr, 1);
    EXPECT_DOUBLE_EQ(s.gflop, 2.0 * static_cast<double>(l.layer.macs) / 1e9);
    EXPECT_EQ(s.bound_gflops, 0);  // no roofline given
    if (l.layer.macs > 0) {
      conv_macs += l.layer.macs;
      // At least the output: 4 bytes per float of every output.
      int64_t out_bytes = 0;
      for (const Shape& shape : l.layer.output_shapes) out_bytes += 4 * shape_numel(shape);
      EXPECT_GT(l.layer.bytes, out_bytes) << l.layer.name;  // plus inputs and weights
    }
  }
  EXPECT_GT(conv_macs, 0);
}

TEST_F(ProfileTest, RejectsZeroRuns) {
  EXPECT_THROW(session_->profile(*feeds_, 0), InvalidArgument);
}

// LayerInfo.algorithm is the node's string attribute "algorithm" (set by the passes on
// tern.FusedConv); LayerInfo.bytes counts inputs and outputs.
TEST(LayerInfo, AlgorithmAttributeAndBytes) {
  ir::Graph g;
  g.opset = 13;
  const auto add = [&](const std::string& name, bool input) {
    ir::Value v;
    v.name = name;
    v.has_type = v.has_shape = input;
    if (input) v.dims = {{1, ""}, {4, ""}};
    return g.add_value(v);
  };
  const int x = add("x", true), y = add("y", false), z = add("z", false);
  ir::Node first{"first", "Relu", "", {x}, {y}, {}};
  ir::Attribute algorithm;
  algorithm.type = ir::Attribute::Type::kString;
  algorithm.s = "test-kernel";
  first.attrs["algorithm"] = algorithm;
  ir::Node second{"second", "Relu", "", {y}, {z}, {}};
  ir::Attribute not_a_string;
  not_a_string.type = ir::Attribute::Type::kInt;
  not_a_string.i = 3;
  second.attrs["algorithm"] = not_a_string;  // ignored: only a string names a kernel
  g.nodes = {first, second};
  g.values[y].producer = 0;
  g.values[z].producer = 1;
  g.inputs = {x};
  g.outputs = {z};
  const passes::Program p = passes::make_program(g, {{DType::kFloat32, {1, 4}}},
                                                 ops::ExecContext{1}, int64_t{1} << 31, 8);
  const std::vector<LayerInfo> layers = runtime::layers_of(p);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].algorithm, "test-kernel");
  EXPECT_EQ(layers[1].algorithm, "");
  EXPECT_EQ(layers[0].bytes, 2 * 4 * 4);  // [1, 4] float in and out
  EXPECT_EQ(layers[1].bytes, 2 * 4 * 4);
}

TEST(LayerStats, FiguresAgainstTheRoofline) {
  Roofline r;
  r.num_cores = 1;
  r.points = {{1, 100.0, 10.0}};
  // 1e9 MACs = 2 GFLOP over 1e9 bytes (2 FLOP/byte) in 1000 ms: 2 GFLOP/s against a bound
  // of min(100, 2 * 10) = 20 GFLOP/s.
  const LayerStats s = layer_stats(1000000000, 1000000000, 1000.0, &r, 1);
  EXPECT_DOUBLE_EQ(s.gflop, 2.0);
  EXPECT_DOUBLE_EQ(s.gflops, 2.0);
  EXPECT_DOUBLE_EQ(s.intensity, 2.0);
  EXPECT_DOUBLE_EQ(s.bound_gflops, 20.0);
  EXPECT_DOUBLE_EQ(s.roofline_pct, 10.0);
  EXPECT_EQ(s.bound, "DRAM");  // no cache figures: DRAM for every size
  const LayerStats none = layer_stats(0, 1000, 1.0, &r, 1);  // no FLOP: no bound
  EXPECT_EQ(none.gflops, 0);
  EXPECT_EQ(none.roofline_pct, 0);
  EXPECT_EQ(none.bound, "");
  EXPECT_EQ(layer_stats(1, 1, 1.0, nullptr, 1).bound, "");  // no roofline
  EXPECT_EQ(layer_stats(1, 0, 1.0, &r, 1).bound, "");       // unknown bytes: no bound

  // With cache figures, the bandwidth of the level the bytes fit in: 1 MB of L2, an L3 set
  // of 8 MB (8 L2 caches), L2 40 GB/s and L3 25 GB/s.
  r.l2_bytes = 1000000;
  r.points[0].l2_bandwidth = 40.0;
  r.points[0].l3_bandwidth = 25.0;
  struct Case {
    int64_t bytes;
    double bound;
    const char* name;
  };
  // 2 FLOP/byte: min(100, 2 * GB/s); 100 FLOP/byte: the peak whatever the level.
  for (const Case& c :
       {Case{1000000, 80.0, "L2"}, Case{1000001, 50.0, "L3"}, Case{8000001, 20.0, "DRAM"}}) {
    const LayerStats t = layer_stats(c.bytes, c.bytes, 1000.0, &r, 1);
    EXPECT_DOUBLE_EQ(t.bound_gflops, c.bound) << c.bytes;
    EXPECT_EQ(t.bound, c.name) << c.bytes;
    const LayerStats dense = layer_stats(50 * c.bytes, c.bytes, 1000.0, &r, 1);
    EXPECT_DOUBLE_EQ(dense.bound_gflops, 100.0) << c.bytes;
    EXPECT_EQ(dense.bound, "FMA") << c.bytes;
  }
}

TEST_F(ProfileTest, ChromeTraceParsesBackWithEveryStep) {
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(*profile_));
  ASSERT_TRUE(trace.contains("traceEvents"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  size_t runs = 0, steps = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["ph"].is_string());
    if (e["ph"] != "X") continue;
    ASSERT_TRUE(e["name"].is_string());
    ASSERT_TRUE(e["ts"].is_number());
    ASSERT_TRUE(e["dur"].is_number());
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_TRUE(e["pid"].is_number_integer());
    EXPECT_TRUE(e["tid"].is_number_integer());
    if (e["cat"] == "run") {
      ++runs;
      continue;
    }
    ++steps;
    const nlohmann::json& args = e["args"];
    EXPECT_TRUE(args["op"].is_string());
    EXPECT_TRUE(args["algorithm"].is_string());
    EXPECT_TRUE(args["shape"].is_string());
    EXPECT_TRUE(args["gflop"].is_number());
    const int run = args["run"].get<int>();
    ASSERT_GE(run, 1);
    ASSERT_LE(run, kRuns);
    // Inside its run, in microseconds.
    const TimedSpan& span = profile_->runs[run - 1];
    EXPECT_GE(e["ts"].get<double>(), span.start_ms * 1e3 - 1e-3);
    EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(),
              (span.start_ms + span.ms) * 1e3 + 1e-3);
  }
  EXPECT_EQ(runs, size_t{kRuns});
  EXPECT_EQ(steps, kRuns * profile_->layers.size());
}

}  // namespace
}  // namespace tern
