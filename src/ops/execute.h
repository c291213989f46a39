// Running one op outside a graph walk: output allocation, size limits and error context.
// Used by the planner (plan-time evaluation of known nodes) and by the executor.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ops/op.h"

namespace tern::ops {

/// Runs `op` on `inputs`. `output_values[k]` is the node's k-th output value (-1 =
/// omitted: left undefined). `preallocated[k]`, when given and defined, is the tensor the
/// op writes output k into (an arena view or, for an in-place op, its input's tensor);
/// other outputs are allocated with `types` (or with types inferred from the inputs when
/// `types` is null). Throws ShapeError naming the node when an allocated output would
/// exceed `max_tensor_bytes` (a model cannot make tern allocate without bound); other
/// errors are re-thrown naming the node.
std::vector<Tensor> run_node(const Op& op, const std::vector<Tensor>& inputs,
                             const std::vector<TensorType>* types,
                             const std::vector<int>& output_values, const ExecContext& ctx,
                             int64_t max_tensor_bytes, std::span<const Tensor> preallocated = {});

/// Calls `fn`, re-throwing any error so that its message names the op's node.
template <typename Fn>
auto with_node_context(const Op& op, Fn&& fn) -> decltype(fn());

}  // namespace tern::ops

#include "ops/execute_inl.h"
