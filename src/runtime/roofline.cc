// The roofline measurement (tern/roofline.h): an FMA throughput kernel and a streaming
// triad, both written once with Highway and dispatched at run time, plus the JSON cache.

// Highway compiles the code between HWY_BEFORE_NAMESPACE and HWY_AFTER_NAMESPACE once per
// target by re-including this file (foreach_target.h); the rest is compiled once.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/roofline.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tern::runtime {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Floats per vector on this target.
int64_t RooflineFloatLanes() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

// `iterations` rounds of acc = acc * m + a on 12 independent vector accumulators; returns
// their sum so the work cannot be dropped. 12 chains: a core with 2 FMA units of 4 cycles
// latency (Skylake-SP and later) needs 2 x 4 = 8 FMAs in flight to keep both busy, and 12
// leaves slack for the loop counter while fitting AVX2's 16 registers (12 accumulators +
// m + a). m < 1 keeps every value near 1 (the fixed point a / (1 - m)): no overflow, no
// denormals. One iteration is 12 * lanes FMAs = 24 * lanes FLOP.
HWY_NOINLINE float RooflineFmaChains(int64_t iterations) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 0.999f);
  const auto a = hn::Set(d, 0.001f);
  auto x0 = hn::Set(d, 0.10f), x1 = hn::Set(d, 0.11f), x2 = hn::Set(d, 0.12f);
  auto x3 = hn::Set(d, 0.13f), x4 = hn::Set(d, 0.14f), x5 = hn::Set(d, 0.15f);
  auto x6 = hn::Set(d, 0.16f), x7 = hn::Set(d, 0.17f), x8 = hn::Set(d, 0.18f);
  auto x9 = hn::Set(d, 0.19f), x10 = hn::Set(d, 0.20f), x11 = hn::Set(d, 0.21f);
  for (int64_t i = 0; i < iterations; ++i) {
    x0 = hn::MulAdd(x0, m, a);
    x1 = hn::MulAdd(x1, m, a);
    x2 = hn::MulAdd(x2, m, a);
    x3 = hn::MulAdd(x3, m, a);
    x4 = hn::MulAdd(x4, m, a);
    x5 = hn::MulAdd(x5, m, a);
    x6 = hn::MulAdd(x6, m, a);
    x7 = hn::MulAdd(x7, m, a);
    x8 = hn::MulAdd(x8, m, a);
    x9 = hn::MulAdd(x9, m, a);
    x10 = hn::MulAdd(x10, m, a);
    x11 = hn::MulAdd(x11, m, a);
  }
  const auto sum = hn::Add(
      hn::Add(hn::Add(hn::Add(x0, x1), hn::Add(x2, x3)), hn::Add(hn::Add(x4, x5), hn::Add(x6, x7))),
      hn::Add(hn::Add(x8, x9), hn::Add(x10, x11)));
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// a[i] = b[i] + s * c[i] for i in [0, n): the STREAM triad.
HWY_NOINLINE void RooflineTriad(float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                                const float* HWY_RESTRICT c, float s, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vs = hn::Set(d, s);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::MulAdd(hn::LoadU(d, c + i), vs, hn::LoadU(d, b + i)), d, a + i);
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace HWY_NAMESPACE
}  // namespace tern::runtime
HWY_AFTER_NAMESPACE();

#if HWY_ONCE


#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/cpu.h"
#include "base/json_cache.h"
#include "base/thread_pool.h"
#include "hwy/aligned_allocator.h"
#include "tern/roofline.h"

