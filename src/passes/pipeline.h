// The pass pipeline: which passes run, in what order, and how a user switches one off.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace tern::passes {

/// What run_pipeline() does besides running the passes.
struct PipelineOptions {
  /// Names of passes to skip (each must be a name in pass_names(); else InvalidArgument).
  std::vector<std::string> disabled;
  /// Check the program after every pass (verify_program): on in debug builds and tests.
  bool verify = false;
  /// Measure the algorithm candidates and cache the choice (Program::tuning); the cache
  /// is `tune_cache`, or tern_cache_path("tune.json") when empty.
  bool tune = false;
  std::string tune_cache;
  /// Called after every pass that ran, with its name and number of rewrites (for
  /// `tern inspect --passes`); may be empty.
  std::function<void(const Pass& pass, int changes, const Program& p)> after_pass;
};

/// Every pass, in pipeline order.
const std::vector<const Pass*>& all_passes();

/// The passes' names, in pipeline order.
std::vector<std::string> pass_names();

/// Throws InvalidArgument when a name in `names` is not a pass, listing the valid names.
void check_pass_names(const std::vector<std::string>& names);

/// Runs every pass not in options.disabled over `p`, in order. Throws InvalidArgument for
/// an unknown pass name, Error (naming the pass) when verification fails, and what the
/// passes throw.
void run_pipeline(Program& p, const PipelineOptions& options);

}  // namespace tern::passes
