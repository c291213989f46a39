#include "onnx/loader.h"

#include <algorithm>
#include <climits>
#include <set>
#include <unordered_map>

#include "base/check.h"
#include "base/file_io.h"
#include "onnx/attribute.h"
#include "onnx/onnx.pb.h"
#include "onnx/tensor_proto.h"
#include "ops/registry.h"

namespace tern::onnx {

namespace {

constexpr int64_t kMinIrVersion = 3;
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 17;
// protobuf parses at most 2 GiB (its sizes are int): larger files are refused unread.
constexpr int64_t kMaxProtobufBytes = INT_MAX;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// "exactly 1", "1 to 3", "at least 2" (variadic ops register a huge maximum).
std::string count_range(int lo, int hi) {
  if (lo == hi) return fmt::format("exactly {}", lo);
  if (hi >= (1 << 16)) return fmt::format("at least {}", lo);
  return fmt::format("{} to {}", lo, hi);
}

// Protobuf takes an int size: refuse what it cannot represent instead of truncating.
void check_parse_size(size_t size, const char* what) {
  TERN_CHECK(size > 0, ModelError, "not a valid {}: the input is empty (0 bytes)", what);
  TERN_CHECK(size <= static_cast<size_t>(INT_MAX), ModelError,
             "not a valid {}: {} bytes is over protobuf's 2 GiB limit", what, size);
}

// Builds an ir::Graph from a parsed ModelProto, checking as it goes.
class Importer {
 public:
  Importer(const ::onnx::ModelProto& model, const LoadLimits& limits)
      : model_(model), graph_(model.graph()), limits_(limits) {}

  ir::Graph run() {
    check_versions();
    TERN_CHECK(model_.has_graph(), ModelError, "the model has no graph");
    TERN_CHECK(
        graph_.sparse_initializer_size() == 0, UnsupportedOpError,
        "sparse initializer '{}' is not supported",
        graph_.sparse_initializer_size() ? graph_.sparse_initializer(0).values().name() : "");
    g_.ir_version = model_.ir_version();
    g_.producer = model_.producer_name();
    if (!model_.producer_version().empty()) g_.producer += " " + model_.producer_version();
    g_.name = graph_.name();
    // Cheap checks first, so a bad model fails before its weights are decoded.
    name_nodes();
    check_nodes();
    check_tensor_sizes();
    add_initializers();
    add_inputs();
    add_nodes();
    add_outputs();
    ir::verify_graph(g_);
    return std::move(g_);
  }

 private:
  void check_versions() {
    TERN_CHECK(model_.ir_version() >= kMinIrVersion, ModelError,
               "IR version {} is not supported: tern needs ONNX IR version {} or later",
               model_.ir_version(), kMinIrVersion);
    int opset = -1;
    for (const auto& op : model_.opset_import()) {
      if (!is_default_domain(op.domain())) continue;
      TERN_CHECK(opset < 0 || opset == op.version(), ModelError,
                 "opset_import lists the default domain twice, with versions {} and {}", opset,
                 op.version());
      TERN_CHECK(op.version() >= kMinOpset, ModelError,
                 "the model uses default-domain opset {}, which does not exist; tern supports "
                 "opsets {} to {}",
                 op.version(), kMinOpset, kMaxOpset);
      TERN_CHECK(op.version() <= kMaxOpset, UnsupportedOpError,
                 "the model uses default-domain opset {}; tern supports opsets {} to {}",
                 op.version(), kMinOpset, kMaxOpset);
      opset = static_cast<int>(op.version());
    }
    TERN_CHECK(opset > 0, ModelError,
               "opset_import has no entry for the default ONNX domain (\"\" or \"ai.onnx\")");
    g_.opset = opset;
  }

  // Node names: the ONNX name, or "<op_type>_<index>"; made unique with "_<k>" suffixes.
  void name_nodes() {
    std::set<std::string> used;
    std::unordered_map<std::string, int> next_suffix;
    names_.reserve(graph_.node_size());
    for (int i = 0; i < graph_.node_size(); ++i) {
      const auto& node = graph_.node(i);
      std::string base =
          node.name().empty() ? fmt::format("{}_{}", node.op_type(), i) : node.name();
      std::string name = base;
      while (used.count(name)) name = fmt::format("{}_{}", base, ++next_suffix[base]);
      used.insert(name);
      names_.push_back(std::move(name));
    }
  }

