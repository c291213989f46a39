#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#ifdef __linux__
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tern {

namespace {

using Job = void (*)(void*, int, int);
using Clock = std::chrono::steady_clock;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A waiting thread pauses in place for this long, then calls sched_yield between checks:
// when more threads are runnable than there are CPUs (two test processes side by side, or
// another program), the thread it waits for may be the one the OS is not running, and a
// pausing waiter would hold its CPU for a whole time slice (3 ms a call was seen).
constexpr auto kPauseTime = std::chrono::microseconds(50);

// Waits until done() (checked after every pause or yield).
template <class Done>
void spin_until(Done&& done) {
  const Clock::time_point start = Clock::now();
  for (uint32_t spin = 1; !done(); ++spin) {
    if (spin < 64 || Clock::now() - start < kPauseTime) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

// Set while a thread runs a share of a call: a parallel call from inside runs inline.
thread_local bool t_in_job = false;

// The process's workers. A call publishes (generation, thread count) in one atomic word,
// so a worker that wakes late never mixes one call's count with another's generation; the
// job and its context are written before that word (release) and stay unchanged until
// every participant has finished (the caller waits for `pending_`).
class Pool;
std::atomic<Pool*> g_pool{nullptr};
std::mutex g_pool_mu;

class Pool {
 public:
  // Never destroyed: workers may still be spinning while static destructors run. A
  // forked child gets a new pool at its first call (the parent's workers do not exist in
  // it, and its mutexes may have been held at the fork).
  static Pool& instance() {
    Pool* pool = g_pool.load(std::memory_order_acquire);
    if (pool != nullptr) return *pool;
    std::lock_guard<std::mutex> lock(g_pool_mu);
    pool = g_pool.load(std::memory_order_relaxed);
    if (pool == nullptr) {
      static const bool registered = [] {
        pthread_atfork(nullptr, nullptr, [] {
          g_pool.store(nullptr, std::memory_order_relaxed);
          new (&g_pool_mu) std::mutex;
        });
        return true;
      }();
      (void)registered;
      pool = new Pool;
      g_pool.store(pool, std::memory_order_release);
    }
    return *pool;
  }

  void call(int n, Job job, void* ctx) {
    if (t_in_job || !call_mu_.try_lock()) {
      run_inline(job, ctx);
      return;
    }
    std::unique_lock<std::mutex> lock(call_mu_, std::adopt_lock);
    // Fewer threads when the OS refuses to start more (a thread limit, a sandbox).
    n = 1 + grow(n - 1);
    if (n == 1) {
      lock.unlock();
      run_inline(job, ctx);
      return;
    }
    job_ = job;
    ctx_ = ctx;
    error_ = nullptr;
    pending_.store(n - 1, std::memory_order_relaxed);
    const uint64_t generation = (state_.load(std::memory_order_relaxed) >> 16) + 1;
    state_.store(generation << 16 | static_cast<uint64_t>(n), std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> g(sleep_mu_); }
      sleep_cv_.notify_all();
    }
    run_share(0, n);
    spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  static void run_inline(Job job, void* ctx) {
    const bool was = t_in_job;
    t_in_job = true;
    try {
      job(ctx, 0, 1);
    } catch (...) {
      t_in_job = was;
      throw;
    }
    t_in_job = was;
  }

  void run_share(int t, int n) {
    t_in_job = true;
    try {
      job_(ctx_, t, n);
    } catch (...) {
      std::lock_guard<std::mutex> g(error_mu_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_job = false;
  }

  // Starts workers until there are `count` (called with call_mu_ held, before the call
  // is published, so a new worker starts from the current generation); returns how many
  // of them there are (fewer when a thread cannot be started), at most `count`.
  int grow(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      const int index = static_cast<int>(workers_.size()) + 1;
      const uint64_t start = state_.load(std::memory_order_relaxed) >> 16;
      try {
        workers_.emplace_back([this, index, start] { work(index, start); });
      } catch (const std::system_error&) {
        break;
      }
    }
    return std::min(count, static_cast<int>(workers_.size()));
  }

  void work(int index, uint64_t seen) {
    for (;;) {
      const uint64_t s = wait_for(seen);
      seen = s >> 16;
      const int n = static_cast<int>(s & 0xffff);
      if (index < n) {
        run_share(index, n);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  // Spins (then yields) until the generation moves past `seen`; sleeps after kSpinMicros.
  uint64_t wait_for(uint64_t seen) {
    for (;;) {
      const Clock::time_point start = Clock::now();
      uint64_t s = 0;
      bool idle = false;
      spin_until([&] {
        s = state_.load(std::memory_order_acquire);
        if (s >> 16 != seen) return true;
        idle = Clock::now() - start > std::chrono::microseconds(kSpinMicros);
        return idle;
      });
      if (!idle) return s;
      std::unique_lock<std::mutex> lock(sleep_mu_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      sleep_cv_.wait(lock, [&] { return state_.load(std::memory_order_seq_cst) >> 16 != seen; });
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  std::mutex call_mu_;  // one call at a time
  std::vector<std::thread> workers_;
  Job job_ = nullptr;
  void* ctx_ = nullptr;
  std::exception_ptr error_;
  std::mutex error_mu_;
  alignas(64) std::atomic<uint64_t> state_{0};  // generation << 16 | thread count
  alignas(64) std::atomic<int> pending_{0};     // workers still running this call
  alignas(64) std::atomic<int> sleepers_{0};
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
};

}  // namespace

int thread_limit() {
  static const int limit = [] {
    const char* v = std::getenv("TERN_NUM_THREADS_LIMIT");
    if (v != nullptr) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= 1) return static_cast<int>(std::min(n, 256L));
    }
    return 256;
  }();
  return limit;
}

int available_processors() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

namespace detail {

void parallel_call(int n, void (*job)(void*, int, int), void* ctx) {
  // More threads than processors never run at once: a waiting share would spin (then
  // yield) for a time slice.
  static const int processors = available_processors();
  n = std::min({n, thread_limit(), processors});
  if (n <= 1) {
    job(ctx, 0, 1);
    return;
  }
  Pool::instance().call(n, job, ctx);
}

}  // namespace detail

}  // namespace tern
