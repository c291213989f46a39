// assign-layout: TODO(issue 4) being written; does nothing yet.
#include "passes/pass.h"

namespace tern::passes {
namespace {

class Pending final : public Pass {
 public:
  const char* name() const override { return "assign-layout"; }
  const char* summary() const override {
    return "run convolutions and the ops between them in NCHWc";
  }
  int run(Program& p) const override {
    (void)p;
    return 0;
  }
};

}  // namespace

const Pass& assign_layout_pass() {
  static const Pending pass;
  return pass;
}

}  // namespace tern::passes
