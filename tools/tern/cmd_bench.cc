// `tern bench MODEL [--shape ...] [--threads N] [--runs N] [--warmup N] [--per-layer]
// [--trace FILE]`: time a model on random inputs; per layer against the roofline.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "cli_util.h"
#include "commands.h"
#include "kernels/reference/elementwise.h"
#include "tern/profile.h"
#include "tern/roofline.h"
#include "tern/session.h"

namespace tern::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::vector<std::string> shapes;
  int threads = 0;
  int runs = 10;
  int warmup = 2;
  std::vector<std::string> disabled_passes;
  bool per_layer = false;
  std::string trace;
  bool tune = false;
};

constexpr uint32_t kSeed = 20240601;

// A tensor of `shape` with uniform [0, 1) values for the float dtypes; integer and bool
// inputs are zeros (a safe index or flag for any model).
Tensor random_tensor(DType dtype, const Shape& shape, std::mt19937& rng) {
  Tensor t = Tensor::zeros(dtype, shape);
  if (!is_floating(dtype)) return t;
  Tensor values = Tensor::empty(DType::kFloat32, shape);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  float* p = values.data<float>();
  for (int64_t i = 0; i < values.numel(); ++i) p[i] = uniform(rng);
  kernels::ref::cast(values.numel(), DType::kFloat32, p, 1, dtype, t.raw_data());
  return t;
}

// Nearest-rank percentile of sorted values (p in (0, 100]).
double percentile(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// "[1, 16, 80, 80]", plus " +N" when the node has N more outputs.
std::string output_shape(const LayerInfo& layer) {
  if (layer.output_shapes.empty()) return "?";
  std::string s = shape_str(layer.output_shapes.front());
  if (layer.output_shapes.size() > 1) s += fmt::format(" +{}", layer.output_shapes.size() - 1);
  return s;
}

// The --per-layer table: one row per plan step and a total row.
void print_layer_table(const Profile& profile, const Roofline& roofline) {
  std::vector<std::vector<std::string>> rows = {{"#", "name", "op", "algorithm", "output", "ms",
                                                 "GFLOP", "GFLOP/s", "MB", "FLOP/B", "%roof",
                                                 "roof"}};
  const auto row = [&](const std::string& index, const std::string& name, const std::string& op,
                       const std::string& algorithm, const std::string& shape, int64_t macs,
                       int64_t bytes, double ms) {
    const LayerStats s = layer_stats(macs, bytes, ms, &roofline, profile.num_threads);
    const bool flop = macs > 0;
    rows.push_back({index, name, op, algorithm, shape, fmt::format("{:.3f}", ms),
                    flop ? fmt::format("{:.4f}", s.gflop) : "-",
                    flop ? fmt::format("{:.2f}", s.gflops) : "-",
                    fmt::format("{:.2f}", static_cast<double>(bytes) / 1e6),
                    flop && bytes > 0 ? fmt::format("{:.2f}", s.intensity) : "-",
                    s.bound_gflops > 0 ? fmt::format("{:.1f}", s.roofline_pct) : "-",
                    s.bound.empty() ? "-" : s.bound});
  };
  int64_t macs = 0, bytes = 0;
  double ms = 0;
  for (size_t i = 0; i < profile.layers.size(); ++i) {
    const LayerProfile& l = profile.layers[i];
    row(std::to_string(i + 1), l.layer.name, l.layer.op_type, l.layer.algorithm,
        output_shape(l.layer), l.layer.macs, l.layer.bytes, l.median_ms);
    macs += l.layer.macs;
    bytes += l.layer.bytes;
    ms += l.median_ms;
  }
  row("", "total", "", "", "", macs, bytes, ms);
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t c = 0; c < rows[k].size(); ++c) {
      const bool text = (c >= 1 && c <= 4) || c == 11;  // left-aligned columns
      line += text ? fmt::format("{:<{}}", rows[k][c], width[c])
                   : fmt::format("{:>{}}", rows[k][c], width[c]);
      line += c + 1 < rows[k].size() ? "  " : "";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
  }
  fmt::print("sum of layer medians {:.3f} ms, median profiled run {:.3f} ms\n", ms,
             profile.median_run_ms);
}

// --per-layer / --trace: profile `runs` runs, print the table, write the trace.
void profile_layers(const BenchOptions& opt, Session& session,
                    const std::vector<NamedTensor>& feeds) {
  const Profile profile = session.profile(feeds, opt.runs);
  if (opt.per_layer) {
    RooflineSource source;
    const Roofline roofline = load_or_measure_roofline({}, &source);
    if (!source.warning.empty()) fmt::print(stderr, "tern: warning: {}\n", source.warning);
    const RooflinePoint& p = roofline.at(profile.num_threads);
    std::string from = source.from_cache ? fmt::format("cached in {}", source.cache_path)
                                         : std::string("measured now");
    if (!source.from_cache && !source.cache_path.empty())
      from = fmt::format("{}, cached in {}", from, source.cache_path);
    if (roofline.quick) from = fmt::format("{}, quick mode", from);
    fmt::print(
        "\nper layer: medians of {} profiled runs; MB = 1e6 bytes of inputs, weights and "
        "outputs; %roof = GFLOP/s / min({:.1f} GFLOP/s, FLOP/B x the bandwidth of the level "
        "the MB fit in: {}) at {} thread{}, roof = the ceiling that bounds the layer (roofline "
        "{})\n",
        opt.runs, p.gflops, roofline.levels_text(p.threads), p.threads, p.threads == 1 ? "" : "s",
        from);
    print_layer_table(profile, roofline);
  }
  if (!opt.trace.empty()) {
    write_text_file(opt.trace, chrome_trace_json(profile));
    fmt::print(
        "wrote a Chrome trace of {} runs x {} steps to {} (chrome://tracing, "
        "ui.perfetto.dev)\n",
        profile.runs.size(), profile.layers.size(), opt.trace);
  }
}

