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
// seen to measure faster (kernels::winograd_conv_preferred's 16-channel threshold came from
// these; its 8-channel one and its tile threshold, which keeps deep small layers on
// direct, from `tern bench --per-layer`). The convs a plan runs as a ConvChain (fuse-conv-chain)
// are benchmarked one by one as above, and each chain as a whole ("chain/...").
//
// At the end it prints the FMA-peak target of issue 5: of the 1x1 convolutions with at
// least 32 input channels and the 3x3 ones with at least 64 (one group, each layer's
// planned kernel: not the direct twins nor the chains), how many reach 70 % of the peak
// (roof%, the median of the repetitions when there are several), and which do not, each
// with what bounds it whatever the kernel does, where something does (ceiling()): output
// channels that fill part of the vector lanes, or a single output pixel.
//
//   build/release/bench/conv_bench [--threads N] [--benchmark_filter=pointwise] ...
// $TERN_MODELS_DIR overrides ../shared/models.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/cpu.h"
#include "kernels/direct/direct_conv.h"
#include "model_layers.h"
#include "tern/roofline.h"

namespace {

using namespace tern;
using namespace tern::bench;

// One benchmarked layer: the compiled program keeps the op and the constant weights alive.
struct Layer {
  std::shared_ptr<passes::Program> program;
  int node = 0;
  int64_t macs = 0;
};

int g_threads = 1;
Roofline g_roofline;  // this machine's, cached
double g_peak_gflops = 0;

// The classes of the FMA-peak target: "1x1" (>= 32 input channels) and "3x3" (>= 64).
constexpr double kTargetRoof = 70.0;
struct TargetLayer {
  std::string kind;  // "1x1" or "3x3"; "3x3 direct" for a winograd layer's direct twin
  int64_t c = 0, m = 0;
  int64_t taps = 1;       // kernel taps per input channel: 1 or 9
  int64_t pixels = 0;     // output pixels (H x W)
  std::string algorithm;  // the planned kernel
};
std::map<std::string, TargetLayer> g_target_layers;  // by benchmark name

// The class of FusedConv `node` (w: its weights' shape) in the target, or "" when it has
// none: 1x1 with >= 32 input channels, 3x3 with >= 64, one group; *c and *m: its input and
// output channels.
std::string target_kind(const ir::Node& node, const Shape& w, int64_t* c, int64_t* m) {
  const std::string layout = attr_str(node, "weight_layout");
  const std::string group = attr_str(node, "group");
  if (!group.empty() && group != "1") return "";
  if (w.size() < 4) return "";
  *c = layout == "OHWI" ? w[3] : layout == "winograd" ? w[2] : w[1];
  // Packed and winograd weights pad M to whole blocks: the attribute has it.
  const std::string out = attr_str(node, "out_channels");
  *m = out.empty() ? w[0] : std::stoll(out);
  const std::string k = attr_str(node, "kernel_shape");
  if (k == "1x1" && *c >= 32) return "1x1";
  if (k == "3x3" && *c >= 64) return "3x3";
  return "";
}

// LayerReporter (the roofline loaded when the benchmarks start), keeping each benchmark's
// roof% for the target summary: the median aggregate when there are repetitions, else the
// run itself.
class TargetReporter : public LayerReporter {
 public:
  using LayerReporter::LayerReporter;
  void ReportRuns(const std::vector<Run>& runs) override {
    LayerReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const std::string name = r.run_name.function_name;
      auto it = r.counters.find("roof%");
      if (it == r.counters.end() || r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name != "median") continue;
        with_median_.insert(name);
      } else if (with_median_.count(name)) {
        continue;
      }
      roof_[name] = it->second.value;
    }
  }
  const std::map<std::string, double>& roof() const { return roof_; }

 private:
  std::map<std::string, double> roof_;
  std::set<std::string> with_median_;
};

