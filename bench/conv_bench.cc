// Google Benchmark microbenchmarks of tern's convolution kernels on the real layer shapes
// of the models in ../shared/models: each model is compiled by tern's pass pipeline at its
// reference input size (RetinaFace at 320x320 and 640x640), and every distinct FusedConv
// of the plan (algorithm, physical input and weight shapes, attributes) becomes one
// benchmark that runs the node's op exactly as the plan does (same layouts, packed
// weights, epilogue and kernel). Counters: GFLOP/s (2 FLOP per multiply-accumulate) and
// roof% = GFLOP/s / the measured peak FMA throughput at the benchmark's thread count
// (`tern roofline`, cached), so a kernel's distance from the machine's ceiling is read
// directly. Every layer planned as "winograd" is also benchmarked as "direct" (the kernel
// it replaces, from a plan compiled without select-algorithm), so that the choice is
// seen to measure faster (kernels::winograd_conv_preferred's thresholds come from these).
//
//   build/release/bench/conv_bench [--threads N] [--benchmark_filter=pointwise] ...
// $TERN_MODELS_DIR overrides ../shared/models.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "onnx/loader.h"
#include "ops/execute.h"
#include "passes/pipeline.h"
#include "passes/program.h"
#include "tern/roofline.h"

namespace {

using namespace tern;

// Model file, input name and NCHW shape: the reference sizes of ../shared/models.
struct ModelCase {
  const char* file;
  Shape shape;
};
const ModelCase kModels[] = {
    {"retinaface_mnet025.onnx", {1, 3, 320, 320}},  {"retinaface_mnet025.onnx", {1, 3, 640, 640}},
    {"ultraface_slim320.onnx", {1, 3, 240, 320}},   {"ultraface_rfb320.onnx", {1, 3, 240, 320}},
    {"fd1mb_slim_landmark.onnx", {1, 3, 240, 320}}, {"mobilenetv2_1.0_224.onnx", {1, 3, 224, 224}},
    {"squeezenet1.1.onnx", {1, 3, 224, 224}},       {"ppocr_v4_det.onnx", {1, 3, 256, 384}},
};

// One benchmarked layer: the compiled program keeps the op and the constant weights alive.
struct Layer {
  std::shared_ptr<passes::Program> program;
  int node = 0;
  int64_t macs = 0;
};

std::string attr_str(const ir::Node& n, const char* name) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return "";
  return it->second.s.empty() ? fmt::format("{}", fmt::join(it->second.ints, "x")) : it->second.s;
}

std::vector<Tensor> random_inputs(const passes::Program& p, const ir::Node& node) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Tensor> in;
  for (int v : node.inputs) {
    if (v < 0) {
      in.emplace_back();
    } else if (p.known[v].defined()) {
      in.push_back(p.known[v]);
    } else {
      Tensor t = Tensor::empty(p.types[v]->dtype, p.types[v]->shape);
      float* d = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) d[i] = u(rng);
      in.push_back(t);
    }
  }
  return in;
}

int g_threads = 1;
double g_peak_gflops = 0;

