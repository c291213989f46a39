// pack-weights: TODO(issue 4) being written; does nothing yet.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class Pending final : public Pass {
 public:
  const char* name() const override { return "pack-weights"; }
  const char* summary() const override {
    return "re-lay-out constant weights for the kernels at plan time";
  }
  int run(Program& p) const override {
    (void)p;
    return 0;
  }
};

}  // namespace

const Pass& pack_weights_pass() {
  static const Pending pass;
  return pass;
}

}  // namespace tern::passes
