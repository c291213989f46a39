// Files embedded in the tern binary (by embedded.s, generated from embedded.s.in).
#pragma once

#include <cstddef>

namespace tern::cli {

/// An embedded file: its bytes (alive for the whole program) and where it came from.
struct EmbeddedFile {
  const unsigned char* data;
  size_t size;
  const char* name;  ///< the repository path it was made from, for messages
};

/// models/retinaface_mnet025.onnx: the default model of `tern detect-faces` and `tern demo`.
EmbeddedFile embedded_model();
/// assets/faces9.jpg: the photo of `tern demo`.
EmbeddedFile embedded_photo();

}  // namespace tern::cli
