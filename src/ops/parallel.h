// Splitting an op's work items across the session's OpenMP threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace tern::ops {

/// Calls fn(begin, end) for one contiguous share of the work items [0, total) per thread,
/// on at most `num_threads` OpenMP threads; the shares cover [0, total) exactly once and
/// differ in size by at most one item. With one thread (or total <= 1) it calls
/// fn(0, total) on the calling thread without starting a parallel region. Contiguous
/// shares (rather than OpenMP's interleaved schedules) keep the items a kernel orders for
/// cache reuse, such as one output block's rows, on one thread.
template <class Fn>
void parallel_ranges(int64_t total, int num_threads, Fn&& fn) {
  const int threads = static_cast<int>(std::min<int64_t>(num_threads, total));
  if (threads <= 1) {
    fn(int64_t{0}, total);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    fn(total * t / nt, total * (t + 1) / nt);
  }
}

}  // namespace tern::ops
