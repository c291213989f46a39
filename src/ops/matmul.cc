#include "ops/registry.h"

namespace tern::ops {

void register_matmul(OpRegistry& r) { (void)r; }

}  // namespace tern::ops
