// CPU features as Highway sees them: which SIMD targets this CPU supports, which ones
// tern was compiled for, the one run-time dispatch picks, and the thread defaults.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tern {

/// What `tern info` reports about the machine.
struct CpuInfo {
  /// "model name" (x86) or "CPU part"/"Hardware" (Arm) from /proc/cpuinfo; "" if unknown.
  std::string model;
  /// Highway targets this CPU supports that tern is compiled for and may dispatch to,
  /// best first ("AVX3", "AVX2", "SSE4", ...): without those a forced target disables.
  std::vector<std::string> supported_targets;
  /// Highway targets tern's kernels are compiled for (HWY_TARGETS), best first.
  std::vector<std::string> compiled_targets;
  /// The best target that is both supported and compiled: the one HWY_DYNAMIC_DISPATCH
  /// calls (after force_simd_target / TERN_SIMD_TARGET, if set).
  std::string best_target;
  /// The target forced by force_simd_target or $TERN_SIMD_TARGET; "" when none is.
  std::string forced_target;
  /// Logical cores the OS reports (at least 1).
  int num_cores = 1;
  /// Threads a Session uses by default (SessionOptions::num_threads = 0): one per
  /// processor available to this process (available_processors(): its CPU affinity
  /// mask).
  int default_threads = 1;
};

/// Queries the CPU once per call (cheap: a few syscalls and a read of /proc/cpuinfo).
CpuInfo cpu_info();

/// The environment variable that forces a lower Highway target for the whole process,
/// e.g. TERN_SIMD_TARGET=AVX2 on an AVX-512 machine (so one machine runs every kernel
/// path). Read once, at the first call of cpu_info(), simd_float_lanes() or
/// apply_simd_target_env(); an empty value means no override.
inline constexpr const char* kSimdTargetEnv = "TERN_SIMD_TARGET";

/// Restricts Highway's run-time dispatch to `target` (a name from
/// CpuInfo::compiled_targets, such as "AVX2", "SSE4" or "NEON", case-insensitive): every
/// better target is disabled, so HWY_DYNAMIC_DISPATCH calls `target`'s code. "" restores
/// the default (the best supported target). Plans compiled afterwards use the forced
/// target's vector width as their NCHWc block (simd_float_lanes); plans compiled before
/// run their convolutions on the reference kernel (their block no longer matches). Call
/// it while no Session runs (kernels running meanwhile may see the switch mid-layer).
/// Throws InvalidArgument, changing nothing, when `target` is not a compiled target this
/// CPU supports (the message lists those).
void force_simd_target(std::string_view target);

/// How many times force_simd_target has changed Highway's dispatch in this process: work
/// prepared for one target (a plan's bound kernel calls) is prepared again when it moves.
int64_t simd_target_epoch();

/// Applies $TERN_SIMD_TARGET (kSimdTargetEnv) once per process; later calls do nothing.
/// cpu_info(), simd_float_lanes() (which every plan compile calls) and the kernels'
/// *_supported() checks call it, so the variable holds before the first kernel runs.
/// Throws InvalidArgument for an unknown or unsupported target.
void apply_simd_target_env();

/// Highway targets that are compiled into tern and supported by this CPU, best first:
/// the values force_simd_target accepts (tests run every kernel on each of them).
std::vector<std::string> dispatchable_simd_targets();

/// Bytes of one core's L1 data cache: sysconf(_SC_LEVEL1_DCACHE_SIZE) (glibc reads CPUID
/// on x86: 48 KiB on Sapphire Rapids), or 32 KiB (Cortex-A72's) when the OS reports
/// nothing, as glibc on Arm may. Queried once per process. The conv kernels size their
/// cache passes by it.
int64_t l1d_cache_bytes();

/// Bytes of the L2 cache a core uses: sysconf(_SC_LEVEL2_CACHE_SIZE) (2 MiB on Sapphire
/// and Emerald Rapids, 1 MiB on Zen 5), or 1 MiB (Cortex-A72's, shared by 4 cores) when
/// the OS reports nothing. Queried once per process. ConvChain sizes its bands by it.
int64_t l2_cache_bytes();

/// Bytes of the L3 cache (all the cores that share it): sysconf(_SC_LEVEL3_CACHE_SIZE), or
/// 0 when the OS reports none (Cortex-A72 has none; glibc on Arm may report nothing). On
/// a cloud VM it is the host's figure, shared with other tenants. Queried once per
/// process. The roofline sizes its L3 measurement by it.
int64_t l3_cache_bytes();

/// Floats in one SIMD vector of the best target run-time dispatch picks: 16 (AVX-512),
/// 8 (AVX2) or 4 (SSE4, NEON, EMU128). The channel block c of tern's NCHWc layout.
int simd_float_lanes();

}  // namespace tern
