// The reference cases of ../shared/models/index.json: model, inputs and ONNX Runtime's
// outputs (raw little-endian float32 .bin files), for whole-model tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_env.h"
#include "tern/tensor.h"

namespace tern::test {

struct CaseTensor {
  std::string name;
  std::filesystem::path file;  // absolute
  Shape shape;
};

struct ReferenceCase {
  std::string model;  // e.g. "retinaface_mnet025"
  std::string name;   // e.g. "faces13_320x320"
  std::filesystem::path model_path;
  std::filesystem::path dir;
  std::vector<CaseTensor> inputs;
  std::vector<CaseTensor> outputs;
  int64_t input_pixels = 0;     // H*W of the first input (for the arm64 size filter)
  std::filesystem::path image;  // the photo the input was made from (absolute); "" if none
  nlohmann::json checks;        // index.json "checks" (what the reference tooling recorded)
  nlohmann::json image_meta;    // "image_meta" of the case's case.json (null if absent):
                                // orig_wh, scale, resized_wh, pad_bottom_right

  /// The reference output named `name`, or null.
  const CaseTensor* output(const std::string& name) const {
    for (const CaseTensor& t : outputs) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
};

/// All reference cases listed in index.json; empty when the folder is absent.
inline std::vector<ReferenceCase> load_reference_cases() {
  std::vector<ReferenceCase> cases;
  const auto root = models_dir();
  std::ifstream f(root / "index.json");
  if (!f) return cases;
  const nlohmann::json index = nlohmann::json::parse(f);
  for (const auto& c : index.at("reference_cases")) {
    ReferenceCase rc;
    rc.model_path = root / c.at("model").get<std::string>();
    rc.model = rc.model_path.stem().string();
    rc.name = c.at("case").get<std::string>();
    rc.dir = root / c.at("dir").get<std::string>();
    auto read = [&](const nlohmann::json& list, std::vector<CaseTensor>& out) {
      for (const auto& t : list) {
        out.push_back({t.at("name").get<std::string>(), root / t.at("file").get<std::string>(),
                       t.at("shape").get<Shape>()});
      }
    };
    read(c.at("inputs"), rc.inputs);
    read(c.at("outputs"), rc.outputs);
    const Shape& s = rc.inputs.at(0).shape;
    rc.input_pixels = s.size() == 4 ? s[2] * s[3] : 0;
    if (c.contains("image")) rc.image = root / c.at("image").get<std::string>();
    rc.checks = c.value("checks", nlohmann::json());
    if (std::ifstream case_json(rc.dir / "case.json"); case_json) {
      rc.image_meta = nlohmann::json::parse(case_json).value("image_meta", nlohmann::json());
    }
    cases.push_back(std::move(rc));
  }
  return cases;
}

/// Reads a raw float32 file of the given shape. Returns an undefined tensor on failure.
inline Tensor read_raw_f32(const std::filesystem::path& file, const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  std::ifstream f(file, std::ios::binary);
  if (!f) return Tensor();
  f.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  if (f.gcount() != static_cast<std::streamsize>(t.nbytes())) return Tensor();
  return t;
}

}  // namespace tern::test
