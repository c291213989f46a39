#include "base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>

#include "base/check.h"

namespace tern {
namespace {

// Closes a file descriptor on scope exit.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  ~FdGuard() { ::close(fd_); }
  int get() const { return fd_; }

 private:
  int fd_;
};

// "a directory", "a FIFO (named pipe)", ... for a file mode that is not S_ISREG.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "an unknown kind of file";
}

}  // namespace

std::string read_file_bytes(const std::string& path, const char* what, int64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    TERN_CHECK(err != ENOENT && err != ENOTDIR, IOError, "'{}': no such {} file", path, what);
    TERN_THROW(IOError, "'{}': cannot open {} file: {}", path, what, std::strerror(err));
  }
  FdGuard guard(fd);
  struct stat st {};
  TERN_CHECK(::fstat(fd, &st) == 0, IOError, "'{}': cannot read {} file: fstat failed: {}", path,
             what, std::strerror(errno));
  TERN_CHECK(S_ISREG(st.st_mode), IOError, "'{}': cannot read {} file: not a regular file ({})",
             path, what, file_kind(st.st_mode));
  const int64_t size = st.st_size;
  TERN_CHECK(size > 0, IOError, "'{}': the {} file is empty (0 bytes)", path, what);
  TERN_CHECK(size <= max_bytes, IOError,
             "'{}': the {} file is {} ({} bytes), over the {} limit ({} bytes)", path, what,
             format_bytes(size), size, format_bytes(max_bytes), max_bytes);

  std::string bytes(static_cast<size_t>(size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    // Linux reads at most about 2 GiB per call: read in chunks of 1 GiB.
    const size_t chunk = std::min<size_t>(bytes.size() - got, size_t{1} << 30);
    const ssize_t n = ::read(fd, bytes.data() + got, chunk);
    if (n < 0 && errno == EINTR) continue;
    TERN_CHECK(n >= 0, IOError, "'{}': read error in {} file after {} of {} bytes: {}", path, what,
               got, size, std::strerror(errno));
    TERN_CHECK(n > 0, IOError,
               "'{}': the {} file shrank while being read: got {} of the {} bytes it had", path,
               what, got, size);
    got += static_cast<size_t>(n);
  }
  return bytes;
}

std::string format_bytes(int64_t bytes) {
  if (bytes == 1) return "1 byte";
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes) / 1024.0;
  size_t unit = 0;
  while (v >= 1023.95 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  std::string number = fmt::format("{:.1f}", v);
  if (number.size() > 2 && number.compare(number.size() - 2, 2, ".0") == 0) {
    number.resize(number.size() - 2);
  }
  return number + " " + kUnits[unit];
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace tern
