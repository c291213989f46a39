// assign-layout: runs convolutions, and the ops between them, in the channel-blocked
// NCHWc layout (DESIGN.md "NCHWc"; c = Program::block, the SIMD width in floats).
//
// What it rewrites, decided once in execution order (a value is "blocked" when it will
// be stored as NCHWc: physical [N, ceil(C/c), H, W, c], channel ch at [n, ch/c, h, w, ch%c]):
// - Conv (2-D, float32, constant 4-D weights) becomes tern.FusedConv (no epilogue); every
//   such FusedConv gets y_layout NCHWc, and x_layout NCHWc when its input is blocked,
//   else NCHW: the network input stays NCHW and the first convolution reads it directly
//   (the paper's direct conv), so no reorder of the input exists. A FusedConv whose
//   residual Z is not blocked writes NCHW (Z is read in Y's layout); one whose output no
//   NCHWc op reads (only NCHW consumers or a graph output) also writes NCHW directly,
//   which saves a reorder. A FusedConv that reads NCHW and whose only readers are 1x1
//   convs writing NCHW writes NCHW as well: they run as a GEMM (feed_plain_pointwise).
//   So does one that reads an NCHW tensor of at least 8 channels and runs as a GEMM
//   itself (kernels/gemm, 1x1 or an implicit GEMM), where its rows fill the vectors
//   better than its channels would and every reader would read NCHW anyway
//   (plain_gemm_writer).
// - Elementwise ops whose inputs are blocked values of one logical shape, or constant
//   float32 scalars: unary (Relu, LeakyRelu, Sigmoid, Clip, HardSwish, HardSigmoid,
//   Tanh, ...) and Add, Sub, Mul, Div, Max, Min. They run unchanged on the 5-D tensors.
//   A binary op's blocked input may also hold one value per channel ([N or 1, C, 1, 1]
//   against [N, C, H, W]: a squeeze-and-excitation block's scale): its [N or 1, Cb, 1, 1,
//   c] broadcasts lane by lane over the map's [N, Cb, H, W, c] (ops/binary.cc runs it in
//   rows of c).
// - MaxPool / AveragePool (2-D, one output): the 3-D pooling over [H, W, c] with kernel
//   [kh, kw, 1], strides [sh, sw, 1], dilations [dh, dw, 1], pads [t, l, 0, b, r, 0] is the
//   2-D pooling of every channel (a size-1 window with stride 1 along the lanes; auto_pad
//   and ceil_mode add nothing there). GlobalAveragePool / GlobalMaxPool become
//   AveragePool / MaxPool with kernel [H, W, 1]: [N, Cb, 1, 1, c], the NCHWc result.
// - tern.ScaleShift (per-channel x * scale + shift, from fold-batch-norm) on a blocked
//   input: attributes block = c and channels = C (scale and shift stay [C]).
// - Concat on axis 1 (or -3) of blocked inputs whose channel counts are all multiples of
//   c: Concat on axis 1 of the 5-D tensors (no padded lanes inside the result). Other
//   channel counts: the same with attributes block = c and channels = the inputs' counts,
//   which moves each input's channels to their lanes (ops/concat.cc, kernels/concat).
// - Resize (nearest or linear, coordinate modes for which scale 1 maps every index to
//   itself, i.e. not tf_half_pixel_for_nn or tf_crop_and_resize; constant scales with N
//   and C scales 1, or constant sizes keeping N and C): the same Resize of the 5-D tensor
//   with a trailing scale 1 (sizes: [N, Cb, h, w, c]) is the per-lane resize. The new
//   scales/sizes are new constants; the model's constants are never modified.
// Everything else stays NCHW. A tern.Reorder (to NCHW) is inserted after a blocked value
// only where it is needed: one per value, shared by all its NCHW consumers, and before
// every graph output (outputs keep the layout the model declares). The pass never
// converts NCHW to NCHWc (only FusedConv enters NCHWc, reading NCHW directly), so no
// NCHWc -> NCHW -> NCHWc pair of reorders can arise.
//
// Legal only on 4-D float32 values with static shapes (every dim >= 1); any other value
// and its consumers are left alone.
//
// Padded lanes: every blocked value this pass creates has zero padded lanes (ch >= C).
// FusedConv writes them 0; pooling, resize and concat of zero lanes give zero lanes (a
// Concat that moves channels between lanes never reads its inputs' padded lanes and
// writes its own 0).
// An elementwise op that maps 0 to a non-zero value (Sigmoid: 0.5; Add of a constant
// k != 0; Div: 0/0 = NaN) is converted only when its channel count is a multiple of c
// (no padded lanes exist); otherwise it stays NCHW behind a reorder. So a consumer (the
// NCHWc FusedConv, whose packed weights of padded channels might meet a NaN or Inf
// otherwise) may rely on zero padded lanes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "ops/registry.h"
#include "passes/pass.h"

