#include "ops/registry.h"

namespace tern::ops {

void register_gemm(OpRegistry& r) { (void)r; }

}  // namespace tern::ops
