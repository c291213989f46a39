// ops::parallel_ranges: the shares cover [0, total) exactly once, are contiguous, differ in
// size by at most one item, and use no more threads than asked or items exist.
// ops::parallel_for: every index once. ops::parallel_blocks: every unit once, also when the
// pool runs fewer threads than asked; a thread that stalls has its share taken by others. ops::parallel_grid: every item of every image once,
// each range inside one image; with enough spatial units, a thread's inner indices are the
// same for every outer index (the spatial split).
#include "ops/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
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

TEST(ParallelFor, EveryIndexOnce) {
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<std::atomic<int>> hits(37);
    parallel_for(37, threads, [&](int64_t i) { ++hits[static_cast<size_t>(i)]; });
    for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].load(), 1) << i;
  }
}

TEST(ParallelBlocks, CoversEveryUnitOnce) {
  for (int threads = 1; threads <= 5; ++threads) {
    for (int64_t units : {0, 1, 2, 7, 16, 100, 1001}) {
      SCOPED_TRACE(testing::Message() << threads << " threads, " << units << " units");
      std::vector<std::atomic<int>> hits(static_cast<size_t>(units));
      parallel_blocks(units, threads, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, units);
        for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
      });
      for (int64_t i = 0; i < units; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
    }
  }
}

TEST(ParallelBlocks, InsideAnotherCallOneThreadDoesEverything) {
  // A nested call runs inline on one thread: the other shares have no owner and are
  // taken from their backs.
  std::vector<std::atomic<int>> hits(300);
  parallel_run(2, [&](int t, int) {
    if (t != 0) return;
    parallel_blocks(300, 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
    });
  });
  for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].load(), 1) << i;
}

TEST(ParallelBlocks, OwnersClaimHalfOfWhatIsLeftThievesABlock) {
  // A nested call runs inline on one thread, which owns share 0 (units 0 to 79) and then
  // takes share 1 from its back; blocks are 160 / 2 / kBlocksPerShare = 10 units.
  ASSERT_EQ(kBlocksPerShare, 8);
  std::vector<std::pair<int64_t, int64_t>> calls;
  parallel_run(2, [&](int t, int) {
    if (t != 0) return;
    parallel_blocks(160, 2, [&](int64_t begin, int64_t end) { calls.emplace_back(begin, end); });
  });
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {0, 40},    {40, 60},   {60, 70},   {70, 80},   {150, 160}, {140, 150},
      {130, 140}, {120, 130}, {110, 120}, {100, 110}, {90, 100},  {80, 90}};
  EXPECT_EQ(calls, want);
}

TEST(ParallelBlocks, AStalledThreadsShareIsTaken) {
  if (std::min(thread_limit(), available_processors()) < 2) GTEST_SKIP() << "one thread only";
  // The first thread to run a block stalls in it until the other thread has done every
  // other unit: the other must take the staller's share from its back. Waiting on the
  // other thread's progress, not sleeping a fixed time, keeps this independent of how
  // late the pool's worker wakes (under a loaded host it can start after the caller has
  // finished its own share).
  std::mutex m;
  std::map<std::thread::id, int64_t> done;
  std::atomic<int64_t> total{0};
  parallel_blocks(160, 2, [&](int64_t begin, int64_t end) {
    bool staller = false;
    {
      std::lock_guard<std::mutex> lock(m);
      staller = done.empty();
      done[std::this_thread::get_id()] += end - begin;
    }
    total += end - begin;
    if (!staller) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (total.load() < 160 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  ASSERT_EQ(total.load(), 160);
  ASSERT_EQ(done.size(), 2u);
  int64_t least = 160;
  for (const auto& [id, count] : done) least = std::min(least, count);
  EXPECT_LE(least, 160 / 2 / 2) << "the staller ran only its first claim: half its share";
}

TEST(ParallelGrid, CoversEveryItemOnceAndSplitsSpatially) {
  for (int threads = 1; threads <= 4; ++threads) {
    for (int64_t batch : {1, 2, 3}) {
      for (int64_t outer : {1, 2, 5}) {
        for (int64_t inner : {0, 1, 3, 17, 40}) {
          SCOPED_TRACE(testing::Message() << threads << " threads, batch " << batch << ", grid "
                                          << outer << " x " << inner);
          const kernels::WorkGrid g{outer, inner};
          std::mutex m;
          std::map<std::tuple<int64_t, int64_t>, int> hits;          // (image, item)
          std::map<std::tuple<int64_t, int64_t>, std::thread::id> who;  // (image, item)
          parallel_grid(batch, g, threads, [&](int64_t n, int64_t begin, int64_t end) {
            std::lock_guard<std::mutex> lock(m);
            ASSERT_LE(0, n);
            ASSERT_LT(n, batch);
            ASSERT_LE(0, begin);
            ASSERT_LE(begin, end);
            ASSERT_LE(end, g.items());
            for (int64_t i = begin; i < end; ++i) {
              ++hits[{n, i}];
              who[{n, i}] = std::this_thread::get_id();
            }
          });
          ASSERT_EQ(static_cast<int64_t>(hits.size()), batch * g.items());
          for (const auto& [key, count] : hits) EXPECT_EQ(count, 1);
          if (batch * inner >= kMinSpatialUnitsPerThread * threads) {
            // Spatial: the thread of (n, o, i) does not depend on o.
            for (int64_t n = 0; n < batch; ++n) {
              for (int64_t i = 0; i < inner; ++i) {
                for (int64_t o = 1; o < outer; ++o) {
                  const auto here = std::make_tuple(n, o * inner + i);
                  EXPECT_EQ(who[here], who[std::make_tuple(n, i)]) << n << " " << o << " " << i;
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tern::ops