namespace tern::passes {
namespace {

// Unary elementwise ops with f(0) = 0 for every attribute value (LeakyRelu, Elu, Selu,
// Celu scale or shift x only where x != 0; ThresholdedRelu returns 0 or x).
constexpr const char* kZeroKeepingUnary[] = {
    "Relu", "LeakyRelu", "Tanh", "HardSwish", "Elu",   "Selu", "Celu",  "Neg", "Abs",
    "Sign", "Softsign",  "Erf",  "Sqrt",      "Floor", "Ceil", "Round", "Sin", "ThresholdedRelu"};
// Unary elementwise ops with f(0) != 0 (or that depend on attributes: Clip, HardSigmoid):
// converted only where no padded lanes exist.
constexpr const char* kOtherUnary[] = {"Sigmoid", "HardSigmoid", "Exp", "Softplus",
                                       "Cos",     "Reciprocal",  "Log", "Clip"};

// Input channels from which a conv reading NCHW may write NCHW (plain_gemm_writer).
constexpr int64_t kMinGemmChannels = 8;

template <size_t N>
bool one_of(const std::string& s, const char* const (&list)[N]) {
  return std::any_of(std::begin(list), std::end(list), [&](const char* x) { return s == x; });
}

bool is_binary(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min";
}

ir::Attribute make_ints_attr(std::vector<int64_t> v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInts;
  a.ints = std::move(v);
  return a;
}

ir::Attribute make_int_attr(int64_t v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInt;
  a.i = v;
  return a;
}

ir::Attribute make_string_attr(std::string v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kString;
  a.s = std::move(v);
  return a;
}

/// How a node takes part: left alone, converted to run on NCHWc inputs, or a
/// convolution (FusedConv) with its own input and output layouts.
enum class Role { kPlain, kBlocked, kConv };

/// The decisions of one run, made on the program's logical (pre-pass) types.
class LayoutPlanner {
 public:
  explicit LayoutPlanner(Program& p) : p_(p), c_(p.block), logical_(p.types) {
    blocked_.assign(p.graph.values.size(), false);
    role_.assign(p.graph.nodes.size(), Role::kPlain);
    decided_.assign(p.graph.nodes.size(), false);
    reads_blocked_.resize(p.graph.nodes.size());
  }

  int run() {
    for (int n : p_.order()) {
      decide(n);
      decided_[n] = true;
    }
    write_plain_where_unread();
    feed_plain_pointwise();
    int changes = 0;
    for (size_t n = 0; n < role_.size(); ++n) changes += rewrite(static_cast<int>(n));
    changes += insert_reorders();
    if (changes > 0) analyze(p_);
    return changes;
  }

 private:
  // Whether conv node `node` adds a residual Z (input 3).
  static bool has_residual(const ir::Node& node) {
    return node.inputs.size() > 3 && node.inputs[3] >= 0;
  }

  // A 4-D float32 value of static shape with every dim >= 1.
  bool image(int v) const {
    if (v < 0 || !logical_[v] || logical_[v]->dtype != DType::kFloat32) return false;
    const Shape& s = logical_[v]->shape;
    return s.size() == 4 && std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 1; });
  }
  int64_t channels(int v) const { return logical_[v]->shape[1]; }
  // True when the value's channels fill whole blocks: no padded lanes exist.
  bool no_padding(int v) const { return channels(v) % c_ == 0; }
  // A constant float32 scalar (one element, rank <= 4) and its value.
  std::optional<float> constant_scalar(int v) const {
    if (v < 0 || !p_.known[v].defined()) return std::nullopt;
    const Tensor& t = p_.known[v];
    if (t.dtype() != DType::kFloat32 || t.numel() != 1 || t.rank() > 4) return std::nullopt;
    return t.to_float_vector()[0];
  }
  bool output_used(int v) const {
    return v >= 0 && (p_.is_graph_output(v) || !p_.consumers(v).empty());
  }

