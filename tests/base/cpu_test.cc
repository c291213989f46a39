// base/cpu.h: the L1 data cache size the conv kernels size their cache passes by.
#include "base/cpu.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace tern {
namespace {

TEST(Cpu, L1dCacheBytesIsTheOsValueOr32KiB) {
  const long os = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  const int64_t bytes = l1d_cache_bytes();
  EXPECT_EQ(bytes, os > 0 ? static_cast<int64_t>(os) : int64_t{32 * 1024});
  // Any real L1d is a few KiB to a few MiB, in whole KiB.
  EXPECT_GE(bytes, 4 * 1024);
  EXPECT_LE(bytes, 4 * 1024 * 1024);
  EXPECT_EQ(bytes % 1024, 0);
  EXPECT_EQ(l1d_cache_bytes(), bytes);  // queried once
}

}  // namespace
}  // namespace tern