// What bounds a layer below the FMA peak whatever its kernel does, for the target's list
// ("" when nothing does): output channels that fill only part of the vector lanes their
// FMAs take, when below 90 % (kernels that put output channels in the lanes: not "dot"; a
// last block of at most half a vector counts half a vector, as the NCHW-input tiles run it
// on half-width FMAs, which AMD Zen 4 runs at twice the rate, and the pointwise tile on full
// vectors of input-channel pairs, two lanes per output; on 16 lanes a pointwise layer to at
// most 12 or 17 to 20 channels from 32 to 256 takes 4 lanes per 4 outputs, GroupTile: M/N bounds
// them, and the kernels that keep full vectors for it lower still), and one output pixel, where the
// layer is a matrix-vector product: each weight vector loaded feeds one FMA, so the cache level the
// weights come from bounds it (L1 loads one 512-bit vector per cycle on Zen 4, as many as it runs
// FMAs; L2 fewer). Weights larger than L1 come from the level the roofline names for their bytes,
// whose measured bandwidth bounds the layer at 0.5 FLOP per byte (2 FLOP per 4-byte weight; the
// input and output vectors are a few KiB): the roofline's bound, given as a share of the peak.
std::string ceiling(const TargetLayer& t) {
  std::string out;
  const int64_t lanes = simd_float_lanes();
  if (t.algorithm != "dot" && lanes > 1 && t.m % lanes != 0) {
    const int64_t rest = t.m % lanes;
    int64_t taken = t.m - rest + (2 * rest <= lanes ? lanes / 2 : lanes);
    // GroupTile (kernels/direct) takes 4 lanes per 4 outputs.
    if (t.algorithm == "pointwise" && kernels::direct_group_tile(t.m, t.c, lanes)) {
      taken = (t.m + 3) / 4 * 4;
    }
    if (10 * t.m < 9 * taken) out += fmt::format("  [lanes {}/{}]", t.m, taken);
  }
  if (t.pixels == 1) {
    const int64_t bytes = t.c * t.m * t.taps * 4;
    out += fmt::format("  [1 pixel: {} KiB of weights", (bytes + 1023) / 1024);
    if (bytes <= l1d_cache_bytes()) {
      out += ", within L1: one FMA per weight vector]";
    } else {
      out += fmt::format(" from {}: at most {:.0f} % (0.5 FLOP/B x {:.1f} GB/s)]",
                         memory_level_name(g_roofline.memory_level(bytes, g_threads)),
                         100.0 * g_roofline.bound_gflops(0.5, g_threads, bytes) / g_peak_gflops,
                         g_roofline.bandwidth_gbps(bytes, g_threads));
    }
  }
  return out;
}

// Prints the target's count per class and the layers below it (nothing when no layer of
// the target ran: a filter, --benchmark_list_tests).
void print_target(const std::map<std::string, double>& roof) {
  const bool any = std::any_of(g_target_layers.begin(), g_target_layers.end(),
                               [&](const auto& e) { return roof.count(e.first) > 0; });
  if (!any) return;
  fmt::print(
      "\nFMA-peak target: layers at >= {:.0f} % of {:.1f} GFLOP/s (1x1 with >= 32 input "
      "channels, 3x3 with >= 64; one group; the planned kernels)\n",
      kTargetRoof, g_peak_gflops);
  bool legend = false;  // whether a listed layer has a ceiling() note
  for (const char* kind : {"1x1", "3x3", "3x3 direct"}) {
    std::vector<std::pair<double, std::string>> v;
    for (const auto& [name, t] : g_target_layers) {
      auto it = roof.find(name);
      if (t.kind == kind && it != roof.end()) v.emplace_back(it->second, name);
    }
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const auto met =
        std::count_if(v.begin(), v.end(), [](const auto& e) { return e.first >= kTargetRoof; });
    const double median = v[v.size() / 2].first;
    const bool twins = std::string_view(kind) == "3x3 direct";
    fmt::print("  {}: {} of {} (median {:.1f} %){}\n", kind, met, v.size(), median,
               twins ? ": the 3x3 layers planned as winograd, run by the direct kernel instead "
                       "(not the target: winograd's roof% counts the direct kernel's FLOPs)"
                     : "");
    for (const auto& [r, name] : v) {
      if (twins || r >= kTargetRoof) break;  // the twins' misses are not the target's
      const TargetLayer& t = g_target_layers.at(name);
      const std::string why = ceiling(t);
      legend = legend || !why.empty();
      fmt::print("    {:5.1f} %  {} -> {}  {}{}\n", r, t.c, t.m, name, why);
    }
  }
  if (legend) {
    fmt::print(
        "  [lanes M/N]: the M output channels take N vector lanes per pixel (a last block of at "
        "most half a vector counted as half); [1 pixel]: a matrix-vector product, bound by "
        "the cache the weights come from (the roofline's bound at the bandwidth `tern "
        "roofline` measured for that level)\n");
  }
}

