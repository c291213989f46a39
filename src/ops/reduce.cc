#include "ops/registry.h"

namespace tern::ops {

void register_reduce(OpRegistry& r) { (void)r; }

}  // namespace tern::ops
