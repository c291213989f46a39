// tern::parallel_run (base/thread_pool.h): every share runs exactly once with the count
// the call used, on distinct threads; calls from inside a share, and calls while another
// application thread holds the pool, run inline; exceptions reach the caller and leave the
// pool usable; workers that fell asleep wake for the next call. Under
// TERN_NUM_THREADS_LIMIT=1 (the arm64 run under qemu) every call runs inline, which the
// expectations follow through thread_limit().
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace tern {
namespace {

// The count a call asking for `threads` uses when the pool is free.
int expected_count(int threads) {
  return std::max(1, std::min({threads, thread_limit(), available_processors()}));
}

TEST(ThreadPool, EveryShareRunsOnceOnItsOwnThread) {
  for (int threads : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    std::mutex m;
    std::vector<int> hits;
    std::set<std::thread::id> ids;
    std::set<int> counts;
    parallel_run(threads, [&](int t, int n) {
      std::lock_guard<std::mutex> lock(m);
      if (hits.empty()) hits.assign(static_cast<size_t>(n), 0);
      ASSERT_GE(t, 0);
      ASSERT_LT(t, static_cast<int>(hits.size()));
      ++hits[static_cast<size_t>(t)];
      ids.insert(std::this_thread::get_id());
      counts.insert(n);
    });
    const int n = expected_count(threads);
    ASSERT_EQ(counts, std::set<int>{n});
    EXPECT_EQ(hits, std::vector<int>(static_cast<size_t>(n), 1));
    EXPECT_EQ(static_cast<int>(ids.size()), n);
    EXPECT_TRUE(ids.count(std::this_thread::get_id())) << "share 0 runs on the caller";
  }
}

TEST(ThreadPool, ManyCallsInARowSumExactly) {
  std::atomic<int64_t> sum{0};
  for (int i = 0; i < 20000; ++i) {
    parallel_run(2 + i % 3, [&](int t, int n) { sum += (i % 7) * n + t; });
  }
  int64_t want = 0;
  for (int i = 0; i < 20000; ++i) {
    const int n = expected_count(2 + i % 3);
    want += int64_t{n} * (i % 7) * n + int64_t{n} * (n - 1) / 2;  // + sum of t
  }
  EXPECT_EQ(sum.load(), want);
}

TEST(ThreadPool, NestedCallRunsInline) {
  std::atomic<int> inner_calls{0}, inner_bad{0};
  parallel_run(2, [&](int, int) {
    const std::thread::id self = std::this_thread::get_id();
    parallel_run(4, [&](int t, int n) {
      ++inner_calls;
      if (t != 0 || n != 1 || std::this_thread::get_id() != self) ++inner_bad;
    });
  });
  EXPECT_EQ(inner_calls.load(), expected_count(2));
  EXPECT_EQ(inner_bad.load(), 0);
}

TEST(ThreadPool, ExceptionsReachTheCallerAndThePoolStaysUsable) {
  for (int thrower : {0, 1}) {
    SCOPED_TRACE(testing::Message() << "share " << thrower << " throws");
    std::atomic<int> ran{0};
    const auto call = [&] {
      parallel_run(2, [&](int t, int n) {
        ++ran;
        if (t == std::min(thrower, n - 1)) throw std::runtime_error("share failed");
      });
    };
    EXPECT_THROW(call(), std::runtime_error);
    EXPECT_EQ(ran.load(), expected_count(2)) << "every share finishes before the rethrow";
    std::atomic<int> after{0};
    parallel_run(2, [&](int, int) { ++after; });
    EXPECT_EQ(after.load(), expected_count(2));
  }
}

TEST(ThreadPool, ConcurrentCallersBothFinish) {
  // Two application threads call at once: one holds the pool, the other runs its calls
  // inline; every share of every call still runs exactly once.
  if (thread_limit() == 1) GTEST_SKIP() << "TERN_NUM_THREADS_LIMIT=1: no threads may start";
  std::atomic<int64_t> total{0};
  const auto caller = [&] {
    for (int i = 0; i < 2000; ++i) parallel_run(2, [&](int, int n) { total += 12 / n; });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 2000 * 12);
}

TEST(ThreadPool, WorkersWakeAfterSleeping) {
  std::atomic<int> ran{0};
  parallel_run(2, [&](int, int) { ++ran; });
  std::this_thread::sleep_for(std::chrono::microseconds(3 * kSpinMicros));
  parallel_run(2, [&](int, int) { ++ran; });
  EXPECT_EQ(ran.load(), 2 * expected_count(2));
}

TEST(ThreadPool, AForkedChildGetsItsOwnPool) {
  if (std::min(thread_limit(), available_processors()) < 2) GTEST_SKIP() << "one thread only";
  std::atomic<int> ran{0};
  parallel_run(2, [&](int, int) { ++ran; });  // the parent's pool has a worker now
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The parent's worker does not exist here: a pool that waited for it would hang.
    alarm(20);
    std::atomic<int> shares{0};
    parallel_run(2, [&](int, int) { ++shares; });
    _exit(shares.load() == expected_count(2) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST(ThreadPool, AvailableProcessorsIsPositive) {
  EXPECT_GE(available_processors(), 1);
  EXPECT_LE(available_processors(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_GE(thread_limit(), 1);
}

}  // namespace
}  // namespace tern
