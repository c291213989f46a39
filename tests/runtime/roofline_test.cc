// The roofline (tern/roofline.h): the bound, the JSON cache (round trip, keys, corrupt
// files) and a quick measurement.
#include "tern/roofline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "support/test_env.h"
#include "tern/status.h"

namespace tern {
namespace {

using ::testing::HasSubstr;

// A roofline with made-up figures, easy to recognise.
Roofline fake_roofline(double gflops_per_thread, int cores = 2) {
  Roofline r;
  r.cpu_model = "Test CPU";
  r.target = "AVX3";
  r.num_cores = cores;
  r.measured_at = "2026-01-02T03:04:05Z";
  r.quick = true;
  r.repetitions = 3;
  r.stream_bytes = 1 << 20;
  for (int t = 1; t <= cores; ++t) r.points.push_back({t, gflops_per_thread * t, 10.0 * t});
  return r;
}

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(Roofline, BoundIsTheLowerRoof) {
  const Roofline r = fake_roofline(100.0);           // 1 thread: 100 GFLOP/s, 10 GB/s
  EXPECT_DOUBLE_EQ(r.bound_gflops(1.0, 1), 10.0);    // memory bound
  EXPECT_DOUBLE_EQ(r.bound_gflops(50.0, 1), 100.0);  // compute bound
  EXPECT_DOUBLE_EQ(r.bound_gflops(5.0, 2), 100.0);   // 2 threads: min(200, 5 * 20)
  EXPECT_EQ(r.at(0).threads, 1);                     // clamped to 1..num_cores
  EXPECT_EQ(r.at(9).threads, 2);
  EXPECT_THROW(Roofline().at(1), InvalidArgument);
}

TEST(RooflineCache, WriteThenReadGivesTheSameFigures) {
  test::ScratchDir dir("roofline");
  const std::string path = dir.file("sub/dir/roofline.json");  // folders are created
  const Roofline in = fake_roofline(123.5);
  write_roofline_cache(path, "key", in);
  Roofline out;
  ASSERT_TRUE(read_roofline_cache(path, "key", &out));
  EXPECT_EQ(out.cpu_model, in.cpu_model);
  EXPECT_EQ(out.target, in.target);
  EXPECT_EQ(out.num_cores, in.num_cores);
  EXPECT_EQ(out.measured_at, in.measured_at);
  EXPECT_EQ(out.quick, in.quick);
  EXPECT_EQ(out.repetitions, in.repetitions);
  EXPECT_EQ(out.stream_bytes, in.stream_bytes);
  ASSERT_EQ(out.points.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out.points[i].threads, in.points[i].threads);
    EXPECT_DOUBLE_EQ(out.points[i].gflops, in.points[i].gflops);
    EXPECT_DOUBLE_EQ(out.points[i].bandwidth, in.points[i].bandwidth);
  }
}

TEST(RooflineCache, EntriesAreKeptPerKey) {
  test::ScratchDir dir("roofline");
  const std::string path = dir.file("roofline.json");
  Roofline out;
  EXPECT_FALSE(read_roofline_cache(path, "a", &out));  // no file yet
  write_roofline_cache(path, "a", fake_roofline(1.0));
  write_roofline_cache(path, "b", fake_roofline(2.0, 3));
  ASSERT_TRUE(read_roofline_cache(path, "a", &out));
  EXPECT_DOUBLE_EQ(out.points[0].gflops, 1.0);
  ASSERT_TRUE(read_roofline_cache(path, "b", &out));
  EXPECT_DOUBLE_EQ(out.points[0].gflops, 2.0);
  EXPECT_EQ(out.points.size(), 3u);
  EXPECT_FALSE(read_roofline_cache(path, "c", &out));
  write_roofline_cache(path, "a", fake_roofline(5.0));  // replaces a, keeps b
  ASSERT_TRUE(read_roofline_cache(path, "a", &out));
  EXPECT_DOUBLE_EQ(out.points[0].gflops, 5.0);
  EXPECT_TRUE(read_roofline_cache(path, "b", &out));
}

TEST(RooflineCache, KeyNamesCpuTargetAndCores) {
  const std::string key = roofline_cache_key();
  // "model|target|cores": three fields, the last a number >= 1.
  const size_t a = key.rfind('|'), b = key.rfind('|', a - 1);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_GE(std::stoi(key.substr(a + 1)), 1);
  EXPECT_FALSE(key.substr(b + 1, a - b - 1).empty());
}

TEST(RooflineCache, CorruptFileIsAnIOErrorNamingIt) {
  test::ScratchDir dir("roofline");
  const std::string path = dir.file("roofline.json");
  Roofline out;
  const std::string good_entry =
      nlohmann::json{
          {"version", 1},
          {"entries",
           {{"k",
             {{"cpu_model", "x"},
              {"target", "AVX2"},
              {"num_cores", 1},
              {"measured_at", "t"},
              {"quick", false},
              {"repetitions", 3},
              {"stream_bytes", 100},
              {"points", {{{"threads", 1}, {"gflops", 1.0}, {"bandwidth_gbps", 2.0}}}}}}}}}
          .dump();
  test::write_bytes(path, good_entry);
  ASSERT_TRUE(read_roofline_cache(path, "k", &out));  // the base case is fine
  struct Case {
    std::string text, message;
  };
  std::string mistyped = good_entry, missing = good_entry, negative = good_entry;
  mistyped.replace(mistyped.find("\"AVX2\""), 6, "7");
  missing.replace(missing.find("\"quick\""), 7, "\"quack\"");
  negative.replace(negative.find("2.0"), 3, "-2.0");
  for (const Case& c :
       {Case{"{\"version\": 1, \"entries\": {", "not valid JSON"}, Case{"", "not valid JSON"},
        Case{"[1, 2]", "\"version\": 1"},
        Case{"{\"version\": 99, \"entries\": {}}", "\"version\": 1"},
        Case{"{\"version\": \"1\", \"entries\": {}}", "\"version\": 1"},
        Case{"{\"version\": 1, \"entries\": []}", "\"version\": 1"},
        Case{mistyped, "field 'target' has the wrong type"}, Case{missing, "has no field 'quick'"},
        Case{negative, "positive gflops and bandwidth_gbps"}}) {
    test::write_bytes(path, c.text);
    try {
      read_roofline_cache(path, "k", &out);
      ADD_FAILURE() << "no error for: " << c.text;
    } catch (const IOError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path)) << c.text;
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.text;
    }
  }
}

