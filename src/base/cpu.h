// CPU features as Highway sees them: which SIMD targets this CPU supports, which ones
// tern was compiled for, the one run-time dispatch picks, and the thread defaults.
#pragma once

#include <string>
#include <vector>

namespace tern {

/// What `tern info` reports about the machine.
struct CpuInfo {
  /// "model name" (x86) or "CPU part"/"Hardware" (Arm) from /proc/cpuinfo; "" if unknown.
  std::string model;
  /// Highway targets this CPU supports, best first ("AVX3", "AVX2", "SSE4", ...,
  /// "EMU128"). Honours hwy::DisableTargets().
  std::vector<std::string> supported_targets;
  /// Highway targets tern's kernels are compiled for (HWY_TARGETS), best first.
  std::vector<std::string> compiled_targets;
  /// The best target that is both supported and compiled: the one HWY_DYNAMIC_DISPATCH
  /// calls.
  std::string best_target;
  /// Logical cores the OS reports (at least 1).
  int num_cores = 1;
  /// Threads a Session uses by default (SessionOptions::num_threads = 0): one per
  /// processor available to this process (omp_get_num_procs(), which honours the CPU
  /// affinity mask; OMP_NUM_THREADS does not change it).
  int default_threads = 1;
};

/// Queries the CPU once per call (cheap: a few syscalls and a read of /proc/cpuinfo).
CpuInfo cpu_info();

/// Floats in one SIMD vector of the best target run-time dispatch picks: 16 (AVX-512),
/// 8 (AVX2) or 4 (SSE4, NEON, EMU128). The channel block c of tern's NCHWc layout.
int simd_float_lanes();

}  // namespace tern
