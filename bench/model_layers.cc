#include "model_layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include "base/cpu.h"
#include "onnx/loader.h"
#include "ops/execute.h"
#include "passes/pipeline.h"

namespace tern::bench {

const std::vector<ModelCase>& bench_models() {
  static const std::vector<ModelCase> models = {
      {"retinaface_mnet025.onnx", {1, 3, 320, 320}}, {"retinaface_mnet025.onnx", {1, 3, 640, 640}},
      {"ultraface_slim320.onnx", {1, 3, 240, 320}},  {"ultraface_rfb320.onnx", {1, 3, 240, 320}},
      {"ultraface_rfb640.onnx", {1, 3, 480, 640}},   {"fd1mb_slim_landmark.onnx", {1, 3, 240, 320}},
      {"fd1mb_rfb_landmark.onnx", {1, 3, 240, 320}}, {"mobilenetv2_1.0_224.onnx", {1, 3, 224, 224}},
      {"squeezenet1.1.onnx", {1, 3, 224, 224}},      {"ppocr_v4_det.onnx", {1, 3, 256, 384}},
      {"resnet18.onnx", {1, 3, 224, 224}, true},
  };
  return models;
}

BenchSetup init_layer_bench(int argc, char** argv) {
  BenchSetup setup;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      setup.threads = std::max(1, std::atoi(argv[++i]));
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  const char* env = std::getenv("TERN_MODELS_DIR");
  setup.models_dir = env && *env ? env : TERN_DEFAULT_MODELS_DIR;
  benchmark::AddCustomContext("threads", std::to_string(setup.threads));
  benchmark::AddCustomContext("SIMD target", cpu_info().best_target);
  return setup;
}

LayerReporter::LayerReporter(std::function<void()> before_context)
    : before_context_(std::move(before_context)),
      display_(benchmark::CreateDefaultDisplayReporter()) {}

bool LayerReporter::ReportContext(const Context& context) {
  before_context_();
  display_->SetOutputStream(&GetOutputStream());
  display_->SetErrorStream(&GetErrorStream());
  return display_->ReportContext(context);
}

void LayerReporter::ReportRuns(const std::vector<Run>& runs) { display_->ReportRuns(runs); }

void LayerReporter::Finalize() { display_->Finalize(); }

std::shared_ptr<passes::Program> compile_model(const ir::Graph& graph, const Shape& shape,
                                               const std::vector<std::string>& disabled,
                                               int threads) {
  auto p = std::make_shared<passes::Program>(
      passes::make_program(graph, {ops::TensorType{DType::kFloat32, shape}},
                           ops::ExecContext{threads}, int64_t{1} << 40, simd_float_lanes()));
  passes::PipelineOptions options;
  options.disabled = disabled;
  passes::run_pipeline(*p, options);
  return p;
}

std::vector<CompiledModel> compile_bench_models(const std::string& dir, int threads) {
  std::vector<CompiledModel> models;
  for (const ModelCase& m : bench_models()) {
    CompiledModel c{m, {}, nullptr};
    try {
      c.graph = onnx::load_model_file((m.cached ? std::string(TERN_SOURCE_DIR "/.cache/models")
                                                : dir) + "/" + m.file);
    } catch (const Error& e) {
      fmt::print(stderr, "skipping {}: {}\n", m.file, e.what());
      continue;
    }
    c.program = compile_model(c.graph, m.shape, {}, threads);
    models.push_back(std::move(c));
  }
  return models;
}

std::string attr_str(const ir::Node& n, const char* name) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return "";
  const ir::Attribute& a = it->second;
  if (a.type == ir::Attribute::Type::kInt) return std::to_string(a.i);
  return a.s.empty() ? fmt::format("{}", fmt::join(a.ints, "x")) : a.s;
}

int node_named(const passes::Program& p, const std::string& name) {
  for (size_t n = 0; n < p.graph.nodes.size(); ++n)
    if (p.graph.nodes[n].name == name) return static_cast<int>(n);
  return -1;
}

namespace {

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

}  // namespace

void run_node_loop(benchmark::State& state, const passes::Program& p, int node, int threads) {
  const ir::Node& n = p.graph.nodes[node];
  const std::vector<Tensor> inputs = random_inputs(p, n);
  std::vector<ops::TensorType> types;
  std::vector<Tensor> out;
  for (int v : n.outputs) {
    types.push_back(v >= 0 ? *p.types[v] : ops::TensorType{});
    out.push_back(v >= 0 ? Tensor::empty(types.back().dtype, types.back().shape) : Tensor{});
  }
  const ops::ExecContext ctx{threads};
  // As a plan runs it: the op's bound call where it has one (FusedConv, ConvChain), whose
  // shape checks and parameters were derived once; run() costs about 0.5 us a call more.
  // (A plan binds no step that reads a graph input, such as a first layer, which pays
  // that once per run.)
  const ops::Op& op = *p.ops[node];
  const ops::BoundRun bound = ops::with_node_context(op, [&] { return op.bind(inputs, out, ctx); });
  for (auto _ : state) {
    if (bound) {
      bound(ctx);
    } else {
      ops::run_node(*p.ops[node], inputs, &types, n.outputs, ctx, int64_t{1} << 40, out);
    }
    benchmark::ClobberMemory();
  }
}

}  // namespace tern::bench
