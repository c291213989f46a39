// runtime::execute's bound steps (PlanStep::bound): the first run binds every step whose
// buffers are fixed (constants and the arena) to its op's prepared kernel call, and fixes
// a reshape of a fixed tensor as the same bytes (a step that runs nothing); later
// runs with other input values give what a fresh plan gives, bit for bit, at 1 and 2
// threads; a forced SIMD target binds the plan again. Uses the RetinaFace model kept in
// the repo, so it runs without ../shared.
#include "runtime/plan.h"

#include <gtest/gtest.h>

#include "base/cpu.h"
#include "onnx/loader.h"
#include "support/test_env.h"

namespace tern::runtime {
namespace {

Tensor ramp(const Shape& shape, int seed) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    p[i] = static_cast<float>((i * 37 + seed * 101) % 255) - 120.0f;
  }
  return t;
}

std::unique_ptr<Plan> retinaface_plan(const Shape& input, int threads) {
  static const ir::Graph graph =
      onnx::load_model_file((test::source_dir() / "models/retinaface_mnet025.onnx").string());
  return build_plan(graph, {{DType::kFloat32, input}}, ops::ExecContext{threads}, int64_t{1} << 31,
                    {});
}

std::vector<std::vector<float>> run(Plan& plan, const Tensor& x, int threads) {
  std::vector<std::vector<float>> out;
  for (const Tensor& t : execute(plan, {&x}, ops::ExecContext{threads}, int64_t{1} << 31)) {
    out.push_back(t.to_float_vector());
  }
  return out;
}

TEST(BoundPlan, ConvolutionsAfterTheFirstAreBound) {
  std::unique_ptr<Plan> plan = retinaface_plan({1, 3, 48, 64}, 1);
  run(*plan, ramp({1, 3, 48, 64}, 1), 1);
  ASSERT_TRUE(plan->bound);
  int convs = 0, bound = 0, reshapes = 0, concat_slices = 0;
  for (const PlanStep& step : plan->steps) {
    const ir::Node& node = plan->program.graph.nodes[step.node];
    if (plan->program.ops[step.node]->reshapes_input()) {
      // The heads' Reshapes of conv outputs in the arena: the same bytes, fixed, and a
      // step that runs nothing.
      const Tensor& x = plan->fixed[node.inputs[0]];
      const Tensor& y = plan->fixed[node.outputs[0]];
      ASSERT_TRUE(x.defined()) << node.name;
      ASSERT_TRUE(y.defined()) << node.name;
      EXPECT_TRUE(step.bound) << node.name;
      EXPECT_EQ(y.raw_data(), x.raw_data()) << node.name;
      EXPECT_EQ(y.shape(), (*step.output_types)[0].shape) << node.name;
      ++reshapes;
      continue;
    }
    if (node.op_type == "Concat") {
      // Concats whose inputs the convs wrote into their slices (concat-slices: the SSH
      // modules', and through a Reshape) have nothing to copy: bound to a call that does
      // nothing. The heads' Concats are graph outputs, allocated per run: not bound.
      const ir::Graph& g = plan->program.graph;
      int written = node.inputs[0];
      const int producer = g.values[written].producer;
      if (producer >= 0 && plan->program.ops[producer]->reshapes_input())
        written = g.nodes[producer].inputs[0];
      const bool slices =
          plan->program.buffers[written].kind == passes::BufferAssignment::Kind::kSlice;
      EXPECT_EQ(static_cast<bool>(step.bound), slices) << node.name;
      concat_slices += slices;
      continue;
    }
    if (node.op_type != "FusedConv") {
      EXPECT_FALSE(step.bound) << node.name << " (" << node.op_type << ") has no bind()";
      continue;
    }
    ++convs;
    // The first conv reads the graph input, a different tensor every run.
    const bool reads_input = node.inputs[0] == plan->program.graph.inputs[0];
    if (step.bound) ++bound;
    if (reads_input) {
      EXPECT_FALSE(step.bound) << node.name;
    }
  }
  EXPECT_GT(convs, 40);
  EXPECT_EQ(bound, convs - 1) << "every conv but the first is bound";
  EXPECT_GE(reshapes, 3);
  EXPECT_GE(concat_slices, 3);  // one per SSH module at least
}

TEST(BoundPlan, LaterRunsMatchAFreshPlan) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    const Shape shape{1, 3, 40, 56};
    std::unique_ptr<Plan> reused = retinaface_plan(shape, threads);
    run(*reused, ramp(shape, 1), threads);
    const std::vector<std::vector<float>> second = run(*reused, ramp(shape, 2), threads);
    std::unique_ptr<Plan> fresh = retinaface_plan(shape, threads);
    EXPECT_EQ(second, run(*fresh, ramp(shape, 2), threads));
  }
}

TEST(BoundPlan, ReturnedOutputsOutliveLaterRuns) {
  // A bound step writes the arena in place every run: what a run returned must not be
  // (a view of) it.
  const Shape shape{1, 3, 40, 56};
  std::unique_ptr<Plan> plan = retinaface_plan(shape, 1);
  const Tensor x1 = ramp(shape, 1);
  std::vector<Tensor> first = execute(*plan, {&x1}, ops::ExecContext{1}, int64_t{1} << 31);
  std::vector<std::vector<float>> before;
  for (const Tensor& t : first) before.push_back(t.to_float_vector());
  run(*plan, ramp(shape, 2), 1);
  for (size_t k = 0; k < first.size(); ++k) EXPECT_EQ(first[k].to_float_vector(), before[k]) << k;
}

TEST(BoundPlan, AForcedTargetBindsAgain) {
  const std::vector<std::string> targets = dispatchable_simd_targets();
  if (targets.size() < 2) GTEST_SKIP() << "one SIMD target only";
  const Shape shape{1, 3, 32, 32};
  std::unique_ptr<Plan> plan = retinaface_plan(shape, 1);
  const std::vector<std::vector<float>> before = run(*plan, ramp(shape, 3), 1);
  const int64_t epoch = plan->bound_epoch;
  force_simd_target(targets.back());
  const std::vector<std::vector<float>> forced = run(*plan, ramp(shape, 3), 1);
  const int64_t forced_epoch = plan->bound_epoch;
  force_simd_target("");
  EXPECT_NE(forced_epoch, epoch);
  // And back on the best target: bound again, the first results.
  EXPECT_EQ(run(*plan, ramp(shape, 3), 1), before);
  EXPECT_NE(plan->bound_epoch, forced_epoch);
  ASSERT_EQ(forced.size(), before.size());
  for (size_t k = 0; k < before.size(); ++k) {
    ASSERT_EQ(forced[k].size(), before[k].size());
    for (size_t i = 0; i < before[k].size(); ++i) {
      ASSERT_NEAR(forced[k][i], before[k][i], 1e-3f + 1e-4f * std::abs(before[k][i])) << k;
    }
  }
}

}  // namespace
}  // namespace tern::runtime
