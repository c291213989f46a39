#include "base/cpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "base/check.h"
#include "base/thread_pool.h"
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

// Highway 1.0.3's hwy::SupportedTargets() re-detects the CPU and, as a side effect,
// resets the dispatch choice to the best target it detects (ignoring DisableTargets) until
// its caller updates it again. Calling it while kernels run on other threads could
// therefore switch them to another vector width mid-plan. tern asks Highway once, under
// a mutex, and from then on works from these cached masks; only force_simd_target
// touches Highway's dispatch state.
struct TargetState {
  std::mutex mu;
  int64_t detected = 0;  // compiled targets the CPU supports (nothing disabled)
  int64_t enabled = 0;   // detected minus the targets disabled by forcing
  std::string forced;    // the forced target's name, "" for none
};

TargetState& target_state() {
  static TargetState* state = [] {
    auto* s = new TargetState;
    hwy::DisableTargets(0);
    s->detected = hwy::SupportedTargets() & HWY_TARGETS;
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    s->enabled = s->detected;
    return s;
  }();
  return *state;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// The enabled targets (what dispatch chooses from), the environment variable applied.
int64_t enabled_targets() {
  apply_simd_target_env();
  TargetState& st = target_state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.enabled;
}

}  // namespace

namespace {
std::atomic<int64_t> g_target_epoch{0};  // simd_target_epoch()
}  // namespace

void force_simd_target(std::string_view target) {
  TargetState& st = target_state();
  std::lock_guard<std::mutex> lock(st.mu);
  const std::string want = upper(target);
  int64_t chosen = 0;
  for (int64_t rest = st.detected; rest != 0 && !want.empty(); rest &= rest - 1) {
    const int64_t bit = rest & -rest;
    if (want == hwy::TargetName(bit)) chosen = bit;
  }
  // Validate before changing anything: a bad name leaves the current choice in place.
  TERN_CHECK(want.empty() || chosen != 0, InvalidArgument,
             "SIMD target '{}' is not one this build can dispatch to on this CPU; expected one "
             "of: {} (set with {} or force_simd_target)",
             target, fmt::join(target_names(st.detected), ", "), kSimdTargetEnv);
  // Targets better than `chosen` have lower bits in Highway's order.
  const int64_t disabled = chosen != 0 ? chosen - 1 : 0;
  hwy::DisableTargets(disabled);
  st.enabled = st.detected & ~disabled;
  st.forced = chosen != 0 ? want : "";
  // Re-choose now (SupportedTargets() then Update, as Highway's own dispatch does), so
  // the next HWY_DYNAMIC_DISPATCH calls the enabled target's code.
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  g_target_epoch.fetch_add(1, std::memory_order_release);
}

int64_t simd_target_epoch() { return g_target_epoch.load(std::memory_order_acquire); }

void apply_simd_target_env() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv(kSimdTargetEnv);
    if (env != nullptr && *env != '\0') force_simd_target(env);
  });
}

std::vector<std::string> dispatchable_simd_targets() {
  apply_simd_target_env();
  TargetState& st = target_state();
  std::lock_guard<std::mutex> lock(st.mu);
  return target_names(st.detected);
}

CpuInfo cpu_info() {
  CpuInfo info;
  info.model = cpuinfo_value({"model name", "Hardware", "CPU part"});
  const int64_t usable = enabled_targets();
  info.supported_targets = target_names(usable);
  info.compiled_targets = target_names(HWY_TARGETS);
  info.best_target = usable != 0 ? hwy::TargetName(usable & -usable) : "none";
  {
    TargetState& st = target_state();
    std::lock_guard<std::mutex> lock(st.mu);
    info.forced_target = st.forced;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  info.num_cores = hw > 0 ? static_cast<int>(hw) : available_processors();
  // What a Session with SessionOptions::num_threads = 0 uses (src/runtime/session.cc):
  // one thread per processor available to this process (its CPU affinity mask).
  info.default_threads = available_processors();
  return info;
}

int64_t l1d_cache_bytes() {
  static const int64_t bytes = [] {
    const long n = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{32 * 1024};
  }();
  return bytes;
}

int64_t l2_cache_bytes() {
  static const int64_t bytes = [] {
    const long n = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{1024 * 1024};
  }();
  return bytes;
}

int64_t l3_cache_bytes() {
  static const int64_t bytes = [] {
    const long n = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{0};
  }();
  return bytes;
}

int simd_float_lanes() {
#if HWY_ARCH_X86
  const int64_t usable = enabled_targets();
  const int64_t best = usable & -usable;
#else
  enabled_targets();  // applies the environment variable (and checks it)
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
