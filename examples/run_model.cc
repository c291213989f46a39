// Loads an ONNX model, feeds it one input and prints its outputs.
//   run_model models/retinaface_mnet025.onnx
#include <tern/session.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: run_model MODEL.onnx\n");
    return 2;
  }
  try {
    tern::Session session(argv[1], {.num_threads = 1});

    // One float32 input; symbolic dims (e.g. RetinaFace's height and width) set to 320.
    const tern::TensorInfo& info = session.inputs().at(0);
    tern::Shape shape = info.shape;
    for (int64_t& d : shape) d = d < 0 ? 320 : d;
    std::vector<float> pixels(tern::shape_numel(shape), 0.5f);
    tern::Tensor x =
        tern::Tensor::from_blob(pixels.data(), tern::DType::kFloat32, shape);  // zero-copy view

    for (const tern::NamedTensor& out : session.run({{info.name, x}})) {
      std::vector<float> v = out.tensor.to_float_vector();
      std::printf("%s %s:", out.name.c_str(), tern::shape_str(out.tensor.shape()).c_str());
      for (size_t i = 0; i < v.size() && i < 4; ++i) std::printf(" %g", v[i]);
      std::printf("%s\n", v.size() > 4 ? " ..." : "");
    }
  } catch (const tern::Error& e) {  // IOError, ModelError, ShapeError, ...
    std::fprintf(stderr, "run_model: %s: %s\n", e.kind(), e.what());
    return 1;
  }
  return 0;
}
