// Google Benchmark microbenchmarks of tern's ops other than convolution on the real layer
// shapes of the models in ../shared/models (see model_layers.h): every distinct node of
// the compiled plans that conv_bench does not cover (FusedConv, ConvChain) and that does
// work (not a view: Reshape, Flatten) runs through its op as the plan runs it, on the
// plan's layouts. Pooling (kernels/pool), Softmax (kernels/softmax), Exp and Sigmoid
// (kernels/unary), Add, Sub, Mul and Div (kernels/binary), Gemm and MatMul (kernels/gemm),
// and the NCHWc elementwise, Concat,
// Resize, Slice, Split and Reorder of ops/ each show up under their op type. Each runs
// on buffers of its own, out of place: a Concat whose inputs the plan has their producers
// write into its output (the pass concat-slices) is left out when that holds for every
// input (it copies nothing), and copies all its inputs here otherwise.
// These ops do one or a few operations per loaded value, so the counters are about
// memory: GB/s = (input + output bytes, constants included; a Slice's whole input) /
// time, and roof% = GB/s / the measured streaming bandwidth (`tern roofline`, cached) of
// the memory level those bytes fit in at the benchmark's thread count
// (Roofline::memory_level: L2, L3 or DRAM, the benchmark's label). Ops that report
// multiply-accumulates (Op::macs: Gemm, MatMul) add GFLOP/s.
//
//   build/release/bench/op_bench [--threads N] [--benchmark_filter='^\w*Pool/'] ...
// $TERN_MODELS_DIR overrides ../shared/models.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "model_layers.h"
#include "tern/roofline.h"

namespace {

using namespace tern;
using namespace tern::bench;

int g_threads = 1;
Roofline g_roofline;  // this machine's, cached

// Whether node n of p is one for this benchmark: an op conv_bench leaves out, that the plan
// runs (its outputs are not known at plan time), that writes its outputs (no views, no
// Concat of slices only), and whose inputs random_inputs can make (constants, or float32
// tensors of known shape).
bool benchmarked(const passes::Program& p, size_t n) {
  const ir::Node& node = p.graph.nodes[n];
  if (node.op_type == "FusedConv" || node.op_type == "ConvChain") return false;
  if (p.ops[n]->returns_view()) return false;
  if (node.op_type == "Concat" && std::all_of(node.inputs.begin(), node.inputs.end(), [&](int v) {
        return v >= 0 && p.buffers[v].kind == passes::BufferAssignment::Kind::kSlice;
      })) {
    return false;
  }
  bool computed = false;
  for (int v : node.outputs) {
    if (v < 0) continue;
    if (!p.types[v]) return false;
    computed = computed || !p.known[v].defined();
  }
  if (!computed) return false;
  for (int v : node.inputs) {
    if (v < 0 || p.known[v].defined()) continue;
    if (!p.types[v] || p.types[v]->dtype != DType::kFloat32) return false;
  }
  return true;
}

// Bytes a run of node n reads and writes: its inputs (constants included) and outputs.
double node_bytes(const passes::Program& p, const ir::Node& node) {
  double bytes = 0;
  for (const std::vector<int>* vs : {&node.inputs, &node.outputs}) {
    for (int v : *vs) {
      if (v < 0 || !p.types[v]) continue;
      bytes += static_cast<double>(shape_numel(p.types[v]->shape)) *
               static_cast<double>(dtype_size(p.types[v]->dtype));
    }
  }
  return bytes;
}

// What makes two nodes the same benchmark: the op, its inputs' and outputs' dtypes and
// physical shapes (5-D where NCHWc) and every attribute.
std::string node_key(const passes::Program& p, const ir::Node& node) {
  std::string key = node.op_type;
  for (const std::vector<int>* vs : {&node.inputs, &node.outputs}) {
    key += "|";
    for (int v : *vs) {
      key += v < 0 || !p.types[v] ? "-,"
                                  : fmt::format("{}{},", dtype_name(p.types[v]->dtype),
                                                shape_str(p.types[v]->shape));
    }
  }
  for (const auto& [name, attr] : node.attrs) key += "|" + name + "=" + ir::attribute_text(attr);
  return key;
}

int register_layers(const std::string& dir) {
  std::set<std::string> seen;
  int count = 0;
  for (const CompiledModel& cm : compile_bench_models(dir, g_threads)) {
    const auto& p = cm.program;
    for (size_t n = 0; n < p->graph.nodes.size(); ++n) {
      const ir::Node& node = p->graph.nodes[n];
      if (!benchmarked(*p, n) || !seen.insert(node_key(*p, node)).second) continue;
      std::vector<ops::TensorType> in, out;
      for (int v : node.inputs) in.push_back(v < 0 ? ops::TensorType{} : *p->types[v]);
      for (int v : node.outputs) out.push_back(v < 0 ? ops::TensorType{} : *p->types[v]);
      const double macs = static_cast<double>(p->ops[n]->macs(in, out));
      const double bytes = node_bytes(*p, node);
      const std::string name = fmt::format("{}/{}@{}x{}:{}", node.op_type, cm.model.file,
                                           cm.model.shape[2], cm.model.shape[3], node.name);
      benchmark::RegisterBenchmark(
          name.c_str(),
          [p, n, bytes, macs](benchmark::State& s) {
            run_node_loop(s, *p, static_cast<int>(n), g_threads);
            s.counters["GB/s"] =
                benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
            const int64_t moved = static_cast<int64_t>(bytes);
            s.counters["roof%"] = benchmark::Counter(
                bytes * 1e-9 * 100.0 / g_roofline.bandwidth_gbps(moved, g_threads),
                benchmark::Counter::kIsIterationInvariantRate);
            s.SetLabel(memory_level_name(g_roofline.memory_level(moved, g_threads)));
            if (macs > 0) {
              s.counters["GFLOP/s"] = benchmark::Counter(
                  2.0 * macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
            }
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
  if (register_layers(setup.models_dir) == 0) {
    fmt::print(stderr, "no layers for op_bench in the models found in {} (set TERN_MODELS_DIR)\n",
               setup.models_dir);
    return 1;
  }
  LayerReporter reporter([] {
    g_roofline = load_or_measure_roofline();
    benchmark::AddCustomContext("bandwidth (tern roofline)", g_roofline.levels_text(g_threads));
  });
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