  void decide(int n) {
    const ir::Node& node = p_.graph.nodes[n];
    if (node.outputs.empty() || !image(node.outputs[0])) return;
    const bool conv = (node.domain.empty() && node.op_type == "Conv") ||
                      (node.domain == ops::kInternalDomain && node.op_type == "FusedConv");
    if (conv) {
      decide_conv(n);
      return;
    }
    if (node.domain == ops::kInternalDomain && node.op_type == "ScaleShift") {
      // Per-channel x * scale + shift; its NCHWc form writes padded lanes as 0.
      if (blocked_input(node, 0) && node.outputs.size() == 1) mark_blocked(n);
      return;
    }
    if (!node.domain.empty() || node.outputs.size() != 1) {
      if (!(node.op_type == "MaxPool" && node.domain.empty() && !output_used(node.outputs[1])))
        return;
    }
    bool ok = false;
    const std::string& op = node.op_type;
    if (one_of(op, kZeroKeepingUnary) || one_of(op, kOtherUnary)) {
      ok = unary_ok(node);
    } else if (is_binary(op)) {
      ok = binary_ok(node);
    } else if (op == "MaxPool" || op == "AveragePool") {
      auto it = node.attrs.find("kernel_shape");
      ok = blocked_input(node, 0) && it != node.attrs.end() && it->second.ints.size() == 2;
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      ok = blocked_input(node, 0);
    } else if (op == "Concat") {
      ok = concat_ok(node);
    } else if (op == "Resize") {
      ok = resize_ok(node);
    }
    if (ok) mark_blocked(n);
  }

  // Node n runs on NCHWc: its output is blocked, and it reads its blocked inputs so.
  void mark_blocked(int n) {
    const ir::Node& node = p_.graph.nodes[n];
    role_[n] = Role::kBlocked;
    blocked_[node.outputs[0]] = true;
    reads_blocked_[n].assign(node.inputs.size(), false);
    for (size_t k = 0; k < node.inputs.size(); ++k)
      reads_blocked_[n][k] = node.inputs[k] >= 0 && blocked_[node.inputs[k]];
  }

  bool blocked_input(const ir::Node& node, size_t k) const {
    return k < node.inputs.size() && node.inputs[k] >= 0 && blocked_[node.inputs[k]];
  }

  // Conv / FusedConv: X image, constant 4-D float32 weights.
  void decide_conv(int n) {
    const ir::Node& node = p_.graph.nodes[n];
    if (node.inputs.size() < 2 || !image(node.inputs[0])) return;
    const Tensor& w = p_.known[node.inputs[1]];
    if (!w.defined() || w.dtype() != DType::kFloat32 || w.rank() != 4) return;
    if (node.inputs.size() > 2 && node.inputs[2] >= 0 && !p_.known[node.inputs[2]].defined())
      return;
    const int z = node.inputs.size() > 3 ? node.inputs[3] : -1;
    if (z >= 0 && !image(z)) return;
    role_[n] = Role::kConv;
    reads_blocked_[n].assign(node.inputs.size(), false);
    reads_blocked_[n][0] = blocked_[node.inputs[0]];
    // Z is read in Y's layout: an NCHW residual makes the conv write NCHW.
    const bool y_blocked = (z < 0 || blocked_[z]) && !plain_gemm_writer(n);
    if (z >= 0) reads_blocked_[n][3] = y_blocked;
    blocked_[node.outputs[0]] = y_blocked;
  }

  // Whether conv node n, which reads NCHW, writes NCHW and runs as a GEMM (kernels/gemm:
  // the pixels along the vectors): it has at least kMinGemmChannels input channels (it
  // reads what an op the pass does not convert wrote, not the network's 1 to 4 channel
  // image, whose first-layer kernel writes NCHWc for the convs after it); it runs as a
  // GEMM from NCHW to NCHW (plain_conv_kernel) and
  // its output rows fill the vectors better than its channels fill blocks
  // (rows_fill_vectors_better); its residual, if any, is not NCHWc (Z is read in Y's
  // layout: it would need a reorder); and every reader would read NCHW anyway
  // (reads_plain_anyway): it then needs no reorder. ppocr's 96 -> 24 3x3 convs at 16
  // lanes: 96 and 48 pixel rows fill every lane, 24 channels 75 % (conv_bench: 1.95 ->
  // 1.53 ms at 64 x 96); 24 and 12 pixel rows fill 75 % too, and kept NCHWc they are
  // 1.16 and 1.19x faster. (They, and its head's after the Concat of 24-channel maps,
  // read NCHWc since its SE blocks' per-channel Mul and that Concat run on the blocks, and
  // run as winograd: 0.54 and 0.49 ms at 64 x 96.)
  bool plain_gemm_writer(int n) const {
    const ir::Node& node = p_.graph.nodes[n];
    const int x = node.inputs[0], y = node.outputs[0];
    if (blocked_[x] || channels(x) < kMinGemmChannels) return false;
    const int z = node.inputs.size() > 3 ? node.inputs[3] : -1;
    if (z >= 0 && blocked_[z]) return false;
    if (!rows_fill_vectors_better(logical_[y]->shape[3], channels(y), c_)) return false;
    if (plain_conv_kernel(p_, node, p_.known[node.inputs[1]].shape(), c_) !=
        PlainConvKernel::kGemm) {
      return false;
    }
    const std::vector<int> readers = p_.consumers(y);
    return std::all_of(readers.begin(), readers.end(),
                       [&](int m) { return reads_plain_anyway(m, y); });
  }

