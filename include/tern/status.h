// tern/status.h: the one exception hierarchy every tern API throws.
//
// Every message says where (node, input or file), what was expected and what was
// found, e.g. "Conv 'stage2.conv1': expected input with 64 channels, but got 32".
#pragma once

#include <stdexcept>
#include <string>

namespace tern {

/// Base of every error tern throws. Catch this to handle any tern failure.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  /// Short category name for one-line CLI messages ("model error", "shape error", ...).
  virtual const char* kind() const noexcept { return "error"; }
};

/// The model file is malformed or violates the ONNX spec (bad protobuf, a cycle, an
/// undefined input, an attribute of the wrong type, a size over the configured limit).
class ModelError : public Error {
 public:
  using Error::Error;
  const char* kind() const noexcept override { return "model error"; }
};

/// The model uses an operator (or an operator version or attribute value) tern does not
/// implement. The message names the node, the op type and opset, and what is supported.
class UnsupportedOpError : public Error {
 public:
  using Error::Error;
  const char* kind() const noexcept override { return "unsupported op"; }
};

/// Shapes do not fit together: a wrong input rank or size, non-broadcastable operands,
/// a Reshape whose element count differs.
class ShapeError : public Error {
 public:
  using Error::Error;
  const char* kind() const noexcept override { return "shape error"; }
};

/// An argument given by the caller is invalid: an unknown input name, a wrong dtype, a
/// bad option value.
class InvalidArgument : public Error {
 public:
  using Error::Error;
  const char* kind() const noexcept override { return "invalid argument"; }
};

/// A file could not be read or written, or its content is not the expected format
/// (a missing model, an unreadable image, a truncated .npy).
class IOError : public Error {
 public:
  using Error::Error;
  const char* kind() const noexcept override { return "I/O error"; }
};

}  // namespace tern
