// The table of operators tern implements, keyed by ONNX op type (default domain).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/attrs.h"
#include "ops/op.h"

namespace tern::ops {

/// The domain of tern's internal ops (FusedConv, Reorder, ...). The loader accepts only
/// the default ONNX domain, so a model cannot use these directly.
inline constexpr const char* kInternalDomain = "tern";

/// How to create one ONNX op, and the input/output counts its spec allows.
struct OpSchema {
  std::string op_type;
  /// "" for the default ONNX domain; kInternalDomain for ops only tern's graph passes
  /// create (fused operators, layout reorders), which a model file cannot name.
  std::string domain;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  /// Parses and checks the attributes (ctx.opset selects the op version's semantics).
  /// Throws ModelError for a bad attribute, UnsupportedOpError for a valid but
  /// unimplemented attribute value.
  std::function<std::unique_ptr<Op>(const Attrs&, const OpContext&)> create;
};

/// All registered ops. Filled once, by register_all_ops() in registry.cc.
class OpRegistry {
 public:
  /// The process-wide, read-only registry.
  static const OpRegistry& global();

  /// Registers `schema`. Throws InvalidArgument when its op type is already registered.
  void add(OpSchema schema);
  /// The schema for `op_type` in the default domain, or nullptr.
  const OpSchema* find(const std::string& op_type) const;
  /// The schema for `op_type` in `domain` ("" or kInternalDomain), or nullptr.
  const OpSchema* find(const std::string& domain, const std::string& op_type) const;
  /// Sorted op types ("Abs", "Add", ...), for the "supported ops are ..." message.
  std::vector<std::string> op_types() const;

 private:
  std::map<std::string, OpSchema> schemas_;
};

/// Helper for registration: schema with a factory that constructs `OpT(attrs, ctx)`.
template <typename OpT>
OpSchema make_schema(std::string op_type, int min_in, int max_in, int min_out = 1,
                     int max_out = 1) {
  OpSchema s;
  s.op_type = std::move(op_type);
  s.min_inputs = min_in;
  s.max_inputs = max_in;
  s.min_outputs = min_out;
  s.max_outputs = max_out;
  s.create = [](const Attrs& a, const OpContext& c) -> std::unique_ptr<Op> {
    return std::make_unique<OpT>(a, c);
  };
  return s;
}

}  // namespace tern::ops
