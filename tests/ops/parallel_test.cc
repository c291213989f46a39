// ops::parallel_ranges: the shares cover [0, total) exactly once, are contiguous, differ in
// size by at most one item, and use no more threads than asked or items exist.
#include "ops/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace tern::ops {
namespace {

TEST(ParallelRanges, SharesCoverEveryItemOnce) {
  for (int threads = 1; threads <= 4; ++threads) {
    for (int64_t total = 0; total <= 11; ++total) {
      SCOPED_TRACE(testing::Message() << threads << " threads, " << total << " items");
      std::vector<int> hits(static_cast<size_t>(total), 0);
      std::vector<int64_t> sizes;
      std::mutex m;
      int calls = 0;
      parallel_ranges(total, threads, [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(m);
        ++calls;
        ASSERT_LE(0, begin);
        ASSERT_LE(begin, end);
        ASSERT_LE(end, total);
        for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
        sizes.push_back(end - begin);
      });
      for (int64_t i = 0; i < total; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)], 1) << i;
      EXPECT_GE(calls, 1);
      EXPECT_LE(calls, std::max<int64_t>(1, std::min<int64_t>(threads, total)));
      const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
      EXPECT_LE(*hi - *lo, 1);
    }
  }
}

}  // namespace
}  // namespace tern::ops
