#include "ops/registry.h"

namespace tern::ops {

void register_constant(OpRegistry& r) { (void)r; }

}  // namespace tern::ops
