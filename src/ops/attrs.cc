#include "ops/attrs.h"

#include <algorithm>

#include "base/check.h"

namespace tern::ops {

const ir::Attribute* Attrs::find(const std::string& name, ir::Attribute::Type type) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return nullptr;
  TERN_CHECK(it->second.type == type, ModelError,
             "{}: attribute '{}' must be of type {}, but it is {}", where_, name,
             ir::attribute_type_name(type), ir::attribute_type_name(it->second.type));
  return &it->second;
}

const ir::Attribute& Attrs::require(const std::string& name, ir::Attribute::Type type) const {
  const ir::Attribute* a = find(name, type);
  TERN_CHECK(a != nullptr, ModelError, "{}: required attribute '{}' ({}) is missing", where_,
             name, ir::attribute_type_name(type));
  return *a;
}

std::map<std::string, ir::Attribute> Attrs::with_prefix(const std::string& prefix) const {
  std::map<std::string, ir::Attribute> out;
  for (auto it = attrs_.lower_bound(prefix); it != attrs_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    out.emplace(it->first.substr(prefix.size()), it->second);
  }
  return out;
}

int64_t Attrs::get_int(const std::string& name, int64_t def) const {
  const auto* a = find(name, ir::Attribute::Type::kInt);
  return a ? a->i : def;
}
float Attrs::get_float(const std::string& name, float def) const {
  const auto* a = find(name, ir::Attribute::Type::kFloat);
  return a ? a->f : def;
}
std::string Attrs::get_string(const std::string& name, const std::string& def) const {
  const auto* a = find(name, ir::Attribute::Type::kString);
  return a ? a->s : def;
}
std::vector<int64_t> Attrs::get_ints(const std::string& name,
                                     const std::vector<int64_t>& def) const {
  const auto* a = find(name, ir::Attribute::Type::kInts);
  return a ? a->ints : def;
}
std::vector<float> Attrs::get_floats(const std::string& name,
                                     const std::vector<float>& def) const {
  const auto* a = find(name, ir::Attribute::Type::kFloats);
  return a ? a->floats : def;
}
std::vector<std::string> Attrs::get_strings(const std::string& name,
                                            const std::vector<std::string>& def) const {
  const auto* a = find(name, ir::Attribute::Type::kStrings);
  return a ? a->strings : def;
}

int64_t Attrs::require_int(const std::string& name) const {
  return require(name, ir::Attribute::Type::kInt).i;
}
float Attrs::require_float(const std::string& name) const {
  return require(name, ir::Attribute::Type::kFloat).f;
}
std::string Attrs::require_string(const std::string& name) const {
  return require(name, ir::Attribute::Type::kString).s;
}
std::vector<int64_t> Attrs::require_ints(const std::string& name) const {
  return require(name, ir::Attribute::Type::kInts).ints;
}
Tensor Attrs::require_tensor(const std::string& name) const {
  return require(name, ir::Attribute::Type::kTensor).t;
}

std::string Attrs::get_enum(const std::string& name, const std::string& def,
                            const std::vector<std::string>& allowed) const {
  std::string v = get_string(name, def);
  TERN_CHECK(std::find(allowed.begin(), allowed.end(), v) != allowed.end(), ModelError,
             "{}: attribute '{}' is '{}', expected one of {}", where_, name, v, allowed);
  return v;
}

}  // namespace tern::ops