namespace tern {
namespace runtime {

HWY_EXPORT(RooflineFloatLanes);
HWY_EXPORT(RooflineFmaChains);
HWY_EXPORT(RooflineTriad);

// The dispatched kernels, called from this namespace: with a single compiled target
// (arm64: NEON) HWY_DYNAMIC_DISPATCH names the target's namespace unqualified.
int64_t float_lanes() { return HWY_DYNAMIC_DISPATCH(RooflineFloatLanes)(); }
float fma_chains(int64_t iterations) { return HWY_DYNAMIC_DISPATCH(RooflineFmaChains)(iterations); }
void triad(float* a, const float* b, const float* c, float s, int64_t n) {
  HWY_DYNAMIC_DISPATCH(RooflineTriad)(a, b, c, s, n);
}

}  // namespace runtime

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kCacheVersion = 1;

// Where the FMA kernel's results go, so the compiler cannot drop the calls.
volatile float g_roofline_sink = 0;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One run of the FMA kernel on `threads` threads, `iterations` each: GFLOP/s.
double fma_gflops(int threads, int64_t iterations, int64_t lanes, float* sink) {
  std::atomic<int> team{1};
  std::vector<float> totals(threads, 0.0f);
  const auto start = Clock::now();
  parallel_run(threads, [&](int t, int nt) {
    totals[t] = runtime::fma_chains(iterations);
    if (t == 0) team = nt;  // fewer than asked under TERN_NUM_THREADS_LIMIT
  });
  const double s = seconds_since(start);
  for (float v : totals) *sink += v;
  const double flop = 24.0 * double(lanes) * double(iterations) * team;
  return flop / s / 1e9;
}

// `passes` triads over n floats per array on `threads` threads (each its own contiguous
// part every pass, the same parts that first touched the pages, so that a part that fits
// a thread's caches stays there): GB/s at 12 bytes per element.
double triad_gbps(int threads, float* a, const float* b, const float* c, int64_t n,
                  int64_t passes = 1) {
  const auto start = Clock::now();
  parallel_run(threads, [&](int64_t t, int64_t team) {
    const int64_t begin = n * t / team, end = n * (t + 1) / team;
    for (int64_t k = 0; k < passes; ++k)
      runtime::triad(a + begin, b + begin, c + begin, 3.0f, end - begin);
  });
  const double s = seconds_since(start);
  return 12.0 * double(n) * double(passes) / s / 1e9;
}

// The median GB/s of `repetitions` runs of `passes` triads over n floats per array (after
// one warm-up run, which also brings a cache-sized set into the caches).
double median_triad_gbps(int threads, float* a, const float* b, const float* c, int64_t n,
                         int64_t passes, int repetitions) {
  triad_gbps(threads, a, b, c, n, passes);
  std::vector<double> bw;
  for (int k = 0; k < repetitions; ++k) bw.push_back(triad_gbps(threads, a, b, c, n, passes));
  return median(bw);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json to_json(const Roofline& r) {
  json points = json::array();
  for (const RooflinePoint& p : r.points)
    points.push_back({{"threads", p.threads},
                      {"gflops", p.gflops},
                      {"bandwidth_gbps", p.bandwidth},
                      {"l2_bandwidth_gbps", p.l2_bandwidth},
                      {"l3_bandwidth_gbps", p.l3_bandwidth}});
  return {{"cpu_model", r.cpu_model},
          {"target", r.target},
          {"num_cores", r.num_cores},
          {"measured_at", r.measured_at},
          {"quick", r.quick},
          {"repetitions", r.repetitions},
          {"stream_bytes", r.stream_bytes},
          {"l2_bytes", r.l2_bytes},
          {"l3_bytes", r.l3_bytes},
          {"points", points}};
}

// Field `name` of `j` as T; throws IOError naming the file, key and field when missing or
// mistyped.
template <typename T>
T field(const json& j, const char* name, const std::string& path, const std::string& key) {
  auto it = j.find(name);
  TERN_CHECK(it != j.end(), IOError, "roofline cache '{}': entry '{}' has no field '{}'", path, key,
             name);
  const bool ok = std::is_same_v<T, std::string> ? it->is_string()
                  : std::is_same_v<T, bool>      ? it->is_boolean()
                  : std::is_integral_v<T>        ? it->is_number_integer()
                                                 : it->is_number();
  TERN_CHECK(ok, IOError, "roofline cache '{}': entry '{}': field '{}' has the wrong type ({})",
             path, key, name, it->type_name());
  return it->get<T>();
}

Roofline from_json(const json& j, const std::string& path, const std::string& key) {
  TERN_CHECK(j.is_object(), IOError, "roofline cache '{}': entry '{}' is not an object", path, key);
  Roofline r;
  r.cpu_model = field<std::string>(j, "cpu_model", path, key);
  r.target = field<std::string>(j, "target", path, key);
  r.num_cores = field<int>(j, "num_cores", path, key);
  r.measured_at = field<std::string>(j, "measured_at", path, key);
  r.quick = field<bool>(j, "quick", path, key);
  r.repetitions = field<int>(j, "repetitions", path, key);
  r.stream_bytes = field<int64_t>(j, "stream_bytes", path, key);
  // The cache figures: absent from an entry of an older tern (has_cache_figures() is
  // false then); present, all of them, in a newer one.
  const bool cache_figures = j.contains("l2_bytes");
  if (cache_figures) {
    r.l2_bytes = field<int64_t>(j, "l2_bytes", path, key);
    r.l3_bytes = field<int64_t>(j, "l3_bytes", path, key);
    TERN_CHECK(r.l2_bytes > 0 && r.l3_bytes >= 0, IOError,
               "roofline cache '{}': entry '{}': l2_bytes must be positive and l3_bytes at least "
               "0 (got {} and {})",
               path, key, r.l2_bytes, r.l3_bytes);
  }
  auto pts = j.find("points");
  TERN_CHECK(pts != j.end() && pts->is_array(), IOError,
             "roofline cache '{}': entry '{}' has no array 'points'", path, key);
  TERN_CHECK(r.num_cores >= 1 && static_cast<int64_t>(pts->size()) == r.num_cores, IOError,
             "roofline cache '{}': entry '{}': expected one point per thread count 1..{}, but "
             "got {}",
             path, key, r.num_cores, pts->size());
  for (const json& p : *pts) {
    RooflinePoint point;
    point.threads = field<int>(p, "threads", path, key);
    point.gflops = field<double>(p, "gflops", path, key);
    point.bandwidth = field<double>(p, "bandwidth_gbps", path, key);
    if (cache_figures) {
      point.l2_bandwidth = field<double>(p, "l2_bandwidth_gbps", path, key);
      point.l3_bandwidth = field<double>(p, "l3_bandwidth_gbps", path, key);
    }
    TERN_CHECK(point.threads == static_cast<int>(r.points.size()) + 1 && point.gflops > 0 &&
                   point.bandwidth > 0 &&
                   (!cache_figures || (point.l2_bandwidth > 0 && point.l3_bandwidth > 0)),
               IOError,
               "roofline cache '{}': entry '{}': point {} must have threads = {} and positive "
               "gflops, bandwidth_gbps, l2_bandwidth_gbps and l3_bandwidth_gbps (got threads {}, "
               "{} GFLOP/s, {}, {} and {} GB/s)",
               path, key, r.points.size(), r.points.size() + 1, point.threads, point.gflops,
               point.bandwidth, point.l2_bandwidth, point.l3_bandwidth);
    r.points.push_back(point);
  }
  return r;
}

// The roofline cache file at `path`.
JsonCacheFile cache_file(const std::string& path) {
  return JsonCacheFile{path, kCacheVersion, "roofline cache",
                       "`tern roofline --measure` replaces it"};
}

}  // namespace

const RooflinePoint& Roofline::at(int threads) const {
  TERN_CHECK(!points.empty(), InvalidArgument, "the roofline has no measured points");
  const int i = std::clamp(threads, 1, static_cast<int>(points.size())) - 1;
  return points[i];
}

bool Roofline::has_cache_figures() const {
  if (l2_bytes <= 0 || points.empty()) return false;
  for (const RooflinePoint& p : points)
    if (p.l2_bandwidth <= 0 || p.l3_bandwidth <= 0) return false;
  return true;
}

const char* memory_level_name(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kL2:
      return "L2";
    case MemoryLevel::kL3:
      return "L3";
    case MemoryLevel::kDram:
      break;
  }
  return "DRAM";
}

