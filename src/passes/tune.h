// `--tune` for select-algorithm and pack-weights (the dot kernel's convs): measures an op's
// candidate algorithms on the node's own physical shapes and constant weights (random activations)
// and keeps the fastest, with the choice cached in a JSON file (base/json_cache.h) so later plans
// on this machine skip the measurement.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "passes/program.h"

namespace tern::passes {

/// Adapts a copy of a node and its input tensors to run candidate `algorithm`: sets
/// attributes (also one a later pass would set, such as the NHWC output of
/// fuse-transpose) and replaces weights by the layout that algorithm reads. The output
/// types are inferred from the result (Op::infer).
using CandidateSetup =
    std::function<void(const std::string& algorithm, ir::Node& node, std::vector<Tensor>& inputs)>;

/// The cache key of node `n` with input types `types`: SIMD target, threads, op type,
/// physical input shapes, every attribute except "algorithm", and `context` (what the
/// measurement assumes beyond the node, e.g. "y_layout=NHWC" for a head fuse-transpose
/// will make write NHWC; "" for none), so that one measured otherwise is not reused.
std::string tune_key(const Program& p, int n, const std::vector<ops::TensorType>& types,
                     const std::string& context);

/// tune_algorithm's `context` for FusedConv node `n`: "y_layout=NHWC" where fuse-transpose
/// runs (Program::runs_pass) and will make it write NHWC (conv_writes_nhwc), so that its
/// candidates that can write NHWC are timed writing it, as they will run; "" otherwise.
std::string nhwc_context(const Program& p, int n);

/// The fastest of `candidates` (at least 2) for node `n` of `p`: from p.tuning's cache
/// when it has the key (tune_key with `context`), else measured (each candidate's op run
/// once to warm up, then the median of 7 timed runs with p.ctx's threads, on `setup`'s
/// node and inputs: the constants of `p`, random float32 values in [-1, 1) for the rest)
/// and written to the cache. Counts into p.tuning.measured / .cached; cache read or write
/// failures go to p.tuning.warning (the choice is still made). Errors of the op itself
/// propagate.
std::string tune_algorithm(Program& p, int n, const std::vector<ops::TensorType>& types,
                           const std::vector<std::string>& candidates, const CandidateSetup& setup,
                           const std::string& context = "");

}  // namespace tern::passes
