// `tern bench MODEL [--shape ...] [--threads N] [--runs N] [--warmup N]`: time a model on
// random inputs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "cli_util.h"
#include "commands.h"
#include "kernels/reference/elementwise.h"
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

int run_bench(const BenchOptions& opt) {
  const std::map<std::string, Shape> given = parse_shape_args(opt.shapes);
  SessionOptions options;
  options.num_threads = opt.threads;
  options.disabled_passes = opt.disabled_passes;
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
  sub->add_option("-n,--runs", opt->runs, "Timed runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("-w,--warmup", opt->warmup,
                  "Untimed runs first (at least 1 is always done: it builds the plan)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  return {sub, [opt] { return run_bench(*opt); }};
}

}  // namespace tern::cli
