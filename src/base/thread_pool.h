// tern's fork-join thread pool: the threads every op's parallel loop runs on.
//
// Why not OpenMP: on the 2-vCPU AMD EPYC development host, an empty `#pragma omp parallel`
// region of 2 threads cost 3.0 us with GCC's libgomp (1.6 us with LLVM's libomp, 1.6 us per
// barrier inside a region), where handing a job to a spinning worker and waiting for its
// acknowledgement costs 0.6 us (two cache-line transfers between the cores). A plan runs
// one region per layer, 50 to 90 layers per model: UltraFace at 2 threads (about 1.1 ms)
// spent some 150 us in region start-up alone. The pool keeps its workers spinning on one
// atomic generation counter between calls (then asleep after kSpinMicros without work).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tern {

/// Workers spin this long (microseconds) after their last job before they sleep on a
/// condition variable; a call after that pays one wake-up (a futex, 10 to 30 us in a VM).
inline constexpr int kSpinMicros = 2000;

/// Largest thread count a parallel call uses: TERN_NUM_THREADS_LIMIT when set to an integer
/// >= 1 (the arm64 tests under qemu-user, which hangs when a program starts a thread, set
/// it to 1), otherwise 256. Read once per process.
int thread_limit();

/// Processors this process may run on: the CPUs of its affinity mask (sched_getaffinity,
/// so `taskset -c 1` gives 1), or std::thread::hardware_concurrency() when that fails;
/// at least 1. A Session's default thread count.
int available_processors();

namespace detail {
/// Runs job(ctx, t, n) for t in [0, n): t = 0 on the calling thread, 1..n-1 on pool
/// workers, and returns when all have finished. n is clamped to thread_limit() and to
/// available_processors() (read once per process). A call
/// made while another call is running (from a job, or from another application thread)
/// runs job(ctx, 0, 1) on the calling thread instead: the pool runs one call at a time and
/// never nests. An exception thrown by a job is rethrown here (the first one, after every
/// share has finished).
void parallel_call(int n, void (*job)(void*, int, int), void* ctx);
}  // namespace detail

/// Calls fn(t, n) once for each t in [0, n) on up to `threads` threads (fewer when capped
/// by thread_limit() or available_processors(), or when the pool is busy; n is the count actually
/// used, so fn must split its work by (t, n), not by `threads`). Returns when every call has
/// returned; rethrows the first exception one threw. threads <= 1 calls fn(0, 1) directly.
template <class Fn>
void parallel_run(int threads, Fn&& fn) {
  if (threads <= 1) {
    fn(0, 1);
    return;
  }
  using F = std::remove_reference_t<Fn>;
  detail::parallel_call(
      threads, [](void* ctx, int t, int n) { (*static_cast<F*>(ctx))(t, n); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace tern
