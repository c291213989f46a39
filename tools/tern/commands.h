// The tern subcommands. Each add_* registers its options on `app` and returns the
// function to run once the command line is parsed (it returns the exit code and throws
// UsageError or tern::Error on failure; main() prints those).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tern::cli {

/// A registered subcommand and its action.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

/// `tern info`: version, CPU and SIMD targets, cores, default threads.
Command add_info(CLI::App& app);
/// `tern inspect MODEL [--shape NAME=DIMS ...]`: signature, ops, parameters, layers.
Command add_inspect(CLI::App& app);
/// `tern run MODEL --input NAME=FILE ... [--output-dir DIR] [--threads N]`.
Command add_run(CLI::App& app);
/// `tern bench MODEL [--shape ...] [--threads N] [--runs N] [--warmup N] [--per-layer]
/// [--trace FILE]`.
Command add_bench(CLI::App& app);
/// `tern roofline [--measure] [--quick] [--cache FILE]`: peak GFLOP/s and GB/s per thread
/// count, cached.
Command add_roofline(CLI::App& app);
/// `tern detect-faces IMAGE [-o OUT] [--model M] [--size N] [--threshold T] [--json]`.
Command add_detect_faces(CLI::App& app);
/// `tern demo [-o OUT]`: detect-faces on the embedded photo with the embedded model.
Command add_demo(CLI::App& app);

}  // namespace tern::cli
