// Google Benchmark microbenchmarks of tern's pooling on the real layer shapes of the
// models in ../shared/models (see model_layers.h): every distinct MaxPool / AveragePool
// of the compiled plans (on NCHWc these are the 3-D windows that kernels/pool computes;
// a global pool is the window of the whole plane) runs through its op as the plan runs
// it. Pooling does one operation per loaded value, so its counters are about memory:
// GB/s = (input + output bytes) / time, and roof% = GB/s / the measured streaming
// bandwidth at the benchmark's thread count (`tern roofline`, cached; above 100 when the
// layer's data stays in the caches, as most pooling layers' do).
//
//   build/release/bench/pool_bench [--threads N] [--benchmark_filter=squeezenet] ...
// $TERN_MODELS_DIR overrides ../shared/models.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <set>
#include <string>

#include "model_layers.h"
#include "tern/roofline.h"

namespace {

using namespace tern;
using namespace tern::bench;

int g_threads = 1;
double g_bandwidth = 0;  // GB/s

int register_layers(const std::string& dir) {
  std::set<std::string> seen;
  int count = 0;
  for (const CompiledModel& cm : compile_bench_models(dir, g_threads)) {
    const auto& p = cm.program;
    for (size_t n = 0; n < p->graph.nodes.size(); ++n) {
      const ir::Node& node = p->graph.nodes[n];
      if (node.op_type != "MaxPool" && node.op_type != "AveragePool") continue;
      const ops::TensorType& in = *p->types[node.inputs[0]];
      const ops::TensorType& out = *p->types[node.outputs[0]];
      const std::string key = fmt::format(
          "{}/x{}/y{}/k{}/s{}/p{}/i{}", node.op_type, shape_str(in.shape), shape_str(out.shape),
          attr_str(node, "kernel_shape"), attr_str(node, "strides"), attr_str(node, "pads"),
          attr_str(node, "count_include_pad"));
      if (!seen.insert(key).second) continue;
      const double bytes = 4.0 * static_cast<double>(shape_numel(in.shape) + shape_numel(out.shape));
      const std::string name = fmt::format("{}/{}@{}x{}:{}", node.op_type, cm.model.file,
                                           cm.model.shape[2], cm.model.shape[3], node.name);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [p, n, bytes](benchmark::State& s) {
                                     run_node_loop(s, *p, static_cast<int>(n), g_threads);
                                     s.counters["GB/s"] = benchmark::Counter(
                                         bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
                                     s.counters["roof%"] = benchmark::Counter(
                                         bytes * 1e-9 * 100.0 / g_bandwidth,
                                         benchmark::Counter::kIsIterationInvariantRate);
                                   })
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.05);
      ++count;
    }
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchSetup setup = init_layer_bench(argc, argv);
  g_threads = setup.threads;
  g_bandwidth = load_or_measure_roofline().at(g_threads).bandwidth;
  benchmark::AddCustomContext("bandwidth GB/s (tern roofline)", fmt::format("{:.1f}", g_bandwidth));
  if (register_layers(setup.models_dir) == 0) {
    fmt::print(stderr, "no pooling layers in the models found in {} (set TERN_MODELS_DIR)\n",
               setup.models_dir);
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