  // Whether node m would read value y (4-D, NCHW) without an NCHWc version of it: a conv
  // that reads y as its X and runs as a GEMM itself; a global pool (its [N, C, 1, 1]
  // output is as cheap either way); a binary op or a Concat that stays NCHW for another
  // input (binary_ok and concat_ok need every input blocked: a per-channel constant, or a
  // map broadcast over channels, an input certainly NCHW, or padded lanes it would not
  // keep zero); or an op the pass never converts. Unary ops, pools and Resize follow y's
  // layout, and so would the ops after them (so a binary op may, whose other input holds
  // one value per channel and is not certainly NCHW: a squeeze-and-excitation block's
  // scale from y's own global pool).
  bool reads_plain_anyway(int m, int y) const {
    const ir::Node& reader = p_.graph.nodes[m];
    const std::string& op = reader.op_type;
    const bool internal = reader.domain == ops::kInternalDomain;
    if ((reader.domain.empty() && op == "Conv") || (internal && op == "FusedConv")) {
      if (reader.inputs.size() < 2 || reader.inputs[0] != y) return false;
      for (size_t k = 1; k < reader.inputs.size(); ++k) {
        if (reader.inputs[k] == y) return false;
      }
      const Tensor& w = p_.known[reader.inputs[1]];
      return w.defined() && w.rank() == 4 &&
             plain_conv_kernel(p_, reader, w.shape(), c_) == PlainConvKernel::kGemm;
    }
    if (internal) return op != "ScaleShift";
    if (!reader.domain.empty()) return true;
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return true;
    if (is_binary(op)) return other_input_plain(reader, y, 0);
    if (op == "Concat") return !concat_axis_ok(reader) || concat_input_plain(reader, y, 0);
    return !(one_of(op, kZeroKeepingUnary) || one_of(op, kOtherUnary) || op == "MaxPool" ||
             op == "AveragePool" || op == "Resize");
  }

  // Whether binary node `node` stays NCHW whatever y is (y: one of its inputs, or its
  // output): binary_ok would refuse it on padded lanes that it does not keep zero (a Div by
  // a map), or an input other than y stays NCHW: a tensor of another shape (a broadcast)
  // unless it holds one value per channel of the other (channel_broadcast), or one
  // certainly stored NCHW (plain_for_sure). Constant scalars do not count.
  bool other_input_plain(const ir::Node& node, int y, int depth) const {
    if (!image(y) || legacy_broadcast(node)) return true;
    if (!no_padding(y) && !binary_keeps_zero(node)) return true;
    for (int v : node.inputs) {
      if (v < 0 || v == y || constant_scalar(v)) continue;
      if (!image(v)) return true;
      if (!(logical_[v]->shape == logical_[y]->shape) && !channel_broadcast(v, y) &&
          !channel_broadcast(y, v)) {
        return true;
      }
      if (plain_for_sure(v, depth + 1)) return true;
    }
    return false;
  }

  // Whether an input of Concat node `node` other than y is certainly NCHW (concat_ok
  // needs every input blocked).
  bool concat_input_plain(const ir::Node& node, int y, int depth) const {
    for (int v : node.inputs) {
      if (v >= 0 && v != y && plain_for_sure(v, depth + 1)) return true;
    }
    return false;
  }

  // Whether value v will be stored NCHW however the convs not decided yet are laid out:
  // decided already and plain, not an image, or written by an op that runs NCHW on any
  // input (a broadcasting binary op, a binary op or Concat with a plain input, a unary op
  // or pool of a plain value, an op never converted). Unknown (false) for convs and past
  // a few producers.
  bool plain_for_sure(int v, int depth) const {
    if (v < 0 || !image(v)) return true;
    const int prod = p_.graph.values[v].producer;
    if (prod < 0 || decided_[prod]) return !blocked_[v];
    if (depth > 4) return false;
    const ir::Node& node = p_.graph.nodes[prod];
    const std::string& op = node.op_type;
    if (node.domain == ops::kInternalDomain) return op != "FusedConv" && op != "ScaleShift";
    if (!node.domain.empty()) return true;
    if (op == "Conv") return false;
    if (is_binary(op)) return other_input_plain(node, v, depth);
    if (op == "Concat") return !concat_axis_ok(node) || concat_input_plain(node, -1, depth);
    // A unary op that unary_ok refuses whatever its input (a Sigmoid on padded lanes).
    if ((one_of(op, kZeroKeepingUnary) || one_of(op, kOtherUnary)) && !unary_lanes_ok(node, v))
      return true;
    if (one_of(op, kZeroKeepingUnary) || one_of(op, kOtherUnary) || op == "MaxPool" ||
        op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool" ||
        op == "Resize") {
      return node.inputs.empty() || plain_for_sure(node.inputs[0], depth + 1);
    }
    return true;
  }

