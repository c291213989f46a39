#include "embedded.h"

// Start/end symbols defined in embedded.s.
extern "C" {
extern const unsigned char tern_embedded_model_start[];
extern const unsigned char tern_embedded_model_end[];
extern const unsigned char tern_embedded_photo_start[];
extern const unsigned char tern_embedded_photo_end[];
}

namespace tern::cli {

EmbeddedFile embedded_model() {
  return {tern_embedded_model_start,
          static_cast<size_t>(tern_embedded_model_end - tern_embedded_model_start),
          "models/retinaface_mnet025.onnx"};
}

EmbeddedFile embedded_photo() {
  return {tern_embedded_photo_start,
          static_cast<size_t>(tern_embedded_photo_end - tern_embedded_photo_start),
          "assets/faces9.jpg"};
}

}  // namespace tern::cli
