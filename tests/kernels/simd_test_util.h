// Runs a test body once per SIMD target this build can dispatch to on this CPU (AVX-512,
// AVX2, SSE4 and the baseline on x86; NEON on arm64), forcing each in turn with
// force_simd_target, the function behind TERN_SIMD_TARGET. The NCHWc block c of each run
// is that target's vector width (simd_float_lanes()).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/cpu.h"

namespace tern::test {

/// Calls fn(target_name, c) with each dispatchable target forced, then restores the
/// target that was forced before (by TERN_SIMD_TARGET or nothing).
template <class F>
void for_each_simd_target(F&& fn) {
  // Restores the previous choice however the loop ends (a failed ASSERT returns early).
  struct Restore {
    std::string before = cpu_info().forced_target;
    ~Restore() { force_simd_target(before); }
  } restore;
  for (const std::string& target : dispatchable_simd_targets()) {
    SCOPED_TRACE("SIMD target " + target);
    force_simd_target(target);
    fn(target, simd_float_lanes());
  }
}

}  // namespace tern::test
