#include "ops/registry.h"

namespace tern::ops {

void register_pad(OpRegistry& r) { (void)r; }

}  // namespace tern::ops