TEST(RooflineCache, PathFollowsXdgCacheHomeThenHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(roofline_cache_path(), "/x/cache/tern/roofline.json");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(roofline_cache_path(), "/home/u/.cache/tern/roofline.json");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(roofline_cache_path(), "");
  }
}

TEST(RooflineCache, LoadOrMeasureReadsTheCacheAndForceMeasures) {
  test::ScratchDir dir("roofline");
  RooflineOptions options;
  options.quick = true;
  options.cache_path = dir.file("roofline.json");
  Roofline fake = fake_roofline(98765.0);
  write_roofline_cache(options.cache_path, roofline_cache_key(), fake);
  RooflineSource source;
  Roofline r = load_or_measure_roofline(options, &source);
  EXPECT_TRUE(source.from_cache);
  EXPECT_EQ(source.cache_path, options.cache_path);
  EXPECT_TRUE(source.warning.empty());
  EXPECT_DOUBLE_EQ(r.points[0].gflops, 98765.0);

  // Re-measured: far below the cached figures (a busy machine), which stay.
  options.force = true;
  r = load_or_measure_roofline(options, &source);
  EXPECT_TRUE(source.from_cache);
  EXPECT_DOUBLE_EQ(r.points[0].gflops, 98765.0);
  EXPECT_THAT(source.warning, HasSubstr("the peak re-measured at 1 thread is far below"));
  EXPECT_THAT(source.warning, HasSubstr("against 98765.0 and 10.0"));
  EXPECT_THAT(source.warning, HasSubstr(options.cache_path));
  Roofline stored;
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
  EXPECT_DOUBLE_EQ(stored.points[0].gflops, 98765.0);

  // Against an entry measured the other way (not quick), nothing is compared.
  Roofline full = fake_roofline(98765.0);
  full.quick = false;
  write_roofline_cache(options.cache_path, roofline_cache_key(), full);
  r = load_or_measure_roofline(options, &source);
  EXPECT_FALSE(source.from_cache);
  EXPECT_TRUE(source.warning.empty());
  EXPECT_TRUE(r.quick);

  // Cached figures below the new ones are replaced.
  Roofline low = fake_roofline(1e-6);
  for (RooflinePoint& p : low.points) p.bandwidth = 1e-6;
  write_roofline_cache(options.cache_path, roofline_cache_key(), low);
  r = load_or_measure_roofline(options, &source);
  EXPECT_FALSE(source.from_cache);
  EXPECT_TRUE(source.warning.empty());
  EXPECT_GT(r.points[0].gflops, 1e-6);
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
  EXPECT_DOUBLE_EQ(stored.points[0].gflops, r.points[0].gflops);
}

TEST(RooflineCache, CorruptCacheIsRemeasuredWithAWarning) {
  test::ScratchDir dir("roofline");
  RooflineOptions options;
  options.quick = true;
  options.cache_path = dir.file("roofline.json");
  test::write_bytes(options.cache_path, "{ this is not json");
  RooflineSource source;
  const Roofline r = load_or_measure_roofline(options, &source);
  EXPECT_FALSE(source.from_cache);
  EXPECT_THAT(source.warning, HasSubstr("corrupt"));
  EXPECT_THAT(source.warning, HasSubstr("re-measured"));
  Roofline stored;
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
  EXPECT_EQ(stored.points.size(), r.points.size());
}

TEST(RooflineMeasure, QuickMeasurementCoversEveryThreadCount) {
  RooflineOptions options;
  options.quick = true;
  const Roofline r = measure_roofline(options);
  EXPECT_TRUE(r.quick);
  EXPECT_EQ(r.repetitions, 3);
  EXPECT_FALSE(r.target.empty());
  ASSERT_EQ(static_cast<int>(r.points.size()), r.num_cores);
  for (int t = 1; t <= r.num_cores; ++t) {
    const RooflinePoint& p = r.points[t - 1];
    EXPECT_EQ(p.threads, t);
    // Any CPU tern runs on (even under qemu) does > 0.01 GFLOP/s and > 0.01 GB/s; a
    // broken timer or FLOP count gives 0, inf or nan.
    EXPECT_GT(p.gflops, 0.01);
    EXPECT_LT(p.gflops, 1e6);
    EXPECT_GT(p.bandwidth, 0.01);
    EXPECT_LT(p.bandwidth, 1e5);
  }
}

}  // namespace
}  // namespace tern
