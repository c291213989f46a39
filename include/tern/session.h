// tern/session.h: load an ONNX model and run it.
//
//   tern::Session session("retinaface_mnet025.onnx", {.num_threads = 2});
//   tern::Tensor x = tern::Tensor::from_blob(buf, tern::DType::kFloat32, {1, 3, 320, 320});
//   std::vector<tern::NamedTensor> out = session.run({{"input", x}});
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tern/status.h"
#include "tern/tensor.h"

namespace tern {

/// Options fixed when a session is created.
struct SessionOptions {
  /// Threads this session's kernels use; 0 = one per processor available to the process
  /// (its CPU affinity mask). The threads are one process-wide pool that runs one
  /// parallel call at a time: a call made while another session's call holds it runs on
  /// the calling thread alone. $TERN_NUM_THREADS_LIMIT caps every session's count.
  int num_threads = 0;
  /// Largest tensor a model file may declare (initializer, Constant or attribute), in
  /// bytes. A file that declares more is rejected with ModelError before any allocation.
  int64_t max_tensor_bytes = int64_t{1} << 31;
  /// Largest sum of all tensors a model file may declare, in bytes.
  int64_t max_model_bytes = int64_t{4} << 30;
  /// Graph passes to skip, by name ("fuse-epilogue", "assign-layout", ...; `tern inspect
  /// --passes` and tern::pass_names() list them). Results stay the same with any pass
  /// off; only speed and memory change. An unknown name throws InvalidArgument at the
  /// first run.
  std::vector<std::string> disabled_passes = {};
  /// Check the graph after every pass (structure, types, output types unchanged); always
  /// on when tern itself is a debug build. Costs plan time only.
  bool verify_passes = false;
  /// Measure the candidate kernels of each layer that has several (direct and winograd
  /// for 3x3 stride-1 convolutions; on 8- and 16-lane targets, dot against pointwise or
  /// direct for detection heads of other shapes and for the other convolutions the dot
  /// kernel's rule gives dot) when a plan is built, and run the fastest; a head that will
  /// write NHWC (its Transpose folded in) is timed writing NHWC.
  /// The choice is cached by SIMD target, threads, op, shapes, attributes and output
  /// layout in
  /// `tune_cache` (default $XDG_CACHE_HOME/tern/tune.json or ~/.cache/tern/tune.json), so
  /// only the first plan on a machine pays for the measurement (a few ms per layer).
  bool tune = false;
  std::string tune_cache = {};
};

/// The graph passes, in the order they run (names for SessionOptions::disabled_passes).
std::vector<std::string> pass_names();

/// Name, dtype and declared shape of a graph input or output. A symbolic dim is -1 in
/// `shape` and has its name in `dim_names` (e.g. "height"); fixed dims have "". When the
/// model declares no shape at all, `has_shape` is false and any shape is accepted.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  bool has_shape = true;
  Shape shape;
  std::vector<std::string> dim_names;
};

/// The declared shape as text, symbols by name: "[1, 3, height, width]"; "?" for an
/// anonymous symbolic dim, "(any)" when no shape is declared.
std::string declared_shape_str(const TensorInfo& info);

/// A tensor with the graph name it binds to.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// One node of the model as planned for concrete input shapes (for `tern inspect`).
struct LayerInfo {
  std::string name;
  std::string op_type;
  std::vector<std::string> outputs;
  std::vector<Shape> output_shapes;  ///< physical shapes; empty list when only known at run time
  std::vector<std::string> layouts;  ///< per output: "plain", "NCHW16c", ...
  int64_t macs = 0;                  ///< multiply-accumulates (Conv, Gemm, MatMul)
  /// The kernel chosen at plan time: the node's "algorithm" attribute ("direct",
  /// "pointwise", "depthwise", ... on tern.FusedConv); "" when the node has none.
  std::string algorithm;
  /// Bytes of every input (weights included) and output tensor of the node, as laid out
  /// in memory: what one run reads and writes at least. 0 when a shape is only known at
  /// run time.
  int64_t bytes = 0;
  /// Scratch bytes one thread keeps for this layer's kernel: winograd's transformed tiles
  /// and products (Op::workspace_bytes); 0 for the other kernels.
  int64_t workspace_bytes = 0;
};

/// A timed interval of Session::profile(), in ms; `start_ms` counts from the start of the
/// first profiled run.
struct TimedSpan {
  double start_ms = 0;
  double ms = 0;
};

/// One plan step's timings over the profiled runs.
struct LayerProfile {
  LayerInfo layer;              ///< the node (name, op, algorithm, shapes, MACs, bytes)
  std::vector<TimedSpan> runs;  ///< one per profiled run
  double median_ms = 0;         ///< median of runs[*].ms
};

/// What Session::profile() measured.
struct Profile {
  std::vector<LayerProfile> layers;  ///< every plan step, in execution order
  std::vector<TimedSpan> runs;       ///< each profiled run as a whole
  double median_run_ms = 0;          ///< median of runs[*].ms
  int num_threads = 1;               ///< threads the session ran with
};

