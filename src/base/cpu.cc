#include "base/cpu.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <thread>

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

}  // namespace

CpuInfo cpu_info() {
  CpuInfo info;
  info.model = cpuinfo_value({"model name", "Hardware", "CPU part"});
  const int64_t supported = hwy::SupportedTargets();
  info.supported_targets = target_names(supported);
  info.compiled_targets = target_names(HWY_TARGETS);
  const int64_t usable = supported & HWY_TARGETS;
  info.best_target = usable != 0 ? hwy::TargetName(usable & -usable) : "none";
  const unsigned hw = std::thread::hardware_concurrency();
  info.num_cores = hw > 0 ? static_cast<int>(hw) : std::max(1, omp_get_num_procs());
  // What a Session with SessionOptions::num_threads = 0 uses (src/runtime/session.cc):
  // one thread per processor available to this process (its CPU affinity mask).
  info.default_threads = std::max(1, omp_get_num_procs());
  return info;
}

int simd_float_lanes() {
#if HWY_ARCH_X86
  const int64_t usable = hwy::SupportedTargets() & HWY_TARGETS;
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
