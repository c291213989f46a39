// A Plan: the model compiled for one set of input shapes.
//
// Built once per distinct input-shape signature and cached by the Session: the graph is
// copied, the input shapes bound, the pass pipeline run (src/passes: folding, fusion,
// layout, weight packing, in-place and memory planning), and the result turned into the
// list of steps the executor runs, each with its output types and buffers.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "passes/pipeline.h"
#include "tern/session.h"

namespace tern::runtime {

/// One node to execute at run time.
struct PlanStep {
  int node = -1;  ///< index into Plan::program.graph.nodes
  /// Output types when inference resolved them at plan time; nullopt = infer at run time
  /// (a shape depends on a value only known then).
  std::optional<std::vector<ops::TensorType>> output_types;
  /// Values whose last reader is this step: released after it (not graph outputs).
  std::vector<int> release_after;
  /// Set when the plan binds (its first run) if every input and output of the step is
  /// fixed (Plan::fixed) and the op offers Op::bind: the kernel call on those buffers,
  /// which execute() runs instead of the op's run(); a call that does nothing for a
  /// reshape of a fixed tensor (Op::reshapes_input), whose output is then fixed too.
  ops::BoundRun bound;
};

/// Everything fixed for one input-shape signature.
struct Plan {
  std::vector<Shape> input_shapes;  ///< in graph input order (the cache key)
  passes::Program program;          ///< the compiled graph, its ops and memory plan
  std::vector<PlanStep> steps;      ///< execution order
  PlanInfo info;                    ///< what describe() and plan_info() report
  /// The arena of program.memory.arena_bytes, allocated at the first run and reused by
  /// every later run of this plan.
  std::shared_ptr<Storage> arena;
  /// Per value, its tensor when it is the same in every run, set at the first run:
  /// constants and views of the arena (arena and Concat-slice values, in-place values over
  /// one of those, and reshapes of a fixed tensor: Op::reshapes_input); undefined for graph
  /// inputs and values allocated per run.
  std::vector<Tensor> fixed;
  bool bound = false;  ///< `fixed` and the steps' `bound` calls are set
  /// simd_target_epoch() when they were: a forced SIMD target binds the plan again (the
  /// bound calls chose their kernels for the target of their time).
  int64_t bound_epoch = -1;
};

/// Builds the plan of `graph` for graph inputs of the given types (graph input order),
/// running the pass pipeline with `options`. Throws the op's ShapeError etc. (naming the
/// node) when shapes do not fit, ShapeError when a folded tensor would exceed
/// `max_tensor_bytes`, InvalidArgument for an unknown pass name.
std::unique_ptr<Plan> build_plan(const ir::Graph& graph,
                                 const std::vector<ops::TensorType>& input_types,
                                 const ops::ExecContext& ctx, int64_t max_tensor_bytes,
                                 const passes::PipelineOptions& options);

/// Per-node shapes, layouts and MACs of a compiled program (for describe()).
std::vector<LayerInfo> layers_of(const passes::Program& p);

/// Wall-clock start and end of every plan step (Plan::steps order), filled by execute()
/// when it is given one (Session::profile); the run without it reads no clock.
struct StepClock {
  std::vector<std::chrono::steady_clock::time_point> start, end;
};

/// Runs `plan` on the bound inputs (graph input order) and returns the graph outputs (in
/// graph output order), never aliasing the inputs, the plan's constants, its arena or
/// each other. With `clock`, records when each step's op started and ended.
std::vector<Tensor> execute(Plan& plan, const std::vector<const Tensor*>& inputs,
                            const ops::ExecContext& ctx, int64_t max_tensor_bytes,
                            StepClock* clock = nullptr);

}  // namespace tern::runtime