/// The compiled plan for concrete input shapes: its nodes and its memory, in bytes.
struct PlanInfo {
  std::vector<LayerInfo> layers;    ///< the nodes that run per inference, in order
  int nodes_before = 0;             ///< nodes in the model file
  int nodes_after = 0;              ///< nodes left after the pass pipeline
  int64_t arena_bytes = 0;          ///< the one buffer all planned intermediates share
  int64_t intermediate_bytes = 0;   ///< sum of all intermediate tensor sizes (no reuse)
  int64_t arena_values = 0;         ///< intermediates placed in the arena
  int64_t in_place_values = 0;      ///< intermediates written into their input's buffer
  int64_t slice_values = 0;         ///< Concat inputs written into their slice of its output
  int64_t weight_bytes = 0;         ///< constants the plan's nodes read (packed ones included)
  int64_t packed_weight_bytes = 0;  ///< of which re-laid-out at plan time for the kernels
  /// Winograd's extra memory: the layers that run it, their transformed weights (36 values
  /// per 3x3 filter and channel pair instead of 9: four times the packed 3x3 weights they
  /// replace, and included in packed_weight_bytes) and the workspace one thread keeps (the
  /// largest of those layers' LayerInfo::workspace_bytes; each of the session's threads
  /// keeps one).
  int winograd_layers = 0;
  int64_t winograd_weight_bytes = 0;
  int64_t winograd_workspace_bytes = 0;
  int tuned_measured = 0;           ///< SessionOptions::tune: layers measured for this plan
  int tuned_cached = 0;             ///< layers whose tuned choice came from the cache
  std::string tune_cache;           ///< the tune cache file ("" without tuning)
  std::string tune_warning;         ///< why the tune cache could not be used, if so
};

/// The graph after one pass of the pipeline (`tern inspect --passes`).
struct PassTrace {
  std::string pass;     ///< its name; "(model)" for the graph as loaded
  int changes = 0;      ///< rewrites the pass made
  std::string listing;  ///< one line per node: name, op, inputs, output shapes and layouts
};

/// A loaded model, ready to run. Thread-compatible: one run at a time per session.
///
/// Plans are built per distinct set of input shapes and cached, so the first run with
/// a new shape (e.g. a new image size for a model with symbolic H and W) costs a plan.
class Session {
 public:
  /// Loads and validates the ONNX model at `path`. Throws IOError (missing or unreadable
  /// file), ModelError (malformed model), UnsupportedOpError (an op tern lacks).
  explicit Session(const std::string& path, const SessionOptions& options = {});
  /// Same, from a serialized ONNX ModelProto in memory (copied; the buffer may go away).
  static Session from_memory(const void* data, size_t size, const SessionOptions& options = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  /// Graph inputs the caller must feed (initializers excluded), in model order.
  const std::vector<TensorInfo>& inputs() const;
  /// Graph outputs, in model order.
  const std::vector<TensorInfo>& outputs() const;
  /// Threads this session uses (options.num_threads resolved).
  int num_threads() const;

  /// Runs the model. Every graph input must be given once, by name, with the declared
  /// dtype and rank and matching every fixed dim; symbolic dims take the given size.
  /// Inputs may be views of caller memory (Tensor::from_blob): they are read, never
  /// written. Returns every graph output, in model order. Throws InvalidArgument (unknown,
  /// missing or repeated name; wrong dtype) or ShapeError (wrong rank or size), naming
  /// the input and what was expected; errors inside the graph name the node.
  std::vector<NamedTensor> run(const std::vector<NamedTensor>& inputs);

  /// Runs the model `runs` times like run() (inputs checked the same way; outputs
  /// dropped), timing every plan step with a steady clock, and returns the per-step and
  /// per-run times (ms). No warm-up: run() the inputs once first so the plan exists and
  /// caches are warm. Timing adds two clock reads per step; run() itself has none.
  /// Throws InvalidArgument when `runs` < 1, and what run() throws.
  Profile profile(const std::vector<NamedTensor>& inputs, int runs);

  /// The nodes of the compiled plan for the given input shapes (all inputs required,
  /// checked as in run()), in execution order: output shapes (physical: an NCHWc output
  /// is 5-D), layouts and MACs. Shapes that depend on input values are left empty.
  std::vector<LayerInfo> describe(const std::map<std::string, Shape>& input_shapes);

  /// The compiled plan for the given input shapes (checked as in describe()): nodes,
  /// node counts before and after the passes, arena and weight bytes.
  PlanInfo plan_info(const std::map<std::string, Shape>& input_shapes);

  /// Compiles the model for the given input shapes again, recording the graph before the
  /// passes and after each one that runs (the session's disabled passes stay off).
  std::vector<PassTrace> trace_passes(const std::map<std::string, Shape>& input_shapes);

  /// The compiled plan for the given input shapes as Graphviz DOT (nodes with op and
  /// name, edges with shape and layout).
  std::string plan_dot(const std::map<std::string, Shape>& input_shapes);

  /// Count of each op type in the model, e.g. {"Conv": 56, "Relu": 41}.
  std::map<std::string, int> op_histogram() const;
  /// Number of weight values (elements of all initializers and Constant nodes).
  int64_t parameter_count() const;
  /// The model's default-domain ("ai.onnx") opset version, 1..17.
  int opset() const;
  /// The model's ONNX IR version (>= 3).
  int64_t ir_version() const;
  /// producer_name and producer_version as one string ("pytorch 1.13.0"); "" when the
  /// model leaves them empty.
  std::string producer() const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// tern's version, "MAJOR.MINOR.PATCH".
const char* version();

}  // namespace tern