  bool unary_ok(const ir::Node& node) const {
    return blocked_input(node, 0) && unary_lanes_ok(node, node.outputs[0]);
  }

  // Whether unary node `node`, its output y (an image), may run on the blocks given its
  // attributes and y's padded lanes: Clip's bounds constant scalars, and no padded lanes
  // or f(0) = 0 there.
  bool unary_lanes_ok(const ir::Node& node, int y) const {
    for (size_t k = 1; k < node.inputs.size(); ++k) {  // Clip's min and max
      if (node.inputs[k] >= 0 && !constant_scalar(node.inputs[k])) return false;
    }
    if (no_padding(y) || one_of(node.op_type, kZeroKeepingUnary)) return true;
    if (node.op_type == "Clip") {
      float lo = -INFINITY, hi = INFINITY;
      if (node.inputs.size() > 1 && node.inputs[1] >= 0) lo = *constant_scalar(node.inputs[1]);
      if (node.inputs.size() > 2 && node.inputs[2] >= 0) hi = *constant_scalar(node.inputs[2]);
      for (const char* name : {"min", "max"}) {  // Clip-6 attributes
        auto it = node.attrs.find(name);
        if (it != node.attrs.end()) (name[1] == 'i' ? lo : hi) = it->second.f;
      }
      return lo <= 0.0f && 0.0f <= hi;
    }
    return false;  // f(0) != 0 and padded lanes exist
  }

  // Whether value v's logical shape is [1 or N, C, 1, 1] against y's [N, C, H, W] (one
  // value per channel: a squeeze-and-excitation block's scale): as NCHWc, [1 or N, Cb, 1,
  // 1, c] broadcasts to y's [N, Cb, H, W, c] lane by lane, each lane its channel's value.
  bool channel_broadcast(int v, int y) const {
    const Shape& s = logical_[v]->shape;
    const Shape& o = logical_[y]->shape;
    return (s[0] == 1 || s[0] == o[0]) && s[1] == o[1] && s[2] == 1 && s[3] == 1;
  }

  // Whether binary node `node` broadcasts the legacy way (attributes broadcast and axis,
  // opset < 7), aligning B by the logical rank: not converted.
  static bool legacy_broadcast(const ir::Node& node) {
    return node.attrs.count("broadcast") > 0 || node.attrs.count("axis") > 0;
  }

  // Every input blocked with the output's logical shape or one value per channel
  // (channel_broadcast), or a constant scalar; at least one blocked; no legacy
  // broadcasting. With padded lanes, only ops that keep zero lanes zero (every blocked
  // input's padded lanes are 0).
  bool binary_ok(const ir::Node& node) const {
    const int y = node.outputs[0];
    const std::string& op = node.op_type;
    if ((op == "Max" || op == "Min") ? node.inputs.empty() : node.inputs.size() != 2) return false;
    if (legacy_broadcast(node)) return false;
    bool any_blocked = false;
    for (int v : node.inputs) {
      if (v < 0) return false;
      if (blocked_[v]) {
        if (!(logical_[v]->shape == logical_[y]->shape) && !channel_broadcast(v, y)) return false;
        any_blocked = true;
      } else if (!constant_scalar(v)) {
        return false;
      }
    }
    return any_blocked && (no_padding(y) || binary_keeps_zero(node));
  }

