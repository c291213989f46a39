#include "passes/pipeline.h"

#include <algorithm>

#include "base/check.h"
#include "base/json_cache.h"

namespace tern::passes {

// One accessor per pass file (src/passes/<name>.cc).
const Pass& fold_constants_pass();
const Pass& eliminate_identity_pass();
const Pass& eliminate_dead_pass();
const Pass& lower_conv_transpose_pass();
const Pass& fuse_hard_swish_pass();
const Pass& fold_batch_norm_pass();
const Pass& merge_sibling_convs_pass();
const Pass& fuse_epilogue_pass();
const Pass& assign_layout_pass();
const Pass& flush_subnormal_weights_pass();
const Pass& pack_weights_pass();
const Pass& select_algorithm_pass();
const Pass& fuse_transpose_pass();
const Pass& fuse_conv_chain_pass();
const Pass& in_place_pass();
const Pass& concat_slices_pass();
const Pass& plan_memory_pass();

// The order matters:
// - folding first, so the later rules see constant weights and static shapes;
// - identity/dead elimination before fusion, so a Dropout or Identity between a Conv and
//   its ReLU does not block the fusion;
// - a ConvTranspose with kernel == stride becomes a 1x1 Conv and a DepthToSpace before the
//   BatchNormalization and epilogue fusions, which then treat that Conv like any other;
// - a HardSwish written out as Add, Clip, Mul and Div becomes one op before the affine
//   folding, which would otherwise merge its Div into the scale after it;
// - BatchNormalization folds into its Conv before the epilogue fusion absorbs the ReLU
//   after it (Conv+BN+ReLU -> one FusedConv, the paper's first optimisation);
// - sibling Convs merge after the folding (which makes their weights final) and before
//   the fusions, which would make them FusedConvs the merge does not match;
// - subnormal weights are zeroed on the final weights (after the folding and the merge),
//   before pack-weights copies them into the kernels' layouts;
// - the layout is assigned on the fused graph (fewer nodes to convert), and weights are
//   packed for the layout each kernel then runs in; each conv's kernel is chosen on the
//   final layouts and packed weights (select-algorithm);
// - a conv whose output a Transpose(0, 2, 3, 1) reads writes NHWC (fuse-transpose) on its
//   final algorithm: the depthwise and winograd kernels cannot;
// - convs join a chain computed in bands of rows (fuse-conv-chain) on their final
//   algorithms and layouts (an NHWC output keeps its conv out of a chain);
// - memory decisions come last, on the final list of nodes.
const std::vector<const Pass*>& all_passes() {
  static const std::vector<const Pass*> passes = {
      &fold_constants_pass(),          &eliminate_identity_pass(), &eliminate_dead_pass(),
      &lower_conv_transpose_pass(),    &fuse_hard_swish_pass(),    &fold_batch_norm_pass(),
      &merge_sibling_convs_pass(),     &fuse_epilogue_pass(),      &assign_layout_pass(),
      &flush_subnormal_weights_pass(), &pack_weights_pass(),       &select_algorithm_pass(),
      &fuse_transpose_pass(),          &fuse_conv_chain_pass(),    &in_place_pass(),
      &concat_slices_pass(),           &plan_memory_pass(),
  };
  return passes;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const Pass* pass : all_passes()) names.push_back(pass->name());
  return names;
}

void check_pass_names(const std::vector<std::string>& names) {
  const std::vector<std::string> valid = pass_names();
  for (const std::string& name : names) {
    TERN_CHECK(std::find(valid.begin(), valid.end(), name) != valid.end(), InvalidArgument,
               "no pass is named '{}'; the passes are: {}", name, fmt::join(valid, ", "));
  }
}

void run_pipeline(Program& p, const PipelineOptions& options) {
  check_pass_names(options.disabled);
  p.disabled_passes = options.disabled;
  p.tuning.enabled = options.tune;
  if (options.tune)
    p.tuning.cache_path =
        options.tune_cache.empty() ? tern_cache_path("tune.json") : options.tune_cache;
  std::vector<std::optional<ops::TensorType>> output_types;
  for (int v : p.graph.outputs) output_types.push_back(p.types[v]);
  for (const Pass* pass : all_passes()) {
    if (!p.runs_pass(pass->name())) continue;
    const int changes = pass->run(p);
    if (options.verify) verify_program(p, output_types, pass->name());
    if (options.after_pass) options.after_pass(*pass, changes, p);
  }
}

}  // namespace tern::passes
