#include "base/cpu.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "base/check.h"
#include "hwy/targets.h"

namespace tern {
namespace {

// Names of the targets set in `mask`, lowest bit (= best target in Highway) first.
std::vector<std::string> target_names(int64_t mask) {
  std::vector<std::string> names;
  for (int64_t rest = mask; rest != 0; rest &= rest - 1) {
    names.emplace_back(hwy::TargetName(rest & -rest));
  }
  return names;
}

// The value of the first /proc/cpuinfo line whose key is one of `keys`, in key order.
std::string cpuinfo_value(const std::vector<std::string>& keys) {
  std::ifstream in("/proc/cpuinfo");
  std::vector<std::string> found(keys.size());
  for (std::string line; std::getline(in, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    for (size_t k = 0; k < keys.size(); ++k) {
      if (key == keys[k] && found[k].empty()) {
        size_t start = line.find_first_not_of(" \t", colon + 1);
        found[k] = start == std::string::npos ? "" : line.substr(start);
      }
    }
  }
  for (const std::string& value : found) {
    if (!value.empty()) return value;
  }
  return "";
}

// hwy::SupportedTargets() with the dispatch choice kept in step. Highway 1.0.3's
// SupportedTargets() re-detects the CPU and resets the chosen target to the best one it
// detects, ignoring DisableTargets (its callers are expected to Update afterwards); a
// forced target would otherwise be lost at the next query.
int64_t supported_targets() {
  const int64_t targets = hwy::SupportedTargets();
  hwy::GetChosenTarget().Update(targets);
  return targets;
}

// The target force_simd_target set ("" for none).
std::string& forced_target() {
  static std::string forced;
  return forced;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// Compiled targets the CPU supports, ignoring any forcing (the candidates to force).
int64_t dispatchable_mask() {
  // hwy::SupportedTargets() honours DisableTargets; undo the forcing to ask the CPU.
  hwy::DisableTargets(0);
  const int64_t mask = supported_targets() & HWY_TARGETS;
  if (!forced_target().empty()) {
    for (int64_t rest = mask; rest != 0; rest &= rest - 1) {
      const int64_t bit = rest & -rest;
      if (forced_target() == hwy::TargetName(bit)) hwy::DisableTargets(bit - 1);
    }
  }
  supported_targets();
  return mask;
}

}  // namespace

void force_simd_target(std::string_view target) {
  const std::string want = upper(target);
  forced_target().clear();
  const int64_t mask = dispatchable_mask();
  if (want.empty()) return;
  for (int64_t rest = mask; rest != 0; rest &= rest - 1) {
    const int64_t bit = rest & -rest;
    if (want == hwy::TargetName(bit)) {
      forced_target() = want;
      // Targets better than `bit` have lower bits in Highway's order.
      hwy::DisableTargets(bit - 1);
      supported_targets();  // re-choose: the next HWY_DYNAMIC_DISPATCH calls `bit`'s code
      return;
    }
  }
  TERN_THROW(InvalidArgument,
             "SIMD target '{}' is not one this build can dispatch to on this CPU; expected one "
             "of: {} (set with {} or force_simd_target)",
             target, fmt::join(target_names(mask), ", "), kSimdTargetEnv);
}

void apply_simd_target_env() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv(kSimdTargetEnv);
    if (env != nullptr && *env != '\0') force_simd_target(env);
  });
}

std::vector<std::string> dispatchable_simd_targets() {
  apply_simd_target_env();
  return target_names(dispatchable_mask());
}

CpuInfo cpu_info() {
  apply_simd_target_env();
  CpuInfo info;
  info.model = cpuinfo_value({"model name", "Hardware", "CPU part"});
  const int64_t supported = supported_targets();
  info.supported_targets = target_names(supported);
  info.compiled_targets = target_names(HWY_TARGETS);
  const int64_t usable = supported & HWY_TARGETS;
  info.best_target = usable != 0 ? hwy::TargetName(usable & -usable) : "none";
  info.forced_target = forced_target();
  const unsigned hw = std::thread::hardware_concurrency();
  info.num_cores = hw > 0 ? static_cast<int>(hw) : std::max(1, omp_get_num_procs());
  // What a Session with SessionOptions::num_threads = 0 uses (src/runtime/session.cc):
  // one thread per processor available to this process (its CPU affinity mask).
  info.default_threads = std::max(1, omp_get_num_procs());
  return info;
}

int simd_float_lanes() {
  apply_simd_target_env();
#if HWY_ARCH_X86
  const int64_t usable = supported_targets() & HWY_TARGETS;
  const int64_t best = usable & -usable;
#endif
  // 512-bit targets (AVX3 and its successors sit at lower bits than AVX2 in Highway's
  // target order, better targets first), 256-bit AVX2, and 128-bit for the rest (SSE4,
  // NEON, EMU128). SVE's width varies; tern's Arm build compiles NEON.
#if HWY_ARCH_X86
  if (best != 0 && best < HWY_AVX2) return 16;
  if (best == HWY_AVX2) return 8;
#endif
  return 4;
}

}  // namespace tern