void run_layer(benchmark::State& state, const Layer& layer) {
  run_node_loop(state, *layer.program, layer.node, g_threads);
  const double flop = 2.0 * static_cast<double>(layer.macs);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["roof%"] = benchmark::Counter(flop * 1e-9 * 100.0 / g_peak_gflops,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// Compiles every model and registers one benchmark per distinct FusedConv (and a direct
// twin of each winograd layer), from a plan compiled without fuse-conv-chain so that every
// conv is its own node, and one per ConvChain of the full plan.
int register_layers(const std::string& dir) {
  std::map<std::string, bool> seen;
  int count = 0;
  for (const CompiledModel& cm : compile_bench_models(dir, g_threads)) {
    const ModelCase& m = cm.model;
    const auto p = compile_model(cm.graph, m.shape, {"fuse-conv-chain"}, g_threads);
    std::shared_ptr<passes::Program> plain;  // without select-algorithm: no winograd
    for (size_t n = 0; n < p->graph.nodes.size(); ++n) {
      const ir::Node& node = p->graph.nodes[n];
      if (node.op_type != "FusedConv") continue;
      std::vector<ops::TensorType> in_types, out_types = {*p->types[node.outputs[0]]};
      for (int v : node.inputs) in_types.push_back(v >= 0 ? *p->types[v] : ops::TensorType{});
      const std::string key = fmt::format(
          "{}/x{}/w{}/y{}/k{}/s{}/p{}/d{}/g{}", attr_str(node, "algorithm"),
          shape_str(in_types[0].shape), shape_str(in_types[1].shape), shape_str(out_types[0].shape),
          attr_str(node, "kernel_shape"), attr_str(node, "strides"), attr_str(node, "pads"),
          attr_str(node, "dilations"), attr_str(node, "group"));
      if (seen[key]) continue;
      seen[key] = true;
      const int64_t macs = p->ops[n]->macs(in_types, out_types);
      int64_t c = 0, m_out = 0;
      const std::string kind = target_kind(node, in_types[1].shape, &c, &m_out);
      auto add = [&](const std::string& algorithm, const Layer& layer) {
        const std::string name = fmt::format("{}/{}@{}x{}:{}", algorithm, m.file, m.shape[2],
                                             m.shape[3], node.name);
        if (!kind.empty()) {
          // The planned kernel counts for the target; a winograd layer's direct twin is
          // listed apart ("3x3 direct"), so that the summary also shows what the layer
          // reaches when its multiplications are counted as they run.
          const bool planned = algorithm == attr_str(node, "algorithm");
          const int64_t taps = kind == "3x3" ? 9 : 1;
          g_target_layers[name] = {planned ? kind : kind + " direct", c,        m_out, taps,
                                   macs / (c * m_out * taps),         algorithm};
        }
        benchmark::RegisterBenchmark(name.c_str(),
                                     [layer](benchmark::State& s) { run_layer(s, layer); })
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.05);
        ++count;
      };
      add(attr_str(node, "algorithm"), Layer{p, static_cast<int>(n), macs});
      if (attr_str(node, "algorithm") == "winograd") {
        if (!plain) plain = compile_model(cm.graph, m.shape, {"select-algorithm"}, g_threads);
        const int twin = node_named(*plain, node.name);
        if (twin >= 0) add("direct", Layer{plain, twin, macs});
      }
    }
    const auto& full = cm.program;
    for (size_t n = 0; n < full->graph.nodes.size(); ++n) {
      const ir::Node& node = full->graph.nodes[n];
      if (node.op_type != "ConvChain") continue;
      std::vector<ops::TensorType> in_types, out_types = {*full->types[node.outputs[0]]};
      for (int v : node.inputs) in_types.push_back(v >= 0 ? *full->types[v] : ops::TensorType{});
      const Layer layer{full, static_cast<int>(n), full->ops[n]->macs(in_types, out_types)};
      const std::string name =
          fmt::format("chain/{}@{}x{}:{}", m.file, m.shape[2], m.shape[3], node.name);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [layer](benchmark::State& s) { run_layer(s, layer); })
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
    fmt::print(stderr, "no models found in {} (set TERN_MODELS_DIR)\n", setup.models_dir);
    return 1;
  }
  TargetReporter reporter([] {
    g_roofline = load_or_measure_roofline();
    g_peak_gflops = g_roofline.at(g_threads).gflops;
    benchmark::AddCustomContext("peak GFLOP/s (tern roofline)",
                                fmt::format("{:.1f}", g_peak_gflops));
  });
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_target(reporter.roof());
  benchmark::Shutdown();
  return 0;
}
