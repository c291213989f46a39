// What the layer microbenchmarks (conv_bench, op_bench) share: the models of
// ../shared/models at their reference input sizes, compiled by tern's pass pipeline, and
// a loop that runs one node's op exactly as the plan runs it (same layouts, packed
// weights, kernel), on random inputs.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/program.h"
#include "tern/tensor.h"

namespace tern::bench {

/// A model file of ../shared/models (or, when `cached`, of the repository's
/// .cache/models, where bench/compare.py exports ResNet-18) and its NCHW input shape.
struct ModelCase {
  const char* file;
  Shape shape;
  bool cached = false;
};

/// The reference sizes of the shared models (RetinaFace at 320x320 and 640x640; not its
/// 212x320 case, nor UltraFace's _nopost files, whose convolutions are those of the files
/// without the suffix), and ResNet-18 at 224x224 once bench/compare.py has exported it.
const std::vector<ModelCase>& bench_models();

/// Options every layer benchmark takes: --threads N (ours, removed from argv before
/// Google Benchmark parses the rest) and $TERN_MODELS_DIR (default ../shared/models).
struct BenchSetup {
  int threads = 1;
  std::string models_dir;
};

/// Parses --threads, initialises Google Benchmark with the remaining arguments and adds the
/// thread count and SIMD target to its context.
BenchSetup init_layer_bench(int argc, char** argv);

/// Google Benchmark's display reporter (--benchmark_format, --benchmark_color... as usual)
/// that first calls `before_context` when the benchmarks are about to run: the layer
/// benchmarks load the roofline there (`tern roofline`'s cache, measured when absent) and
/// add it to the context. Google Benchmark reports no context for --benchmark_list_tests,
/// so listing measures nothing: a roofline measured while a build loads the machine would
/// be cached low.
class LayerReporter : public benchmark::BenchmarkReporter {
 public:
  explicit LayerReporter(std::function<void()> before_context);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  std::function<void()> before_context_;
  benchmark::BenchmarkReporter* display_;  // Google Benchmark's, never freed (as in its main)
};

/// The program of `graph` at NCHW input `shape`, compiled by the pipeline with the passes
/// in `disabled` switched off, for `threads` threads. Throws tern::Error as the pipeline does.
std::shared_ptr<passes::Program> compile_model(const ir::Graph& graph, const Shape& shape,
                                               const std::vector<std::string>& disabled,
                                               int threads);

/// One of bench_models() loaded and compiled with every pass on.
struct CompiledModel {
  ModelCase model;
  ir::Graph graph;
  std::shared_ptr<passes::Program> program;
};

/// bench_models() found in `dir` (cached ones in the repository's .cache/models), each
/// compiled for `threads` threads; a model that fails to load is skipped with a message on
/// stderr.
std::vector<CompiledModel> compile_bench_models(const std::string& dir, int threads);

/// The attribute `name` of n as text: its int, its string, or its ints joined by "x"; ""
/// if absent.
std::string attr_str(const ir::Node& n, const char* name);

/// The index of the node named `name` in p's graph, or -1.
int node_named(const passes::Program& p, const std::string& name);

/// Runs node `node` of p once per benchmark iteration as a plan runs it: its op's bound
/// call (Op::bind) where the op has one, else run() (inputs: the plan's constants, and
/// uniform [-1, 1) floats for the rest; one preallocated output).
void run_node_loop(benchmark::State& state, const passes::Program& p, int node, int threads);

}  // namespace tern::bench
