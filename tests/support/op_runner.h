// Runs one registered op on tensors, the way the runtime does: create from attributes,
// infer output types (values known), allocate, run. For op unit tests; also the one
// expect_error() of the op and kernel tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace tern::test {

/// Builder for a node's attributes.
struct AttrMap {
  std::map<std::string, ir::Attribute> attrs;
  AttrMap& i(const std::string& n, int64_t v) {
    auto& a = attrs[n];
    a.type = ir::Attribute::Type::kInt;
    a.i = v;
    return *this;
  }
  AttrMap& f(const std::string& n, float v) {
    auto& a = attrs[n];
    a.type = ir::Attribute::Type::kFloat;
    a.f = v;
    return *this;
  }
  AttrMap& s(const std::string& n, const std::string& v) {
    auto& a = attrs[n];
    a.type = ir::Attribute::Type::kString;
    a.s = v;
    return *this;
  }
  AttrMap& ints(const std::string& n, const std::vector<int64_t>& v) {
    auto& a = attrs[n];
    a.type = ir::Attribute::Type::kInts;
    a.ints = v;
    return *this;
  }
  AttrMap& floats(const std::string& n, const std::vector<float>& v) {
    auto& a = attrs[n];
    a.type = ir::Attribute::Type::kFloats;
    a.floats = v;
    return *this;
  }
  AttrMap& tensor(const std::string& n, const Tensor& v) {
    auto& a = attrs[n];
    a.type = ir::Attribute::Type::kTensor;
    a.t = v;
    return *this;
  }
};

/// Creates op `op_type` (node "test_node", opset `opset`, declaring `num_outputs`
/// outputs) with `attrs`, as the runtime does. Throws what the constructor throws.
inline std::unique_ptr<ops::Op> make_op(const std::string& op_type, const AttrMap& attrs,
                                        int opset = 13, int num_outputs = 1) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(op_type);
  if (!schema) throw UnsupportedOpError("op " + op_type + " is not registered");
  ops::Attrs reader(attrs.attrs, op_type + " 'test_node'");
  return schema->create(reader, ops::OpContext{"test_node", op_type, opset, num_outputs});
}

/// Creates op `op_type` (opset `opset`) with `attrs` and runs it on `inputs` (an
/// undefined Tensor stands for an omitted optional input) with `threads` threads.
/// Returns the outputs. Throws whatever the op throws.
inline std::vector<Tensor> run_op(const std::string& op_type, const AttrMap& attrs,
                                  const std::vector<Tensor>& inputs, int opset = 13,
                                  int num_outputs = 1, int threads = 1) {
  auto op = make_op(op_type, attrs, opset, num_outputs);
  auto infer_in = ops::infer_inputs_from(inputs);
  std::vector<ops::TensorType> types = op->infer(infer_in);
  if (static_cast<int>(types.size()) < num_outputs) {
    throw ShapeError("infer returned fewer outputs than requested");
  }
  std::vector<Tensor> outputs(num_outputs);
  if (!op->returns_view()) {
    for (int k = 0; k < num_outputs; ++k) outputs[k] = Tensor::empty(types[k].dtype, types[k].shape);
  }
  op->run(inputs, outputs, ops::ExecContext{threads});
  for (int k = 0; k < num_outputs; ++k) {
    if (outputs[k].shape() != types[k].shape || outputs[k].dtype() != types[k].dtype) {
      throw ShapeError("run produced a shape or dtype that infer did not predict");
    }
  }
  return outputs;
}

/// Expects `fn` to throw exactly ErrorType with a message containing every string in
/// `parts` (e.g. the node "Add 'test_node'" and the expectation). Returns the message
/// ("" when nothing or another type was thrown, which also fails the test).
template <typename ErrorType>
std::string expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception, but none was thrown";
  } catch (const ErrorType& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_THAT(msg, ::testing::HasSubstr(p));
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a different exception type, but got: " << e.what();
  }
  return "";
}

}  // namespace tern::test
