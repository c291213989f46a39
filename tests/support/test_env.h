// Where tests find shared data.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tern::test {

/// ../shared/models, or $TERN_MODELS_DIR when set. Tests that need it skip when absent.
inline std::filesystem::path models_dir() {
  if (const char* env = std::getenv("TERN_MODELS_DIR"); env && *env) return env;
  return TERN_DEFAULT_MODELS_DIR;
}

/// The repository root (for files kept in the repo, e.g. models/).
inline std::filesystem::path source_dir() { return TERN_SOURCE_DIR; }

}  // namespace tern::test
