// Where tests find shared data.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tern::test {

/// ../shared/models, or $TERN_MODELS_DIR when set. Tests that need it skip when absent.
inline std::filesystem::path models_dir() {
  if (const char* env = std::getenv("TERN_MODELS_DIR"); env && *env) return env;
  return TERN_DEFAULT_MODELS_DIR;
}

/// The largest network input (H*W pixels) that whole-model tests run; $TERN_TEST_MAX_PIXELS
/// caps it (the arm64 run under qemu covers the cases up to 320x320), unlimited when unset.
inline int64_t max_test_pixels() {
  const char* env = std::getenv("TERN_TEST_MAX_PIXELS");
  return env && *env ? std::atoll(env) : INT64_MAX;
}

/// The repository root (for files kept in the repo, e.g. models/).
inline std::filesystem::path source_dir() { return TERN_SOURCE_DIR; }

}  // namespace tern::test
