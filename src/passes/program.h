// The graph being compiled for one set of input shapes, and what the passes know about it.
//
// A Program starts as a copy of the loaded model's logical graph with the input shapes
// bound. analyze() runs shape and dtype inference over it (evaluating every node whose
// inputs are all known, so the shape arithmetic of PyTorch exports yields values); the
// passes in src/passes rewrite the graph (folding, fusion, layout) and then decide where
// each intermediate tensor lives (in-place reuse, arena offsets). runtime::build_plan
// turns the final Program into the steps the executor runs. This is OneFlow's "logical
// graph -> physical plan" split (DESIGN.md), with every decision made once per shape.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op.h"

namespace tern::passes {

/// Where one value's elements live at run time (decided by the memory planning passes).
struct BufferAssignment {
  enum class Kind : uint8_t {
    kNone,     ///< constant or graph input: no buffer of its own
    kDynamic,  ///< allocated at run time (shape known only then, graph output, or no plan)
    kArena,    ///< [offset, offset + bytes) of the plan's arena
    kInPlace,  ///< written into the buffer of value `reuses` (the op runs in place)
    kView,     ///< the op returns a view of (or a tensor owned by) its inputs: nothing to allocate
    kSlice,    ///< written into value `reuses`'s buffer at byte `offset` (a Concat input,
               ///< or the source of a reshape that is one; see concat-slices): nothing to
               ///< allocate, the Concat copies nothing
  };
  Kind kind = Kind::kNone;
  int64_t offset = 0;  ///< kArena: byte offset in the arena (64-byte aligned); kSlice: in `reuses`
  int64_t bytes = 0;   ///< kArena: bytes reserved
  int reuses = -1;     ///< kInPlace: the input value whose buffer this value takes over;
                       ///< kSlice: the Concat output this value is a slice of
};

/// `--tune` (SessionOptions::tune): select-algorithm measures the candidates of every
/// node whose op offers several (Op::algorithm_candidates) and keeps the fastest, and
/// pack-weights measures the dot kernel against the packed weights' kernels where its
/// dot_tunable admits a conv (each node measured once, a head fuse-transpose will make
/// write NHWC writing NHWC); each choice cached in a JSON file by SIMD target, threads,
/// op, input shapes, attributes and that output layout (passes/tune.h).
struct Tuning {
  bool enabled = false;
  std::string cache_path;  ///< "" = no cache file (measure every time)
  int measured = 0;        ///< nodes measured by this compile
  int cached = 0;          ///< nodes whose choice came from the cache
  std::string warning;     ///< why the cache could not be read or written, if so
};

/// The memory plan's totals, in bytes (what `tern inspect` and `tern bench` report).
struct MemoryStats {
  int64_t arena_bytes = 0;          ///< size of the one arena holding intermediates
  int64_t intermediate_bytes = 0;   ///< sum of every intermediate tensor's size
  int64_t arena_values = 0;         ///< intermediates placed in the arena
  int64_t in_place_values = 0;      ///< intermediates written into their input's buffer
  int64_t slice_values = 0;         ///< Concat inputs written into their slice of its output
  int64_t packed_weight_bytes = 0;  ///< weights re-laid-out at plan time for the kernels
};

/// The compiler's working state for one input-shape signature.
struct Program {
  ir::Graph graph;  ///< mutated by the passes; values are never removed, nodes are
  /// Per value: dtype and physical shape (an NCHWc value is 5-D [N, C/c, H, W, c]);
  /// nullopt when it depends on a value known only at run time.
  std::vector<std::optional<ops::TensorType>> types;
  /// Per value: its value when known at plan time (initializers, and outputs of nodes
  /// whose inputs are all known); undefined otherwise.
  std::vector<Tensor> known;
  /// Per value: the memory layout of its elements (kPlain unless a pass set NCHWc).
  std::vector<Layout> layouts;
  /// Per node: the created operator (rebuilt by analyze()).
  std::vector<std::unique_ptr<ops::Op>> ops;
  /// Per value: where it lives at run time (filled by the memory passes; resized by
  /// analyze()).
  std::vector<BufferAssignment> buffers;
  MemoryStats memory;
  Tuning tuning;
  /// Floats per SIMD vector of the best run-time target: the c of NCHWc (4 NEON, 8 AVX2,
  /// 16 AVX-512).
  int block = 16;
  /// The bound graph input types (graph input order).
  std::vector<ops::TensorType> input_types;
  ops::ExecContext ctx;
  int64_t max_tensor_bytes = int64_t{1} << 31;
  /// The passes this compile skips (PipelineOptions::disabled): --tune times a head
  /// writing NHWC only where fuse-transpose runs (passes/tune.h, nhwc_context).
  std::vector<std::string> disabled_passes;

  /// Node indices in execution order (producers first).
  std::vector<int> order() const { return graph.topological_order(); }
  /// Nodes that read value `v` (a node reading it twice is listed once).
  std::vector<int> consumers(int v) const;
  /// True when `v` is one of the graph's outputs.
  bool is_graph_output(int v) const;
  /// True when `v` is one of the graph's inputs.
  bool is_graph_input(int v) const;
  /// False when pass `name` is in disabled_passes.
  bool runs_pass(const std::string& name) const;
  /// Adds a new intermediate value named after `base` (made unique) and returns it.
  int add_value(const std::string& base, std::optional<ops::TensorType> type);
  /// Makes every node that reads `from` read `to` instead.
  void replace_uses(int from, int to);
  /// Removes the nodes whose `dead[n]` is set, keeping the others' order, and fixes
  /// every value's producer index.
  void erase_nodes(const std::vector<bool>& dead);
  /// Bytes of the constants (weights) the remaining nodes read, each storage counted once.
  int64_t weight_bytes() const;
};

/// Builds the starting Program: a copy of `graph` with the graph inputs bound to
/// `input_types` (graph input order), then analyze(). Throws what analyze() throws.
Program make_program(const ir::Graph& graph, const std::vector<ops::TensorType>& input_types,
                     const ops::ExecContext& ctx, int64_t max_tensor_bytes, int block);

/// Creates each node's op and infers every value's type in topological order; a node
/// whose inputs are all known is evaluated (its outputs become `known`). Throws
/// UnsupportedOpError for an op tern lacks, the op's ShapeError etc. naming the node, and
/// ShapeError naming the node when any output would exceed max_tensor_bytes.
void analyze(Program& p);

/// Checks a Program after a pass: the graph's structure (ir::verify_graph), that every
/// node has an op, and that the graph outputs still have `output_types` (a pass must not
/// change what the model returns). Throws Error naming `pass` and what is wrong.
void verify_program(const Program& p,
                    const std::vector<std::optional<ops::TensorType>>& output_types,
                    const std::string& pass);

/// Runs one node's op on known inputs (plan-time evaluation). Throws as run_node.
std::vector<Tensor> evaluate_node(const Program& p, int node);

/// Human-readable listing of the program: one line per node in execution order,
/// "name: Op(inputs) -> output [shape] layout @arena+offset ..." (constant inputs marked
/// '*'; an output's buffer when the memory passes have placed it).
std::string dump_program(const Program& p);

/// The program as Graphviz DOT: one box per node (op, name), edges labelled with the
/// value's shape and layout; graph inputs and outputs as ellipses.
std::string program_dot(const Program& p);

}  // namespace tern::passes
