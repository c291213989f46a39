// fuse-epilogue: TODO(issue 4) being written; does nothing yet.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class Pending final : public Pass {
 public:
  const char* name() const override { return "fuse-epilogue"; }
  const char* summary() const override {
    return "fuse bias, activation and residual Add into Conv/Gemm/MatMul";
  }
  int run(Program& p) const override {
    (void)p;
    return 0;
  }
};

}  // namespace

const Pass& fuse_epilogue_pass() {
  static const Pending pass;
  return pass;
}

}  // namespace tern::passes
