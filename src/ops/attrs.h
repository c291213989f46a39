// Typed access to a node's attributes for op factories. Each getter checks the ONNX
// attribute type and throws ModelError naming the node and attribute when it is wrong
// or (for require_*) missing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tern::ops {

/// Reads the attributes of one node. `where` prefixes messages ("Conv 'conv1'").
class Attrs {
 public:
  Attrs(const std::map<std::string, ir::Attribute>& attrs, std::string where)
      : attrs_(attrs), where_(std::move(where)) {}

  /// True when the node sets attribute `name` (of any type).
  bool has(const std::string& name) const { return attrs_.count(name) != 0; }

  /// get_*: the attribute's value, or `def` when the node does not set it. Throws
  /// ModelError when it is set with another type than the getter's.
  int64_t get_int(const std::string& name, int64_t def) const;
  float get_float(const std::string& name, float def) const;
  std::string get_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& def) const;
  std::vector<float> get_floats(const std::string& name, const std::vector<float>& def) const;
  std::vector<std::string> get_strings(const std::string& name,
                                       const std::vector<std::string>& def) const;

  /// require_*: the attribute's value; throws ModelError when it is missing or has
  /// another type.
  int64_t require_int(const std::string& name) const;
  float require_float(const std::string& name) const;
  std::string require_string(const std::string& name) const;
  std::vector<int64_t> require_ints(const std::string& name) const;
  Tensor require_tensor(const std::string& name) const;

  /// Throws ModelError unless `name` is absent or one of `allowed` (e.g. auto_pad).
  std::string get_enum(const std::string& name, const std::string& def,
                       const std::vector<std::string>& allowed) const;

  /// The attributes whose names start with `prefix`, named without it (tern.ConvChain
  /// keeps each layer's FusedConv attributes under "<layer>.").
  std::map<std::string, ir::Attribute> with_prefix(const std::string& prefix) const;

  const std::string& where() const { return where_; }

 private:
  const ir::Attribute* find(const std::string& name, ir::Attribute::Type type) const;
  const ir::Attribute& require(const std::string& name, ir::Attribute::Type type) const;

  const std::map<std::string, ir::Attribute>& attrs_;
  std::string where_;
};

}  // namespace tern::ops
