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

/// Adapts a copy of a node, its input tensors and its output types (the program's, to
/// start with) to run candidate `algorithm` (sets attributes, replaces weights by the
/// layout that algorithm reads, and may change an output's layout as a later pass would).
using CandidateSetup =
    std::function<void(const std::string& algorithm, ir::Node& node, std::vector<Tensor>& inputs,
                       std::vector<ops::TensorType>& outputs)>;

/// The cache key of node `n` with input types `types`: SIMD target, threads, op type,
/// physical input shapes and every attribute except "algorithm".
std::string tune_key(const Program& p, int n, const std::vector<ops::TensorType>& types);

/// The fastest of `candidates` (at least 2) for node `n` of `p`: from p.tuning's cache
/// when it has the key, else measured (each candidate's op run once to warm up, then the
/// median of 7 timed runs with p.ctx's threads) and written to the cache. Counts into
/// p.tuning.measured / .cached; cache read or write failures go to p.tuning.warning (the
/// choice is still made). Errors of the op itself propagate.
std::string tune_algorithm(Program& p, int n, const std::vector<ops::TensorType>& types,
                           const std::vector<std::string>& candidates, const CandidateSetup& setup);

}  // namespace tern::passes
