// Runs one registered op on tensors, the way the runtime does: create from attributes,
// infer output types (values known), allocate, run. For op unit tests.
#pragma once

#include <map>
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

/// Creates op `op_type` (opset `opset`) with `attrs` and runs it on `inputs` (an
/// undefined Tensor stands for an omitted optional input) with `threads` threads.
/// Returns the outputs. Throws whatever the op throws.
inline std::vector<Tensor> run_op(const std::string& op_type, const AttrMap& attrs,
                                  const std::vector<Tensor>& inputs, int opset = 13,
                                  int num_outputs = 1, int threads = 1) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(op_type);
  if (!schema) throw UnsupportedOpError("op " + op_type + " is not registered");
  ops::OpContext ctx{"test_node", op_type, opset, num_outputs};
  ops::Attrs reader(attrs.attrs, op_type + " 'test_node'");
  auto op = schema->create(reader, ctx);
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

}  // namespace tern::test
