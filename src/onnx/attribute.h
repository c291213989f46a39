// Decoding ONNX AttributeProtos into ir::Attribute. Internal to src/onnx.
#pragma once

#include <string>

#include "ir/graph.h"
#include "onnx/loader.h"
#include "onnx/onnx.pb.h"

namespace tern::onnx {

/// Decodes one attribute of a node. `where` names the node ("node 'conv1' (Conv)").
///
/// FLOAT, INT, STRING, TENSOR, FLOATS, INTS and STRINGS decode to their ir types; GRAPH
/// and GRAPHS become kGraph (not decoded: tern has no control flow); SPARSE_TENSOR(S),
/// TENSORS and TYPE_PROTO(S) become kOther. Throws ModelError when the declared type is
/// missing or disagrees with the fields that are set (e.g. type INT with `floats`), when a
/// TENSOR attribute has no tensor, or for a function-attribute reference (ref_attr_name);
/// tensor values are checked and decoded as decode_tensor() does (limits apply).
/// Source: onnx.proto, message AttributeProto.
ir::Attribute decode_attribute(const ::onnx::AttributeProto& a, const LoadLimits& limits,
                               const std::string& where);

}  // namespace tern::onnx
