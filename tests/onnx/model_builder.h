// Builds small ONNX models in C++ with the protoc-generated classes, for the importer's
// tests (good models and deliberately broken ones).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onnx/loader.h"
#include "onnx/onnx.pb.h"

namespace tern::test {

/// One dim of a declared shape: a size, or a symbol such as "height" ("" = anonymous).
struct DimSpec {
  DimSpec(int64_t v) : value(v) {}      // NOLINT: implicit, so {1, 3, "H"} reads naturally
  DimSpec(const char* p) : param(p) {}  // NOLINT
  int64_t value = -1;
  std::string param;
};

/// A ModelProto under construction. Defaults: IR version 7, default-domain opset 13.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13, int64_t ir_version = 7) {
    model.set_ir_version(ir_version);
    model.set_producer_name("tern-test");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model.mutable_graph()->set_name("test_graph");
  }

  ::onnx::GraphProto& graph() { return *model.mutable_graph(); }

  ::onnx::ValueInfoProto* input(const std::string& name, const std::vector<DimSpec>& dims,
                                int elem_type = ::onnx::TensorProto::FLOAT) {
    return value_info(graph().add_input(), name, dims, elem_type);
  }
  ::onnx::ValueInfoProto* output(const std::string& name, const std::vector<DimSpec>& dims,
                                 int elem_type = ::onnx::TensorProto::FLOAT) {
    return value_info(graph().add_output(), name, dims, elem_type);
  }
  /// An output declared by name only (no type).
  ::onnx::ValueInfoProto* output(const std::string& name) {
    auto* vi = graph().add_output();
    vi->set_name(name);
    return vi;
  }

  /// A float initializer stored in raw_data.
  ::onnx::TensorProto* initializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    fill_float_tensor(t, name, dims, values);
    return t;
  }

  ::onnx::NodeProto* node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op_type);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }

  std::string bytes() const { return model.SerializeAsString(); }

  static void fill_float_tensor(::onnx::TensorProto* t, const std::string& name,
                                const std::vector<int64_t>& dims,
                                const std::vector<float>& values) {
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    std::string raw(values.size() * sizeof(float), '\0');
    if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
    t->set_raw_data(raw);
  }

  ::onnx::ModelProto model;

 private:
  static ::onnx::ValueInfoProto* value_info(::onnx::ValueInfoProto* vi, const std::string& name,
                                            const std::vector<DimSpec>& dims, int elem_type) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (const DimSpec& d : dims) {
      auto* dim = shape->add_dim();
      if (d.value >= 0) {
        dim->set_dim_value(d.value);
      } else if (!d.param.empty()) {
        dim->set_dim_param(d.param);
      }
    }
    return vi;
  }
};

// Attribute setters for a node.
inline ::onnx::AttributeProto* add_attr(::onnx::NodeProto* n, const std::string& name,
                                        ::onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void set_int(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  add_attr(n, name, ::onnx::AttributeProto::INT)->set_i(v);
}
inline void set_float(::onnx::NodeProto* n, const std::string& name, float v) {
  add_attr(n, name, ::onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void set_string(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
  add_attr(n, name, ::onnx::AttributeProto::STRING)->set_s(v);
}
inline void set_ints(::onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name, ::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void set_floats(::onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = add_attr(n, name, ::onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void set_strings(::onnx::NodeProto* n, const std::string& name,
                        const std::vector<std::string>& v) {
  auto* a = add_attr(n, name, ::onnx::AttributeProto::STRINGS);
  for (const auto& x : v) a->add_strings(x);
}
/// A float TENSOR attribute (e.g. Constant's `value`); returns the tensor to tweak.
inline ::onnx::TensorProto* set_tensor(::onnx::NodeProto* n, const std::string& name,
                                       const std::vector<int64_t>& dims,
                                       const std::vector<float>& values) {
  auto* t = add_attr(n, name, ::onnx::AttributeProto::TENSOR)->mutable_t();
  ModelBuilder::fill_float_tensor(t, "", dims, values);
  return t;
}

/// Expects loading `bytes` to throw exactly `E` (not a subclass of a sibling) with a
/// message containing every one of `parts`.
template <typename E>
void expect_load_error(const std::string& bytes, const std::vector<std::string>& parts,
                       const onnx::LoadLimits& limits = {}) {
  try {
    onnx::load_model(bytes.data(), bytes.size(), limits);
    ADD_FAILURE() << "expected an error containing '" << parts.front() << "', but it loaded";
  } catch (const E& e) {
    for (const std::string& p : parts) EXPECT_THAT(e.what(), ::testing::HasSubstr(p));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type; message: " << e.what();
  }
}

template <typename E>
void expect_load_error(const ModelBuilder& b, const std::vector<std::string>& parts,
                       const onnx::LoadLimits& limits = {}) {
  expect_load_error<E>(b.bytes(), parts, limits);
}

}  // namespace tern::test
