// `tern info`: what tern and this machine offer.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/cpu.h"
#include "commands.h"
#include "tern/session.h"

namespace tern::cli {

Command add_info(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "info", "Show tern's version, the CPU's SIMD targets, the chosen one, cores and threads");
  return {sub, [] {
            const CpuInfo cpu = cpu_info();
            fmt::print("tern {}\n", version());
            fmt::print("cpu:              {}\n", cpu.model.empty() ? "unknown" : cpu.model);
            fmt::print("cpu SIMD targets: {} (Highway targets this CPU supports, best first)\n",
                       fmt::join(cpu.supported_targets, " "));
            fmt::print("compiled targets: {} (Highway targets tern's kernels are built for)\n",
                       fmt::join(cpu.compiled_targets, " "));
            if (cpu.forced_target.empty()) {
              fmt::print(
                  "chosen target:    {} (run-time dispatch: best of both; {}=NAME forces a "
                  "lower one)\n",
                  cpu.best_target, kSimdTargetEnv);
            } else {
              fmt::print("chosen target:    {} (forced by {})\n", cpu.best_target, kSimdTargetEnv);
            }
            fmt::print("cores:            {}\n", cpu.num_cores);
            fmt::print(
                "default threads:  {} (a session's default: one per core available to tern; "
                "--threads N overrides per command)\n",
                cpu.default_threads);
            return 0;
          }};
}

}  // namespace tern::cli