  std::string where(int i) const {
    return fmt::format("node '{}' ({})", names_[i], graph_.node(i).op_type());
  }

  // Domain, op type and input/output counts of every node.
  void check_nodes() {
    const auto& registry = ops::OpRegistry::global();
    for (int i = 0; i < graph_.node_size(); ++i) {
      const auto& node = graph_.node(i);
      TERN_CHECK(!node.op_type().empty(), ModelError, "node '{}' has no op_type", names_[i]);
      TERN_CHECK(is_default_domain(node.domain()), UnsupportedOpError,
                 "node '{}' uses op '{}' from domain '{}', which tern does not support (tern "
                 "implements the default ONNX domain only)",
                 names_[i], node.op_type(), node.domain());
      const ops::OpSchema* schema = registry.find(node.op_type());
      if (schema == nullptr || !schema->create) {
        TERN_THROW(UnsupportedOpError,
                   "node '{}' uses op '{}' (opset {}), which tern does not support; supported "
                   "ops: {}",
                   names_[i], node.op_type(), g_.opset, fmt::join(registry.op_types(), ", "));
      }
      check_count(i, "input", node.input(), schema->min_inputs, schema->max_inputs);
      check_count(i, "output", node.output(), schema->min_outputs, schema->max_outputs);
    }
  }

  // Trailing empty names are omitted optional inputs/outputs: not counted. Names below the
  // schema's minimum are required and must not be empty.
  void check_count(int i, const char* what,
                   const google::protobuf::RepeatedPtrField<std::string>& names, int lo,
                   int hi) const {
    const int n = used_count(names);
    TERN_CHECK(n >= lo && n <= hi, ModelError, "{} has {} {}s, but {} takes {}", where(i), n, what,
               graph_.node(i).op_type(), count_range(lo, hi));
    for (int k = 0; k < lo; ++k) {
      TERN_CHECK(!names[k].empty(), ModelError, "{}: {} {} is required but its name is empty",
                 where(i), what, k);
    }
  }

  static int used_count(const google::protobuf::RepeatedPtrField<std::string>& names) {
    int n = names.size();
    while (n > 0 && names[n - 1].empty()) --n;
    return n;
  }

  // Every tensor that will be decoded, checked against the limits before any allocation.
  void check_tensor_sizes() {
    int64_t total = 0;
    auto add = [&](const ::onnx::TensorProto& t, const std::string& what) {
      const TensorInfo info = check_tensor(t, limits_, what);
      total += info.bytes;  // each <= max_tensor_bytes (< 2^63), so no overflow per step
      TERN_CHECK(total <= limits_.max_model_bytes, ModelError,
                 "{}: the model's tensors reach {} bytes, over the limit of {} bytes "
                 "(LoadLimits::max_model_bytes)",
                 what, total, limits_.max_model_bytes);
    };
    for (const auto& t : graph_.initializer()) add(t, initializer_where(t));
    for (int i = 0; i < graph_.node_size(); ++i) {
      for (const auto& a : graph_.node(i).attribute()) {
        if (a.type() == ::onnx::AttributeProto::TENSOR && a.has_t()) {
          add(a.t(), fmt::format("{}: attribute '{}'", where(i), a.name()));
        }
      }
    }
  }

  static std::string initializer_where(const ::onnx::TensorProto& t) {
    return fmt::format("initializer '{}'", t.name());
  }

  void add_initializers() {
    for (const auto& t : graph_.initializer()) {
      const std::string what = initializer_where(t);
      TERN_CHECK(!t.name().empty(), ModelError, "an initializer has an empty name");
      TERN_CHECK(g_.find_value(t.name()) < 0, ModelError, "{} is defined more than once", what);
      ir::Value v;
      v.name = t.name();
      v.constant = decode_tensor(t, limits_, what);
      v.has_type = true;
      v.dtype = v.constant.dtype();
      v.has_shape = true;
      for (int64_t d : v.constant.shape()) v.dims.push_back({d, ""});
      g_.add_value(std::move(v));
    }
  }

