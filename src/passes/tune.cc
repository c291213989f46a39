#include "passes/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "base/cpu.h"
#include "base/json_cache.h"
#include "ops/execute.h"
#include "ops/registry.h"
#include "passes/pass.h"

namespace tern::passes {

namespace {

// 2: a head timed writing NHWC is keyed by that context (tune_key); version 1 files may
// hold such answers under the plain key, which is now a head timed writing NCHW.
constexpr int kCacheVersion = 2;
constexpr int kTimedRuns = 7;

JsonCacheFile cache_file(const Program& p) {
  return JsonCacheFile{p.tuning.cache_path, kCacheVersion, "tune cache",
                       "this --tune measures again and replaces it"};
}

// A float32 tensor of `type` with values uniform in [-1, 1) (any other dtype: zeros).
Tensor random_input(const ops::TensorType& type, uint32_t seed) {
  if (type.dtype != DType::kFloat32) return Tensor::zeros(type.dtype, type.shape);
  Tensor t = Tensor::empty(DType::kFloat32, type.shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float* d = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = u(rng);
  return t;
}

// Median ms of node `n` run as `algorithm`.
double measure(const Program& p, int n, const std::vector<ops::TensorType>& types,
               const std::string& algorithm, const CandidateSetup& setup) {
  ir::Node node = p.graph.nodes[n];
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const int v = node.inputs[k];
    if (v < 0) {
      inputs.emplace_back();
    } else if (p.known[v].defined()) {
      inputs.push_back(p.known[v]);
    } else {
      inputs.push_back(random_input(types[k], 17 + static_cast<uint32_t>(k)));
    }
  }
  set_string_attr(node, "algorithm", algorithm);
  setup(algorithm, node, inputs);
  const ops::OpSchema* schema = ops::OpRegistry::global().find(node.domain, node.op_type);
  TERN_CHECK(schema != nullptr, UnsupportedOpError, "node '{}': op '{}' is not registered",
             node.name, node.op_type);
  const ops::OpContext ctx{node.name, node.op_type, p.graph.opset,
                           static_cast<int>(node.outputs.size())};
  const std::unique_ptr<ops::Op> op =
      schema->create(ops::Attrs(node.attrs, fmt::format("{} '{}'", node.op_type, node.name)), ctx);
  // The output types of the node as set up (an NHWC output has its own shape).
  const std::vector<ops::TensorType> out_types =
      ops::with_node_context(*op, [&] { return op->infer(ops::infer_inputs_from(inputs)); });
  std::vector<Tensor> outputs;
  for (const ops::TensorType& t : out_types) outputs.push_back(Tensor::empty(t.dtype, t.shape));
  auto run = [&] {
    ops::run_node(*op, inputs, &out_types, node.outputs, p.ctx, p.max_tensor_bytes, outputs);
  };
  run();  // warm-up: caches, the kernel's workspace
  std::vector<double> ms;
  for (int i = 0; i < kTimedRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + kTimedRuns / 2, ms.end());
  return ms[kTimedRuns / 2];
}

}  // namespace

std::string tune_key(const Program& p, int n, const std::vector<ops::TensorType>& types,
                     const std::string& context) {
  const ir::Node& node = p.graph.nodes[n];
  std::vector<std::string> shapes, attrs;
  for (const ops::TensorType& t : types) shapes.push_back(shape_str(t.shape));
  for (const auto& [name, a] : node.attrs)  // std::map: sorted by name
    if (name != "algorithm") attrs.push_back(fmt::format("{}={}", name, ir::attribute_text(a)));
  std::string key =
      fmt::format("{}|threads {}|{}::{}|{}|{}", cpu_info().best_target, p.ctx.num_threads,
                  node.domain, node.op_type, fmt::join(shapes, ","), fmt::join(attrs, ";"));
  if (!context.empty()) key += "|" + context;
  return key;
}

const Pass& fuse_transpose_pass();  // pipeline.cc's accessors (src/passes/<name>.cc)

std::string nhwc_context(const Program& p, int n) {
  return p.runs_pass(fuse_transpose_pass().name()) && conv_writes_nhwc(p, n) ? "y_layout=NHWC" : "";
}

std::string tune_algorithm(Program& p, int n, const std::vector<ops::TensorType>& types,
                           const std::vector<std::string>& candidates, const CandidateSetup& setup,
                           const std::string& context) {
  const std::string key = tune_key(p, n, types, context);
  if (!p.tuning.cache_path.empty()) {
    try {
      const nlohmann::json file = read_json_cache(cache_file(p));
      if (!file.is_null()) {
        auto it = file["entries"].find(key);
        if (it != file["entries"].end() && it->contains("algorithm") &&
            (*it)["algorithm"].is_string()) {
          const std::string choice = (*it)["algorithm"];
          if (std::find(candidates.begin(), candidates.end(), choice) != candidates.end()) {
            ++p.tuning.cached;
            return choice;
          }
        }
      }
    } catch (const IOError& e) {
      p.tuning.warning = e.what();  // measured again, and the file replaced below
    }
  }
  nlohmann::json ms = nlohmann::json::object();
  std::string best;
  double best_ms = 0;
  for (const std::string& c : candidates) {
    const double t = measure(p, n, types, c, setup);
    ms[c] = t;
    if (best.empty() || t < best_ms) {
      best = c;
      best_ms = t;
    }
  }
  ++p.tuning.measured;
  if (!p.tuning.cache_path.empty()) {
    try {
      write_json_cache_entry(cache_file(p), key, {{"algorithm", best}, {"ms", ms}});
    } catch (const IOError& e) {
      p.tuning.warning = e.what();
    }
  }
  return best;
}

}  // namespace tern::passes
