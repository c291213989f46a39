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

#include "base/cpu.h"
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
  r.l2_bytes = 1000;
  r.l3_bytes = 64000;
  // DRAM 10, L3 30 and L2 50 GB/s per thread.
  for (int t = 1; t <= cores; ++t)
    r.points.push_back({t, gflops_per_thread * t, 10.0 * t, 50.0 * t, 30.0 * t});
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

// The bandwidth is that of the level a layer's bytes fit in: the threads' L2 caches
// (1000 bytes each), the L3 set (8 L2 caches per thread, at most half the L3), else DRAM;
// DRAM also for unknown bytes (0) and for an entry without cache figures.
TEST(Roofline, BandwidthOfTheLevelTheBytesFitIn) {
  Roofline r = fake_roofline(100.0);
  EXPECT_TRUE(r.has_cache_figures());
  EXPECT_EQ(r.l2_set_bytes(1), 500);
  EXPECT_EQ(r.l2_set_bytes(2), 1000);
  EXPECT_EQ(r.l2_set_bytes(7), 1000);  // clamped to the points
  EXPECT_EQ(r.l2_level_bytes(1), 1000);
  EXPECT_EQ(r.l2_level_bytes(2), 2000);
  EXPECT_EQ(r.l3_set_bytes(1), 8000);
  EXPECT_EQ(r.l3_set_bytes(2), 16000);
  EXPECT_EQ(r.levels_text(2),
            "L2 up to 0.00 MB 100.0 GB/s, L3 up to 0.02 MB 60.0 GB/s, DRAM 20.0 GB/s");
  struct Case {
    int64_t bytes;
    int threads;
    MemoryLevel level;
    double gbps;
  };
  for (const Case& c :
       {Case{1, 1, MemoryLevel::kL2, 50}, Case{1000, 1, MemoryLevel::kL2, 50},
        Case{1001, 1, MemoryLevel::kL3, 30}, Case{2000, 2, MemoryLevel::kL2, 100},
        Case{8000, 1, MemoryLevel::kL3, 30}, Case{8001, 1, MemoryLevel::kDram, 10},
        Case{16000, 2, MemoryLevel::kL3, 60}, Case{16001, 2, MemoryLevel::kDram, 20},
        Case{0, 1, MemoryLevel::kDram, 10}, Case{-5, 2, MemoryLevel::kDram, 20}}) {
    EXPECT_EQ(r.memory_level(c.bytes, c.threads), c.level) << c.bytes << " bytes";
    EXPECT_DOUBLE_EQ(r.bandwidth_gbps(c.bytes, c.threads), c.gbps) << c.bytes << " bytes";
  }
  EXPECT_STREQ(memory_level_name(MemoryLevel::kL2), "L2");
  EXPECT_STREQ(memory_level_name(MemoryLevel::kL3), "L3");
  EXPECT_STREQ(memory_level_name(MemoryLevel::kDram), "DRAM");
  // 2 FLOP/B from L2 at 1 thread: min(100, 2 * 50); from DRAM: 2 * 10.
  EXPECT_DOUBLE_EQ(r.bound_gflops(2.0, 1, 600), 100.0);
  EXPECT_DOUBLE_EQ(r.bound_gflops(1.0, 1, 600), 50.0);
  EXPECT_DOUBLE_EQ(r.bound_gflops(1.0, 1, 5000), 30.0);
  EXPECT_DOUBLE_EQ(r.bound_gflops(1.0, 1, 100000), 10.0);
  // The L3 set stops at half the L3 the OS reports.
  r.l3_bytes = 10000;
  EXPECT_EQ(r.l3_set_bytes(2), 5000);
  EXPECT_EQ(r.memory_level(5001, 2), MemoryLevel::kDram);
  r.l3_bytes = 0;  // none reported: 8 L2 caches per thread
  EXPECT_EQ(r.l3_set_bytes(2), 16000);
  // At least 2 L2 caches per thread (past the L2s), at most 64 MiB.
  r.l3_bytes = 4000;
  EXPECT_EQ(r.l3_set_bytes(2), 4000);
  r.l3_bytes = 0;
  r.l2_bytes = int64_t{16} << 20;
  EXPECT_EQ(r.l3_set_bytes(2), kRooflineMaxL3SetBytes);
  r.l2_bytes = 1000;
  // A cache level is never slower than the levels beyond it (figures of different times).
  r.points[0].l2_bandwidth = 5.0;
  r.points[0].l3_bandwidth = 8.0;
  EXPECT_DOUBLE_EQ(r.bandwidth_gbps(600, 1), 10.0);   // L2: max(5, 8, DRAM 10)
  EXPECT_DOUBLE_EQ(r.bandwidth_gbps(5000, 1), 10.0);  // L3: max(8, 10)
  r.points[0].l3_bandwidth = 30.0;
  EXPECT_DOUBLE_EQ(r.bandwidth_gbps(600, 1), 30.0);
  r.points[0].l2_bandwidth = 50.0;
  // Without cache figures (an older tern's entry), DRAM for every size.
  r.points[1].l3_bandwidth = 0;
  EXPECT_FALSE(r.has_cache_figures());
  EXPECT_EQ(r.levels_text(1), "DRAM 10.0 GB/s");
  EXPECT_EQ(r.memory_level(100, 1), MemoryLevel::kDram);
  EXPECT_DOUBLE_EQ(r.bound_gflops(1.0, 1, 100), 10.0);

  // Threads are clamped to the points, as at() does, not to num_cores.
  Roofline few = fake_roofline(100.0);
  few.num_cores = 4;
  EXPECT_EQ(few.clamped_threads(9), 2);
  EXPECT_EQ(few.l2_set_bytes(4), 1000);
  EXPECT_EQ(few.memory_level(2000, 4), MemoryLevel::kL2);
  EXPECT_EQ(few.memory_level(2001, 4), MemoryLevel::kL3);
  few.points.clear();  // before any point: num_cores
  EXPECT_EQ(few.clamped_threads(9), 4);
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
  EXPECT_EQ(out.l2_bytes, in.l2_bytes);
  EXPECT_EQ(out.l3_bytes, in.l3_bytes);
  ASSERT_EQ(out.points.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out.points[i].threads, in.points[i].threads);
    EXPECT_DOUBLE_EQ(out.points[i].gflops, in.points[i].gflops);
    EXPECT_DOUBLE_EQ(out.points[i].bandwidth, in.points[i].bandwidth);
    EXPECT_DOUBLE_EQ(out.points[i].l2_bandwidth, in.points[i].l2_bandwidth);
    EXPECT_DOUBLE_EQ(out.points[i].l3_bandwidth, in.points[i].l3_bandwidth);
  }
  EXPECT_TRUE(out.has_cache_figures());
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
  const std::string good_entry = nlohmann::json{{"version", 1},
                                                {"entries",
                                                 {{"k",
                                                   {{"cpu_model", "x"},
                                                    {"target", "AVX2"},
                                                    {"num_cores", 1},
                                                    {"measured_at", "t"},
                                                    {"quick", false},
                                                    {"repetitions", 3},
                                                    {"stream_bytes", 100},
                                                    {"l2_bytes", 1000},
                                                    {"l3_bytes", 0},
                                                    {"points",
                                                     {{{"threads", 1},
                                                       {"gflops", 1.0},
                                                       {"bandwidth_gbps", 2.0},
                                                       {"l2_bandwidth_gbps", 7.0},
                                                       {"l3_bandwidth_gbps", 5.0}}}}}}}}}
                                     .dump();
  test::write_bytes(path, good_entry);
  ASSERT_TRUE(read_roofline_cache(path, "k", &out));  // the base case is fine
  EXPECT_TRUE(out.has_cache_figures());
  struct Case {
    std::string text, message;
  };
  std::string mistyped = good_entry, missing = good_entry, negative = good_entry,
              no_l3 = good_entry, negative_l2 = good_entry, zero_l2_bytes = good_entry;
  mistyped.replace(mistyped.find("\"AVX2\""), 6, "7");
  missing.replace(missing.find("\"quick\""), 7, "\"quack\"");
  negative.replace(negative.find("2.0"), 3, "-2.0");
  // With l2_bytes, every cache figure must be there and positive.
  no_l3.replace(no_l3.find("\"l3_bandwidth_gbps\""), 19, "\"l4_bandwidth_gbps\"");
  negative_l2.replace(negative_l2.find("7.0"), 3, "-7.0");
  zero_l2_bytes.replace(zero_l2_bytes.find("1000"), 4, "0");
  for (const Case& c :
       {Case{"{\"version\": 1, \"entries\": {", "not valid JSON"}, Case{"", "not valid JSON"},
        Case{"[1, 2]", "\"version\": 1"},
        Case{"{\"version\": 99, \"entries\": {}}", "version 99, this tern reads 1"},
        Case{"{\"version\": \"1\", \"entries\": {}}", "\"version\": 1"},
        Case{"{\"version\": 1, \"entries\": []}", "\"version\": 1"},
        Case{mistyped, "field 'target' has the wrong type"}, Case{missing, "has no field 'quick'"},
        Case{negative, "positive gflops, bandwidth_gbps"},
        Case{no_l3, "no field 'l3_bandwidth_gbps'"},
        Case{negative_l2, "l2_bandwidth_gbps and l3_bandwidth_gbps"},
        Case{zero_l2_bytes, "l2_bytes must be positive"}}) {
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

// An entry an older tern wrote has no cache figures: read as such (not corrupt); the
// next load measures them, and keeps its peak and DRAM figures where those measured now
// are far below them (a busy machine), with a warning.
TEST(RooflineCache, OlderEntryWithoutCacheFiguresIsMeasuredAgain) {
  test::ScratchDir dir("roofline");
  RooflineOptions options;
  options.quick = true;
  options.cache_path = dir.file("roofline.json");
  Roofline fake = fake_roofline(98765.0);
  for (RooflinePoint& p : fake.points) p.bandwidth = 1e9;  // far above any machine's
  nlohmann::json points = nlohmann::json::array();
  for (const RooflinePoint& p : fake.points)
    points.push_back(
        {{"threads", p.threads}, {"gflops", p.gflops}, {"bandwidth_gbps", p.bandwidth}});
  const nlohmann::json file = {{"version", 1},
                               {"entries",
                                {{roofline_cache_key(),
                                  {{"cpu_model", fake.cpu_model},
                                   {"target", fake.target},
                                   {"num_cores", fake.num_cores},
                                   {"measured_at", fake.measured_at},
                                   {"quick", true},
                                   {"repetitions", 3},
                                   {"stream_bytes", fake.stream_bytes},
                                   {"points", points}}}}}};
  test::write_bytes(options.cache_path, file.dump());
  Roofline old;
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &old));
  EXPECT_FALSE(old.has_cache_figures());
  EXPECT_EQ(old.l2_bytes, 0);
  EXPECT_DOUBLE_EQ(old.points[0].gflops, 98765.0);
  EXPECT_DOUBLE_EQ(old.points[0].l2_bandwidth, 0.0);

  RooflineSource source;
  const Roofline r = load_or_measure_roofline(options, &source);  // not forced
  EXPECT_FALSE(source.from_cache);
  EXPECT_TRUE(r.has_cache_figures());
  // The peak and DRAM bandwidth measured now are far below the fake ones, which stay.
  EXPECT_DOUBLE_EQ(r.points[0].gflops, 98765.0);
  EXPECT_DOUBLE_EQ(r.points[1].bandwidth, 1e9);
  EXPECT_THAT(source.warning, HasSubstr("kept figures an older tern cached"));
  EXPECT_THAT(source.warning, HasSubstr("the peak at 1 thread (98765.0 GFLOP/s against"));
  EXPECT_THAT(source.warning, HasSubstr("the DRAM bandwidth at 2 threads (1000000000.0 GB/s"));
  Roofline stored;
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
  EXPECT_TRUE(stored.has_cache_figures());
  EXPECT_DOUBLE_EQ(stored.points[0].gflops, 98765.0);
  EXPECT_DOUBLE_EQ(stored.points[0].l2_bandwidth, r.points[0].l2_bandwidth);
  // Now it is read from the cache.
  load_or_measure_roofline(options, &source);
  EXPECT_TRUE(source.from_cache);
  EXPECT_TRUE(source.warning.empty());

  // An older full measurement stays as it is against a quick one (not replaced).
  nlohmann::json full = file;
  full["entries"][roofline_cache_key()]["quick"] = false;
  test::write_bytes(options.cache_path, full.dump());
  const Roofline kept = load_or_measure_roofline(options, &source);
  EXPECT_TRUE(source.from_cache);
  EXPECT_FALSE(kept.quick);
  EXPECT_FALSE(kept.has_cache_figures());
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
  EXPECT_FALSE(stored.has_cache_figures());
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
  EXPECT_THAT(source.warning, HasSubstr("GFLOP/s against 98765.0, measured"));
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

  // So are they when only a cache bandwidth is far below the cached one.
  Roofline l2 = fake_roofline(1e-6);
  for (RooflinePoint& p : l2.points) {
    p.bandwidth = p.l3_bandwidth = 1e-6;
    p.l2_bandwidth = 1e12;
  }
  write_roofline_cache(options.cache_path, roofline_cache_key(), l2);
  r = load_or_measure_roofline(options, &source);
  EXPECT_TRUE(source.from_cache);
  EXPECT_DOUBLE_EQ(r.points[0].l2_bandwidth, 1e12);
  EXPECT_THAT(source.warning, HasSubstr("the L2 bandwidth re-measured at 1 thread is far below"));

  // Cached figures below the new ones are replaced.
  Roofline low = fake_roofline(1e-6);
  for (RooflinePoint& p : low.points) p.bandwidth = p.l2_bandwidth = p.l3_bandwidth = 1e-6;
  write_roofline_cache(options.cache_path, roofline_cache_key(), low);
  r = load_or_measure_roofline(options, &source);
  EXPECT_FALSE(source.from_cache);
  EXPECT_TRUE(source.warning.empty());
  EXPECT_GT(r.points[0].gflops, 1e-6);
  ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
  EXPECT_DOUBLE_EQ(stored.points[0].gflops, r.points[0].gflops);
}

