// Where tests find shared data and put scratch files.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tern::test {

/// ../shared/models, or $TERN_MODELS_DIR when set. Tests that need it skip when absent.
inline std::filesystem::path models_dir() {
  if (const char* env = std::getenv("TERN_MODELS_DIR"); env && *env) return env;
  return TERN_DEFAULT_MODELS_DIR;
}

/// The largest network input (H*W pixels) that whole-model tests run; $TERN_TEST_MAX_PIXELS
/// caps it (to run a slow emulator or sanitizer on the small cases only), unlimited when unset.
inline int64_t max_test_pixels() {
  const char* env = std::getenv("TERN_TEST_MAX_PIXELS");
  return env && *env ? std::atoll(env) : INT64_MAX;
}

/// The repository root (for files kept in the repo, e.g. models/).
inline std::filesystem::path source_dir() { return TERN_SOURCE_DIR; }

/// A new empty folder under the system's temp folder, named tern_<prefix>_<pid>_<n>,
/// removed with its contents when the object goes away.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tern_" + prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  /// The path of `name` inside the folder.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Writes `bytes` to `path` (binary, replacing the file).
inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace tern::test
