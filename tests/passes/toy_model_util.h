// Small helpers for building toy models in the pass tests: non-float initializers and
// Constant nodes, bool feeds, and finding nodes and values of a compiled Program by name.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "pass_test_util.h"

namespace tern::test {

/// An int64 initializer (shape vectors, axes, indices) stored in int64_data.
inline ::onnx::TensorProto* int64_initializer(ModelBuilder& m, const std::string& name,
                                              const std::vector<int64_t>& dims,
                                              const std::vector<int64_t>& values) {
  auto* t = m.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

/// A bool scalar initializer (e.g. Dropout's training_mode).
inline ::onnx::TensorProto* bool_initializer(ModelBuilder& m, const std::string& name, bool value) {
  auto* t = m.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::BOOL);
  t->add_int32_data(value ? 1 : 0);
  return t;
}

/// A Constant node named `name` whose int64 `value` of shape `dims` is output `name`.
inline ::onnx::NodeProto* int64_constant(ModelBuilder& m, const std::string& name,
                                         const std::vector<int64_t>& dims,
                                         const std::vector<int64_t>& values) {
  auto* n = m.node("Constant", {}, {name}, name);
  auto* t = add_attr(n, "value", ::onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return n;
}

/// A bool scalar tensor (a feed for a bool graph input).
inline Tensor bool_scalar(bool value) {
  Tensor t = Tensor::empty(DType::kBool, {});
  *static_cast<uint8_t*>(t.raw_data()) = value ? 1 : 0;
  return t;
}

/// The value named `name` in the compiled program (a failed expectation when absent).
inline int value_id(const passes::Program& p, const std::string& name) {
  const int v = p.graph.find_value(name);
  EXPECT_GE(v, 0) << "no value named '" << name << "'";
  return v;
}

/// The node that writes value `name`, or -1 (a constant, a graph input, or absent).
inline int producer_of(const passes::Program& p, const std::string& name) {
  const int v = p.graph.find_value(name);
  return v < 0 ? -1 : p.graph.values[v].producer;
}

/// The op type of the node that writes value `name`; "" when no node writes it.
inline std::string producer_op(const passes::Program& p, const std::string& name) {
  const int n = producer_of(p, name);
  return n < 0 ? std::string() : p.graph.nodes[n].op_type;
}

/// Runs `model` with `disabled` and with `disabled` plus `pass`, and expects bit-equal
/// outputs (the pass must not change any arithmetic).
inline void expect_pass_exact(const ModelBuilder& model, const std::vector<NamedTensor>& feeds,
                              std::vector<std::string> disabled, const std::string& pass,
                              int threads = 1) {
  const auto with = run_model(model, feeds, disabled, threads);
  disabled.push_back(pass);
  const auto without = run_model(model, feeds, disabled, threads);
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(with[i].name, without[i].name);
    ASSERT_EQ(with[i].tensor.shape(), without[i].tensor.shape()) << with[i].name;
    ASSERT_EQ(with[i].tensor.dtype(), without[i].tensor.dtype()) << with[i].name;
    ASSERT_EQ(with[i].tensor.nbytes(), without[i].tensor.nbytes());
    const Tensor a = with[i].tensor.contiguous();
    const Tensor b = without[i].tensor.contiguous();
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0)
        << with[i].name << " differs with '" << pass << "' on and off";
  }
}

}  // namespace tern::test