// A corrupt file, and one another tern wrote (another version), are measured again with
// a warning that says which, and replaced.
TEST(RooflineCache, CorruptCacheIsRemeasuredWithAWarning) {
  for (const auto& [text, message] :
       {std::pair<std::string, std::string>{"{ this is not json", "corrupt"},
        {"{\"version\": 99, \"entries\": {}}", "written by another tern: version 99"}}) {
    SCOPED_TRACE(text);
    test::ScratchDir dir("roofline");
    RooflineOptions options;
    options.quick = true;
    options.cache_path = dir.file("roofline.json");
    test::write_bytes(options.cache_path, text);
    RooflineSource source;
    const Roofline r = load_or_measure_roofline(options, &source);
    EXPECT_FALSE(source.from_cache);
    EXPECT_THAT(source.warning, HasSubstr(message));
    EXPECT_THAT(source.warning, HasSubstr("re-measured"));
    Roofline stored;
    ASSERT_TRUE(read_roofline_cache(options.cache_path, roofline_cache_key(), &stored));
    EXPECT_EQ(stored.points.size(), r.points.size());
  }
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
    EXPECT_GT(p.l2_bandwidth, 0.01);
    EXPECT_LT(p.l2_bandwidth, 1e5);
    EXPECT_GT(p.l3_bandwidth, 0.01);
    EXPECT_LT(p.l3_bandwidth, 1e5);
  }
  EXPECT_EQ(r.l2_bytes, l2_cache_bytes());
  EXPECT_EQ(r.l3_bytes, l3_cache_bytes());
  EXPECT_LE(r.l3_set_bytes(r.num_cores), kRooflineMaxL3SetBytes);
  EXPECT_TRUE(r.has_cache_figures());
}

}  // namespace
}  // namespace tern
