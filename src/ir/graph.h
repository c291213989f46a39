// The logical IR: a Graph of Nodes that read and write Values.
//
// Values are referenced by index (int); -1 stands for an omitted optional input. A
// Value with a `constant` holds an initializer (or a folded Constant). Graph inputs are
// the values the caller feeds at run time; initializers listed among ONNX graph inputs
// (old exporters) are constants, not graph inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tern/tensor.h"

namespace tern::ir {

/// An ONNX attribute, already decoded (tensors become tern Tensors). Only the field that
/// matches `type` is meaningful; kGraph carries nothing (tern rejects control flow).
struct Attribute {
  enum class Type { kFloat, kInt, kString, kTensor, kFloats, kInts, kStrings, kGraph, kOther };
  Type type = Type::kOther;
  float f = 0;                       ///< kFloat
  int64_t i = 0;                     ///< kInt
  std::string s;                     ///< kString
  Tensor t;                          ///< kTensor
  std::vector<float> floats;         ///< kFloats
  std::vector<int64_t> ints;         ///< kInts
  std::vector<std::string> strings;  ///< kStrings
};
/// "INT", "FLOATS", ... as the ONNX spec names attribute types.
const char* attribute_type_name(Attribute::Type type);
/// An attribute's value as text: "3", "0.5", "NCHW", "[1,1,2,2]" (lists in brackets);
/// "?" for the types it does not spell out (tensors, graphs). Keys of the tuning cache
/// and of the layer benchmarks.
std::string attribute_text(const Attribute& a);

/// One dim of a declared shape: a fixed size (value >= 0) or a symbol (value -1, `param`
/// names it, e.g. "height"; empty when the model leaves it anonymous).
struct Dim {
  int64_t value = -1;
  std::string param;
};

/// A tensor flowing through the graph.
struct Value {
  std::string name;
  bool has_type = false;  ///< dtype and dims were declared in the model
  DType dtype = DType::kFloat32;
  bool has_shape = false;
  std::vector<Dim> dims;  ///< declared shape (when has_shape)
  int producer = -1;      ///< index of the node that writes it, -1 for inputs/constants
  Tensor constant;        ///< initializer value (defined() when constant)
  bool is_constant() const { return constant.defined(); }
};

/// One operator application.
struct Node {
  std::string name;     ///< the ONNX node name, or "<op_type>_<index>" when it has none
  std::string op_type;  ///< "Conv", "Relu", ...
  std::string domain;   ///< "" for the default ONNX domain
  std::vector<int> inputs;   ///< value indices; -1 = omitted optional input
  std::vector<int> outputs;  ///< value indices; -1 = omitted optional output
  std::map<std::string, Attribute> attrs;
};

/// A whole model: values, nodes (in file order), graph inputs and outputs.
class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;   ///< caller-fed inputs (initializers excluded)
  std::vector<int> outputs;
  int64_t ir_version = 0;
  int opset = 0;  ///< default-domain ("" / "ai.onnx") opset version
  std::string producer;
  std::string name;

  /// Index of the value called `name`, or -1.
  int find_value(const std::string& name) const;
  /// Adds a value and returns its index (names must be unique; throws ModelError).
  int add_value(Value v);
  /// Node indices in an order where every producer comes before its consumers. Throws
  /// ModelError naming a node on a cycle.
  std::vector<int> topological_order() const;
  /// Number of weight values (elements of all constants).
  int64_t parameter_count() const;

 private:
  std::map<std::string, int> index_;
};

/// Checks the graph's structure: every node input is defined (graph input, constant or
/// an earlier node's output), each value has one producer, outputs are produced, no
/// cycles. Throws ModelError naming the node and value.
void verify_graph(const Graph& g);

/// Human-readable listing: one line per node "name: Op(inputs) -> outputs".
std::string dump_graph(const Graph& g);

}  // namespace tern::ir
