// concat-slices: a Concat whose inputs would be contiguous slices of its output has each
// input written straight into its slice by the node that produces it, and then copies
// nothing (the "memory reuse" of OneFlow's physical plan, and TensorRT's concat
// elimination). SqueezeNet's fire modules and RetinaFace's SSH modules end in such a
// Concat of NCHWc conv outputs along the channel-block axis.
//
// Legal for input x of Concat y when: the dims before the axis are all 1 (so x is one
// contiguous run of y, at byte offset prefix * the bytes per index of the axis); x is an
// intermediate (not a graph input, output or constant) of known type, read by this
// Concat only and only once, written by a node that owns its buffer (not a view, not in
// place into another value, not itself a Concat: no nested slices); and y has a known
// type and is not a graph output. An x made by a reshape (Reshape, Flatten, Squeeze,
// Unsqueeze) of a value r that only it reads, r as above, puts r in the slice instead:
// the reshape's output views the same bytes (runtime::Plan::fixed). plan-memory then places y from
// the first write of any slice, and reverts the slices to buffers of their own if y does not land
// in the arena.
#include <set>

#include "passes/pass.h"

namespace tern::passes {
namespace {

using Kind = BufferAssignment::Kind;

class ConcatSlices final : public Pass {
 public:
  const char* name() const override { return "concat-slices"; }
  const char* summary() const override {
    return "Concat inputs are written straight into their slices of its output";
  }

  int run(Program& p) const override {
    int changes = 0;
    for (int n : p.order()) {
      const ir::Node& node = p.graph.nodes[n];
      if (node.op_type != "Concat" || !node.domain.empty() || node.outputs.size() != 1) continue;
      // An NCHWc Concat that moves channels between lanes (assign-layout's `channels`).
      if (node.attrs.count("channels")) continue;
      const int y = node.outputs[0];
      if (y < 0 || !p.types[y] || p.is_graph_output(y)) continue;
      const Shape& ys = p.types[y]->shape;
      const int rank = static_cast<int>(ys.size());
      auto it = node.attrs.find("axis");
      if (it == node.attrs.end() || rank == 0) continue;
      const int axis = static_cast<int>(it->second.i < 0 ? it->second.i + rank : it->second.i);
      if (axis < 0 || axis >= rank) continue;
      int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(p.types[y]->dtype));
      for (int d = 0; d < axis; ++d) outer *= ys[d];
      for (int d = axis + 1; d < rank; ++d) inner *= ys[d];
      if (outer != 1 || !all_sliceable(p, node, n)) continue;
      int64_t offset = 0;
      for (int input : node.inputs) {
        const int x = written_value(p, input);
        BufferAssignment& b = p.buffers[x];
        b = BufferAssignment{};
        b.kind = Kind::kSlice;
        b.reuses = y;
        b.offset = offset;
        offset += p.types[input]->shape[axis] * inner;
        ++changes;
      }
    }
    return changes;
  }

 private:
  // The value whose producer writes Concat input x: x, or the input of the reshape
  // (Op::reshapes_input: Reshape, Flatten, Squeeze, Unsqueeze) that produces x, which
  // then views those bytes in the slice (UltraFace's heads: conv, Reshape, Concat).
  static int written_value(const Program& p, int x) {
    const int producer = p.graph.values[x].producer;
    if (producer < 0 || !p.ops[producer]->reshapes_input()) return x;
    return p.graph.nodes[producer].inputs[0];
  }

  // Whether value v, read by node `reader` only, can be written into a slice by its
  // producer.
  static bool sliceable(const Program& p, int v, int reader, DType dtype) {
    if (v < 0 || !p.types[v] || p.types[v]->dtype != dtype) return false;
    const int producer = p.graph.values[v].producer;
    if (producer < 0 || p.is_graph_output(v)) return false;  // constant or graph input
    const ir::Node& pn = p.graph.nodes[producer];
    if (p.ops[producer]->returns_view() || pn.op_type == "Concat") return false;
    if (p.buffers[v].kind == Kind::kInPlace || p.buffers[v].kind == Kind::kSlice) return false;
    // The producer's outputs are placed only when all of their types are known.
    for (int out : pn.outputs)
      if (out >= 0 && !p.types[out]) return false;
    return p.consumers(v) == std::vector<int>{reader};
  }

  static bool all_sliceable(const Program& p, const ir::Node& node, int n) {
    const DType dtype = p.types[node.outputs[0]]->dtype;
    std::set<int> seen;
    for (int x : node.inputs) {
      if (x < 0 || !seen.insert(x).second) return false;  // omitted, or read twice
      const int producer = p.graph.values[x].producer;
      if (producer >= 0 && p.ops[producer]->reshapes_input()) {
        // x views its producer's input r: r goes in the slice, x is read here only.
        const int r = written_value(p, x);
        if (!p.types[x] || p.is_graph_output(x) || p.consumers(x) != std::vector<int>{n} ||
            !seen.insert(r).second || !sliceable(p, r, producer, dtype)) {
          return false;
        }
        continue;
      }
      if (!sliceable(p, x, n, dtype)) return false;
    }
    return !node.inputs.empty();
  }
};

}  // namespace

const Pass& concat_slices_pass() {
  static const ConcatSlices pass;
  return pass;
}

}  // namespace tern::passes