  // Whether binary node `node`, with its inputs that are not constant scalars blocked,
  // keeps zero padded lanes zero: not a Div by a blocked input (0 / 0), nor the constants
  // that move 0 (Add or Sub of k != 0, Mul by Inf or NaN, Div by 0 or NaN or of k, Max
  // with k > 0, Min with k < 0).
  bool binary_keeps_zero(const ir::Node& node) const {
    const std::string& op = node.op_type;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const std::optional<float> s =
          node.inputs[k] >= 0 ? constant_scalar(node.inputs[k]) : std::nullopt;
      if (!s) {
        if (op == "Div" && k == 1) return false;  // x / 0 on the padded lanes
        continue;
      }
      const float x = *s;
      if ((op == "Add" || op == "Sub") && x != 0.0f) return false;
      if (op == "Mul" && !std::isfinite(x)) return false;
      if (op == "Div" && (k != 1 || x == 0.0f || std::isnan(x))) return false;
      if (op == "Max" && !(x <= 0.0f)) return false;
      if (op == "Min" && !(x >= 0.0f)) return false;
    }
    return true;
  }

  // A Concat along the channels (axis 1 or -3 of 4-D values).
  static bool concat_axis_ok(const ir::Node& node) {
    auto it = node.attrs.find("axis");
    return it != node.attrs.end() && (it->second.i == 1 || it->second.i == -3);
  }

  bool concat_ok(const ir::Node& node) const {
    if (!concat_axis_ok(node)) return false;
    for (int v : node.inputs) {
      if (v < 0 || !blocked_[v]) return false;
    }
    return !node.inputs.empty();
  }

  // Whether Concat node `node` (concat_ok) joins an input whose channels do not fill its
  // blocks: it then takes attributes block and channels.
  bool concat_moves_lanes(const ir::Node& node) const {
    return std::any_of(node.inputs.begin(), node.inputs.end(),
                       [&](int v) { return !no_padding(v); });
  }

  // The index of Resize's scales input (opset 10: 1, 11+: 2) and of sizes (11+: 3).
  int scales_index() const { return p_.graph.opset >= 11 ? 2 : 1; }

  bool resize_ok(const ir::Node& node) const {
    if (!blocked_input(node, 0) || p_.graph.opset < 10) return false;
    const std::string mode = passes::string_attr(node, "mode", "nearest");
    if (mode != "nearest" && mode != "linear") return false;
    if (p_.graph.opset >= 11) {
      const std::string coord =
          passes::string_attr(node, "coordinate_transformation_mode", "half_pixel");
      if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" &&
          coord != "asymmetric")
        return false;
      if (node.attrs.count("axes") || node.attrs.count("antialias")) return false;
    }
    const int x = node.inputs[0];
    const Shape& in = logical_[x]->shape;
    auto given = [&](size_t k) {
      return k < node.inputs.size() && node.inputs[k] >= 0 &&
             (!logical_[node.inputs[k]] || shape_numel(logical_[node.inputs[k]]->shape) > 0);
    };
    const size_t si = static_cast<size_t>(scales_index());
    if (given(si)) {
      const Tensor& s = p_.known[node.inputs[si]];
      if (!s.defined() || s.dtype() != DType::kFloat32 || s.numel() != 4 || given(3)) return false;
      const std::vector<float> v = s.to_float_vector();
      return v[0] == 1.0f && v[1] == 1.0f;
    }
    if (p_.graph.opset < 11 || !given(3)) return false;
    const Tensor& s = p_.known[node.inputs[3]];
    if (!s.defined() || s.dtype() != DType::kInt64 || s.numel() != 4) return false;
    const std::vector<int64_t> v = s.to_int64_vector();
    return v[0] == in[0] && v[1] == in[1];
  }

  // A FusedConv whose output no NCHWc op reads writes NCHW itself (no reorder needed);
  // not with a residual Z, which is then read in NCHWc.
  void write_plain_where_unread() {
    for (size_t n = 0; n < role_.size(); ++n) {
      if (role_[n] != Role::kConv) continue;
      const ir::Node& node = p_.graph.nodes[n];
      const int y = node.outputs[0];
      if (!blocked_[y] || has_residual(node)) continue;
      bool read_blocked = false;
      for (int m : p_.consumers(y)) {
        for (size_t k = 0; k < p_.graph.nodes[m].inputs.size(); ++k) {
          if (p_.graph.nodes[m].inputs[k] == y && !reads_blocked_[m].empty() &&
              reads_blocked_[m][k])
            read_blocked = true;
        }
      }
      if (!read_blocked) blocked_[y] = false;
    }
  }

  // A conv that reads NCHW (a conv between NCHW-only ops, as in ppocr's head) and whose
  // every reader is a 1x1 conv with stride 1, no padding and one group writing NCHW
  // writes NCHW too, and they read it so: they run FusedConv's gemm algorithm (the pixels
  // along the vectors) instead of the NCHWc pointwise kernel, whose NCHW stores scatter
  // every vector over c planes. Only where the conv keeps a SIMD kernel from NCHW to NCHW
  // (plain_conv_kernel), and not for a conv reading NCHWc (the detection heads' 1x1 convs
  // after a depthwise one): the depthwise kernel would then write NCHW lane by lane.
  void feed_plain_pointwise() {
    for (size_t n = 0; n < role_.size(); ++n) {
      if (role_[n] != Role::kConv || reads_blocked_[n][0]) continue;
      const ir::Node& node = p_.graph.nodes[n];
      const int y = node.outputs[0];
      if (!blocked_[y] || has_residual(node) || p_.is_graph_output(y)) continue;
      if (plain_conv_kernel(p_, node, p_.known[node.inputs[1]].shape(), c_) ==
          PlainConvKernel::kReference) {
        continue;
      }
      const std::vector<int> readers = p_.consumers(y);
      if (readers.empty()) continue;
      if (!std::all_of(readers.begin(), readers.end(),
                       [&](int m) { return plain_pointwise_reader(m, y); })) {
        continue;
      }
      blocked_[y] = false;
      for (int m : readers) reads_blocked_[m][0] = false;
    }
  }

  // Node m is a conv writing NCHW that reads y as its X only: 1x1, stride 1, no padding,
  // one group (pointwise_one_group), no residual, not followed by an NHWC Transpose.
  bool plain_pointwise_reader(int m, int y) const {
    if (role_[m] != Role::kConv) return false;
    const ir::Node& node = p_.graph.nodes[m];
    if (node.inputs[0] != y || blocked_[node.outputs[0]]) return false;
    for (size_t k = 1; k < node.inputs.size(); ++k) {
      if (node.inputs[k] == y) return false;
    }
    if (has_residual(node)) return false;
    // Not a detection head (read_by_nhwc_transpose): it keeps the kernels that write NHWC.
    if (read_by_nhwc_transpose(p_, node.outputs[0])) return false;
    return pointwise_one_group(node, p_.known[node.inputs[1]].shape());
  }

  // Rewrites node n's type, attributes or constant inputs for its role; returns 1 when
  // it changed.
  int rewrite(int n) {
    if (role_[n] == Role::kPlain) return 0;
    ir::Node& node = p_.graph.nodes[n];
    const Layout blocked{LayoutKind::kNCHWc, c_};
    p_.layouts[node.outputs[0]] = blocked_[node.outputs[0]] ? blocked : Layout{};
    if (role_[n] == Role::kConv) {
      node.op_type = "FusedConv";
      node.domain = ops::kInternalDomain;
      node.attrs["x_layout"] = make_string_attr(reads_blocked_[n][0] ? "NCHWc" : "NCHW");
      node.attrs["y_layout"] = make_string_attr(blocked_[node.outputs[0]] ? "NCHWc" : "NCHW");
      node.attrs["block"] = make_int_attr(c_);
      if (!node.attrs.count("weight_layout"))
        node.attrs["weight_layout"] = make_string_attr("OIHW");
      return 1;
    }
    const std::string& op = node.op_type;
    if (op == "MaxPool" || op == "AveragePool") {
      auto extend = [&](const char* name, int64_t lane) {
        auto it = node.attrs.find(name);
        if (it == node.attrs.end()) return;
        std::vector<int64_t>& v = it->second.ints;
        if (v.size() == 4) {  // pads: [t, l, b, r] -> [t, l, 0, b, r, 0]
          v = {v[0], v[1], 0, v[2], v[3], 0};
        } else {
          v.push_back(lane);
        }
      };
      extend("kernel_shape", 1);
      extend("strides", 1);
      extend("dilations", 1);
      extend("pads", 0);
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      const Shape& x = logical_[node.inputs[0]]->shape;
      node.op_type = op == "GlobalAveragePool" ? "AveragePool" : "MaxPool";
      node.attrs.clear();
      node.attrs["kernel_shape"] = make_ints_attr({x[2], x[3], 1});
    } else if (op == "Concat") {
      node.attrs["axis"] = make_int_attr(1);
      if (concat_moves_lanes(node)) {
        std::vector<int64_t> counts;
        for (int v : node.inputs) counts.push_back(channels(v));
        node.attrs["block"] = make_int_attr(c_);
        node.attrs["channels"] = make_ints_attr(std::move(counts));
      }
    } else if (op == "Resize") {
      rewrite_resize(node);
    } else if (op == "ScaleShift") {
      node.attrs["block"] = make_int_attr(c_);
      node.attrs["channels"] = make_int_attr(channels(node.inputs[0]));
    }
    return 1;
  }

  void rewrite_resize(ir::Node& node) {
    const int si = scales_index();
    const bool has_scales = static_cast<int>(node.inputs.size()) > si && node.inputs[si] >= 0 &&
                            p_.known[node.inputs[si]].defined() &&
                            p_.known[node.inputs[si]].numel() == 4;
    Tensor t;
    int k = 3;
    if (has_scales) {
      std::vector<float> s = p_.known[node.inputs[si]].to_float_vector();
      s.push_back(1.0f);
      t = Tensor::from_vector(s, {5});
      k = si;
    } else {
      std::vector<int64_t> s = p_.known[node.inputs[3]].to_int64_vector();
      s[1] = (s[1] + c_ - 1) / c_;
      s.push_back(c_);
      t = Tensor::from_vector_i64(s, {5});
    }
    const int v =
        p_.add_value(fmt::format("{}_{}_nchwc", node.name, has_scales ? "scales" : "sizes"),
                     ops::TensorType{t.dtype(), t.shape()});
    p_.graph.values[v].constant = t;
    p_.known[v] = t;
    node.inputs[k] = v;
  }

  // One Reorder to NCHW per blocked value that an NCHW consumer reads or the graph
  // returns. A returned value keeps its id for the reorder's output (so the graph's
  // outputs are unchanged) and its producer writes a new blocked value instead.
  int insert_reorders() {
    int made = 0;
    const size_t num_values = blocked_.size();
    for (size_t vi = 0; vi < num_values; ++vi) {
      const int v = static_cast<int>(vi);
      if (!blocked_[v]) continue;
      std::vector<std::pair<int, size_t>> plain_slots, blocked_slots;
      for (int m : p_.consumers(v)) {
        const ir::Node& node = p_.graph.nodes[m];
        for (size_t k = 0; k < node.inputs.size(); ++k) {
          if (node.inputs[k] != v) continue;
          const bool reads_blocked = static_cast<size_t>(m) < reads_blocked_.size() &&
                                     !reads_blocked_[m].empty() && reads_blocked_[m][k];
          (reads_blocked ? blocked_slots : plain_slots).emplace_back(m, k);
        }
      }
      const bool output = p_.is_graph_output(v);
      if (plain_slots.empty() && !output) continue;
      const std::string name = p_.graph.values[v].name;
      ir::Node reorder;
      reorder.name = unique_node_name(p_, fmt::format("{}_to_nchw", name));
      reorder.op_type = "Reorder";
      reorder.domain = ops::kInternalDomain;
      reorder.attrs["to"] = make_string_attr("NCHW");
      reorder.attrs["channels"] = make_int_attr(channels(v));
      const int node_index = static_cast<int>(p_.graph.nodes.size());
      if (output) {
        const int b = p_.add_value(fmt::format("{}_nchwc", name), std::nullopt);
        const int producer = p_.graph.values[v].producer;
        std::replace(p_.graph.nodes[producer].outputs.begin(),
                     p_.graph.nodes[producer].outputs.end(), v, b);
        p_.graph.values[b].producer = producer;
        p_.graph.values[v].producer = node_index;
        for (auto [m, k] : blocked_slots) p_.graph.nodes[m].inputs[k] = b;
        p_.layouts[b] = p_.layouts[v];
        p_.layouts[v] = Layout{};
        reorder.inputs = {b};
        reorder.outputs = {v};
      } else {
        const int plain = p_.add_value(fmt::format("{}_nchw", name), std::nullopt);
        p_.graph.values[plain].producer = node_index;
        for (auto [m, k] : plain_slots) p_.graph.nodes[m].inputs[k] = plain;
        reorder.inputs = {v};
        reorder.outputs = {plain};
      }
      p_.graph.nodes.push_back(std::move(reorder));
      ++made;
    }
    return made;
  }

  Program& p_;
  int c_;
  const std::vector<std::optional<ops::TensorType>> logical_;  // pre-pass (NCHW) types
  std::vector<bool> blocked_;                                  // per value: stored as NCHWc
  std::vector<Role> role_;                                     // per node
  std::vector<bool> decided_;  // per node: decide() has run (execution order)
  // Per node, per input slot: true when the slot reads the value's NCHWc version (empty
  // for nodes left alone).
  std::vector<std::vector<bool>> reads_blocked_;
};

class AssignLayout final : public Pass {
 public:
  const char* name() const override { return "assign-layout"; }
  const char* summary() const override {
    return "run convolutions and the ops between them in NCHWc";
  }
  int run(Program& p) const override {
    // Runs once, on a plain program: a program already holding NCHWc values is left alone.
    const bool any_blocked = std::any_of(p.layouts.begin(), p.layouts.end(),
                                         [](Layout l) { return l.kind == LayoutKind::kNCHWc; });
    if (any_blocked || p.block < 1) return 0;
    return LayoutPlanner(p).run();
  }
};

}  // namespace

const Pass& assign_layout_pass() {
  static const AssignLayout pass;
  return pass;
}

}  // namespace tern::passes
