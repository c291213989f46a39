// Every model in ../shared/models against every one of its ONNX Runtime reference cases.
//
// Tolerance: MANIFEST.md suggests max |diff| <= 1e-4 on probabilities and <= 1e-3, or
// 1e-4 relative to max |value|, on raw regressions/logits. Summation order differs from
// ONNX Runtime (which uses other algorithms, e.g. GEMM-based and Winograd), so each output
// may differ by a few float32 ulps of its largest partial sums: we allow
// 1e-4 * max(1, max |reference|) absolute, which is 1e-4 on probabilities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/cpu.h"
#include "base/thread_pool.h"
#include "passes/pipeline.h"
#include "support/reference_cases.h"
#include "support/test_env.h"
#include "tern/session.h"

namespace tern {
namespace {

std::vector<test::ReferenceCase>& all_cases() {
  static std::vector<test::ReferenceCase> cases = test::load_reference_cases();
  return cases;
}

// `disabled_pass` names one graph pass to switch off ("" = all passes on).
Session& session_for(const std::filesystem::path& model, int threads,
                     const std::string& disabled_pass) {
  static std::map<std::tuple<std::string, int, std::string>, std::unique_ptr<Session>> cache;
  auto key = std::make_tuple(model.string(), threads, disabled_pass);
  auto it = cache.find(key);
  if (it == cache.end()) {
    cache.clear();  // one session at a time: the pass sweep would hold every model's plans
    SessionOptions opt;
    opt.num_threads = threads;
    if (!disabled_pass.empty()) opt.disabled_passes = {disabled_pass};
    opt.verify_passes = true;
    it = cache.emplace(key, std::make_unique<Session>(model.string(), opt)).first;
  }
  return *it->second;
}

std::vector<NamedTensor> run_case(const test::ReferenceCase& c, int threads,
                                  const std::string& disabled_pass = "") {
  std::vector<NamedTensor> feeds;
  for (const auto& in : c.inputs) {
    Tensor t = test::read_raw_f32(in.file, in.shape);
    EXPECT_TRUE(t.defined()) << "cannot read " << in.file;
    feeds.push_back({in.name, t});
  }
  return session_for(c.model_path, threads, disabled_pass).run(feeds);
}

// The largest input (H x W) the pass sweep runs, from TERN_TEST_PASS_SWEEP_MAX_PIXELS
// (0 in the sanitizer and qemu runs, which sweep none; the release run sweeps every case).
int64_t pass_sweep_max_pixels() {
  const char* env = std::getenv("TERN_TEST_PASS_SWEEP_MAX_PIXELS");
  return env ? std::atoll(env) : test::max_test_pixels();
}

// Expects `outputs` (of case `c`, run as `how` says: "" or " (pass X off)", " (--tune)")
// within tolerance of the reference; records each output's max |diff|.
void expect_matches(const test::ReferenceCase& c, const std::vector<NamedTensor>& outputs,
                    const std::string& how) {
  ASSERT_EQ(outputs.size(), c.outputs.size());
  for (size_t k = 0; k < c.outputs.size(); ++k) {
    const auto& ref_info = c.outputs[k];
    const NamedTensor& got = outputs[k];
    EXPECT_EQ(got.name, ref_info.name);
    ASSERT_EQ(got.tensor.shape(), ref_info.shape) << "output " << ref_info.name;
    Tensor ref = test::read_raw_f32(ref_info.file, ref_info.shape);
    ASSERT_TRUE(ref.defined()) << "cannot read " << ref_info.file;
    const std::vector<float> a = got.tensor.to_float_vector();
    const std::vector<float> b = ref.to_float_vector();
    float max_ref = 0, max_diff = 0;
    size_t worst = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      max_ref = std::max(max_ref, std::fabs(b[i]));
      const float d = std::fabs(a[i] - b[i]);
      if (!(d <= max_diff)) {  // also catches NaN
        max_diff = std::isnan(d) ? INFINITY : d;
        worst = i;
      }
    }
    const float tol = 1e-4f * std::max(1.0f, max_ref);
    EXPECT_LE(max_diff, tol) << c.model << "/" << c.name << how << " output '" << ref_info.name
                             << "': max |diff| " << max_diff << " at element " << worst << " (tern "
                             << a[worst] << ", ORT " << b[worst] << ")";
    char diff_text[32];
    std::snprintf(diff_text, sizeof diff_text, "%.2e", max_diff);
    // One test may check several cases and runs (the --tune one): the property names
    // each, so that none overwrites another.
    std::string property = c.model + "_" + c.name + how + "_" + ref_info.name + "_max_abs_diff";
    for (char& ch : property)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    ::testing::Test::RecordProperty(property, diff_text);
  }
}

// (case index, pass index): pass index -1 runs with every pass on, k with pass k off.
using CaseAndPass = std::tuple<size_t, int>;

class ReferenceModelTest : public ::testing::TestWithParam<CaseAndPass> {};

TEST_P(ReferenceModelTest, MatchesOnnxRuntime) {
  const auto [case_index, pass_index] = GetParam();
  const test::ReferenceCase& c = all_cases()[case_index];
  // TERN_TEST_MAX_PIXELS may cap the cases run (unset: all of them).
  if (c.input_pixels > test::max_test_pixels()) {
    GTEST_SKIP() << "input larger than TERN_TEST_MAX_PIXELS";
  }
  const std::string pass = pass_index < 0 ? "" : passes::pass_names()[pass_index];
  std::vector<NamedTensor> outputs = run_case(c, 0, pass);
  expect_matches(c, outputs, pass.empty() ? std::string() : " (pass " + pass + " off)");
}

std::string case_name(const ::testing::TestParamInfo<CaseAndPass>& info) {
  const auto [case_index, pass_index] = info.param;
  const auto& c = all_cases()[case_index];
  std::string s = c.model + "_" + c.name;
  if (pass_index >= 0) s += "_without_" + passes::pass_names()[pass_index];
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

std::vector<CaseAndPass> case_indices() {
  std::vector<CaseAndPass> idx;
  const int num_passes = static_cast<int>(passes::pass_names().size());
  for (int pass = -1; pass < num_passes; ++pass) {
    for (size_t i = 0; i < all_cases().size(); ++i) {
      // The sweep is instantiated only for the inputs it covers (no wall of skips).
      if (pass >= 0 && all_cases()[i].input_pixels > pass_sweep_max_pixels()) continue;
      idx.emplace_back(i, pass);
    }
  }
  return idx;
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ReferenceModelTest, ::testing::ValuesIn(case_indices()),
                         case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReferenceModelTest);

TEST(ReferenceModels, FolderIsPresent) {
  if (all_cases().empty()) {
    // CI (CI=true) must not pass without running the models; a developer without
    // ../shared gets a skip.
    const char* ci = std::getenv("CI");
    ASSERT_FALSE(ci && std::string(ci) == "true") << "no models at " << test::models_dir();
    GTEST_SKIP() << "no models at " << test::models_dir();
  }
  EXPECT_GE(all_cases().size(), 15u);
}

// With --tune (SessionOptions::tune: the kernels each layer measures fastest here, a
// fresh cache shared by the cases) every case still matches, and again with every cached
// choice turned to the candidate that lost: each kernel --tune may pick instead of the
// heuristic's (dot, pointwise, direct, winograd), on the weight layouts pack-weights gives
// it, runs on these models whichever this machine measures faster. On 8- and 16-lane
// targets the dot kernel is among the measured candidates (the detection heads). The
// cases the pass sweep covers (none in the sanitizer and qemu runs).
TEST(ReferenceModels, TunedPlansMatchOnnxRuntime) {
  const test::ScratchDir dir("models_tune");
  const std::string cache = dir.file("tune.json");
  // Runs every case with --tune; counts the cases run, the layers measured and those
  // whose choice came from the cache.
  struct Counts {
    int cases = 0, measured = 0, cached = 0;
  };
  auto run_all = [&](const std::string& how) {
    Counts n;
    for (const auto& c : all_cases()) {
      if (c.input_pixels > pass_sweep_max_pixels()) continue;
      SCOPED_TRACE(c.model + "/" + c.name + how);
      std::vector<NamedTensor> feeds;
      std::map<std::string, Shape> shapes;
      for (const auto& in : c.inputs) {
        feeds.push_back({in.name, test::read_raw_f32(in.file, in.shape)});
        EXPECT_TRUE(feeds.back().tensor.defined()) << "cannot read " << in.file;
        shapes[in.name] = in.shape;
      }
      ++n.cases;
      SessionOptions opt;
      opt.num_threads = 1;
      opt.verify_passes = true;
      opt.tune = true;
      opt.tune_cache = cache;
      try {
        Session session(c.model_path.string(), opt);
        expect_matches(c, session.run(feeds), how);
        const PlanInfo info = session.plan_info(shapes);
        EXPECT_EQ(info.tune_warning, "");
        n.measured += info.tuned_measured;
        n.cached += info.tuned_cached;
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.model << "/" << c.name << how << ": " << e.what();
      }
    }
    return n;
  };
  const Counts first = run_all(" (--tune)");
  if (first.cases == 0) GTEST_SKIP() << "no case within TERN_TEST_PASS_SWEEP_MAX_PIXELS";
  if (cpu_info().best_target == "SCALAR") return;  // no layer has candidates there
  // Every SIMD target has candidates in these models (direct or winograd at least).
  ASSERT_GT(first.measured, 0);
  nlohmann::json file;
  {
    std::ifstream in(cache);
    file = nlohmann::json::parse(in, nullptr, false);
  }
  ASSERT_FALSE(file.is_discarded()) << cache;
  int dot = 0;
  for (auto& [key, entry] : file["entries"].items()) {
    ASSERT_TRUE(entry.contains("ms") && entry["ms"].size() >= 2) << key;
    if (entry["ms"].contains("dot")) ++dot;
    // The slowest candidate that was not chosen (with 2, the other one, also on a tie).
    const std::string chosen = entry["algorithm"];
    std::string slowest;
    double slowest_ms = -1;
    for (auto& [algorithm, ms] : entry["ms"].items()) {
      if (algorithm != chosen && ms.get<double>() > slowest_ms) {
        slowest = algorithm;
        slowest_ms = ms.get<double>();
      }
    }
    entry["algorithm"] = slowest;
  }
  if (simd_float_lanes() >= 8) {
    EXPECT_GT(dot, 0) << "no head measured as dot";
  }
  std::ofstream(cache) << file.dump(2);
  const Counts second = run_all(" (--tune, the slower choices)");
  EXPECT_EQ(second.measured, 0);
  EXPECT_EQ(second.cached, first.measured + first.cached);
}

// One and two threads must give the same result bit for bit: threads split an op's
// outputs (channel blocks, rows, regions; ops/parallel.h), never a sum. Skipped where
// TERN_NUM_THREADS_LIMIT caps the pool at one thread (arm64 under qemu): both runs would
// be 1-thread runs.
TEST(ReferenceModels, ThreadCountDoesNotChangeResults) {
  if (thread_limit() < 2) GTEST_SKIP() << "TERN_NUM_THREADS_LIMIT caps the pool at 1 thread";
  for (const auto& c : all_cases()) {
    if (c.model != "retinaface_mnet025" || c.name != "faces13_320x320") continue;
    auto one = run_case(c, 1);
    auto two = run_case(c, 2);
    ASSERT_EQ(one.size(), two.size());
    for (size_t k = 0; k < one.size(); ++k) {
      EXPECT_EQ(one[k].tensor.to_float_vector(), two[k].tensor.to_float_vector())
          << one[k].name;
    }
    return;
  }
  GTEST_SKIP() << "retinaface_mnet025/faces13_320x320 not found";
}

}  // namespace
}  // namespace tern