int Roofline::clamped_threads(int threads) const {
  const int most = points.empty() ? num_cores : static_cast<int>(points.size());
  return std::clamp(threads, 1, std::max(most, 1));
}

int64_t Roofline::l2_set_bytes(int threads) const {
  return l2_bytes / 2 * clamped_threads(threads);
}

int64_t Roofline::l2_level_bytes(int threads) const { return l2_bytes * clamped_threads(threads); }

int64_t Roofline::l3_set_bytes(int threads) const {
  const int64_t l2_total = l2_level_bytes(threads);
  int64_t set = 8 * l2_total;
  if (l3_bytes > 0) set = std::min(set, l3_bytes / 2);
  return std::min(std::max(set, 2 * l2_total), kRooflineMaxL3SetBytes);
}

MemoryLevel Roofline::memory_level(int64_t bytes, int threads) const {
  if (bytes <= 0 || !has_cache_figures()) return MemoryLevel::kDram;
  if (bytes <= l2_level_bytes(threads)) return MemoryLevel::kL2;
  if (bytes <= l3_set_bytes(threads)) return MemoryLevel::kL3;
  return MemoryLevel::kDram;
}

double Roofline::bandwidth_gbps(int64_t bytes, int threads) const {
  const RooflinePoint& p = at(threads);
  // A level is never slower than the ones beyond it (figures measured at different
  // times, one of them on a busy machine, may say otherwise).
  const double l3 = std::max(p.l3_bandwidth, p.bandwidth);
  switch (memory_level(bytes, threads)) {
    case MemoryLevel::kL2:
      return std::max(p.l2_bandwidth, l3);
    case MemoryLevel::kL3:
      return l3;
    case MemoryLevel::kDram:
      break;
  }
  return p.bandwidth;
}