int run_bench(const BenchOptions& opt) {
  const std::map<std::string, Shape> given = parse_shape_args(opt.shapes);
  SessionOptions options;
  options.num_threads = opt.threads;
  options.disabled_passes = opt.disabled_passes;
  options.tune = opt.tune;
  Session session(opt.model, options);
  const std::map<std::string, Shape> shapes = resolve_input_shapes(session, given, true);

  std::mt19937 rng(kSeed);
  std::vector<NamedTensor> feeds;
  fmt::print("model:   {}\n", opt.model);
  for (const TensorInfo& in : session.inputs()) {
    const Shape& shape = shapes.at(in.name);
    feeds.push_back({in.name, random_tensor(in.dtype, shape, rng)});
    const bool real = in.dtype == DType::kFloat32 || in.dtype == DType::kFloat16;
    fmt::print("input:   {} {} {} ({})\n", in.name, dtype_name(in.dtype), shape_str(shape),
               real ? fmt::format("uniform [0, 1), seed {}", kSeed) : "zeros");
  }
  fmt::print("threads: {}\n", session.num_threads());

  const auto t0 = std::chrono::steady_clock::now();
  session.run(feeds);  // plans for these shapes: not part of the timings
  const double first_ms = ms_since(t0);
  for (int i = 1; i < opt.warmup; ++i) session.run(feeds);
  std::vector<double> times;
  for (int i = 0; i < opt.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    session.run(feeds);
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());
  fmt::print("runs:    {} timed after {} warm-up (first run, with planning: {:.2f} ms)\n", opt.runs,
             std::max(opt.warmup, 1), first_ms);
  fmt::print("median:  {:.3f} ms\n", percentile(times, 50));
  fmt::print("min:     {:.3f} ms\n", times.front());
  fmt::print("p90:     {:.3f} ms\n", percentile(times, 90));
  const double peak = peak_memory_mb();
  if (peak >= 0) {
    fmt::print("peak memory: {:.1f} MB (VmHWM)\n", peak);
  } else {
    fmt::print("peak memory: unavailable (no VmHWM in /proc/self/status)\n");
  }
  const PlanInfo plan = session.plan_info(shapes);
  const double mb = 1024.0 * 1024.0;
  fmt::print(
      "plan:    {} nodes ({} in the model), arena {:.2f} MB (intermediates {:.2f} MB), weights "
      "{:.2f} MB (packed {:.2f} MB)\n",
      plan.nodes_after, plan.nodes_before, plan.arena_bytes / mb, plan.intermediate_bytes / mb,
      plan.weight_bytes / mb, plan.packed_weight_bytes / mb);
  print_winograd("winograd: ", plan);
  print_tuning("tuned:   ", plan);
  if (opt.per_layer || !opt.trace.empty()) profile_layers(opt, session, feeds);
  return 0;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto opt = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Time a model on random inputs: median, min and p90 latency in ms, and peak memory");
  sub->add_option("MODEL", opt->model, "ONNX model file")->required();
  sub->add_option("--shape", opt->shapes,
                  "Shape of an input, NAME=DIMS such as input=1x3x320x320 (repeatable; needed "
                  "for inputs with symbolic dims)")
      ->allow_extra_args(false);
  sub->add_option("-t,--threads", opt->threads, "Threads (0 = one per core)")
      ->check(CLI::Range(0, 1024));
  add_disable_pass_option(*sub, opt->disabled_passes);
  add_tune_option(*sub, opt->tune);
  sub->add_option("-n,--runs", opt->runs, "Timed runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("-w,--warmup", opt->warmup,
                  "Untimed runs first (at least 1 is always done: it builds the plan)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  sub->add_flag("--per-layer", opt->per_layer,
                "Then run --runs more times timing every plan step, and print a table per "
                "layer: ms, GFLOP, GFLOP/s, bytes, FLOP/byte and % of the roofline bound (see "
                "`tern roofline`)");
  sub->add_option("--trace", opt->trace,
                  "Write the per-step timings of those runs as a Chrome trace (JSON for "
                  "chrome://tracing or ui.perfetto.dev) to this file");
  return {sub, [opt] { return run_bench(*opt); }};
}

}  // namespace tern::cli
