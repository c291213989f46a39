// Runs a test body once per SIMD target this build can dispatch to on this CPU (AVX-512,
// AVX2, SSE4 and the baseline on x86; NEON on arm64), forcing each in turn with
// force_simd_target, the function behind TERN_SIMD_TARGET. The NCHWc block c of each run
// is that target's vector width (simd_float_lanes()).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/cpu.h"

namespace tern::test {

/// One ulp of a float at 1.0 (FLT_EPSILON): tolerances are multiples of it.
inline constexpr float kFloatUlp = 1.0f / (1 << 23);

/// A value no kernel under test computes from the tests' inputs: fills the elements of an
/// output that a kernel must not write, or that it has not written yet.
inline constexpr float kSentinel = -12345.0f;

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
