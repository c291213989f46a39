// A Plan: the model specialised to one set of input shapes.
//
// Built once per distinct input-shape signature and cached by the Session. Shape and
// dtype inference runs over the graph in topological order; a node whose inputs are all
// constant (initializers, Constant nodes, Shape of a known shape, ...) is evaluated now
// and its outputs become constants, so PyTorch's shape arithmetic (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape) never runs per inference. The remaining nodes are the
// steps the executor runs, each with its output types when they are static.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ops/op.h"
#include "tern/session.h"

namespace tern::runtime {

/// One node to execute at run time.
struct PlanStep {
  int node = -1;
  /// Output types when inference resolved them at plan time; nullopt = infer at run time
  /// (a shape depends on a value only known then).
  std::optional<std::vector<ops::TensorType>> output_types;
  /// Values whose last reader is this step: released after it (not graph outputs).
  std::vector<int> release_after;
};

/// Everything fixed for one input-shape signature.
struct Plan {
  std::vector<Shape> input_shapes;  ///< in graph input order (the cache key)
  std::vector<Tensor> constants;    ///< per value: initializer or folded value, else undefined
  std::vector<PlanStep> steps;      ///< topological order, folded nodes excluded
  std::vector<LayerInfo> layers;    ///< every node, for describe()
};

/// Builds the plan of `graph` for graph inputs of the given types (graph input order).
/// `ops` holds the created operator of each node (by node index). Runs shape inference
/// and constant evaluation; throws the op's ShapeError etc. (naming the node) when shapes
/// do not fit, and ShapeError when a folded tensor would exceed `max_tensor_bytes`.
std::unique_ptr<Plan> build_plan(const ir::Graph& graph,
                                 const std::vector<std::unique_ptr<ops::Op>>& ops,
                                 const std::vector<int>& order,
                                 const std::vector<ops::TensorType>& input_types,
                                 const ops::ExecContext& ctx, int64_t max_tensor_bytes);

/// Runs `op` on inputs. `outputs[k]` is the node's k-th output value (-1 = omitted: not
/// allocated, left undefined). Outputs are allocated with `types` (or inferred from the
/// input values when `types` is null). Throws ShapeError naming the node when an output
/// would exceed `max_tensor_bytes` (a model cannot make tern allocate without bound);
/// other errors are re-thrown naming the node.
std::vector<Tensor> run_node(const ops::Op& op, const std::vector<Tensor>& inputs,
                             const std::vector<ops::TensorType>* types,
                             const std::vector<int>& outputs, const ops::ExecContext& ctx,
                             int64_t max_tensor_bytes);

/// Calls `fn`, re-throwing any error so that its message names the op's node.
template <typename Fn>
auto with_node_context(const ops::Op& op, Fn&& fn) -> decltype(fn());

}  // namespace tern::runtime

#include "runtime/plan_inl.h"
