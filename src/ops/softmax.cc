#include "ops/registry.h"

namespace tern::ops {

void register_softmax(OpRegistry& r) { (void)r; }

}  // namespace tern::ops
