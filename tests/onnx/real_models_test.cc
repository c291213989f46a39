// Every model in ../shared/models loads, and its graph matches index.json: input and
// output names and declared shapes, node count, and weights listed as inputs becoming
// constants. Skips when the models folder is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "onnx/loader.h"
#include "support/test_env.h"
#include "tern/status.h"

namespace tern {
namespace {

namespace fs = std::filesystem;

// The declared dims as index.json writes them: numbers, or strings for symbols.
nlohmann::json dims_json(const ir::Value& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const ir::Dim& d : v.dims) {
    if (d.value >= 0) {
      out.push_back(d.value);
    } else {
      out.push_back(d.param);
    }
  }
  return out;
}

void check_values(const ir::Graph& g, const std::vector<int>& ids, const nlohmann::json& want,
                  const char* what) {
  ASSERT_EQ(ids.size(), want.size()) << what;
  for (size_t i = 0; i < ids.size(); ++i) {
    const ir::Value& v = g.values[ids[i]];
    EXPECT_EQ(v.name, want[i]["name"].get<std::string>()) << what << " " << i;
    EXPECT_TRUE(v.has_type) << v.name;
    if (want[i]["dtype"] == "float") {
      EXPECT_EQ(v.dtype, DType::kFloat32) << v.name;
    }
    if (want[i].contains("shape")) {
      EXPECT_EQ(dims_json(v), want[i]["shape"]) << v.name;
    }
  }
}

TEST(OnnxRealModels, EveryModelLoadsAndMatchesTheIndex) {
  const fs::path dir = test::models_dir();
  const fs::path index_path = dir / "index.json";
  if (!fs::exists(index_path)) GTEST_SKIP() << "no models index at " << index_path;
  const nlohmann::json index = nlohmann::json::parse(std::ifstream(index_path));
  int loaded = 0;
  for (const auto& m : index["models"]) {
    const std::string file = m["path"].get<std::string>();
    SCOPED_TRACE(file);
    ir::Graph g;
    try {
      g = onnx::load_model_file((dir / file).string());
    } catch (const Error& e) {
      ADD_FAILURE() << file << ": " << e.kind() << ": " << e.what();
      continue;
    }
    ++loaded;
    const auto& o = m["onnx"];
    EXPECT_EQ(g.ir_version, o["ir_version"].get<int64_t>());
    EXPECT_EQ(g.opset, o["opsets"]["ai.onnx"].get<int>());
    check_values(g, g.inputs, o["inputs"], "inputs");
    check_values(g, g.outputs, o["outputs"], "outputs");
    int64_t nodes = 0;
    for (const auto& [op, count] : o["op_histogram"].items()) nodes += count.get<int64_t>();
    EXPECT_EQ(static_cast<int64_t>(g.nodes.size()), nodes);
    std::map<std::string, int64_t> histogram;
    for (const ir::Node& n : g.nodes) ++histogram[n.op_type];
    for (const auto& [op, count] : o["op_histogram"].items()) {
      EXPECT_EQ(histogram[op], count.get<int64_t>()) << op;
    }
    // Weights listed among the graph inputs by old exporters are constants, not inputs.
    if (o.value("initializers_listed_in_graph_inputs", 0) > 0) {
      EXPECT_EQ(g.inputs.size(), o["inputs"].size());
    }
    // Weights are initializers or Constant tensors (paddle2onnx uses only the latter).
    int64_t weights = g.parameter_count();
    for (const ir::Node& n : g.nodes) {
      if (auto it = n.attrs.find("value"); n.op_type == "Constant" && it != n.attrs.end()) {
        weights += it->second.t.numel();
      }
    }
    EXPECT_GT(weights, 10000);
  }
  EXPECT_EQ(loaded, static_cast<int>(index["models"].size()));
}

TEST(OnnxRealModels, RetinaFaceGraph) {
  const fs::path path = test::models_dir() / "retinaface_mnet025.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  const ir::Graph g = onnx::load_model_file(path.string());
  ASSERT_EQ(g.inputs.size(), 1u);
  const ir::Value& in = g.values[g.inputs[0]];
  EXPECT_EQ(in.name, "input");
  ASSERT_EQ(in.dims.size(), 4u);
  EXPECT_EQ(in.dims[1].value, 3);
  EXPECT_EQ(in.dims[2].param, "height");
  EXPECT_EQ(in.dims[3].param, "width");
  // The manifest counts 423,314 weight values (initializers; Constant nodes hold the rest).
  int64_t initializer_values = 0;
  for (const ir::Value& v : g.values)
    if (v.is_constant()) initializer_values += v.constant.numel();
  EXPECT_EQ(initializer_values, g.parameter_count());
  EXPECT_GE(initializer_values, 400000);
  ir::verify_graph(g);
}

}  // namespace
}  // namespace tern
