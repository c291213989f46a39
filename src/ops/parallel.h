// Splitting an op's work items across the session's threads (tern's pool, base/thread_pool.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/work_grid.h"

namespace tern::ops {

/// Calls fn(begin, end) for one contiguous share of the work items [0, total) per thread,
/// on at most `num_threads` threads; the shares cover [0, total) exactly once and differ
/// in size by at most one item. With one thread (or total <= 1) it calls fn(0, total) on
/// the calling thread. Contiguous shares (rather than interleaved ones) keep the items a
/// kernel orders for cache reuse, such as one output block's rows, on one thread.
template <class Fn>
void parallel_ranges(int64_t total, int num_threads, Fn&& fn) {
  const int threads = static_cast<int>(std::min<int64_t>(num_threads, total));
  if (threads <= 1) {
    fn(int64_t{0}, total);
    return;
  }
  parallel_run(threads, [&](int64_t t, int64_t nt) { fn(total * t / nt, total * (t + 1) / nt); });
}

/// Calls fn(i) for every i in [0, n), on at most `num_threads` threads, each taking one
/// contiguous range of i (a static schedule).
template <class Fn>
void parallel_for(int64_t n, int num_threads, Fn&& fn) {
  parallel_ranges(n, num_threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

/// Spatial units per thread below which parallel_grid splits the flat items instead: with
/// fewer, one unit more or less is a large share of a thread's work.
inline constexpr int64_t kMinSpatialUnitsPerThread = 8;

/// Calls fn(n, begin, end) for ranges [begin, end) of image n's items of a kernel's work
/// grid (ranges cover every item of every image in [0, batch) exactly once), on at most
/// `num_threads` threads. Each thread takes one contiguous share of the images' spatial
/// units (batch * g.inner, image major) and runs every outer index (output-channel chunk)
/// over it, chunk by chunk: a spatial split, the same region of the image in every layer,
/// so that a layer reads what the same thread wrote in the layer before, from its own
/// core's caches, and no thread waits on the other's output (the layout OneFlow's SBP
/// calls split(H)). With fewer than kMinSpatialUnitsPerThread units per thread, contiguous
/// shares of the flat items instead. One thread: fn(n, 0, items) per image.
template <class Fn>
void parallel_grid(int64_t batch, kernels::WorkGrid g, int num_threads, Fn&& fn) {
  const int64_t items = g.items();
  const int threads = static_cast<int>(std::min<int64_t>(num_threads, batch * items));
  if (threads <= 1) {
    for (int64_t n = 0; n < batch && items > 0; ++n) fn(n, int64_t{0}, items);
    return;
  }
  const int64_t units = batch * g.inner;
  const bool spatial = units >= kMinSpatialUnitsPerThread * threads;
  parallel_run(threads, [&](int64_t t, int64_t nt) {
    if (spatial) {
      const int64_t u0 = units * t / nt, u1 = units * (t + 1) / nt;
      for (int64_t n = u0 / g.inner; n < batch && n * g.inner < u1; ++n) {
        const int64_t i0 = std::max<int64_t>(u0 - n * g.inner, 0);
        const int64_t i1 = std::min(u1 - n * g.inner, g.inner);
        for (int64_t o = 0; o < g.outer; ++o) fn(n, o * g.inner + i0, o * g.inner + i1);
      }
      return;
    }
    const int64_t total = batch * items;
    const int64_t f0 = total * t / nt, f1 = total * (t + 1) / nt;
    for (int64_t f = f0; f < f1;) {
      const int64_t n = f / items, first = f % items;
      const int64_t last = std::min(items, first + (f1 - f));
      fn(n, first, last);
      f += last - first;
    }
  });
}

}  // namespace tern::ops
