// The operator contract: create (parse attributes into a named params struct, check
// them) -> infer (output dtypes and shapes for given input types) -> run (compute into
// outputs the runtime allocated with the inferred shapes).
//
// Ops never see graph nodes: they get an Attrs reader and an OpContext (the node's name,
// op type and opset, for messages). Every error an op throws starts with where(), e.g.
// "Conv 'stage2.conv1': expected input with 64 channels, but got 32".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/check.h"
#include "tern/tensor.h"

namespace tern::ops {

/// Which node an op instance belongs to.
struct OpContext {
  std::string node_name;
  std::string op_type;
  int opset = 0;        ///< the model's default-domain opset
  int num_outputs = 0;  ///< outputs the node declares (an equal Split needs it)
};

/// dtype and shape of one tensor.
struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};

/// What shape inference knows about one input.
struct InferInput {
  bool present = false;  ///< false for an omitted optional input
  DType dtype = DType::kFloat32;
  Shape shape;
  const Tensor* value = nullptr;  ///< the value, when known (constants, folded shapes, run time)
};

/// Thrown by infer() when an output shape depends on the value of an input that is not
/// known yet (plan time, non-constant input). The runtime then infers at run time.
struct ValueNotKnown {
  int input_index;
};

/// Per-run settings a kernel may use. num_threads: threads of tern's pool
/// (base/thread_pool.h) this session's ops may use.
struct ExecContext {
  int num_threads = 1;
};

/// One op's kernel call with its buffers bound (Op::bind): computes what run() would on
/// the tensors it was bound to.
using BoundRun = std::function<void(const ExecContext&)>;

/// Base class of every operator.
class Op {
 public:
  explicit Op(OpContext ctx) : ctx_(std::move(ctx)) {}
  virtual ~Op() = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  /// Output dtypes and shapes. `inputs` has one entry per node input (omitted optional
  /// inputs have present == false). Throws ShapeError / InvalidArgument (prefixed with
  /// where()) when the inputs do not fit, and ValueNotKnown when a needed value is absent.
  virtual std::vector<TensorType> infer(std::span<const InferInput> inputs) const = 0;

  /// Computes the outputs. `inputs[i]` is undefined for an omitted optional input;
  /// `outputs` are contiguous tensors already allocated with the shapes infer() gave
  /// (an op that returns views, see returns_view(), replaces them instead).
  virtual void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                   const ExecContext& ctx) const = 0;

  /// The work of run(inputs, outputs, ctx) prepared once, for a plan whose buffers are
  /// fixed: `inputs` are constants or views of the plan's arena, `outputs` its arena views,
  /// and they keep their storage and shapes while the result is used; each call computes
  /// what run() would. An empty result (the default) means the runtime calls run() each
  /// time. An op implements it where run()'s per-call work (shape checks, parameter
  /// derivation) is a visible share of its time: FusedConv, 45 of UltraFace's 53 steps.
  /// `ctx` is the context the calls are expected to get: it may tune the split of the
  /// work (FusedConv's winograd groups), while any call's own ctx gives the same result.
  virtual BoundRun bind(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                        const ExecContext& ctx) const {
    (void)inputs;
    (void)outputs;
    (void)ctx;
    return {};
  }

  /// Outputs computed from the input types alone, for ops whose result depends only on
  /// shapes (Shape, Size): the planner then folds them to constants even though their
  /// input's data is not known until run time. Default: not foldable this way.
  virtual std::optional<std::vector<Tensor>> fold_from_types(
      std::span<const InferInput> inputs) const {
    (void)inputs;
    return std::nullopt;
  }

  /// True when run() sets outputs to views of its inputs (Reshape, Squeeze, Identity...)
  /// instead of writing into preallocated outputs; the runtime then allocates nothing.
  virtual bool returns_view() const { return false; }

  /// True when run() sets its one output to its first input's data under the shape infer()
  /// gives, no copy for a contiguous input (Reshape, Flatten, Squeeze, Unsqueeze): a plan
  /// whose first input of the node lives in a fixed buffer (runtime::Plan::fixed) fixes
  /// the output as the same bytes, and the step runs nothing.
  virtual bool reshapes_input() const { return false; }

  /// Multiply-accumulates of one run for these shapes (Conv, Gemm, MatMul); 0 otherwise.
  virtual int64_t macs(std::span<const TensorType> inputs,
                       std::span<const TensorType> outputs) const {
    (void)inputs;
    (void)outputs;
    return 0;
  }

  /// Scratch memory, in bytes, that one thread's run keeps for later runs (thread_local, grown
  /// to the largest layer) for these input types (physical). Reported by the winograd
  /// FusedConv (its transformed input tiles and products,
  /// kernels::winograd_conv_workspace_bytes); 0 elsewhere, including kernels whose smaller
  /// per-thread buffers are not reported (ConvChain's row bands, the conv GEMM's panels).
  virtual int64_t workspace_bytes(std::span<const TensorType> inputs) const {
    (void)inputs;
    return 0;
  }

  /// The kernel this op runs for these input types (physical, as infer() sees them), for
  /// ops that choose between several (FusedConv: "direct", "pointwise", "depthwise",
  /// "gemm", ...); "" for ops with one kernel. The pass select-algorithm records it as the node's
  /// "algorithm" attribute, which `tern inspect` shows and the op then follows.
  virtual std::string algorithm(std::span<const TensorType> inputs) const {
    (void)inputs;
    return {};
  }

  /// The algorithms `--tune` measures against each other for these input types (the
  /// node's "algorithm" attribute set to each); empty when there is nothing to choose.
  /// FusedConv: "direct" and "winograd" for a 3x3 stride-1 conv the winograd kernel covers.
  virtual std::vector<std::string> algorithm_candidates(std::span<const TensorType> inputs) const {
    (void)inputs;
    return {};
  }

  const OpContext& context() const { return ctx_; }
  /// "Conv 'stage2.conv1'": the prefix of every message this op throws.
  std::string where() const { return ctx_.op_type + " '" + ctx_.node_name + "'"; }

 protected:
  OpContext ctx_;
};

/// Returns inputs[i].value or throws ValueNotKnown (for data-dependent output shapes).
inline const Tensor& require_value(std::span<const InferInput> inputs, int i) {
  if (!inputs[i].value) throw ValueNotKnown{i};
  return *inputs[i].value;
}

/// Builds InferInputs that describe actual tensors (values known), for running infer()
/// at run time.
std::vector<InferInput> infer_inputs_from(std::span<const Tensor> tensors);

}  // namespace tern::ops
