#include "base/check.h"

namespace tern {

void rethrow_with_prefix(const Error& e, const std::string& prefix) {
  const std::string msg = prefix + e.what();
  if (dynamic_cast<const ModelError*>(&e)) throw ModelError(msg);
  if (dynamic_cast<const UnsupportedOpError*>(&e)) throw UnsupportedOpError(msg);
  if (dynamic_cast<const ShapeError*>(&e)) throw ShapeError(msg);
  if (dynamic_cast<const InvalidArgument*>(&e)) throw InvalidArgument(msg);
  if (dynamic_cast<const IOError*>(&e)) throw IOError(msg);
  throw Error(msg);
}

}  // namespace tern
