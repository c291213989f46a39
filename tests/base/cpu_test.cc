// base/cpu.h: the L1 data cache size the conv kernels size their cache passes by.
#include "base/cpu.h"

#include <gtest/gtest.h>

namespace tern {
namespace {

TEST(Cpu, L1dCacheBytesIsAPlausibleSize) {
  const int64_t bytes = l1d_cache_bytes();
  // Any real L1d (or the 32 KiB fallback) is a few KiB to a few MiB.
  EXPECT_GE(bytes, 4 * 1024);
  EXPECT_LE(bytes, 4 * 1024 * 1024);
  EXPECT_EQ(l1d_cache_bytes(), bytes);  // queried once
}

}  // namespace
}  // namespace tern
