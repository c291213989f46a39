#include "onnx/attribute.h"

#include <vector>

#include "base/check.h"
#include "onnx/tensor_proto.h"

namespace tern::onnx {

namespace {

using ::onnx::AttributeProto;

// The fields of an AttributeProto that hold a value, with whether each is set.
struct SetField {
  AttributeProto::AttributeType type;  // the declared type this field belongs to
  const char* name;
  bool set;
};

std::vector<SetField> set_fields(const AttributeProto& a) {
  return {
      {AttributeProto::FLOAT, "f", a.has_f()},
      {AttributeProto::INT, "i", a.has_i()},
      {AttributeProto::STRING, "s", a.has_s()},
      {AttributeProto::TENSOR, "t", a.has_t()},
      {AttributeProto::GRAPH, "g", a.has_g()},
      {AttributeProto::SPARSE_TENSOR, "sparse_tensor", a.has_sparse_tensor()},
      {AttributeProto::TYPE_PROTO, "tp", a.has_tp()},
      {AttributeProto::FLOATS, "floats", a.floats_size() > 0},
      {AttributeProto::INTS, "ints", a.ints_size() > 0},
      {AttributeProto::STRINGS, "strings", a.strings_size() > 0},
      {AttributeProto::TENSORS, "tensors", a.tensors_size() > 0},
      {AttributeProto::GRAPHS, "graphs", a.graphs_size() > 0},
      {AttributeProto::SPARSE_TENSORS, "sparse_tensors", a.sparse_tensors_size() > 0},
      {AttributeProto::TYPE_PROTOS, "type_protos", a.type_protos_size() > 0},
  };
}

}  // namespace

ir::Attribute decode_attribute(const AttributeProto& a, const LoadLimits& limits,
                               const std::string& where) {
  const std::string what = fmt::format("{}: attribute '{}'", where, a.name());
  TERN_CHECK(a.ref_attr_name().empty(), ModelError,
             "{} refers to function attribute '{}', which is only allowed inside a function "
             "body",
             what, a.ref_attr_name());
  const auto type = a.type();
  TERN_CHECK(type != AttributeProto::UNDEFINED, ModelError,
             "{} has no type (the 'type' field is required since IR version 3)", what);
  for (const SetField& f : set_fields(a)) {
    TERN_CHECK(!f.set || f.type == type, ModelError,
               "{} is declared {} but sets the field '{}' (a {} value)", what,
               AttributeProto::AttributeType_Name(type), f.name,
               AttributeProto::AttributeType_Name(f.type));
  }

  ir::Attribute out;
  switch (type) {
    case AttributeProto::FLOAT:
      out.type = ir::Attribute::Type::kFloat;
      out.f = a.f();
      break;
    case AttributeProto::INT:
      out.type = ir::Attribute::Type::kInt;
      out.i = a.i();
      break;
    case AttributeProto::STRING:
      out.type = ir::Attribute::Type::kString;
      out.s = a.s();
      break;
    case AttributeProto::TENSOR:
      TERN_CHECK(a.has_t(), ModelError, "{} is declared TENSOR but holds no tensor", what);
      out.type = ir::Attribute::Type::kTensor;
      out.t = decode_tensor(a.t(), limits, what);
      break;
    case AttributeProto::FLOATS:
      out.type = ir::Attribute::Type::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case AttributeProto::INTS:
      out.type = ir::Attribute::Type::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case AttributeProto::STRINGS:
      out.type = ir::Attribute::Type::kStrings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case AttributeProto::GRAPH:
    case AttributeProto::GRAPHS:
      out.type = ir::Attribute::Type::kGraph;
      break;
    default:
      out.type = ir::Attribute::Type::kOther;
      break;
  }
  return out;
}

}  // namespace tern::onnx