void run_layer(benchmark::State& state, const Layer& layer) {
  const passes::Program& p = *layer.program;
  const ir::Node& node = p.graph.nodes[layer.node];
  const std::vector<Tensor> inputs = random_inputs(p, node);
  std::vector<ops::TensorType> types = {*p.types[node.outputs[0]]};
  const ops::ExecContext ctx{g_threads};
  std::vector<Tensor> out = {Tensor::empty(types[0].dtype, types[0].shape)};
  for (auto _ : state) {
    ops::run_node(*p.ops[layer.node], inputs, &types, node.outputs, ctx, int64_t{1} << 40, out);
    benchmark::ClobberMemory();
  }
  const double flop = 2.0 * static_cast<double>(layer.macs);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["roof%"] = benchmark::Counter(flop * 1e-9 * 100.0 / g_peak_gflops,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// The program of `graph` at `shape` compiled by the pipeline without the passes `disabled`.
std::shared_ptr<passes::Program> compile(const ir::Graph& graph, const Shape& shape,
                                         const std::vector<std::string>& disabled) {
  auto p = std::make_shared<passes::Program>(
      passes::make_program(graph, {ops::TensorType{DType::kFloat32, shape}},
                           ops::ExecContext{g_threads}, int64_t{1} << 40, simd_float_lanes()));
  passes::PipelineOptions options;
  options.disabled = disabled;
  passes::run_pipeline(*p, options);
  return p;
}

int node_named(const passes::Program& p, const std::string& name) {
  for (size_t n = 0; n < p.graph.nodes.size(); ++n)
    if (p.graph.nodes[n].name == name) return static_cast<int>(n);
  return -1;
}

// Compiles every model and registers one benchmark per distinct FusedConv (and a direct
// twin of each winograd layer).
int register_layers(const std::string& dir) {
  std::map<std::string, bool> seen;
  int count = 0;
  for (const ModelCase& m : kModels) {
    const std::string path = dir + "/" + m.file;
    ir::Graph graph;
    try {
      graph = onnx::load_model_file(path);
    } catch (const Error& e) {
      fmt::print(stderr, "skipping {}: {}\n", m.file, e.what());
      continue;
    }
    const auto p = compile(graph, m.shape, {});
    std::shared_ptr<passes::Program> plain;  // without select-algorithm: no winograd
    for (size_t n = 0; n < p->graph.nodes.size(); ++n) {
      const ir::Node& node = p->graph.nodes[n];
      if (node.op_type != "FusedConv") continue;
      std::vector<ops::TensorType> in_types, out_types = {*p->types[node.outputs[0]]};
      for (int v : node.inputs) in_types.push_back(v >= 0 ? *p->types[v] : ops::TensorType{});
      const std::string key =
          fmt::format("{}/x{}/w{}/y{}/k{}/s{}/p{}/g{}", attr_str(node, "algorithm"),
                      shape_str(in_types[0].shape), shape_str(in_types[1].shape),
                      shape_str(out_types[0].shape), attr_str(node, "kernel_shape"),
                      attr_str(node, "strides"), attr_str(node, "pads"), attr_str(node, "group"));
      if (seen[key]) continue;
      seen[key] = true;
      const int64_t macs = p->ops[n]->macs(in_types, out_types);
      auto add = [&](const std::string& algorithm, const Layer& layer) {
        const std::string name = fmt::format("{}/{}@{}x{}:{}", algorithm, m.file, m.shape[2],
                                             m.shape[3], node.name);
        benchmark::RegisterBenchmark(name.c_str(),
                                     [layer](benchmark::State& s) { run_layer(s, layer); })
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.05);
        ++count;
      };
      add(attr_str(node, "algorithm"), Layer{p, static_cast<int>(n), macs});
      if (attr_str(node, "algorithm") == "winograd") {
        if (!plain) plain = compile(graph, m.shape, {"select-algorithm"});
        const int twin = node_named(*plain, node.name);
        if (twin >= 0) add("direct", Layer{plain, twin, macs});
      }
    }
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  // --threads N (ours) before Google Benchmark parses the rest.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      g_threads = std::max(1, std::atoi(argv[++i]));
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  const char* env = std::getenv("TERN_MODELS_DIR");
  const std::string dir = env && *env ? env : TERN_DEFAULT_MODELS_DIR;
  g_peak_gflops = load_or_measure_roofline().at(g_threads).gflops;
  benchmark::AddCustomContext("threads", std::to_string(g_threads));
  benchmark::AddCustomContext("peak GFLOP/s (tern roofline)", fmt::format("{:.1f}", g_peak_gflops));
  benchmark::AddCustomContext("SIMD target", cpu_info().best_target);
  if (register_layers(dir) == 0) {
    fmt::print(stderr, "no models found in {} (set TERN_MODELS_DIR)\n", dir);
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
