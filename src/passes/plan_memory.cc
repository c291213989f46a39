// plan-memory: gives every intermediate tensor an offset in one arena, allocated once per
// plan and reused by every run, so no tensor is allocated or freed per inference.
//
// Liveness: a value is live from the step that writes it to the last step that reads it
// (or reads a view of it, or a value written into its buffer in place), and from the
// first write of a Concat input placed in it (concat-slices). Two values may
// share bytes only when their live ranges are disjoint. Assignment is greedy by size
// (largest first, each at the lowest 64-byte-aligned offset that overlaps no placed
// value live at the same time), the "greedy by size" strategy of Pisarchyk and Lee,
// "Efficient Memory Management for Deep Neural Net Inference" (2020), also ORT's and
// TFLite's choice. Values stay out of the arena (allocated per run) when their shape is
// known only at run time, or when they reach a graph output (the caller keeps those).
#include <algorithm>

#include "passes/pass.h"

namespace tern::passes {
namespace {

using Kind = BufferAssignment::Kind;

constexpr int64_t kAlign = 64;

int64_t aligned(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class PlanMemory final : public Pass {
 public:
  const char* name() const override { return "plan-memory"; }
  const char* summary() const override {
    return "assign intermediates to offsets in one arena by liveness (greedy by size)";
  }

  int run(Program& p) const override {
    const ir::Graph& g = p.graph;
    const int nv = static_cast<int>(g.values.size());
    const std::vector<int> order = p.order();
    std::vector<int> step_of(g.nodes.size(), 0);
    for (size_t s = 0; s < order.size(); ++s) step_of[order[s]] = static_cast<int>(s);

    // First classification: who owns a buffer.
    std::vector<int> def(nv, -1), last(nv, -1);
    std::vector<bool> escapes(nv, false);
    for (int v : g.outputs) escapes[v] = true;
    for (int v = 0; v < nv; ++v) {
      BufferAssignment& b = p.buffers[v];
      const int producer = g.values[v].producer;
      if (producer < 0) {
        b = BufferAssignment{};
        continue;
      }
      def[v] = last[v] = step_of[producer];
      // Decided by the in-place and concat-slices passes.
      if (b.kind == Kind::kInPlace || b.kind == Kind::kSlice) continue;
      // The executor places a node's outputs only when it knows all their types at plan
      // time; otherwise it allocates all of them per run.
      bool all_typed = true;
      for (int out : g.nodes[producer].outputs) all_typed = all_typed && (out < 0 || p.types[out]);
      if (p.ops[producer]->returns_view()) {
        b = BufferAssignment{Kind::kView};
      } else if (!all_typed) {
        b = BufferAssignment{Kind::kDynamic};
      } else {
        b = BufferAssignment{Kind::kArena};
      }
    }
    for (size_t s = 0; s < order.size(); ++s) {
      for (int v : g.nodes[order[s]].inputs)
        if (v >= 0 && def[v] >= 0) last[v] = std::max(last[v], static_cast<int>(s));
    }
    // A view or an in-place result keeps the buffer it lives in alive, and returning it
    // to the caller makes that buffer the caller's: propagate from readers to sources
    // in reverse execution order (chains of views resolve in one sweep).
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ir::Node& node = g.nodes[*it];
      for (int out : node.outputs) {
        if (out < 0) continue;
        const BufferAssignment& b = p.buffers[out];
        std::vector<int> sources;
        if (b.kind == Kind::kInPlace) sources.push_back(b.reuses);
        if (b.kind == Kind::kView) {
          for (int in : node.inputs)
            if (in >= 0 && def[in] >= 0) sources.push_back(in);
        }
        for (int src : sources) {
          last[src] = std::max(last[src], last[out]);
          escapes[src] = escapes[src] || escapes[out];
        }
      }
    }

    // A Concat input written into its slice of the output makes that output's buffer
    // live from the slice's write. The slices need the output in the arena: if it is
    // not (it escapes, or has no static type), they get buffers of their own again.
    for (int v = 0; v < nv; ++v) {
      BufferAssignment& b = p.buffers[v];
      if (b.kind != Kind::kSlice) continue;
      const int src = b.reuses;
      if (p.buffers[src].kind != Kind::kArena || escapes[src] ||
          p.types[src]->dtype == DType::kString) {
        b = BufferAssignment{Kind::kArena};
        continue;
      }
      def[src] = std::min(def[src], def[v]);
    }

    // Buffers to place: arena candidates that do not escape.
    std::vector<int> placed_values;
    const int64_t packed = p.memory.packed_weight_bytes;
    p.memory = MemoryStats{};
    p.memory.packed_weight_bytes = packed;
    for (int v = 0; v < nv; ++v) {
      BufferAssignment& b = p.buffers[v];
      if (b.kind == Kind::kNone || b.kind == Kind::kView) continue;
      if (p.types[v]) {
        p.memory.intermediate_bytes +=
            shape_numel(p.types[v]->shape) * static_cast<int64_t>(dtype_size(p.types[v]->dtype));
      }
      if (b.kind == Kind::kInPlace) {
        ++p.memory.in_place_values;
        continue;
      }
      if (b.kind == Kind::kSlice) {
        ++p.memory.slice_values;
        continue;
      }
      if (b.kind != Kind::kArena) continue;
      if (escapes[v] || p.types[v]->dtype == DType::kString) {
        b.kind = Kind::kDynamic;
        continue;
      }
      b.bytes = aligned(std::max<int64_t>(
          1, shape_numel(p.types[v]->shape) * static_cast<int64_t>(dtype_size(p.types[v]->dtype))));
      placed_values.push_back(v);
    }
    std::stable_sort(placed_values.begin(), placed_values.end(),
                     [&](int a, int b) { return p.buffers[a].bytes > p.buffers[b].bytes; });
    std::vector<int> done;
    for (int v : placed_values) {
      // The placed values live at the same time as v, by offset.
      std::vector<int> conflicts;
      for (int u : done)
        if (def[u] <= last[v] && def[v] <= last[u]) conflicts.push_back(u);
      std::sort(conflicts.begin(), conflicts.end(),
                [&](int a, int b) { return p.buffers[a].offset < p.buffers[b].offset; });
      int64_t offset = 0;
      for (int u : conflicts) {
        const BufferAssignment& bu = p.buffers[u];
        if (offset + p.buffers[v].bytes <= bu.offset) break;  // fits in the gap before u
        offset = std::max(offset, bu.offset + bu.bytes);
      }
      p.buffers[v].offset = offset;
      p.memory.arena_bytes = std::max(p.memory.arena_bytes, offset + p.buffers[v].bytes);
      done.push_back(v);
    }
    p.memory.arena_values = static_cast<int64_t>(done.size());
    return static_cast<int>(done.size());
  }
};

}  // namespace

const Pass& plan_memory_pass() {
  static const PlanMemory pass;
  return pass;
}

}  // namespace tern::passes