std::string Roofline::levels_text(int threads) const {
  const RooflinePoint& p = at(threads);
  if (!has_cache_figures()) return fmt::format("DRAM {:.1f} GB/s", p.bandwidth);
  return fmt::format(
      "L2 up to {:.2f} MB {:.1f} GB/s, L3 up to {:.2f} MB {:.1f} GB/s, DRAM {:.1f} GB/s",
      static_cast<double>(l2_level_bytes(threads)) / 1e6, p.l2_bandwidth,
      static_cast<double>(l3_set_bytes(threads)) / 1e6, p.l3_bandwidth, p.bandwidth);
}

double Roofline::bound_gflops(double flop_per_byte, int threads, int64_t bytes) const {
  return std::min(at(threads).gflops, flop_per_byte * bandwidth_gbps(bytes, threads));
}

Roofline measure_roofline(const RooflineOptions& options) {
  const CpuInfo cpu = cpu_info();
  Roofline r;
  r.cpu_model = cpu.model;
  r.target = cpu.best_target;
  r.num_cores = cpu.num_cores;
  r.measured_at = utc_now();
  r.quick = options.quick;
  r.repetitions = options.repetitions > 0 ? options.repetitions : options.quick ? 3 : 7;
  r.stream_bytes = options.quick ? int64_t{32} << 20 : int64_t{256} << 20;
  r.l2_bytes = l2_cache_bytes();
  r.l3_bytes = l3_cache_bytes();

  // FMA: double the iterations until one single-thread run takes the target time, then
  // use that count for every thread count (each thread does the same work).
  const int64_t lanes = runtime::float_lanes();
  const double target_s = options.quick ? 0.002 : 0.05;
  float sink = 0;
  int64_t iterations = 1024;
  for (;;) {
    const auto start = Clock::now();
    fma_gflops(1, iterations, lanes, &sink);
    if (seconds_since(start) >= target_s || iterations >= (int64_t{1} << 40)) break;
    iterations *= 2;
  }

  // Triad arrays, first touched by the threads that stream them (the 1-thread runs then
  // read pages touched by all threads: no NUMA effect on one socket). The L2 and L3
  // triads take the first n floats of each (as large as the largest cache set).
  const int64_t n =
      std::max({r.stream_bytes, r.l2_set_bytes(r.num_cores), r.l3_set_bytes(r.num_cores)}) / 12;
  hwy::AlignedFreeUniquePtr<float[]> a = hwy::AllocateAligned<float>(n);
  hwy::AlignedFreeUniquePtr<float[]> b = hwy::AllocateAligned<float>(n);
  hwy::AlignedFreeUniquePtr<float[]> c = hwy::AllocateAligned<float>(n);
  if (!a || !b || !c) throw std::bad_alloc();
  parallel_run(r.num_cores, [&](int64_t t, int64_t team) {
    for (int64_t i = n * t / team; i < n * (t + 1) / team; ++i) {
      a[i] = 0.0f;
      b[i] = 1.0f;
      c[i] = 2.0f;
    }
  });

  for (int t = 1; t <= r.num_cores; ++t) {
    RooflinePoint p;
    p.threads = t;
    std::vector<double> flops;
    fma_gflops(t, iterations / 4 + 1, lanes, &sink);  // warm-up: wake the threads
    for (int k = 0; k < r.repetitions; ++k)
      flops.push_back(fma_gflops(t, iterations, lanes, &sink));
    p.gflops = median(flops);
    p.bandwidth =
        median_triad_gbps(t, a.get(), b.get(), c.get(), r.stream_bytes / 12, 1, r.repetitions);
    // The cache sets: as many passes as stream the DRAM triad's bytes (a quarter in quick
    // mode), so that each run lasts about as long.
    const auto cache_gbps = [&](int64_t set) {
      const int64_t passes = std::max<int64_t>(
          1, r.stream_bytes / (options.quick ? 4 : 1) / std::max<int64_t>(set, 1));
      return median_triad_gbps(t, a.get(), b.get(), c.get(), set / 12, passes, r.repetitions);
    };
    p.l2_bandwidth = cache_gbps(r.l2_set_bytes(t));
    p.l3_bandwidth = cache_gbps(r.l3_set_bytes(t));
    r.points.push_back(p);
  }
  g_roofline_sink = sink;  // the FMA results stay observable
  return r;
}

