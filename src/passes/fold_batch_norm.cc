// fold-batch-norm: TODO(issue 4) being written; does nothing yet.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class Pending final : public Pass {
 public:
  const char* name() const override { return "fold-batch-norm"; }
  const char* summary() const override { return "fold BatchNormalization into Conv/Gemm"; }
  int run(Program& p) const override {
    (void)p;
    return 0;
  }
};

}  // namespace

const Pass& fold_batch_norm_pass() {
  static const Pending pass;
  return pass;
}

}  // namespace tern::passes
