// Helpers for the pass tests: build a small model with ModelBuilder, compile it with some
// passes switched off, inspect the resulting Program, and check that running the model
// with and without a pass gives the same outputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "onnx/loader.h"
#include "onnx/model_builder.h"
#include "passes/pipeline.h"
#include "tern/session.h"

namespace tern::test {

/// The passes' names, except those in `keep`: disable these to run only `keep`.
inline std::vector<std::string> all_passes_except(const std::vector<std::string>& keep) {
  std::vector<std::string> off;
  for (const std::string& name : passes::pass_names())
    if (std::find(keep.begin(), keep.end(), name) == keep.end()) off.push_back(name);
  return off;
}

/// Compiles `model` for `input_types` (graph input order) with the passes in `disabled`
/// switched off, verifying the program after every pass. `block` is the NCHWc channel
/// block (any of 4, 8, 16, whatever this machine's SIMD width). A `tune_cache` path turns
/// --tune on with that cache file (passes/tune.h; one thread).
inline passes::Program compile(const ModelBuilder& model,
                               const std::vector<ops::TensorType>& input_types,
                               const std::vector<std::string>& disabled = {}, int block = 8,
                               const std::string& tune_cache = "") {
  const std::string bytes = model.bytes();
  ir::Graph graph = onnx::load_model(bytes.data(), bytes.size(), onnx::LoadLimits{});
  passes::Program p =
      passes::make_program(graph, input_types, ops::ExecContext{1}, int64_t{1} << 31, block);
  passes::PipelineOptions options;
  options.disabled = disabled;
  options.verify = true;
  options.tune = !tune_cache.empty();
  options.tune_cache = tune_cache;
  passes::run_pipeline(p, options);
  return p;
}

/// A Session of `model` with --tune on and its cache at `tune_cache`, one thread (the
/// cache's entries are per thread count), the passes in `disabled` off, the rest verified.
inline Session tuned_session(const ModelBuilder& model, const std::string& tune_cache,
                             const std::vector<std::string>& disabled = {}) {
  const std::string bytes = model.bytes();
  SessionOptions options;
  options.disabled_passes = disabled;
  options.verify_passes = true;
  options.tune = true;
  options.tune_cache = tune_cache;
  options.num_threads = 1;
  return Session::from_memory(bytes.data(), bytes.size(), options);
}

/// The passes to switch off for a run with pass `name` on (`on`) or off: {} or {name}.
inline std::vector<std::string> off_unless(bool on, const std::string& name) {
  return on ? std::vector<std::string>{} : std::vector<std::string>{name};
}

/// Number of nodes of `op_type` (any domain) in the compiled program.
inline int count_ops(const passes::Program& p, const std::string& op_type) {
  return static_cast<int>(std::count_if(p.graph.nodes.begin(), p.graph.nodes.end(),
                                        [&](const ir::Node& n) { return n.op_type == op_type; }));
}

/// Runs `model` on `feeds` with the passes in `disabled` off (and verification on).
inline std::vector<NamedTensor> run_model(const ModelBuilder& model,
                                          const std::vector<NamedTensor>& feeds,
                                          const std::vector<std::string>& disabled = {},
                                          int threads = 1) {
  const std::string bytes = model.bytes();
  SessionOptions options;
  options.num_threads = threads;
  options.disabled_passes = disabled;
  options.verify_passes = true;
  Session session = Session::from_memory(bytes.data(), bytes.size(), options);
  return session.run(feeds);
}

/// A float32 tensor of `shape` with values uniform in [lo, hi), from `seed`.
inline Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(v, shape);
}

/// `n` deterministic weights in [-0.5, 0.5) from `seed` (a 32-bit LCG: the same on every
/// machine, unlike <random>'s distributions).
inline std::vector<float> weights(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return v;
}

/// Expects outputs `a` and `b` to have equal names, shapes and dtypes, and float values
/// within `tol` * max(1, |b|) (exactly equal when tol is 0).
inline void expect_outputs_near(const std::vector<NamedTensor>& a,
                                const std::vector<NamedTensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].tensor.shape(), b[i].tensor.shape()) << a[i].name;
    ASSERT_EQ(a[i].tensor.dtype(), b[i].tensor.dtype()) << a[i].name;
    const std::vector<float> x = a[i].tensor.to_float_vector();
    const std::vector<float> y = b[i].tensor.to_float_vector();
    for (size_t k = 0; k < x.size(); ++k) {
      ASSERT_NEAR(x[k], y[k], tol * std::max(1.0, std::fabs(double(y[k]))))
          << a[i].name << " element " << k;
    }
  }
}

/// The model's outputs with every pass on, with only `pass` off, and with every pass off
/// agree within `tol` (relative to max(1, |value|)).
inline void expect_pass_keeps_results(const ModelBuilder& model,
                                      const std::vector<NamedTensor>& feeds,
                                      const std::string& pass, double tol = 1e-5) {
  const auto all_on = run_model(model, feeds);
  const auto without = run_model(model, feeds, {pass});
  const auto all_off = run_model(model, feeds, passes::pass_names());
  expect_outputs_near(all_on, all_off, tol);
  expect_outputs_near(without, all_off, tol);
}

}  // namespace tern::test