  // Declared type and shape of a value (graph input/output or value_info). Tensor types
  // only; `strict` (graph inputs and outputs) rejects other kinds and unsupported dtypes,
  // otherwise such declarations are ignored (the value stays untyped).
  void apply_value_info(const ::onnx::ValueInfoProto& vi, ir::Value& v, const std::string& what,
                        bool strict) const {
    if (!vi.has_type()) return;
    const auto& type = vi.type();
    if (!type.has_tensor_type()) {
      TERN_CHECK(!strict || type.value_case() == ::onnx::TypeProto::VALUE_NOT_SET,
                 UnsupportedOpError,
                 "{} is not a tensor (a sequence, map, optional or sparse type): tern supports "
                 "dense tensors only",
                 what);
      return;
    }
    const auto& tt = type.tensor_type();
    if (tt.elem_type() != ::onnx::TensorProto::UNDEFINED) {
      try {
        v.dtype = to_dtype(tt.elem_type(), what);
        v.has_type = true;
      } catch (const Error&) {
        if (strict) throw;
      }
    }
    if (!tt.has_shape()) return;
    v.has_shape = true;
    v.dims.clear();
    for (const auto& d : tt.shape().dim()) {
      ir::Dim dim;
      if (d.has_dim_value()) {
        TERN_CHECK(d.dim_value() >= 0, ModelError, "{}: negative dim {} in its declared shape",
                   what, d.dim_value());
        dim.value = d.dim_value();
      } else if (d.has_dim_param()) {
        dim.param = d.dim_param();
      }
      v.dims.push_back(std::move(dim));
    }
  }

  void add_inputs() {
    std::set<std::string> seen;
    for (const auto& vi : graph_.input()) {
      const std::string what = fmt::format("graph input '{}'", vi.name());
      TERN_CHECK(!vi.name().empty(), ModelError, "a graph input has an empty name");
      TERN_CHECK(seen.insert(vi.name()).second, ModelError, "{} is listed twice", what);
      const int existing = g_.find_value(vi.name());
      if (existing >= 0) {
        // An initializer listed among the inputs (IR < 4 exporters): a constant, not an
        // input. Its declared dtype, if any, must agree with the data.
        ir::Value declared;
        apply_value_info(vi, declared, what, /*strict=*/false);
        const ir::Value& v = g_.values[existing];
        TERN_CHECK(!declared.has_type || declared.dtype == v.dtype, ModelError,
                   "{} is declared {} but its initializer is {}", what, dtype_name(declared.dtype),
                   dtype_name(v.dtype));
        continue;
      }
      ir::Value v;
      v.name = vi.name();
      apply_value_info(vi, v, what, /*strict=*/true);
      g_.inputs.push_back(g_.add_value(std::move(v)));
    }
  }

  // Creates node outputs (typed from value_info / graph outputs when declared), then
  // resolves inputs, decodes attributes and lets the op's factory check them.
  void add_nodes() {
    std::unordered_map<std::string, const ::onnx::ValueInfoProto*> infos;
    for (const auto& vi : graph_.value_info()) infos[vi.name()] = &vi;
    for (const auto& vi : graph_.output()) infos[vi.name()] = &vi;

    g_.nodes.resize(graph_.node_size());
    for (int i = 0; i < graph_.node_size(); ++i) {
      const auto& node = graph_.node(i);
      ir::Node& n = g_.nodes[i];
      n.name = names_[i];
      n.op_type = node.op_type();
      n.domain = "";  // check_nodes() accepted only "" / "ai.onnx"
      const int count = used_count(node.output());
      for (int k = 0; k < count; ++k) {
        const std::string& name = node.output(k);
        if (name.empty()) {
          n.outputs.push_back(-1);
          continue;
        }
        int id = g_.find_value(name);
        if (id < 0) {
          ir::Value v;
          v.name = name;
          if (auto it = infos.find(name); it != infos.end()) {
            apply_value_info(*it->second, v, fmt::format("value '{}'", name), false);
          }
          id = g_.add_value(std::move(v));
        }
        // A second writer is reported by verify_graph(); keep the first one here.
        if (g_.values[id].producer < 0) g_.values[id].producer = i;
        n.outputs.push_back(id);
      }
    }
    for (int i = 0; i < graph_.node_size(); ++i) {
      const auto& node = graph_.node(i);
      ir::Node& n = g_.nodes[i];
      const int count = used_count(node.input());
      for (int k = 0; k < count; ++k) {
        const std::string& name = node.input(k);
        if (name.empty()) {
          n.inputs.push_back(-1);
          continue;
        }
        const int id = g_.find_value(name);
        TERN_CHECK(id >= 0, ModelError,
                   "{}: input '{}' is not a graph input, an initializer or the output of any "
                   "node",
                   where(i), name);
        n.inputs.push_back(id);
      }
      for (const auto& a : node.attribute()) {
        TERN_CHECK(!a.name().empty(), ModelError, "{} has an attribute without a name", where(i));
        TERN_CHECK(n.attrs.count(a.name()) == 0, ModelError, "{}: attribute '{}' appears twice",
                   where(i), a.name());
        n.attrs.emplace(a.name(), decode_attribute(a, limits_, where(i)));
        TERN_CHECK(n.attrs[a.name()].type != ir::Attribute::Type::kGraph, UnsupportedOpError,
                   "{}: attribute '{}' is a graph: control flow is not supported", where(i),
                   a.name());
      }
      // The op's factory checks attribute types and values as the op's spec says.
      const ops::OpSchema* schema = ops::OpRegistry::global().find(n.op_type);
      const ops::Attrs attrs(n.attrs, fmt::format("{} '{}'", n.op_type, n.name));
      schema->create(attrs, ops::OpContext{n.name, n.op_type, g_.opset,
                                            static_cast<int>(n.outputs.size())});
    }
  }

