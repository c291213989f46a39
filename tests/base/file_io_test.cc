// Tests for read_file_bytes() and the small file-name helpers (src/base/file_io.h): every
// kind of path a user can give instead of a readable file ends in one IOError that names
// the file and the problem, never a hang or an endless read.
#include "base/file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_env.h"
#include "tern/status.h"

namespace tern {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::write_bytes;

// Expects read_file_bytes(path, "test", max_bytes) to throw IOError with a message that
// contains the quoted path and every one of `parts`.
void expect_io_error(const std::string& path, int64_t max_bytes,
                     const std::vector<std::string>& parts) {
  try {
    read_file_bytes(path, "test", max_bytes);
    ADD_FAILURE() << "expected IOError for '" << path << "'";
  } catch (const IOError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'" + path + "'"));
    for (const std::string& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(ReadFileBytes, ReadsEveryByte) {
  test::ScratchDir dir("file_io");
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes.push_back(static_cast<char>(i * 7 % 256));  // has NULs
  write_bytes(dir.file("data.bin"), bytes);
  EXPECT_EQ(read_file_bytes(dir.file("data.bin"), "test", 5000), bytes);  // limit inclusive
  write_bytes(dir.file("one.bin"), "x");
  EXPECT_EQ(read_file_bytes(dir.file("one.bin"), "test", 1), "x");
}

TEST(ReadFileBytes, FollowsSymlinksToRegularFiles) {
  test::ScratchDir dir("file_io");
  write_bytes(dir.file("target.bin"), "abc");
  fs::create_symlink(dir.file("target.bin"), dir.file("link.bin"));
  EXPECT_EQ(read_file_bytes(dir.file("link.bin"), "test", 100), "abc");
}

TEST(ReadFileBytes, MissingFile) {
  test::ScratchDir dir("file_io");
  expect_io_error(dir.file("missing.onnx"), 100, {"no such test file"});
  // A missing folder, or a file used as a folder, on the way.
  expect_io_error(dir.file("no_dir/x.onnx"), 100, {"no such test file"});
  write_bytes(dir.file("plain"), "abc");
  expect_io_error(dir.file("plain/x.onnx"), 100, {"no such test file"});
  expect_io_error("", 100, {"no such test file"});
}

TEST(ReadFileBytes, Directory) {
  test::ScratchDir dir("file_io");
  fs::create_directories(dir.file("a_directory.jpg"));
  expect_io_error(dir.file("a_directory.jpg"), 100, {"not a regular file", "a directory"});
}

// /dev/zero never ends: reading it "whole" would exhaust memory.
TEST(ReadFileBytes, CharacterDevice) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  expect_io_error("/dev/zero", int64_t{1} << 40, {"not a regular file", "a character device"});
}

// Opening a FIFO for reading blocks until a writer comes: it must be refused, not waited on.
TEST(ReadFileBytes, FifoDoesNotBlock) {
  test::ScratchDir dir("file_io");
  const std::string fifo = dir.file("pipe.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << "mkfifo failed";
  expect_io_error(fifo, 100, {"not a regular file", "a FIFO"});
}

TEST(ReadFileBytes, EmptyFile) {
  test::ScratchDir dir("file_io");
  write_bytes(dir.file("empty.npy"), "");
  expect_io_error(dir.file("empty.npy"), 100, {"the test file is empty (0 bytes)"});
}

TEST(ReadFileBytes, OverTheLimit) {
  test::ScratchDir dir("file_io");
  write_bytes(dir.file("big.bin"), std::string(3000, 'a'));
  expect_io_error(dir.file("big.bin"), 2999,
                  {"the test file is 2.9 KiB (3000 bytes), over the 2.9 KiB limit (2999 bytes)"});
  expect_io_error(dir.file("big.bin"), 0, {"over the 0 bytes limit"});
}

TEST(ReadFileBytes, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  test::ScratchDir dir("file_io");
  write_bytes(dir.file("secret.bin"), "abc");
  fs::permissions(dir.file("secret.bin"), fs::perms::none);
  expect_io_error(dir.file("secret.bin"), 100, {"cannot open test file", "Permission denied"});
}

TEST(FormatBytes, UnitsAndRounding) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(1), "1 byte");
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(1024 * 1024 - 1), "1 MiB");  // 1023.999 KiB rounds up a unit
  EXPECT_EQ(format_bytes(int64_t{2147483647}), "2 GiB");
  EXPECT_EQ(format_bytes(int64_t{3435973837}), "3.2 GiB");
  EXPECT_EQ(format_bytes(int64_t{5} << 40), "5 TiB");
}

TEST(LowerExtension, LowerCaseWithDot) {
  EXPECT_EQ(lower_extension("a/b.JPG"), ".jpg");
  EXPECT_EQ(lower_extension("x.tar.NPY"), ".npy");
  EXPECT_EQ(lower_extension("a.d/b"), "");
  EXPECT_EQ(lower_extension("noext"), "");
  EXPECT_EQ(lower_extension(".hidden"), "");
  EXPECT_EQ(lower_extension(""), "");
}

}  // namespace
}  // namespace tern
