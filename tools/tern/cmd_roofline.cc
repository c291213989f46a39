// `tern roofline [--measure] [--quick] [--cache FILE]`: this machine's peak FP32 FMA
// throughput and memory bandwidth per thread count, cached (tern/roofline.h).
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "tern/roofline.h"

namespace tern::cli {
namespace {

struct RooflineCliOptions {
  bool measure = false;
  bool quick = false;
  std::string cache;
};

int run_roofline(const RooflineCliOptions& opt) {
  RooflineOptions options;
  options.force = opt.measure;
  options.quick = opt.quick;
  options.cache_path = opt.cache;
  RooflineSource source;
  const Roofline r = load_or_measure_roofline(options, &source);
  if (!source.warning.empty()) fmt::print(stderr, "tern: warning: {}\n", source.warning);

  fmt::print("cpu:     {} ({} cores), Highway target {}\n",
             r.cpu_model.empty() ? "unknown" : r.cpu_model, r.num_cores, r.target);
  const std::string how = fmt::format(
      "{}, medians of {} repetitions{}", r.measured_at, r.repetitions,
      r.quick ? ", quick mode: rough figures (`tern roofline --measure` for real ones)" : "");
  if (source.cache_path.empty()) {
    fmt::print("source:  measured now ({}); not cached (neither XDG_CACHE_HOME nor HOME is set)\n",
               how);
  } else {
    fmt::print("source:  {} {} ({})\n", source.from_cache ? "cached in" : "measured now, cached in",
               source.cache_path, how);
  }
  fmt::print("{:>7}  {:>12}  {:>11}  {:>11}  {:>11}  {:>15}\n", "threads", "peak GFLOP/s",
             "L2 GB/s", "L3 GB/s", "DRAM GB/s", "ridge FLOP/byte");
  for (const RooflinePoint& p : r.points) {
    fmt::print("{:>7}  {:>12.1f}  {:>11.1f}  {:>11.1f}  {:>11.1f}  {:>15.1f}\n", p.threads,
               p.gflops, p.l2_bandwidth, p.l3_bandwidth, p.bandwidth, p.gflops / p.bandwidth);
  }
  const int t = static_cast<int>(r.points.size());
  fmt::print(
      "GB/s of a streaming triad (12 bytes per element) over: L2 {:.2f} MB (half of each "
      "thread's {:.2f} MB L2), L3 {:.2f} MB at 1 thread and {:.2f} MB at {}, DRAM {:.0f} MB; "
      "ridge = the DRAM ridge point, peak / DRAM GB/s. `tern bench --per-layer` bounds a layer "
      "by the level its bytes fit in: the threads' L2 caches, the L3 set, or DRAM\n",
      static_cast<double>(r.l2_set_bytes(1)) / 1e6, static_cast<double>(r.l2_bytes) / 1e6,
      static_cast<double>(r.l3_set_bytes(1)) / 1e6, static_cast<double>(r.l3_set_bytes(t)) / 1e6, t,
      static_cast<double>(r.stream_bytes) / 1e6);
  return 0;
}

}  // namespace

Command add_roofline(CLI::App& app) {
  auto opt = std::make_shared<RooflineCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "roofline",
      "This machine's peak FP32 FMA GFLOP/s and memory bandwidth (GB/s) per thread count, "
      "measured once and cached");
  sub->add_flag("--measure", opt->measure,
                "Measure again even if the cache has the figures (a figure more than 20 % below "
                "the cached one keeps the cached figures, with a warning)");
  sub->add_flag("--quick", opt->quick,
                "Measure in quick mode (small buffers, short runs: rough figures, for tests)");
  sub->add_option("--cache", opt->cache,
                  "Cache file (default: $XDG_CACHE_HOME/tern/roofline.json, else "
                  "~/.cache/tern/roofline.json)");
  return {sub, [opt] { return run_roofline(*opt); }};
}

}  // namespace tern::cli