std::string roofline_cache_path() { return tern_cache_path("roofline.json"); }

std::string roofline_cache_key() {
  const CpuInfo cpu = cpu_info();
  return fmt::format("{}|{}|{}", cpu.model.empty() ? "unknown CPU" : cpu.model, cpu.best_target,
                     cpu.num_cores);
}

bool read_roofline_cache(const std::string& path, const std::string& key, Roofline* out) {
  const json file = read_json_cache(cache_file(path));
  if (file.is_null()) return false;
  auto it = file["entries"].find(key);
  if (it == file["entries"].end()) return false;
  *out = from_json(*it, path, key);
  return true;
}

void write_roofline_cache(const std::string& path, const std::string& key,
                          const Roofline& roofline) {
  write_json_cache_entry(cache_file(path), key, to_json(roofline));
}

Roofline load_or_measure_roofline(const RooflineOptions& options, RooflineSource* source) {
  RooflineSource local;
  RooflineSource& src = source ? *source : local;
  src = RooflineSource{};
  src.cache_path = options.cache_path.empty() ? roofline_cache_path() : options.cache_path;
  const std::string key = roofline_cache_key();
  Roofline cached;
  bool have_cached = false;
  if (!src.cache_path.empty()) {
    try {
      have_cached = read_roofline_cache(src.cache_path, key, &cached);
      // An entry of an older tern has no cache bandwidths: measured again (below).
      if (have_cached && !options.force && cached.has_cache_figures()) {
        src.from_cache = true;
        return cached;
      }
    } catch (const IOError& e) {
      src.warning = fmt::format("{}; re-measured", e.what());
    }
  }
  Roofline r = measure_roofline(options);
  if (have_cached && !cached.has_cache_figures() && r.quick && !cached.quick) {
    // An older tern's full measurement against a quick one: the careful figures stay,
    // without cache bandwidths (DRAM bounds every layer, as before), and are not replaced.
    src.from_cache = true;
    return cached;
  }
  if (have_cached && r.quick == cached.quick && !cached.has_cache_figures()) {
    // An older tern's entry (no cache bandwidths): the new one has the cache bandwidths
    // measured now, and each of its peak and DRAM figures far below the cached one (a busy
    // machine, as below) takes the cached one instead.
    std::vector<std::string> kept;
    for (size_t i = 0; i < r.points.size() && i < cached.points.size(); ++i) {
      RooflinePoint &now = r.points[i], &before = cached.points[i];
      const char* s = now.threads == 1 ? "" : "s";
      if (now.gflops < kRooflineDropFraction * before.gflops) {
        kept.push_back(fmt::format("the peak at {} thread{} ({:.1f} GFLOP/s against {:.1f} now)",
                                   now.threads, s, before.gflops, now.gflops));
        now.gflops = before.gflops;
      }
      if (now.bandwidth < kRooflineDropFraction * before.bandwidth) {
        kept.push_back(
            fmt::format("the DRAM bandwidth at {} thread{} ({:.1f} GB/s against {:.1f} now)",
                        now.threads, s, before.bandwidth, now.bandwidth));
        now.bandwidth = before.bandwidth;
      }
    }
    if (!kept.empty()) {
      src.warning += fmt::format(
          "{}kept figures an older tern cached (measured {}) that are far above those measured "
          "now: {}; is the machine busy? The cache bandwidths measured now may be low too "
          "(delete {} to measure them all again)",
          src.warning.empty() ? "" : "; ", cached.measured_at, fmt::join(kept, ", "),
          src.cache_path);
    }
  } else if (have_cached && r.quick == cached.quick) {
    // A figure far below the cached one (measured the same way: quick figures are rough)
    // means a busy machine, not a slower one: keep the cached figures (a slow-phase measurement in
    // a shared VM read 95 GFLOP/s against 173, and every later --per-layer and conv_bench
    // percentage used it).
    for (size_t i = 0; i < r.points.size() && i < cached.points.size(); ++i) {
      const RooflinePoint &now = r.points[i], &before = cached.points[i];
      struct Figure {
        const char* what;
        double now, before;
        const char* unit;
      };
      const Figure figures[] = {{"peak", now.gflops, before.gflops, "GFLOP/s"},
                                {"DRAM bandwidth", now.bandwidth, before.bandwidth, "GB/s"},
                                {"L2 bandwidth", now.l2_bandwidth, before.l2_bandwidth, "GB/s"},
                                {"L3 bandwidth", now.l3_bandwidth, before.l3_bandwidth, "GB/s"}};
      for (const Figure& f : figures) {
        if (!(f.now < kRooflineDropFraction * f.before)) continue;
        src.warning += fmt::format(
            "{}the {} re-measured at {} thread{} is far below the cached one ({:.1f} {} against "
            "{:.1f}, measured {}): is the machine busy? Kept the cached figures (delete {} to "
            "replace them)",
            src.warning.empty() ? "" : "; ", f.what, now.threads, now.threads == 1 ? "" : "s",
            f.now, f.unit, f.before, cached.measured_at, src.cache_path);
        src.from_cache = true;
        return cached;
      }
    }
  }
  if (!src.cache_path.empty()) {
    try {
      write_roofline_cache(src.cache_path, key, r);
    } catch (const IOError& e) {
      src.warning +=
          fmt::format("{}could not write the cache: {}", src.warning.empty() ? "" : "; ", e.what());
    }
  }
  return r;
}

}  // namespace tern

#endif  // HWY_ONCE