  void add_outputs() {
    TERN_CHECK(graph_.output_size() > 0, ModelError, "the graph declares no outputs");
    std::set<std::string> seen;
    for (const auto& vi : graph_.output()) {
      const std::string what = fmt::format("graph output '{}'", vi.name());
      TERN_CHECK(!vi.name().empty(), ModelError, "a graph output has an empty name");
      TERN_CHECK(seen.insert(vi.name()).second, ModelError, "{} is listed twice", what);
      const int id = g_.find_value(vi.name());
      TERN_CHECK(id >= 0, ModelError, "{} is not produced by any node", what);
      // Check the declaration strictly (outputs must be dense tensors of supported types).
      ir::Value declared;
      apply_value_info(vi, declared, what, /*strict=*/true);
      g_.outputs.push_back(id);
    }
  }

  const ::onnx::ModelProto& model_;
  const ::onnx::GraphProto& graph_;
  const LoadLimits& limits_;
  std::vector<std::string> names_;  // unique node names, by node index
  ir::Graph g_;
};

template <typename Fn>
auto with_file_prefix(const std::string& path, Fn&& fn) {
  try {
    return fn();
  } catch (const IOError&) {
    throw;  // already names the file
  } catch (const Error& e) {
    rethrow_with_prefix(e, fmt::format("'{}': ", path));
  }
}

}  // namespace

ir::Graph load_model(const void* data, size_t size, const LoadLimits& limits) {
  check_parse_size(size, "ONNX model");
  ::onnx::ModelProto model;
  TERN_CHECK(model.ParseFromArray(data, static_cast<int>(size)), ModelError,
             "not a valid ONNX model (protobuf parse failed)");
  return Importer(model, limits).run();
}

ir::Graph load_model_file(const std::string& path, const LoadLimits& limits) {
  const std::string bytes = read_file_bytes(path, "ONNX model", kMaxProtobufBytes);
  return with_file_prefix(path, [&] { return load_model(bytes.data(), bytes.size(), limits); });
}

Tensor load_tensor_proto(const void* data, size_t size, const LoadLimits& limits) {
  check_parse_size(size, "TensorProto");
  ::onnx::TensorProto t;
  TERN_CHECK(t.ParseFromArray(data, static_cast<int>(size)), ModelError,
             "not a valid TensorProto (protobuf parse failed)");
  const std::string what = t.name().empty() ? "TensorProto" : fmt::format("tensor '{}'", t.name());
  LoadLimits one = limits;
  one.max_tensor_bytes = std::min(limits.max_tensor_bytes, limits.max_model_bytes);
  return decode_tensor(t, one, what);
}

Tensor load_tensor_proto_file(const std::string& path, const LoadLimits& limits) {
  const std::string bytes = read_file_bytes(path, "TensorProto (.pb)", kMaxProtobufBytes);
  return with_file_prefix(path,
                          [&] { return load_tensor_proto(bytes.data(), bytes.size(), limits); });
}

}  // namespace tern::onnx
