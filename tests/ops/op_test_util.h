// Helpers for the nn op tests: build an op directly (for infer / macs checks) and catch
// an expected error type, returning its message.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/op_runner.h"

namespace tern::test {

/// Creates op `type` with `attrs` at `opset`, as the runtime does (throws what the
/// constructor throws).
inline std::unique_ptr<ops::Op> make_op(const std::string& type, const AttrMap& attrs,
                                        int opset = 13) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(type);
  if (!schema) throw UnsupportedOpError("op " + type + " is not registered");
  ops::Attrs reader(attrs.attrs, type + " 'test_node'");
  return schema->create(reader, ops::OpContext{"test_node", type, opset});
}

/// Runs `type` expecting an exception of type E; returns its message ("" and a test
/// failure when nothing or something else is thrown).
template <typename E>
std::string op_error(const std::string& type, const AttrMap& attrs,
                     const std::vector<Tensor>& inputs, int opset = 13, int num_outputs = 1) {
  try {
    run_op(type, attrs, inputs, opset, num_outputs);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

/// Contiguous float tensor 0, 1, 2, ... (+ start).
inline Tensor iota_tensor(const Shape& shape, float start = 0.0f) {
  std::vector<float> v(shape_numel(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::from_vector(v, shape);
}

}  // namespace tern::test
